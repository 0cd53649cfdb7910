"""Link configuration through testpmd: forced speed and flow control, both
carried out by the management firmware (the cable partner negotiates the
forced speed too), and refused where the adapter cannot do what is asked.
"""
import re
import unittest

from harness.testpmd import TestPmd

CABLED = ["net_cna0,adapter=a,ports=2,wire=cable", "net_cna1,adapter=a,port=1"]


def pause(tp, port):
    out = tp.cmd(f"show port {port} flow_ctrl")
    return (re.search(r"Rx pause: (\w+)", out).group(1), re.search(r"Tx pause: (\w+)", out).group(1))


class LinkConfig(unittest.TestCase):
    def test_forced_speed_is_negotiated_on_both_ends(self):
        with TestPmd(CABLED) as tp:
            self.assertEqual(tp.link(0), ("up", "100 Gbps"))
            tp.cmd("port stop 0")
            tp.cmd("port config 0 speed 25000 duplex full")
            tp.cmd("port start 0")
            self.assertEqual(tp.link(0), ("up", "25 Gbps"))
            self.assertEqual(tp.link(1), ("up", "25 Gbps"), "the partner links at the forced speed")
            tp.cmd("port stop 0")
            tp.cmd("port config 0 speed auto duplex full")
            tp.cmd("port start 0")
            self.assertEqual(tp.link(0), ("up", "100 Gbps"))
            tp.quit()

    def test_flow_control_mode_through_the_mfw(self):
        with TestPmd(CABLED) as tp:
            self.assertEqual(pause(tp, 0), ("on", "on"))
            tp.cmd("set flow_ctrl rx off tx on 0 0 0 0 mac_ctrl_frame_fwd off autoneg off 0")
            self.assertEqual(pause(tp, 0), ("off", "on"))
            self.assertEqual(tp.link(0)[0], "up", "re-initialising the PHY keeps the link")
            out = tp.cmd("set flow_ctrl rx on tx on 100 50 10 0 mac_ctrl_frame_fwd off autoneg off 0")
            self.assertRegex(out, r"only the mode and autonegotiation can be set")
            self.assertEqual(pause(tp, 0), ("off", "on"), "a refused setting changes nothing")
            tp.quit()


if __name__ == "__main__":
    unittest.main()
