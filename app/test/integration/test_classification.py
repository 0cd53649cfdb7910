"""Classification through testpmd: promiscuous and all-multicast modes, the
primary MAC filter and mac_addr_set, and the MTU.

testpmd's tx_first frames carry the port's eth-peer address as destination,
and io forwarding leaves them unchanged, so the destination decides whether the
receiving port's vport accepts them.
"""
import re
import time
import unittest

from harness.testpmd import TestPmd, forward_stats

CABLED = ["net_cna0,adapter=a,ports=2,wire=cable", "net_cna1,adapter=a,port=1"]


def port_mac(tp, port):
    return re.search(r"MAC address: ([0-9A-F:]{17})", tp.cmd(f"show port info {port}")).group(1)


def received(tp, seconds=0.4):
    fwd = forward_stats(tp.run_forwarding(seconds))
    return fwd[0]["RX-packets"], fwd[1]["RX-packets"]


class Classification(unittest.TestCase):
    def test_promiscuous_and_primary_mac_filter(self):
        with TestPmd(CABLED) as tp:
            mac0, mac1 = port_mac(tp, 0), port_mac(tp, 1)
            self.assertNotEqual(mac0, mac1)
            # testpmd's default peers (02:00:00:00:00:0N) are nobody's MAC
            self.assertTrue(all(n > 1000 for n in received(tp)), "promiscuous ports take every frame")
            tp.cmd("set promisc all off")
            self.assertEqual(received(tp), (0, 0), "frames to a foreign MAC must be filtered")
            tp.cmd(f"set eth-peer 0 {mac1}")
            tp.cmd(f"set eth-peer 1 {mac0}")
            self.assertTrue(all(n > 1000 for n in received(tp)), "frames to the port's MAC pass")
            tp.quit()

    def test_mac_addr_set_moves_the_filter(self):
        with TestPmd(CABLED) as tp:
            mac0 = port_mac(tp, 0)
            tp.cmd("set promisc all off")
            tp.cmd("set eth-peer 0 02:11:22:33:44:55")
            tp.cmd(f"set eth-peer 1 {mac0}")
            rx0, rx1 = received(tp)
            self.assertEqual(rx1, 0, "port 1 does not own 02:11:22:33:44:55 yet")
            self.assertGreater(rx0, 1000)
            out = tp.cmd("mac_addr set 1 02:11:22:33:44:55")
            self.assertNotIn("failed", out.lower())
            self.assertEqual(port_mac(tp, 1), "02:11:22:33:44:55")
            rx0, rx1 = received(tp)
            self.assertGreater(rx1, 1000, "the new primary MAC is accepted")
            tp.quit()

    def test_allmulticast(self):
        with TestPmd(CABLED) as tp:
            mac0, mac1 = port_mac(tp, 0), port_mac(tp, 1)
            tp.cmd("set promisc all off")
            tp.cmd("set allmulti all off")
            tp.cmd("set eth-peer 0 01:00:5E:00:00:01")
            tp.cmd(f"set eth-peer 1 {mac0}")
            self.assertEqual(received(tp)[1], 0, "unregistered multicast is filtered")
            tp.cmd("set allmulti 1 on")
            self.assertGreater(received(tp)[1], 1000, "all-multicast accepts it")
            tp.cmd("set allmulti 1 off")
            self.assertEqual(received(tp)[1], 0)
            tp.cmd(f"set eth-peer 0 {mac1}")
            self.assertGreater(received(tp)[1], 1000)
            tp.quit()


class Mtu(unittest.TestCase):
    def test_mtu_update_and_limits(self):
        with TestPmd(["net_cna0"]) as tp:
            self.assertRegex(tp.cmd("show port info 0"), r"MTU: 1500")
            tp.cmd("port stop 0")
            tp.cmd("port config mtu 0 1400")
            tp.cmd("port start 0")
            self.assertRegex(tp.cmd("show port info 0"), r"MTU: 1400")
            tp.wait_link_up()  # back up after port start
            fwd = forward_stats(tp.run_forwarding(1.0))
            self.assertGreater(fwd[0]["RX-packets"], 1000)
            # 9000 needs more than one 2 KiB mbuf per frame: refused without scattered Rx
            out = tp.cmd("port config mtu 0 9000")
            self.assertRegex(out, r"(?i)fail|error|invalid")
            self.assertRegex(tp.cmd("show port info 0"), r"MTU: 1400")
            self.assertRegex(tp.cmd("port config mtu 0 20000"), r"device max MTU \(9600\)")
            tp.quit()


if __name__ == "__main__":
    unittest.main()
