"""The flow_classifier example (examples/flow_classifier) put through one
scenario, whichever build of it: the in-tree one, or a copy built with its
Makefile against the installed packages (which needs no -d either: the
PMD comes from DPDK's plugin directory, or with the library it links).

Ports 0 and 1 of one adapter have TAP wires in a network namespace. Frames
of each traffic class go into port 0's wire from the kernel side; what
comes out of port 1's wire is captured; then the app is stopped with SIGINT
and its report parsed.

    result = run_scenario(binary)                    # in-tree build
    result = run_scenario(copy, eal_extra=[...])     # e.g. a packaged build
    verify(testcase, result)                         # the assertions

`run_app` runs it once without traffic (option errors, --duration).
"""
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from .testpmd import Netns, TestPmdError, build_dir, sh, tap_vdevs, unique_tag, wait_for_iface

HOST_A = "02:00:00:00:0a:01"  # the sender behind port 0
HOST_B = "02:00:00:00:0b:01"  # the destination behind port 1: not the port's MAC (the app is promiscuous)
VXLAN_PORT = 4789
# The app's class table: each class and the Rx queues of port 0 its rules
# steer it to (None: no rule, the port's RSS over all QUEUES queues).
QUEUES = 4
CLASS_QUEUES = {"other": None, "vxlan": {1}, "tcp": {2, 3}}
RULES = 4  # vxlan and tcp, each over IPv4 and IPv6


def in_tree_binary(build=None):
    return os.path.join(os.path.abspath(build or build_dir()), "examples", "flow_classifier", "flow_classifier")


def eal_args(vdevs=(), eal_extra=()):
    """One lcore (the app polls every queue from its main lcore), private
    memory, the ports as vdevs; no -d: the binary links the PMD, or EAL
    loads it from its plugin directory."""
    args = ["--lcores", "0", "--no-huge", "-m", "512", "--no-shconf", "--no-pci",
            "--log-level=pmd.net.cna*:info"]
    # as for testpmd, e.g. --force-max-simd-bitwidth=64 (net_cna's scalar bursts)
    args += os.environ.get("CNA_TESTPMD_EAL_EXTRA", "").split()
    args += list(eal_extra)
    for v in vdevs:
        args += ["--vdev", v]
    return args


# -- traffic -------------------------------------------------------------------

def _marked(pkt, cls, i):
    """pkt with a payload naming it (class and number), at least 64 bytes
    long so no one pads it on the way."""
    from scapy.all import Raw
    marker = f"flow-classifier {cls} {i:02d} ".encode()
    return bytes(pkt / Raw(marker.ljust(max(24, 64 - len(pkt)), b".")))


def traffic():
    """{class: [frames]}: 10 VXLAN (UDP to 4789, IPv4 and IPv6, source ports
    spread as VXLAN's entropy does), 12 TCP over 12 flows (IPv4 and IPv6), and
    7 others: UDP to other ports (one *from* 4789), ICMP, ICMPv6 and ARP."""
    from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, ICMPv6EchoRequest, IPv6
    from scapy.layers.vxlan import VXLAN

    eth = Ether(src=HOST_A, dst=HOST_B)
    inner = Ether(src="02:00:00:00:1a:01", dst="02:00:00:00:1b:01") / IP(src="10.1.0.1", dst="10.1.0.2") / UDP()
    vxlan = [eth / IP(src=f"198.51.100.{1 + i}", dst="198.51.100.200") /
             UDP(sport=49152 + 97 * i, dport=VXLAN_PORT) / VXLAN(vni=42) / inner for i in range(6)]
    vxlan += [eth / IPv6(src=f"2001:db8:1::{1 + i}", dst="2001:db8:1::200") /
              UDP(sport=50000 + 31 * i, dport=VXLAN_PORT) / VXLAN(vni=43) / inner for i in range(4)]
    tcp = [eth / IP(src=f"192.0.2.{10 + i}", dst="203.0.113.5") / TCP(sport=30000 + 13 * i, dport=(80, 443)[i % 2])
           for i in range(8)]
    tcp += [eth / IPv6(src=f"2001:db8:2::{10 + i}", dst="2001:db8:2::5") / TCP(sport=40000 + 7 * i, dport=22)
            for i in range(4)]
    other = [
        eth / IP(src="192.0.2.1", dst="192.0.2.53") / UDP(sport=33000, dport=53),
        eth / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=VXLAN_PORT, dport=5000),
        eth / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=33001, dport=VXLAN_PORT + 1),
        eth / IPv6(src="2001:db8::1", dst="2001:db8::53") / UDP(sport=33002, dport=53),
        eth / IP(src="192.0.2.1", dst="192.0.2.2") / ICMP(),
        eth / IPv6(src="2001:db8::1", dst="2001:db8::2") / ICMPv6EchoRequest(),
        Ether(src=HOST_A, dst="ff:ff:ff:ff:ff:ff") / ARP(hwsrc=HOST_A, psrc="192.0.2.1", pdst="192.0.2.2"),
    ]
    return {cls: [_marked(p, cls, i) for i, p in enumerate(pkts)]
            for cls, pkts in (("vxlan", vxlan), ("tcp", tcp), ("other", other))}


