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
four on two CPUs, so where each runs decides what is measured. The
applications (sender and receiver) run on CPU 0 and Open vSwitch's PMD
thread on CPU 1 throughout. The rows that count put the adapter's engine on
CPU 1 too: the switch's side of the machine, whichever switch it is, gets
one CPU, and the applications' side the other. The second table puts the
engine beside the applications instead: there the engine's third of CPU 0
limits both modes alike and Open vSwitch's CPU goes mostly idle, so it
shows the adapter's share of a CPU, not the switch's cost; it is printed so
that the placement's weight is in plain view.

The figures: the rate the switch delivers to the receiver's port (what it
received, and what it dropped for want of buffers: a receiver sharing its
CPU is not what is measured; median of the windows), and the share of its
cycles Open vSwitch's PMD thread spent processing (not idle polling)
meanwhile."""
import os
import re
import statistics
import sys
import time

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


APPLICATION_CPU, SWITCH_CPU = 0, 1
PLACEMENTS = (("engine on the switch's CPU", SWITCH_CPU), ("engine on the applications' CPU", APPLICATION_CPU))


class Rig:
    def __init__(self, build, offload, tag, engine_cpu):
        self.daemon = AdapterDaemon(["--ports", "2", "--wire", "cable", "--engine-cpus", str(engine_cpu)], build=build)
        self.daemon.start()
        sock = self.daemon.socket
        self.ovs = Ovs([f"net_cna0,daemon={sock},pf=0,vfs=2,representor=[0-1]"], hw_offload=offload, build=build,
                       pmd_cpus=hex(1 << SWITCH_CPU))
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


def measure_placement(args, engine_cpu, runs):
    """{(row, offloaded): [(Mpps, PMD busy %) per run]} with the engine on `engine_cpu`."""
    results = {}
    for run in range(runs):
        for offload in (True, False):
            rig = Rig(args.build, offload, f"ovsb{os.getpid()}c{engine_cpu}r{run}{int(offload)}", engine_cpu)
            try:
                for row, receiver, port in (("VF->VF", rig.vf[0], "rep0"), ("VF->wire", rig.wire, "uplink")):
                    results.setdefault((row, offload), []).append(rig.measure(receiver, port))
            finally:
                rig.close()
    return results


def print_placement(title, results, suffix):
    print(f"{'ovs 64 B, ' + title:<44}{'offloaded Mpps':>16}{'OVS datapath Mpps':>19}{'ratio':>8}"
          f"{'PMD busy % (off/ovs)':>22}")
    for row in ("VF->VF", "VF->wire"):
        off = results[(row, True)]
        sw = results[(row, False)]
        off_rate = statistics.median(r for r, _ in off)
        sw_rate = statistics.median(r for r, _ in sw)
        ratio = off_rate / sw_rate if sw_rate else float("inf")
        print(f"{row:<44}{off_rate:>16.2f}{sw_rate:>19.2f}{ratio:>8.1f}"
              f"{statistics.median(b for _, b in off):>11.1f}/{statistics.median(b for _, b in sw):<10.1f}")
        print(f"ovs {row} offloaded/datapath{suffix}: {ratio:.2f}")


def run_ovs_rows(args, runs=3):
    """Prints the rows and the ratios, for each placement of the engine (the
    first three runs, the second one); False if they could not be measured."""
    print()
    if not ovs_harness.available():
        print("ovs: skipped, Debian's openvswitch-switch-dpdk is not installed")
        return True
    if os.geteuid() != 0:
        print("ovs: skipped, needs root (hugepages for Open vSwitch)")
        return True
    try:
        for n, (title, engine_cpu) in enumerate(PLACEMENTS):
            results = measure_placement(args, engine_cpu, runs if n == 0 else 1)
            print_placement(title, results, "" if n == 0 else f", {title}")
    except Exception as e:  # noqa: BLE001 - any failure is a row that could not be measured
        print(f"ovs: failed, {e}")
        return False
    return True
