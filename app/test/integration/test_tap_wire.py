"""The TAP wire: the Linux kernel as the link partner of a net_cna port.

Debian's dpdk-testpmd drives a port whose wire is a TAP interface
(`--vdev net_cna0,wire=tap:<ifname>`); the test moves the interface into a
network namespace of its own, gives it an IPv4 address there and lets the
kernel ping through it. testpmd's icmpecho forwarding answers ARP requests
and ICMP echo requests for any address, so the ping only succeeds if frames
flow both ways: kernel -> TAP -> adapter Rx -> testpmd, and back.
"""
import os
import unittest

from harness.testpmd import Netns, TestPmd, run_testpmd_once, sh, unique_tag, wait_for_iface

KERNEL_ADDR = "10.78.0.1/24"
PEER_IP = "10.78.0.2"  # any address: icmpecho answers for all of them


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
class TapWire(unittest.TestCase):
    def setUp(self):
        self.ifname = f"cnw{unique_tag()}"[:15]
        self.ns = Netns()
        # Cleanups run even when the test fails; the TAP is not persistent and
        # goes with testpmd, the explicit delete covers a testpmd that hangs.
        self.addCleanup(self.ns.delete)
        self.addCleanup(sh, "ip", "link", "del", self.ifname, check=False)

    def test_kernel_pings_testpmd_icmpecho_without_loss(self):
        with TestPmd([f"net_cna0,wire=tap:{self.ifname}"]) as tp:
            wait_for_iface(self.ifname)
            self.ns.adopt(self.ifname, addr=KERNEL_ADDR)
            self.assertEqual(tp.link(0)[0], "up")
            tp.cmd("set fwd icmpecho")
            tp.cmd("start")
            ping = self.ns.run("ping", "-c", "3", "-i", "0.2", "-W", "2", PEER_IP, check=False, timeout=30)
            self.assertEqual(ping.returncode, 0, ping.stdout + ping.stderr)
            self.assertRegex(ping.stdout, r"\b3 packets transmitted, 3 received, 0% packet loss")
            tp.cmd("stop")
            stats = tp.port_stats(0)
            # ARP request and three echo requests in, their answers out
            self.assertGreaterEqual(stats["RX-packets"], 4)
            self.assertGreaterEqual(stats["TX-packets"], 4)
            tp.quit()

    def test_bad_tap_names_are_refused_naming_the_devarg(self):
        for value in ("tap:bad/name", "tap:", "tap:name-longer-than-15"):
            status, sig, out = run_testpmd_once([f"net_cna0,wire={value}"])
            self.assertIsNone(sig, f"testpmd crashed:\n{out}")
            self.assertIn(f"wire={value}", out)
            self.assertRegex(out, r"No probed ethernet devices|Fail|fail")

    def test_two_ports_of_one_adapter_each_bring_their_own_tap(self):
        other = f"cnw{unique_tag()}"[:15]
        self.addCleanup(sh, "ip", "link", "del", other, check=False)
        adapter = f"w{unique_tag()}"
        vdevs = [f"net_cna0,adapter={adapter},ports=2,port=0,wire=tap:{self.ifname}",
                 f"net_cna1,adapter={adapter},port=1,wire=tap:{other}"]
        with TestPmd(vdevs) as tp:
            for ifname in (self.ifname, other):
                wait_for_iface(ifname)
            for port in (0, 1):
                self.assertEqual(tp.link(port)[0], "up")
            tp.quit()

if __name__ == "__main__":
    unittest.main()