# -- running it ------------------------------------------------------------------

class App:
    """The app as a child process, its output (stdout and stderr) collected."""

    def __init__(self, binary, args, timeout=30):
        self.command = [binary] + list(args)
        self.timeout = timeout
        self.proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     errors="replace")
        self._lines = []
        self._reader = threading.Thread(target=lambda: self._lines.extend(iter(self.proc.stdout.readline, "")),
                                        daemon=True)
        self._reader.start()

    @property
    def output(self):
        return "".join(list(self._lines))

    def wait_for(self, pattern):
        deadline = time.monotonic() + self.timeout
        while not re.search(pattern, self.output, re.M):
            if self.proc.poll() is not None:
                self._reader.join(timeout=5)
                raise TestPmdError(f"flow_classifier exited ({self.proc.returncode}) before {pattern!r}:\n"
                                   + self.output)
            if time.monotonic() > deadline:
                raise TestPmdError(f"flow_classifier did not print {pattern!r}:\n{self.output}")
            time.sleep(0.05)

    def finish(self, sig=None):
        """Signal the app (if given and it runs), wait for its exit; returns
        its status (-9: it did not exit in time and was killed)."""
        if sig is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=5)
        self.proc.stdout.close()
        return self.proc.returncode


def run_app(binary, app_args=(), vdevs=(), eal_extra=(), timeout=30):
    """Runs the app to its end (no traffic); returns (exit status, output, seconds)."""
    t0 = time.monotonic()
    app = App(binary, eal_args(vdevs, eal_extra) + ["--"] + list(app_args), timeout=timeout)
    status = app.finish()
    return status, app.output, time.monotonic() - t0


@dataclass
class ScenarioResult:
    command: list
    status: int                 # the app's exit status
    output: str                 # its stdout and stderr
    sent: dict                  # {class: [frames]} sent into port 0's wire
    captured: list              # [(port, frame)] out of the ports' wires (port 0's: what came back)
    seconds: float = 0.0
    rules: list = field(default_factory=list)       # the "rule ..." lines' text
    by_queue: dict = field(default_factory=dict)    # {class: {queue: packets}} of port 0's Rx
    totals: dict = field(default_factory=dict)      # {class: packets}
    forwarded: dict = field(default_factory=dict)   # {(rx port, tx port): (packets, dropped)}
    mbufs: tuple = None                             # (back in the pool, pool size)
    vfs: dict = field(default_factory=dict)         # {vf: {"mac": ..., "forced": ...}}


def parse_report(result):
    out = result.output
    result.rules = re.findall(r"^rule (\w+: .*)$", out, re.M)
    for cls, q, n in re.findall(r"^class (\w+): queue (\d+) packets (\d+)$", out, re.M):
        result.by_queue.setdefault(cls, {})[int(q)] = int(n)
    result.totals = {cls: int(n) for cls, n in re.findall(r"^class (\w+): total (\d+)$", out, re.M)}
    for rx, tx, n, dropped in re.findall(r"^forwarded port (\d+) -> port (\d+): packets (\d+) dropped (\d+)$",
                                         out, re.M):
        result.forwarded[(int(rx), int(tx))] = (int(n), int(dropped))
    m = re.search(r"^mbufs: (\d+) of (\d+) back in the pool$", out, re.M)
    result.mbufs = (int(m.group(1)), int(m.group(2))) if m else None
    for vf, mac, rest in re.findall(r"^vf (\d+): mac (\S+) (.*)$", out, re.M):
        fields = rest.split()
        result.vfs[int(vf)] = {"mac": mac.lower(), **{k: int(v) for k, v in zip(fields[::2], fields[1::2])}}
    return result


