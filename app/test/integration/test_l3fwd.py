"""Debian's unmodified l3fwd example routes between two kernel hosts over
net_cna ports with TAP wires (harness/l3fwd.py): ping both ways and a TCP transfer
whose checksum matches."""
import unittest

from harness.l3fwd import HOSTS, L3fwdRig


class L3fwd(unittest.TestCase):
    def test_hosts_reach_each_other_through_l3fwd(self):
        rig = self.enterContext(L3fwdRig())
        for src in (0, 1):
            out = rig.ping(src)
            self.assertEqual(out.returncode, 0, f"ping {HOSTS[1 - src][0]} from host {'AB'[src]}:\n"
                                                f"{out.stdout}{out.stderr}\nl3fwd:\n{rig.read()}")
            self.assertRegex(out.stdout, r" 0% packet loss")
            self.assertRegex(out.stdout, r"ttl=63", "l3fwd decrements the TTL")
        sent, received, n, _ = rig.tcp_transfer(4 << 20)
        self.assertEqual(n, 4 << 20)
        self.assertEqual(received, sent, "the transfer arrives intact")
        self.assertNotRegex(rig.read(), r"(?i)error|fail")


if __name__ == "__main__":
    unittest.main()
