#!/usr/bin/python3
"""A CM requester of the tests' own on the bridge, for what real requesters
rarely do: the kernel's end of the bridge (br0, with an address cna's
processes resolve by ARP) speaks the InfiniBand CM in MADs on QP1 over
RoCEv2, built here from IBTA Vol 1 12.6's layouts (scapy computes each
ICRC), to a cna listener; it loses an RTU, sends a REQ twice, floods the
listener with REQs, or sends MADs of noise.

    ip netns exec NS /usr/bin/python3 cm_peer.py SCENARIO OWN_IP SERVER_IP PORT [SEED]

prints one JSON object: what the listener answered. Scenarios:
  lost-rtu      REQ; the first REP goes unanswered as if the RTU were lost;
                the REP sent again gets the RTU; then DREQ
  unanswered    REQ; no REP ever gets an RTU: the listener gives up
  dup-req       the same REQ twice; RTU; the REQ a third time; then DREQ
  flood         FLOOD_REQS REQs at once, each sent again while unanswered
                as a requester would; an RTU to every REP; then DREQs
  noise         a connection, then NOISE_MADS MADs made of seeded noise
                (mostly mutations of real messages carrying the live comm
                IDs, some cut short); then a connection again
"""
import json
import os
import random
import select
import socket
import struct
import sys
import time

from scapy.all import ARP, IP, UDP, Ether, Raw, raw
from scapy.contrib.roce import BTH

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
ROCE_PORT = 4791
UD_SEND_ONLY = 0x64
GSI_QPN = 1
GSI_QKEY = 0x80010000
MAD_SIZE = 256
# The MAD header's attributes (IBTA Vol 1, 12.6.1 table 104).
REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR = (
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A)
NAMES = {REQ: "REQ", MRA: "MRA", REJ: "REJ", REP: "REP", RTU: "RTU", DREQ: "DREQ", DREP: "DREP",
         SIDR_REQ: "SIDR REQ", SIDR_REP: "SIDR REP", LAP: "LAP", APR: "APR"}
CA_GUID = 0x02C0FFEEFE000001
FLOOD_REQS = 120
NOISE_MADS = 1500


def gid(ip):
    return b"\0" * 10 + b"\xff\xff" + socket.inet_aton(ip)


def set_bits(mad, offset, size, shift, bits, value):
    """`bits` bits at `shift` above the lowest of the big-endian `size`-byte word at `offset`."""
    word = int.from_bytes(mad[offset:offset + size], "big")
    mask = ((1 << bits) - 1) << shift
    word = (word & ~mask) | (value << shift & mask)
    mad[offset:offset + size] = word.to_bytes(size, "big")


def header(attribute, tid):
    mad = bytearray(MAD_SIZE)
    mad[0:4] = bytes((1, 0x07, 2, 0x03))  # base version, CM class, class version 2, Send
    mad[8:16] = tid.to_bytes(8, "big")
    mad[16:18] = attribute.to_bytes(2, "big")
    return mad


