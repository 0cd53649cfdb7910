"""The Open vSwitch rows of ./cna bench: a VF's 64-byte stream to another VF
and to the wire through Open vSwitch's DPDK datapath (Debian's
openvswitch-switch-dpdk), with its flows offloaded into the adapter's port
switch (hw-offload=true) and without (every frame through its PMD thread),
in one run. cna-adapterd has two cabled ports: PF 0 with two VFs and their
representors in Open vSwitch's bridge (its uplink PF 0), PF 1 the wire's
other end in a testpmd of its own. One OpenFlow rule per row sends the
sender's representor's frames to the receiver (`in_port=rep1,
actions=output:rep0`, or to the uplink).

Busy threads, the same in both modes: Open vSwitch's PMD thread, the
adapter's engine thread, the sender's and the receiver's forwarding lcores:
four on two CPUs, so where each runs decides much of what is measured.
Every thread is pinned, and the rows are measured for each placement of
PLACEMENTS; the applications (sender and receiver) are on CPU 0 in all.

The figures: the rate the switch delivers to the receiver's port (what it
received, and what it dropped for want of buffers: a receiver sharing its
CPU is not what is measured; median of the windows, then of the runs, with
the runs' range), and the share of its cycles Open vSwitch's PMD thread
spent processing (not idle polling) meanwhile."""
import os
import re
import statistics
import sys
import time
from typing import NamedTuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "integration"))
from harness import ovs as ovs_harness  # noqa: E402
from harness.daemon import AdapterDaemon  # noqa: E402
from harness.ovs import Ovs  # noqa: E402
from harness.testpmd import TestPmd, port_mac  # noqa: E402

WINDOW = 1.0
WINDOWS = 3


def arrived(tp, port=0):
    """(time, frames the switch delivered to the receiver's port so far:
    received, and dropped there for want of buffers, since a receiver
    sharing its CPU is not what is measured)."""
    out = tp.cmd(f"show port stats {port}")
    received = int(re.search(r"RX-packets:\s+(\d+)", out).group(1))
    missed = int(re.search(r"RX-missed:\s+(\d+)", out).group(1))
    return time.monotonic(), received + missed


def pmd_busy(ovs):
    """The share of its cycles Open vSwitch's PMD thread spent processing."""
    out = ovs.appctl("dpif-netdev/pmd-stats-show")
    m = re.search(r"pmd thread.*?processing cycles: \d+ \(([\d.]+) ?%\)", out, re.S)
    return float(m.group(1)) if m else 0.0


APPLICATION_CPU = 0


class Placement(NamedTuple):
    title: str
    engine_cpu: int
    pmd_cpu: int


PLACEMENTS = (
    # The switch's side (engine and PMD thread) on CPU 1, the applications'
    # on CPU 0: whichever switch carries the frames has one CPU.
    Placement("engine beside OVS's PMD", engine_cpu=1, pmd_cpu=1),
    # Open vSwitch's PMD thread alone on CPU 1, the engine with the
    # applications on CPU 0: the software switch has a CPU the offloaded
    # one has not.
    Placement("engine beside the applications", engine_cpu=0, pmd_cpu=1),
)


