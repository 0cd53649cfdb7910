"""Port addresses: without `mac=`, every adapter of every process has its
own locally administered MACs (two cna processes whose TAP wires meet in
one bridge must not share one); with `mac=`, the port answers to the given
address and only to it."""
import os
import unittest

from scapy.all import Ether

from harness.testpmd import TapRig, TestPmd, frame, port_mac


def locally_administered_unicast(mac):
    first = int(mac.split(":")[0], 16)
    return first & 0x03 == 0x02


class DefaultMacs(unittest.TestCase):
    def test_two_processes_with_the_same_adapter_name_differ(self):
        vdevs = ["net_cna0,adapter=same,ports=2,wire=cable", "net_cna1,adapter=same,port=1"]
        with TestPmd(vdevs) as a, TestPmd(vdevs) as b:
            macs_a = [port_mac(a, p) for p in (0, 1)]
            macs_b = [port_mac(b, p) for p in (0, 1)]
            a.quit()
            b.quit()
        for mac in macs_a + macs_b:
            self.assertTrue(locally_administered_unicast(mac), mac)
        self.assertEqual(len(set(macs_a + macs_b)), 4, f"{macs_a} and {macs_b}")
        # the PFs of one adapter are numbered in the last byte
        self.assertEqual(macs_a[0][:-2], macs_a[1][:-2])

    def test_two_adapters_of_one_process_differ(self):
        with TestPmd(["net_cna0,adapter=one", "net_cna1,adapter=two"]) as tp:
            macs = [port_mac(tp, p) for p in (0, 1)]
            tp.quit()
        self.assertNotEqual(macs[0], macs[1])


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
class GivenMac(unittest.TestCase):
    MAC = "02:12:34:56:78:9a"

    def test_the_port_answers_to_the_given_mac_only(self):
        with TapRig(1, vdev_extra=f",mac={self.MAC}") as rig:
            self.assertEqual(port_mac(rig.tp, 0), self.MAC)
            rig.tp.cmd("set promisc 0 off")
            rig.start_rx()
            other = "02:12:34:56:78:9b"
            got = rig.rx(0, [bytes(frame(other)), bytes(frame(self.MAC))], count=1, settle=0.5)
            self.assertEqual([p["dst"] for p in got], [self.MAC])
            # what the port sends carries it too: testpmd's macswap answers
            rig.tp.cmd("stop")
            rig.tp.cmd("set fwd macswap")
            rig.tp.cmd("start")
            back = rig.io(send=[(0, bytes(frame(self.MAC)))], capture=[0], expect=1, timeout=3)
            self.assertEqual([Ether(f).src for _, f in back], [self.MAC])
            rig.tp.quit()


if __name__ == "__main__":
    unittest.main()