class Connection:
    """One of the peer's connections: its comm ID, QP and what it learnt."""

    def __init__(self, peer, n, response_timeout, retries):
        self.local_id = 0x5EE00000 + n
        self.qpn = 0x100 + n
        self.tid = 0xC0DE000000000000 + n
        self.remote_id = None
        self.remote_qpn = None
        self.req = self.build_req(peer, response_timeout, retries)

    def build_req(self, peer, response_timeout, retries):
        mad = header(REQ, self.tid)
        mad[24:28] = self.local_id.to_bytes(4, "big")
        mad[32:40] = (0x0000000001060000 | peer.port).to_bytes(8, "big")  # RDMA_PS_TCP, the port
        mad[40:48] = CA_GUID.to_bytes(8, "big")
        set_bits(mad, 56, 4, 8, 24, self.qpn)
        set_bits(mad, 56, 4, 0, 8, 1)                 # responder resources
        set_bits(mad, 60, 4, 0, 8, 1)                 # initiator depth
        set_bits(mad, 64, 4, 3, 5, response_timeout)  # remote CM response timeout
        set_bits(mad, 64, 4, 0, 1, 1)                 # end-to-end flow control; transport RC (0)
        set_bits(mad, 68, 4, 8, 24, 0x1234 + self.qpn)  # starting PSN
        set_bits(mad, 68, 4, 3, 5, response_timeout)  # local CM response timeout
        set_bits(mad, 68, 4, 0, 3, 7)                 # retry count
        mad[72:74] = b"\xff\xff"                      # P_Key
        mad[74] = 3 << 4 | 7                          # path MTU 1024, RNR retry count 7
        mad[75] = retries << 4                        # max CM retries
        path = 76                                     # primary path
        mad[path + 4:path + 20] = gid(peer.own_ip)
        mad[path + 20:path + 36] = gid(peer.server_ip)
        mad[path + 41] = 64                           # hop limit
        mad[path + 42] = 1 << 3                       # SL 0, subnet local
        mad[path + 43] = 14 << 3                      # local ACK timeout
        private = 164                                 # the IP CM service's header
        mad[private + 1] = 4 << 4
        mad[private + 2:private + 4] = (0xC000 + self.qpn % 0x3FFF).to_bytes(2, "big")
        mad[private + 16:private + 20] = socket.inet_aton(peer.own_ip)
        mad[private + 32:private + 36] = socket.inet_aton(peer.server_ip)
        return bytes(mad)

    def learn(self, rep):
        self.remote_id = int.from_bytes(rep[24:28], "big")
        self.remote_qpn = int.from_bytes(rep[36:40], "big") >> 8

    def rtu(self):
        mad = header(RTU, self.tid)
        mad[24:28] = self.local_id.to_bytes(4, "big")
        mad[28:32] = self.remote_id.to_bytes(4, "big")
        return bytes(mad)

    def dreq(self):
        mad = header(DREQ, self.tid + 1)
        mad[24:28] = self.local_id.to_bytes(4, "big")
        mad[28:32] = self.remote_id.to_bytes(4, "big")
        set_bits(mad, 32, 4, 8, 24, self.remote_qpn)
        return bytes(mad)


class Peer:
    def __init__(self, own_ip, server_ip, port):
        self.own_ip, self.server_ip, self.port = own_ip, server_ip, port
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind(("br0", 0))
        with open("/sys/class/net/br0/address") as f:
            self.mac = f.read().strip()
        self.server_mac = self.resolve()
        self.start = time.monotonic()
        self.psn = 0

    def resolve(self):
        ask = Ether(dst="ff:ff:ff:ff:ff:ff", src=self.mac) / ARP(
            op=1, hwsrc=self.mac, psrc=self.own_ip, pdst=self.server_ip)
        for _ in range(20):
            self.sock.send(raw(ask))
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline:
                for frame in self.frames(deadline - time.monotonic()):
                    p = Ether(frame)
                    if ARP in p and p[ARP].op == 2 and p[ARP].psrc == self.server_ip:
                        return p[ARP].hwsrc
        raise SystemExit(f"cm_peer: {self.server_ip} does not answer ARP")

    def frames(self, timeout):
        """The frames received within `timeout` s (at least one waited for)."""
        got = []
        while select.select([self.sock], [], [], max(timeout, 0))[0]:
            frame, address = self.sock.recvfrom(65536)
            if address[2] != PACKET_OUTGOING:
                got.append(frame)
            timeout = 0
        return got

    def send(self, mad):
        self.psn = (self.psn + 1) & 0xFFFFFF
        deth = GSI_QKEY.to_bytes(4, "big") + GSI_QPN.to_bytes(4, "big")
        frame = (Ether(src=self.mac, dst=self.server_mac) / IP(src=self.own_ip, dst=self.server_ip, flags="DF")
                 / UDP(sport=0xC000 | self.psn & 0x3FFF, dport=ROCE_PORT, chksum=0)
                 / BTH(opcode=UD_SEND_ONLY, dqpn=GSI_QPN, psn=self.psn) / Raw(deth + mad))
        self.sock.send(raw(frame))

    def mads(self, seconds):
        """[(seconds since start, MAD)] that reached this QP1 in `seconds`."""
        got, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline:
            for frame in self.frames(deadline - time.monotonic()):
                p = Ether(frame)
                if UDP in p and p[UDP].dport == ROCE_PORT and p[IP].dst == self.own_ip:
                    payload = raw(p[UDP].payload)
                    if payload[0] == UD_SEND_ONLY and int.from_bytes(payload[5:8], "big") == GSI_QPN:
                        got.append((round(time.monotonic() - self.start, 3), payload[20:20 + MAD_SIZE]))
        return got

    def until(self, seconds, done):
        """MADs as mads(), stopping early once done(all so far) holds."""
        got, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline and not done(got):
            got += self.mads(min(0.05, deadline - time.monotonic()))
        return got


