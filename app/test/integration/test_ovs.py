"""Open vSwitch's DPDK datapath (Debian's openvswitch-switch-dpdk, as it is)
offloading its flows into the adapter's port switch (other_config:
hw-offload=true): a bridge with PF 0 of cna-adapterd as the uplink (its wire
a TAP interface whose kernel end is in a namespace) and the representors of
its two VFs, each VF driven by testpmd in a process of its own. VF 0
answers the kernel's pings; VF 1 sends to VF 0. The first frames of each
flow go through Open vSwitch, then its flows are the adapter's: they show as
offloaded, the representors see no more of the traffic, the rules' counters
(which Open vSwitch reads with rte_flow_query) count it, and deleting the
bridge's OpenFlow rules takes the rules out of the adapter."""
import os
import re
import time
import unittest

from harness import ovs as ovs_harness
from harness.daemon import AdapterDaemon
from harness.ovs import Ovs
from harness.sriov import KERNEL_ADDR, VF_IP, wait_for
from harness.testpmd import Netns, TestPmd, forward_stats, port_mac, unique_tag, wait_for_iface


def received(tp):
    """The VF's Rx count: what its testpmd received since it last started."""
    return forward_stats(tp.cmd("stop"))[0]["RX-packets"]


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
@unittest.skipUnless(ovs_harness.available(), "needs Debian's openvswitch-switch-dpdk")
class OvsOffload(unittest.TestCase):
    def setUp(self):
        self.tag = unique_tag()
        self.ifname = f"cno{self.tag}"[:15]
        self.daemon = AdapterDaemon(["--ports", "1", "--wire", f"tap:{self.ifname}"])
        self.ns = self.ovs = None
        self.vf = {}
        self.daemon.start()
        self.addCleanup(self.tear_down)
        wait_for_iface(self.ifname)
        self.ns = Netns()
        self.ns.adopt(self.ifname, addr=KERNEL_ADDR)
        socket = self.daemon.socket
        self.ovs = Ovs([f"net_cna0,daemon={socket},pf=0,vfs=2,representor=[0-1]"])
        self.ovs.start()
        self.ovs.add_switch_bridge()
        for name in ("uplink", "rep0", "rep1"):
            self.assertIn(f"{name}: Assigned flow API 'dpdk_flow_api'", self.ovs.log())
        for vf in (0, 1):
            self.vf[vf] = TestPmd([f"net_cna_vf{vf},daemon={socket},pf=0,vf={vf}"],
                                  memory=["--no-huge", "-m", "256", "--file-prefix", f"{self.tag}vf{vf}"],
                                  lcores="0@0,1@1")
            self.vf[vf].start()

    def tear_down(self):
        for tp in self.vf.values():
            tp.close()
        if self.ovs is not None:
            self.ovs.stop()
        self.daemon.stop()
        if self.ns is not None:
            self.ns.delete()

    def ping(self, count):
        return self.ns.run("ping", "-c", str(count), "-i", "0.05", "-W", "2", VF_IP, check=False, timeout=60)

    def offloaded(self, in_port, out_port, what):
        """The offloaded flow from in_port to out_port matching `what`, once
        Open vSwitch's offload thread has made it."""
        found = []

        def made():
            found[:] = [f for f in self.ovs.flows("offloaded")
                        if f"in_port({in_port})" in f["text"] and f["actions"] == out_port and what in f["text"]]
            return found

        wait_for(made, timeout=15, what=f"an offloaded flow {in_port} -> {out_port} ({what})")
        self.assertIn("dp:dpdk", found[0]["text"])
        return found[0]

    def test_open_vswitch_offloads_a_ping_and_a_vf_to_vf_stream(self):
        vf0, vf1 = self.vf[0], self.vf[1]
        vf0_mac = port_mac(vf0, 0)
        wait_for(lambda: vf0.link(0)[0] == "up", what="VF 0's link")
        vf0.cmd("set fwd icmpecho")
        vf0.cmd("start")
        first = self.ping(10)
        self.assertRegex(first.stdout, r"\b10 packets transmitted, 10 received", first.stdout + first.stderr)
        request = self.offloaded("uplink", "rep0", "icmp(type=8")
        reply = self.offloaded("rep0", "uplink", "icmp(type=0")

        # From now on the pings are the adapter's alone.
        rep0_rx = self.ovs.rx_packets("rep0")
        uplink_rx = self.ovs.rx_packets("uplink")
        more = self.ping(50)
        self.assertRegex(more.stdout, r"\b50 packets transmitted, 50 received", more.stdout + more.stderr)
        time.sleep(1.5)  # the revalidators' next read of the rules' counters
        # What still goes through Open vSwitch is what it does not offload: the
        # kernel's ARP probes of VF 0's address and VF 0's answers, a few.
        self.assertLess(self.ovs.rx_packets("rep0") - rep0_rx, 10,
                        "VF 0's 50 answers no longer reach its representor")
        self.assertLess(self.ovs.rx_packets("uplink") - uplink_rx, 10,
                        "nor the 50 requests the uplink's")
        request_now = self.offloaded("uplink", "rep0", "icmp(type=8")
        reply_now = self.offloaded("rep0", "uplink", "icmp(type=0")
        self.assertEqual(request_now["packets"] - request["packets"], 50, "Open vSwitch counts every request")
        self.assertEqual(reply_now["packets"] - reply["packets"], 50)
        self.assertEqual(request_now["bytes"] - request["bytes"], 50 * 98, "bytes of 84-byte IPv4 pings in frames")

        # VF 1 sends to VF 0: learnt by the bridge, then switched by the adapter.
        vf0.cmd("stop")
        vf0.cmd("set fwd rxonly")
        vf0.cmd("start")
        vf1.cmd("set fwd txonly")
        vf1.cmd(f"set eth-peer 0 {vf0_mac}")
        vf1.cmd("start")
        stream = self.offloaded("rep1", "rep0", "eth_type(0x0800)")
        rep1_rx = self.ovs.rx_packets("rep1")
        pmd_before = self.pmd_received()
        time.sleep(2)
        sent = forward_stats(vf1.cmd("stop"))[0]["TX-packets"]
        time.sleep(1.5)
        got = received(vf0)
        self.assertGreater(got, 10000, "VF 0 received VF 1's stream")
        self.assertLess(self.ovs.rx_packets("rep1") - rep1_rx, 64,
                        "the representor saw nothing of it once offloaded")
        self.assertLess(self.pmd_received() - pmd_before, sent // 100, "Open vSwitch's PMD thread saw next to none")
        stream_now = self.offloaded("rep1", "rep0", "eth_type(0x0800)")
        self.assertGreaterEqual(stream_now["packets"] - stream["packets"], sent * 9 // 10,
                                "the rule's counter, as Open vSwitch reads it, grew with the stream")

        # The bridge's OpenFlow rules deleted: the flows and the adapter's rules go.
        self.ovs.ofctl("del-flows", "br0")
        wait_for(lambda: not [f for f in self.ovs.flows("offloaded") if f["actions"] == "rep0"], timeout=20,
                 what="the offloaded flows to rep0 gone")
        vf0.cmd("start")
        vf1.cmd("start")
        time.sleep(1)
        vf1.cmd("stop")
        time.sleep(0.5)
        self.assertEqual(received(vf0), 0, "no rule takes VF 1's frames to VF 0 any more")

    def pmd_received(self):
        out = self.ovs.appctl("dpif-netdev/pmd-stats-show")
        return sum(int(n) for n in re.findall(r"packets received: (\d+)", out))


if __name__ == "__main__":
    unittest.main()
