"""Soak: testpmd forwarding on a cabled pair and on TAP wires while random
churn hits every control path a user reaches: link flaps from either end
(testpmd, and the kernel on a TAP wire), port stop/start, queue and
descriptor counts, MTU, promiscuous and allmulticast modes, MAC and VLAN
filters, rte_flow rules, stats and xstats resets while dpdk-telemetry.py
reads them. Afterwards traffic flows, every mbuf is back in its pool and
the counters of testpmd, xstats, telemetry and the adapter agree.

CNA_SOAK_SECONDS (per wire, default 50) and CNA_SOAK_SEED replay or extend
a run; a failure names the seed and the last actions taken."""
import collections
import os
import random
import re
import threading
import time
import unittest

from harness.secondary import file_prefix, require_hugepages
from harness.testpmd import TapRig, TestPmd, TestPmdError, xstats
from test_telemetry import telemetry

SECONDS = float(os.environ.get("CNA_SOAK_SECONDS", "50"))
CABLED = ["net_cna0,adapter=soak,ports=2,wire=cable", "net_cna1,adapter=soak,port=1"]
# A counter past this is a wrapped difference, not a count (a reset race
# once gave ~2^64).
SANE = 1 << 48
FLOW_CREATED = re.compile(r"Flow rule #(\d+) created")
REFUSAL = re.compile(r"(?i)(failed|error[: ]|invalid|cannot|not supported)")


class Churn:
    """Random control operations on a forwarding testpmd; remembers the
    last ones for the failure message and what it changed, to undo it."""

    def __init__(self, tp, ports, seed, kernel_link=None):
        self.tp, self.ports, self.seed, self.rng = tp, ports, seed, random.Random(seed)
        self.kernel_link = kernel_link
        self.history = collections.deque(maxlen=30)
        self.flows = {p: [] for p in ports}
        self.vlans = {p: set() for p in ports}
        self.vlan_filtering = {p: False for p in ports}
        self.macs = {p: set() for p in ports}
        self.refused = collections.Counter()
        self.last_refusals = collections.deque(maxlen=5)
        info = tp.cmd(f"show port info {ports[0]}")
        self.max_queues = min(4, int(re.search(r"Max possible RX queues: (\d+)", info).group(1)))
        self.actions = [self.link_flap, self.restart, self.port_restart, self.queues, self.descriptors, self.mtu,
                        self.promisc, self.allmulti, self.mac_filter, self.vlan_filter, self.flow, self.clear_stats]
        if kernel_link:
            self.actions.append(self.kernel_flap)

    def cmd(self, line):
        self.history.append(line)
        out = self.tp.cmd(line)
        # A refusal is an answer (the invalid combination is the user's),
        # never a crash: it is counted, and the run goes on.
        if line not in ("stop", "start", "start tx_first") and REFUSAL.search(out):
            self.refused[" ".join(line.split()[:2])] += 1
            self.last_refusals.append(f"{line}: {out.strip()[-300:]}")
        return out

    def step(self):
        self.rng.choice(self.actions)()

    def reconfigure(self, *lines):
        self.cmd("stop")
        self.cmd("port stop all")
        # testpmd ORs the port's Rx offloads into each queue's and 'vlan set
        # filter off' clears only the port's: the next queue setup would ask
        # a port-level offload of one queue, which ethdev refuses. What a
        # user does at this point, restating the offload, keeps them equal.
        for p, on in self.vlan_filtering.items():
            self.cmd(f"port config {p} rx_offload vlan_filter {'on' if on else 'off'}")
        for line in lines:
            self.cmd(line)
        self.cmd("port start all")
        self.cmd("start tx_first")

    def link_flap(self):
        p = self.rng.choice(self.ports)
        self.cmd(f"set link-down port {p}")
        self.cmd(f"set link-up port {p}")

    def kernel_flap(self):
        self.history.append("kernel: link down/up")
        self.kernel_link(False)
        time.sleep(self.rng.random() * 0.05)
        self.kernel_link(True)

    def restart(self):
        self.cmd("stop")
        self.cmd("start tx_first")

    def port_restart(self):
        self.reconfigure()

    def queues(self):
        n = self.rng.randint(1, self.max_queues)
        self.reconfigure(f"port config all rxq {n}", f"port config all txq {n}")

    def descriptors(self):
        rxd, txd = self.rng.choice((128, 256, 512)), self.rng.choice((128, 256, 512))
        self.reconfigure(f"port config all rxd {rxd}", f"port config all txd {txd}")

    def mtu(self):
        p = self.rng.choice(self.ports)
        self.reconfigure(f"port config mtu {p} {self.rng.choice((1500, 2000, 9000))}")

    def promisc(self):
        self.cmd(f"set promisc {self.rng.choice(self.ports)} {self.rng.choice(('on', 'off'))}")

    def allmulti(self):
        self.cmd(f"set allmulti {self.rng.choice(self.ports)} {self.rng.choice(('on', 'off'))}")

    def mac_filter(self):
        p = self.rng.choice(self.ports)
        if self.macs[p] and self.rng.random() < 0.5:
            mac = self.macs[p].pop()
            self.cmd(f"mac_addr remove {p} {mac}")
        else:
            mac = "02:50:00:00:%02x:%02x" % (p, self.rng.randrange(256))
            if "error" not in self.cmd(f"mac_addr add {p} {mac}").lower():
                self.macs[p].add(mac)

    def vlan_filter(self):
        p = self.rng.choice(self.ports)
        on = self.rng.random() < 0.5
        if not REFUSAL.search(self.cmd(f"vlan set filter {'on' if on else 'off'} {p}")):
            self.vlan_filtering[p] = on
        if self.vlans[p] and self.rng.random() < 0.5:
            vid = self.vlans[p].pop()
            self.cmd(f"rx_vlan rm {vid} {p}")
        else:
            vid = self.rng.randrange(1, 4095)
            self.cmd(f"rx_vlan add {vid} {p}")
            self.vlans[p].add(vid)

    def flow(self):
        p = self.rng.choice(self.ports)
        roll = self.rng.random()
        if roll < 0.1:
            self.cmd(f"flow flush {p}")
            self.flows[p].clear()
        elif roll < 0.4 and self.flows[p]:
            rule = self.flows[p].pop(self.rng.randrange(len(self.flows[p])))
            self.cmd(f"flow destroy {p} rule {rule}")
        else:
            out = self.cmd(f"flow create {p} ingress pattern eth / ipv4 / udp dst is {self.rng.randrange(1, 65535)} "
                           f"/ end actions queue index 0 / count / end")
            m = FLOW_CREATED.search(out)
            if m:
                self.flows[p].append(int(m.group(1)))

    def clear_stats(self):
        self.cmd(f"clear port {self.rng.choice(('stats', 'xstats'))} all")

    def settle(self):
        """Undo what stops traffic: every filter and mode back to forwarding
        all, links up from both ends."""
        if self.kernel_link:
            self.kernel_link(True)
        for p in self.ports:
            self.cmd(f"flow flush {p}")
            self.cmd(f"vlan set filter off {p}")
            self.vlan_filtering[p] = False
            self.cmd(f"set promisc {p} on")
            self.cmd(f"set link-up port {p}")
        self.reconfigure("port config all rxq 1", "port config all txq 1", "port config all rxd 512",
                         "port config all txd 512", *[f"port config mtu {p} 1500" for p in self.ports])