def attribute(mad):
    return int.from_bytes(mad[16:18], "big")


def describe(t, mad):
    """What a test asserts on: the answer's name, comm IDs, REJ's reason."""
    d = {"t": t, "attr": NAMES.get(attribute(mad), hex(attribute(mad))),
         "sender": int.from_bytes(mad[24:28], "big"), "receiver": int.from_bytes(mad[28:32], "big")}
    if attribute(mad) == REJ:
        d["reason"] = int.from_bytes(mad[34:36], "big")
    return d


def named(got, name):
    return [(t, m) for t, m in got if describe(t, m)["attr"] == name]


def addressed_to(got, c):
    """The MADs of `got` the listener sent to connection `c` (its comm ID
    theirs): not those of other connections the listener still answers,
    such as the ones noise's REQs opened."""
    return [(t, m) for t, m in got if describe(t, m)["receiver"] == c.local_id]


def connect(peer, c, seconds=5):
    """REQ, REP (learnt), RTU: the MADs addressed to `c`."""
    peer.send(c.req)
    got = peer.until(seconds, lambda g: named(addressed_to(g, c), "REP") or named(addressed_to(g, c), "REJ"))
    got = addressed_to(got, c)
    if named(got, "REP"):
        c.learn(named(got, "REP")[0][1])
        peer.send(c.rtu())
    return got


def disconnect(peer, c):
    """DREQ, DREP: the MADs addressed to `c`."""
    peer.send(c.dreq())
    return addressed_to(peer.until(5, lambda g: named(addressed_to(g, c), "DREP")), c)


def lost_rtu(peer, _):
    # Its response time: 67 ms, so the REP comes again after that and two
    # of the listener's packet lifetimes.
    c = Connection(peer, 1, response_timeout=14, retries=3)
    peer.send(c.req)
    got = peer.until(10, lambda g: len(named(g, "REP")) >= 2)
    c.learn(named(got, "REP")[0][1])
    peer.send(c.rtu())
    got += peer.mads(2)
    got += disconnect(peer, c)
    return {"mads": [describe(t, m) for t, m in got]}


def unanswered(peer, _):
    c = Connection(peer, 2, response_timeout=14, retries=2)
    peer.send(c.req)
    got = peer.until(15, lambda g: named(g, "REJ"))
    return {"mads": [describe(t, m) for t, m in got]}


def dup_req(peer, _):
    c = Connection(peer, 3, response_timeout=20, retries=3)
    peer.send(c.req)
    peer.send(c.req)
    got = peer.mads(1.5)
    c.learn(named(got, "REP")[0][1])
    peer.send(c.rtu())
    peer.send(c.req)  # once more, to an established connection
    got += peer.mads(1.5)
    got += disconnect(peer, c)
    return {"mads": [describe(t, m) for t, m in got]}


