"""L2 acceptance, operations: queue stop/start, deferred start and
runtime setup, descriptor status, exact statistics and xstats and their reset,
configuration surviving a port stop/start, link down/up with LSC events, and
what `show port info` advertises.
"""
import re
import time
import unittest

from harness.testpmd import TapRig, frame, port_mac, set_reta, xstats
from test_l2_acceptance import FOREIGN, assert_ok


def rxq_state(tp, port, q):
    out = tp.cmd(f"show rxq info {port} {q}")
    m = re.search(r"Rx queue state:\s*(\w+)", out, re.I)
    return (m.group(1).lower() if m else None), out


class Queues(unittest.TestCase):
    def test_rx_queue_stop_start(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        mac = port_mac(tp, 0)
        rig.start_rx()
        self.assertEqual(len(rig.rx(0, [bytes(frame(mac))])), 1)
        tp.cmd("stop")  # testpmd changes queues with forwarding stopped
        assert_ok(self, tp.cmd("port 0 rxq 0 stop"), "port 0 rxq 0 stop")
        self.assertEqual(rxq_state(tp, 0, 0)[0], "stopped")
        tp.cmd("start")
        self.assertEqual(rig.rx(0, [bytes(frame(mac)) for _ in range(3)], count=0), [],
                         "a stopped queue delivers nothing")
        tp.cmd("stop")
        assert_ok(self, tp.cmd("port 0 rxq 0 start"), "port 0 rxq 0 start")
        self.assertEqual(rxq_state(tp, 0, 0)[0], "started")
        tp.cmd("start")
        pkts = rig.rx(0, [bytes(frame(mac, size=77))])
        self.assertEqual([p["length"] for p in pkts], [77 + 14], "only frames sent after the restart arrive")
        rig.tp.quit()

    def test_tx_queue_stop_start(self):
        rig = self.enterContext(TapRig(2))
        tp = rig.tp
        mac0 = port_mac(tp, 0)
        tp.cmd("set fwd io")
        tp.cmd("start")
        self.assertEqual(len(rig.io(send=[(0, bytes(frame(mac0)))], capture=[1], expect=1)), 1)
        tp.cmd("stop")
        assert_ok(self, tp.cmd("port 1 txq 0 stop"), "port 1 txq 0 stop")
        self.assertRegex(tp.cmd("show txq info 1 0"), r"Tx queue state: stopped")
        tp.cmd("start")
        self.assertEqual(rig.io(send=[(0, bytes(frame(mac0)))], capture=[1], timeout=0.5), [],
                         "nothing leaves a stopped Tx queue")
        tp.cmd("stop")
        assert_ok(self, tp.cmd("port 1 txq 0 start"), "port 1 txq 0 start")
        tp.cmd("start")
        self.assertEqual(len(rig.io(send=[(0, bytes(frame(mac0)))], capture=[1], expect=1)), 1)
        rig.tp.quit()

    def test_deferred_start(self):
        rig = self.enterContext(TapRig(1, app_args=["--rxq=2", "--txq=2"]))
        tp = rig.tp
        mac = port_mac(tp, 0)
        tp.cmd("port stop 0")
        assert_ok(self, tp.cmd("port 0 rxq 1 deferred_start on"), "deferred_start on")
        assert_ok(self, tp.cmd("port start 0"), "port start with a deferred queue")
        state, out = rxq_state(tp, 0, 1)
        self.assertEqual(state, "stopped", out)
        self.assertRegex(out, r"RX deferred start: on")
        self.assertEqual(rxq_state(tp, 0, 0)[0], "started")
        # every RETA entry to queue 1: nothing arrives until it is started
        assert_ok(self, set_reta(tp, 0, {i: 1 for i in range(128)}), "reta: all to queue 1")
        rig.start_rx()
        self.assertEqual(rig.rx(0, [bytes(frame(mac))], count=0), [])
        tp.cmd("stop")
        assert_ok(self, tp.cmd("port 0 rxq 1 start"), "port 0 rxq 1 start")
        tp.cmd("start")
        pkts = rig.rx(0, [bytes(frame(mac, size=99))])
        self.assertEqual([(p["queue"], p["length"]) for p in pkts], [(1, 99 + 14)])
        rig.tp.quit()

    def test_runtime_queue_setup(self):
        rig = self.enterContext(TapRig(1, app_args=["--rxq=2", "--txq=2"]))
        tp = rig.tp
        mac = port_mac(tp, 0)
        self.assertRegex(tp.cmd("show port info 0"), r"Device capabilities: .*RUNTIME_RX_QUEUE_SETUP")
        assert_ok(self, tp.cmd("port 0 rxq 1 stop"), "port 0 rxq 1 stop")
        assert_ok(self, tp.cmd("port config 0 rxq 1 ring_size 128"), "ring_size")
        assert_ok(self, tp.cmd("port 0 rxq 1 setup"), "port 0 rxq 1 setup on a started port")
        self.assertRegex(tp.cmd("show rxq info 0 1"), r"Number of RXDs: 128\b")
        assert_ok(self, tp.cmd("port 0 rxq 1 start"), "port 0 rxq 1 start")
        assert_ok(self, set_reta(tp, 0, {i: 1 for i in range(128)}), "reta: all to queue 1")
        rig.start_rx()
        # two waves, each fitting in the new 128-descriptor ring however slowly
        # testpmd polls: together more than it holds, so it must be refilled
        pkts = []
        for wave in range(2):
            pkts += rig.rx(0, [bytes(frame(mac, sport=1000 + 100 * wave + i)) for i in range(100)], timeout=5)
        tp.cmd("stop")
        stats = tp.port_stats(0)
        self.assertEqual(len(pkts), 200, stats)
        self.assertEqual(stats["RX-missed"], 0, stats)
        self.assertEqual({p["queue"] for p in pkts}, {1})
        rig.tp.quit()

    def test_descriptor_status(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        mac = port_mac(tp, 0)
        out = tp.cmd("show port 0 rxq 0 desc 0 status")
        self.assertRegex(out, r"Desc status = AVAILABLE", "an empty ring's descriptor waits for a frame")
        # nobody polls: frames stay in the ring
        rig.io(send=[(0, bytes(frame(mac))) for _ in range(5)])
        time.sleep(0.3)
        self.assertRegex(tp.cmd("show port 0 rxq 0 desc 0 status"), r"Desc status = DONE")
        self.assertRegex(tp.cmd("show port 0 rxq 0 desc 10 status"), r"Desc status = AVAILABLE")
        self.assertRegex(tp.cmd("show port 0 rxq 0 desc used count"), r"Used desc count = 5\b")
        self.assertRegex(tp.cmd("show port 0 txq 0 desc 0 status"), r"Desc status = (DONE|FULL|UNAVAILABLE)")
        rig.tp.quit()


class Stats(unittest.TestCase):
    def test_exact_counts_and_reset(self):
        n, size = 25, 200
        rig = self.enterContext(TapRig(2))
        tp = rig.tp
        mac0 = port_mac(tp, 0)
        tp.cmd("clear port stats all")
        tp.cmd("set fwd io")
        tp.cmd("start")
        got = rig.io(send=[(0, bytes(frame(mac0, size=size))) for _ in range(n)], capture=[1], expect=n,
                     timeout=3)
        self.assertEqual(len(got), n)
        tp.cmd("stop")
        length = size + 14
        s0, s1 = tp.port_stats(0), tp.port_stats(1)
        self.assertEqual((s0["RX-packets"], s0["RX-bytes"], s0["TX-packets"]), (n, n * length, 0))
        self.assertEqual((s1["TX-packets"], s1["TX-bytes"], s1["RX-packets"]), (n, n * length, 0))
        self.assertEqual((s0["RX-errors"], s0["RX-missed"], s1["TX-errors"]), (0, 0, 0))
        x0, x1 = xstats(tp, 0), xstats(tp, 1)
        self.assertEqual((x0["rx_good_packets"], x0["rx_good_bytes"]), (n, n * length))
        self.assertEqual((x1["tx_good_packets"], x1["tx_good_bytes"]), (n, n * length))
        self.assertEqual((x0["rx_q0_packets"], x0["rx_q0_bytes"]), (n, n * length), "per-queue Rx stats")
        self.assertEqual((x1["tx_q0_packets"], x1["tx_q0_bytes"]), (n, n * length), "per-queue Tx stats")
        drv0 = {k: v for k, v in x0.items() if not re.match(r"(rx|tx)_(good|q\d+|missed|errors|mbuf)", k)}
        self.assertTrue(drv0, f"the PMD adds its own xstats: {sorted(x0)}")
        self.assertIn(n, [v for k, v in drv0.items() if re.search(r"rx.*(ucast|unicast)", k)],
                      f"a unicast Rx counter: {drv0}")
        tp.cmd("clear port stats all")
        for p in (0, 1):
            s = tp.port_stats(p)
            self.assertEqual((s["RX-packets"], s["RX-bytes"], s["TX-packets"], s["TX-bytes"]), (0, 0, 0, 0))
        tp.cmd("clear port xstats all")
        x0 = xstats(tp, 0)
        self.assertEqual({k: v for k, v in x0.items() if v}, {}, "xstats reset")
        # counting resumes from zero
        tp.cmd("start")
        rig.io(send=[(0, bytes(frame(mac0, size=size))) for _ in range(3)], capture=[1], expect=3, timeout=3)
        tp.cmd("stop")
        self.assertEqual(tp.port_stats(0)["RX-packets"], 3)
        self.assertEqual(xstats(tp, 1)["tx_q0_packets"], 3)
        rig.tp.quit()

    def test_xstat_names_are_stable(self):
        rig = self.enterContext(TapRig(1, app_args=["--rxq=2", "--txq=2"]))
        names = list(xstats(rig.tp, 0))
        rig.tp.cmd("port stop 0")
        rig.tp.cmd("port start 0")
        self.assertEqual(list(xstats(rig.tp, 0)), names, "same names, same order across restarts")
        for q in (0, 1):
            self.assertIn(f"rx_q{q}_packets", names)
            self.assertIn(f"tx_q{q}_packets", names)
        rig.tp.quit()


class ConfigLifecycle(unittest.TestCase):
    def test_configuration_survives_port_stop_start(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        mac = port_mac(tp, 0)
        tp.cmd("set promisc 0 off")
        assert_ok(self, tp.cmd(f"mac_addr add 0 {FOREIGN}"), "mac_addr add")
        assert_ok(self, tp.cmd("vlan set filter on 0"), "vlan filter on")
        assert_ok(self, tp.cmd("rx_vlan add 100 0"), "rx_vlan add")
        tp.cmd("port stop 0")
        assert_ok(self, tp.cmd("port config mtu 0 1400"), "mtu 1400")
        tp.cmd("port start 0")
        tp.cmd("port stop 0")
        tp.cmd("port start 0")
        info = tp.cmd("show port info 0")
        self.assertRegex(info, r"MTU: 1400\b")
        self.assertRegex(info, r"Promiscuous mode: disabled")
        self.assertIn(FOREIGN.upper(), tp.cmd("show port 0 macs").upper())
        rig.start_rx()
        frames = [frame(FOREIGN, size=100), frame(mac, size=101), frame("02:00:00:00:77:02", size=102),
                  frame(mac, vlan=100, size=103), frame(mac, vlan=200, size=104),
                  frame(mac, size=1400), frame(mac, size=1401)]
        pkts = rig.rx(0, [bytes(f) for f in frames], count=4)
        self.assertEqual([p["length"] for p in pkts], [114, 115, 103 + 18, 1414],
                         "added MAC and primary pass, foreign MAC, VLAN 200 and 1401-byte packets do not")
        rig.tp.quit()


class Link(unittest.TestCase):
    def test_link_down_up_with_lsc(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        mac = port_mac(tp, 0)
        self.assertEqual(tp.link(0)[0], "up")
        tp.cmd_with_events("set link-down port 0", [r"Port 0: link state change event"])
        self.assertEqual(tp.link(0)[0], "down")
        rig.start_rx()
        self.assertEqual(rig.rx(0, [bytes(frame(mac))], count=0, settle=0.3), [], "no frames over a down link")
        tp.cmd("stop")
        tp.cmd_with_events("set link-up port 0", [r"Port 0: link state change event"])
        self.assertEqual(tp.link(0)[0], "up")
        tp.cmd("start")
        self.assertEqual(len(rig.rx(0, [bytes(frame(mac))])), 1)
        rig.tp.quit()

    def test_kernel_partner_sees_carrier_follow_the_link(self):
        """The kernel is the link partner: `set link-down` takes its carrier."""
        rig = self.enterContext(TapRig(1))
        tp = rig.tp

        def carrier():
            return rig.ns.run("cat", f"/sys/class/net/{rig.ifname[0]}/carrier", check=False).stdout.strip()
        self.assertEqual(carrier(), "1")
        tp.cmd_with_events("set link-down port 0", [r"Port 0: link state change event"])
        self.assertEqual(carrier(), "0", "carrier off while the port's link is down")
        tp.cmd_with_events("set link-up port 0", [r"Port 0: link state change event"])
        self.assertEqual(carrier(), "1")
        rig.tp.quit()


class Advertised(unittest.TestCase):
    def test_port_and_device_info(self):
        rig = self.enterContext(TapRig(1))
        tp = rig.tp
        info = tp.cmd("show port info 0")
        self.assertRegex(info, r"Max possible RX queues: 16\b")
        self.assertRegex(info, r"Max possible TX queues: 16\b")
        self.assertRegex(info, r"Redirection table size: 128\b")
        self.assertRegex(info, r"Hash key size in bytes: 40\b")
        self.assertRegex(info, r"Device capabilities: .*RUNTIME_RX_QUEUE_SETUP.*RUNTIME_TX_QUEUE_SETUP")
        self.assertRegex(info, r"Firmware-version: (?!not available)\S+", "fw_version_get")
        self.assertRegex(tp.cmd("port config mtu 0 9601"), r"device max MTU \(9600\)")
        dev = tp.cmd("show device info all")
        self.assertRegex(dev, r"Device speed capability:[^\n]*(\n[^\n]*)*100 Gbps", "link speed capabilities")
        self.assertRegex(tp.cmd("show rxq info 0 0"), r"Burst mode: \S+", "Rx burst mode info")
        self.assertRegex(tp.cmd("show txq info 0 0"), r"Burst mode: \S+", "Tx burst mode info")
        rig.tp.quit()


if __name__ == "__main__":
    unittest.main()