def run_scenario(binary, eal_extra=(), port0_devargs="", app_args=(), timeout=30):
    """Runs `binary` on two TAP-wired net_cna ports (port 0's devargs extended
    by port0_devargs, e.g. "vfs=2"), sends traffic() into port 0's wire,
    captures both wires, stops the app with SIGINT; returns a ScenarioResult."""
    t0 = time.monotonic()
    tag = unique_tag()
    ifname = [f"cnf{tag}p{p}"[:15] for p in (0, 1)]
    vdevs = tap_vdevs(ifname)
    if port0_devargs:
        vdevs[0] += "," + port0_devargs
    sent = traffic()
    ns = Netns()
    app = None
    try:
        app = App(binary, eal_args(vdevs, eal_extra) + ["--"] + list(app_args), timeout=timeout)
        app.wait_for(r"^forwarding between ports")
        for name in ifname:
            wait_for_iface(name)
            ns.adopt(name)
        frames = [f for cls in ("vxlan", "tcp", "other") for f in sent[cls]]
        got = ns.io(send=[(ifname[0], f) for f in frames], capture=ifname, expect=len(frames), timeout=10,
                    linger=0.5)
        app.finish(signal.SIGINT)
    finally:
        if app is not None:  # a no-op once it has exited
            app.finish(signal.SIGKILL)
        ns.delete()
        for name in ifname:  # the TAPs go with the app; this covers one that hung
            sh("ip", "link", "del", name, check=False)
    result = ScenarioResult(command=app.command, status=app.proc.returncode, output=app.output, sent=sent,
                            captured=[(ifname.index(i), f) for i, f in got], seconds=time.monotonic() - t0)
    return parse_report(result)


# -- what must hold ------------------------------------------------------------------

def _marker(frame):
    m = re.search(rb"flow-classifier (\w+) (\d+)", frame)
    return f"{m.group(1).decode()} {m.group(2).decode()}" if m else frame[:64].hex()


def verify(test, r):
    """The scenario's assertions, on a unittest.TestCase: every frame came
    out of port 1 unchanged and nothing came back; the app's rules were all
    installed, its counts per class are what was sent, each class on its
    queues; it exited cleanly with every mbuf back in its pool."""
    log = f"\n{' '.join(r.command)}\n{r.output}"
    test.assertEqual(r.status, 0, "the app exits with 0 after SIGINT" + log)
    test.assertEqual(len(r.rules), RULES, "a line per rule" + log)
    for rule in r.rules:
        test.assertNotRegex(rule, r"refused|not created", log)

    frames = [f for cls in sorted(r.sent) for f in r.sent[cls]]
    out1 = [f for p, f in r.captured if p == 1]
    back = [f for p, f in r.captured if p == 0]
    missing = sorted(set(map(_marker, frames)) - set(map(_marker, out1)))
    test.assertEqual(missing, [], "frames that did not come out of port 1" + log)
    test.assertEqual(sorted(out1), sorted(frames), "port 1 sends every frame once, byte for byte" + log)
    test.assertEqual(back, [], "nothing comes back out of port 0" + log)

    test.assertEqual(r.totals, {cls: len(f) for cls, f in r.sent.items()}, "the app's count per class" + log)
    for cls, queues in CLASS_QUEUES.items():
        per_queue = r.by_queue.get(cls, {})
        test.assertEqual(sorted(per_queue), list(range(QUEUES)), f"class {cls}: a line per queue" + log)
        test.assertEqual(sum(per_queue.values()), len(r.sent[cls]), f"class {cls}: queues add up" + log)
        if queues is not None:
            used = {q for q, n in per_queue.items() if n}
            test.assertEqual(used, queues, f"class {cls} on its queues {sorted(queues)}, all used" + log)
    test.assertEqual(r.forwarded.get((0, 1)), (len(frames), 0), "forwarded from port 0, none dropped" + log)
    test.assertEqual(r.forwarded.get((1, 0)), (0, 0), "nothing to forward from port 1" + log)
    test.assertIsNotNone(r.mbufs, "the mbuf line" + log)
    test.assertEqual(r.mbufs[0], r.mbufs[1], "every mbuf back in the pool (no leak)" + log)