def flood(peer, _):
    # Response times of 17 s: a REP is not sent again within the test.
    conns = {c.local_id: c for c in (Connection(peer, 100 + n, response_timeout=22, retries=3)
                                     for n in range(FLOOD_REQS))}
    answers, sent = {}, {}
    for _round in range(10):
        waiting = [c for c in conns.values() if c.local_id not in answers]
        if not waiting:
            break
        for c in waiting:
            peer.send(c.req)
            sent[c.local_id] = sent.get(c.local_id, 0) + 1
        for t, m in peer.mads(1.0):
            d = describe(t, m)
            if d["receiver"] in conns and d["attr"] in ("REP", "REJ", "MRA"):
                answers.setdefault(d["receiver"], []).append(d)
                if d["attr"] == "REP" and conns[d["receiver"]].remote_id is None:
                    conns[d["receiver"]].learn(m)
    established = [c for c in conns.values() if c.remote_id is not None]
    for c in established:
        peer.send(c.rtu())
    time.sleep(0.5)
    for c in established:
        peer.send(c.dreq())
    dreps = {describe(t, m)["receiver"] for t, m in named(peer.mads(3), "DREP")}
    return {"requests": len(conns), "sent": sent, "answers": {str(k): v for k, v in answers.items()},
            "established": len(established), "dreps": len(dreps & {c.local_id for c in established})}


def noise_mad(rng, c, templates):
    """A MAD of noise: mostly a real message of the live connection with
    bytes changed, sometimes any attribute, now and then cut short."""
    mad = bytearray(rng.choice(templates)) if rng.random() < 0.9 else bytearray(rng.randbytes(MAD_SIZE))
    if rng.random() < 0.5:
        mad[24:28] = c.local_id.to_bytes(4, "big")
        mad[28:32] = c.remote_id.to_bytes(4, "big")
    for _ in range(rng.choice((0, 1, 2, 4, 16))):
        mad[rng.randrange(16, MAD_SIZE)] = rng.randrange(256)
    if rng.random() < 0.15:
        mad[16:18] = rng.choice((REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR,
                                 rng.randrange(0x10000))).to_bytes(2, "big")
    if rng.random() < 0.05:
        mad[rng.randrange(0, 4)] = rng.randrange(256)  # base version, class, class version, method
    if rng.random() < 0.05:
        del mad[rng.randrange(0, MAD_SIZE):]
    return bytes(mad)


def noise(peer, seed):
    rng = random.Random(seed)
    c = Connection(peer, 4, response_timeout=20, retries=3)
    before = connect(peer, c)
    # The noise's REQs carry the peer's CA GUID with QPNs of their own.
    other = Connection(peer, 5, response_timeout=8, retries=1)
    templates = [other.req, c.rtu(), c.dreq()]
    for attribute_id in (MRA, REJ, REP, DREP, SIDR_REQ, SIDR_REP, LAP, APR):
        templates.append(bytes(header(attribute_id, c.tid)))
    answers = []
    for n in range(NOISE_MADS):
        peer.send(noise_mad(rng, c, templates))
        if n % 64 == 63:
            answers += peer.mads(0.01)
    answers += peer.mads(2)
    after = Connection(peer, 6, response_timeout=20, retries=3)
    got = connect(peer, after)
    if after.remote_id is not None:
        got += disconnect(peer, after)
    return {"seed": seed, "before": [describe(t, m) for t, m in before], "sent": NOISE_MADS,
            "answers": len(answers), "after": [describe(t, m) for t, m in got]}


SCENARIOS = {"lost-rtu": lost_rtu, "unanswered": unanswered, "dup-req": dup_req, "flood": flood, "noise": noise}


def main():
    scenario, own_ip, server_ip, port = sys.argv[1:5]
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else int.from_bytes(os.urandom(4), "big")
    peer = Peer(own_ip, server_ip, int(port))
    print(json.dumps(SCENARIOS[scenario](peer, seed)))


if __name__ == "__main__":
    main()