class Rig:
    def __init__(self, build, offload, tag, placement):
        self.daemon = AdapterDaemon(["--ports", "2", "--wire", "cable", "--engine-cpus", str(placement.engine_cpu)],
                                    build=build)
        self.daemon.start()
        sock = self.daemon.socket
        self.ovs = Ovs([f"net_cna0,daemon={sock},pf=0,vfs=2,representor=[0-1]"], hw_offload=offload, build=build,
                       pmd_cpus=hex(1 << placement.pmd_cpu))
        self.ovs.start()
        self.ovs.add_switch_bridge()
        memory = lambda who: ["--no-huge", "-m", "256", "--file-prefix", f"{tag}{who}"]  # noqa: E731
        lcores = f"0@{APPLICATION_CPU},1@{APPLICATION_CPU}"
        self.vf = {vf: TestPmd([f"net_cna_vf{vf},daemon={sock},pf=0,vf={vf}"], memory=memory(f"vf{vf}"),
                               lcores=lcores, build=build) for vf in (0, 1)}
        self.wire = TestPmd([f"net_cna1,daemon={sock},pf=1"], memory=memory("wire"), lcores=lcores, build=build)
        for tp in list(self.vf.values()) + [self.wire]:
            tp.start()

    def close(self):
        for tp in list(self.vf.values()) + [self.wire]:
            tp.close()
        self.ovs.stop()
        self.daemon.stop()

    def measure(self, receiver, to_port):
        """VF 1 sends to `receiver` (rep0 behind it: VF 0; uplink: the wire)."""
        self.ovs.ofctl("del-flows", "br0")
        self.ovs.ofctl("add-flow", "br0", f"in_port=rep1,actions=output:{to_port}")
        receiver.cmd("set fwd rxonly")
        receiver.cmd("start")
        sender = self.vf[1]
        sender.cmd("set fwd txonly")
        sender.cmd(f"set eth-peer 0 {port_mac(receiver, 0)}")
        sender.cmd("start")
        time.sleep(1.5)  # the flow made and, offloaded, in the adapter
        last = arrived(receiver)
        self.ovs.appctl("dpif-netdev/pmd-stats-clear")
        rates = []
        for _ in range(WINDOWS):
            time.sleep(WINDOW)
            now = arrived(receiver)
            rates.append((now[1] - last[1]) / (now[0] - last[0]))
            last = now
        busy = pmd_busy(self.ovs)
        sender.cmd("stop")
        receiver.cmd("stop")
        return statistics.median(rates) / 1e6, busy


def measure_placement(args, placement, runs):
    """{(row, offloaded): [(Mpps, PMD busy %) per run]} for one placement."""
    results = {}
    for run in range(runs):
        for offload in (True, False):
            rig = Rig(args.build, offload, f"ovsb{os.getpid()}e{placement.engine_cpu}p{placement.pmd_cpu}r{run}"
                      f"{int(offload)}", placement)
            try:
                for row, receiver, port in (("VF->VF", rig.vf[0], "rep0"), ("VF->wire", rig.wire, "uplink")):
                    results.setdefault((row, offload), []).append(rig.measure(receiver, port))
            finally:
                rig.close()
    return results


def print_placement(placement, results):
    print(f"{'ovs 64 B, ' + placement.title:<44}{'offloaded Mpps':>22}{'OVS datapath Mpps':>22}{'ratio':>7}"
          f"{'PMD busy % (off/ovs)':>22}")
    for row in ("VF->VF", "VF->wire"):
        off = [r for r, _ in results[(row, True)]]
        sw = [r for r, _ in results[(row, False)]]
        off_rate, sw_rate = statistics.median(off), statistics.median(sw)
        ratio = off_rate / sw_rate if sw_rate else float("inf")
        spread = lambda rates: f"({min(rates):.2f}-{max(rates):.2f})"  # noqa: E731
        print(f"{row:<44}{off_rate:>10.2f} {spread(off):>11}{sw_rate:>10.2f} {spread(sw):>11}{ratio:>7.1f}"
              f"{statistics.median(b for _, b in results[(row, True)]):>11.1f}/"
              f"{statistics.median(b for _, b in results[(row, False)]):<10.1f}")
        print(f"ovs {row} offloaded/datapath, {placement.title}: {ratio:.2f}")


def run_ovs_rows(args, runs=3):
    """Prints the rows and the ratios of each placement; False if they could
    not be measured."""
    print()
    if not ovs_harness.available():
        print("ovs: skipped, Debian's openvswitch-switch-dpdk is not installed")
        return True
    if os.geteuid() != 0:
        print("ovs: skipped, needs root (hugepages for Open vSwitch)")
        return True
    try:
        for placement in PLACEMENTS:
            print_placement(placement, measure_placement(args, placement, runs))
    except Exception as e:  # noqa: BLE001 - any failure is a row that could not be measured
        print(f"ovs: failed, {e}")
        return False
    return True