class TelemetryReader(threading.Thread):
    """dpdk-telemetry.py reading both ports' stats and xstats in a loop."""

    def __init__(self, prefix, ports):
        super().__init__(daemon=True)
        self.prefix, self.ports = prefix, ports
        self.stopping = threading.Event()
        self.reads = 0
        self.insane = []

    def run(self):
        cmds = [c for p in self.ports for c in (f"/ethdev/stats,{p}", f"/ethdev/xstats,{p}")]
        while not self.stopping.is_set():
            try:
                replies = telemetry(self.prefix, *cmds)
            except TestPmdError as e:
                self.insane.append(f"telemetry failed: {e}")
                return
            for cmd, reply in zip(cmds, replies):
                for name, value in reply.items():
                    for v in value if isinstance(value, list) else [value]:
                        if isinstance(v, int) and not 0 <= v < SANE:
                            self.insane.append(f"{cmd} {name} = {v}")
            self.reads += 1

    def stop(self):
        self.stopping.set()
        self.join(30)


class SoakBase(unittest.TestCase):
    def soak(self, tp, churn, seconds):
        deadline = time.monotonic() + seconds
        steps = 0
        while time.monotonic() < deadline:
            churn.step()
            steps += 1
        churn.settle()
        print(f"\n  soak seed {churn.seed}: {steps} actions in {seconds:.0f} s; refused: {dict(churn.refused)}")
        return steps

    def context(self, churn):
        return (f"seed {churn.seed}; last actions:\n  " + "\n  ".join(churn.history) +
                "\nlast refusals:\n  " + "\n  ".join(churn.last_refusals))

    def check_after(self, tp, churn, rx_port):
        ctx = self.context(churn)
        for p in churn.ports:
            deadline = time.monotonic() + 5  # autonegotiation after the start
            while tp.link(p)[0] != "up" and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertEqual(tp.link(p)[0], "up", f"port {p} link\n{ctx}")
        # Counters from zero with nothing in flight, then traffic.
        tp.cmd("stop")
        time.sleep(0.3)
        tp.cmd("clear port stats all")
        tp.cmd("clear port xstats all")
        tp.run_forwarding(1.0)
        time.sleep(0.3)
        mine = {p: tp.port_stats(p) for p in churn.ports}
        self.assertGreater(mine[rx_port]["RX-packets"], 0, f"no traffic after the churn\n{ctx}")
        for p in churn.ports:
            xs = xstats(tp, p)
            vport_rx = xs["rx_unicast_packets"] + xs["rx_multicast_packets"] + xs["rx_broadcast_packets"]
            vport_tx = xs["tx_unicast_packets"] + xs["tx_multicast_packets"] + xs["tx_broadcast_packets"]
            self.assertEqual((mine[p]["RX-packets"], mine[p]["TX-packets"]),
                             (xs["rx_good_packets"], xs["tx_good_packets"]), f"port {p}: testpmd vs xstats\n{ctx}")
            self.assertEqual((xs["rx_good_packets"], xs["tx_good_packets"]), (vport_rx, vport_tx),
                             f"port {p}: the queues' counts vs the adapter's vport counters\n{ctx}")
        return mine

    def check_mbufs_and_quit(self, tp, churn):
        tp.cmd("port stop all")
        self.assertEqual(set(tp.mempool_in_use().values()), {0}, f"mbufs not back in their pool\n"
                                                                   f"{self.context(churn)}")
        tp.cmd("port start all")
        tp.quit()
        self.assertEqual(tp.exit_status, 0)


