"""RoCEv2 on a captured wire as tools not ours see it: tshark decodes the
opcodes (it does not check ICRCs), scapy's RoCE layer recomputes every
ICRC."""
from scapy.all import IP, UDP, Ether, raw
from scapy.contrib.roce import BTH

from harness.secondary import run


def tshark_roce(path):
    """[(opcode, psn)] of every RoCEv2 packet in a capture, as tshark decodes it."""
    rc, out = run(["tshark", "-r", path, "-d", "udp.port==4791,infiniband", "--disable-protocol", "rpcordma",
                   "-Y", "infiniband", "-T", "fields", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn"])
    if rc != 0:
        raise AssertionError(f"tshark cannot read {path} ({rc}):\n{out}")
    return [(int(o), int(p)) for o, p in (line.split("\t") for line in out.splitlines() if line.count("\t") == 1)]


def roce_frames(frames):
    """The RoCEv2 frames (UDP to port 4791) among scapy's `frames`."""
    return [f for f in frames if IP in f and UDP in f and f[UDP].dport == 4791]


def bad_icrcs(frames):
    """The summaries of the RoCEv2 frames whose ICRC scapy computes otherwise."""
    bad = []
    for f in frames:
        rebuilt = f.copy()
        rebuilt[BTH].icrc = None
        if Ether(raw(rebuilt))[BTH].icrc != f[BTH].icrc:
            bad.append(f.summary())
    return bad