class CabledSoak(SoakBase):
    def test_churn_under_forwarding_with_telemetry(self):
        require_hugepages(self)
        prefix = file_prefix()
        seed = int(os.environ.get("CNA_SOAK_SEED", time.time_ns() % 1_000_000))
        with TestPmd(CABLED, file_prefix=prefix, timeout=20, app_args=["--rxq=1", "--txq=1"]) as tp:
            churn = Churn(tp, [0, 1], seed)
            tp.cmd("start tx_first")
            reader = TelemetryReader(prefix, [0, 1])
            reader.start()
            try:
                self.soak(tp, churn, SECONDS)
            finally:
                reader.stop()
            self.assertGreater(reader.reads, 0, "telemetry never answered")
            self.assertEqual(reader.insane[:5], [], f"telemetry read insane figures\n{self.context(churn)}")
            mine = self.check_after(tp, churn, rx_port=0)
            ports = telemetry(prefix, "/ethdev/stats,0", "/ethdev/stats,1")
            for p, stats in enumerate(ports):
                self.assertEqual((stats["ipackets"], stats["opackets"]),
                                 (mine[p]["RX-packets"], mine[p]["TX-packets"]), f"port {p}: telemetry vs testpmd")
            self.check_mbufs_and_quit(tp, churn)


class TapSoak(SoakBase):
    SENDER = ("import socket, sys, time\n"
              "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
              "f = bytes.fromhex('ffffffffffff02000000aa01' '88b5') + bytes(50)\n"
              "while True:\n"
              "    try:\n"
              "        s.sendto(f, (sys.argv[1], 0))\n"
              "    except OSError:\n"
              "        time.sleep(0.01)\n"
              "    time.sleep(0.0005)\n")

    def test_churn_with_the_kernel_on_the_wires(self):
        seed = int(os.environ.get("CNA_SOAK_SEED", time.time_ns() % 1_000_000))
        with TapRig(2) as rig:
            tp = rig.tp
            sender = rig.ns.popen("/usr/bin/python3", "-c", self.SENDER, rig.ifname[0])
            try:
                def kernel_link(up):
                    rig.ns.run("ip", "link", "set", rig.ifname[0], "up" if up else "down")

                churn = Churn(tp, [0, 1], seed, kernel_link=kernel_link)
                tp.cmd("set fwd io")
                tp.cmd("start")
                self.soak(tp, churn, SECONDS * 0.7)
                self.check_after(tp, churn, rx_port=0)
            finally:
                sender.kill()
                sender.wait()
            self.check_mbufs_and_quit(tp, churn)


if __name__ == "__main__":
    unittest.main()
