"""RDMA between two processes, each an RDMA host with its own embedded
adapter, their TAP wires in one Linux bridge: rdma_pingpong (ibv_rc_pingpong's
protocol) for message sizes across the path MTU, PSNs starting just before
the 24-bit wrap, completion events instead of polling, IPv4 GIDs resolved by
ARP (the Linux kernel resolving the port too), and what goes over the wire as
tools not ours see it: tshark decoding the opcodes, scapy recomputing every
ICRC."""
import os
import re
import tempfile
import time
import unittest

from scapy.all import rdpcap

from harness.rdma import LOCAL, RESULT, BridgedHosts, addresses
from harness.roce_wire import bad_icrcs, roce_frames, tshark_roce


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
class Pingpong(unittest.TestCase):
    def check_run(self, server_out, client_out, iters, family="link-local"):
        (s_local, s_remote), (c_local, c_remote) = addresses(server_out), addresses(client_out)
        self.assertEqual(s_local, c_remote, "the client knows the server as it is")
        self.assertEqual(c_local, s_remote, "the server knows the client as it is")
        self.assertTrue(s_local[3].startswith("fe80::" if family == "link-local" else "::ffff:10.0.0."), s_local[3])
        for out in (server_out, client_out):
            m = RESULT.search(out)
            self.assertIsNotNone(m, out)
            self.assertEqual(int(m.group(1)), iters)

    def test_sizes_across_the_mtu_with_the_payload_checked(self):
        with BridgedHosts() as hosts:
            for size in (1, 1023, 1024, 1025, 65536, 1 << 20):
                iters = 4 if size > 65536 else 20
                with self.subTest(size=size):
                    server, client = hosts.pingpong(["-s", str(size), "-m", "1024", "-n", str(iters), "--chk"])
                    self.check_run(server, client, iters)

    def test_psns_starting_before_the_wrap(self):
        with BridgedHosts() as hosts:
            # 64 KiB is 64 packets at MTU 1024: each message crosses 2^24.
            server, client = hosts.pingpong(["-s", "65536", "-n", "8", "--chk", "--psn", "0xffffe0"])
            self.check_run(server, client, 8)
            self.assertEqual(addresses(server)[0][2], 0xffffe0)

    def test_completion_events(self):
        with BridgedHosts() as hosts:
            server, client = hosts.pingpong(["-s", "4096", "-n", "50", "-e", "--chk"])
            self.check_run(server, client, 50)

    def test_the_wire_carries_the_rc_opcodes(self):
        with BridgedHosts() as hosts, tempfile.TemporaryDirectory() as tmp:
            pcap = os.path.join(tmp, "roce.pcapng")
            hosts.start_capture(pcap)
            # 3000 bytes at MTU 1024: SEND FIRST, MIDDLE, LAST; 100 bytes: SEND ONLY.
            hosts.pingpong(["-s", "3000", "-m", "1024", "-n", "3"])
            hosts.pingpong(["-s", "100", "-n", "3"])
            hosts.stop_capture()
            packets = tshark_roce(pcap)
        opcodes = [op for op, _ in packets]
        for op, name in ((0, "SEND FIRST"), (1, "SEND MIDDLE"), (2, "SEND LAST"), (4, "SEND ONLY"),
                         (17, "ACKNOWLEDGE")):
            self.assertIn(op, opcodes, f"no {name} among {sorted(set(opcodes))}")
        self.assertEqual(opcodes.count(0), opcodes.count(2), "every message that starts ends")
        self.assertEqual(opcodes.count(1), opcodes.count(0), "one middle packet per 3000-byte message")
        self.assertEqual(opcodes.count(0), 6, "3 iterations each way")

    def test_ipv4_gids_are_resolved_by_arp_and_every_icrc_checks(self):
        with BridgedHosts() as hosts, tempfile.TemporaryDirectory() as tmp:
            pcap = os.path.join(tmp, "roce4.pcapng")
            hosts.start_capture(pcap)
            server, client = hosts.pingpong(["-s", "3000", "-n", "10", "--chk"], gid=1,
                                            server_vdev=",ipv4=10.0.0.1/24", client_vdev=",ipv4=10.0.0.2/24")
            hosts.stop_capture()
            self.check_run(server, client, 10, family="ipv4")
            frames = rdpcap(pcap)
        arp = [f for f in frames if f.haslayer("ARP")]
        self.assertTrue(any(f["ARP"].op == 1 for f in arp) and any(f["ARP"].op == 2 for f in arp),
                        "an ARP request and its reply on the wire")
        roce = roce_frames(frames)
        self.assertGreater(len(roce), 40)
        self.assertEqual(bad_icrcs(roce), [])

    def test_the_kernel_resolves_the_port_by_arp(self):
        with BridgedHosts() as hosts:
            ns = hosts.ns
            ns.run("ip", "link", "add", "vk", "type", "veth", "peer", "name", "vkb")
            ns.run("ip", "link", "set", "vkb", "master", "br0", "up")
            ns.run("ip", "addr", "add", "10.0.0.9/24", "dev", "vk")
            ns.run("ip", "link", "set", "vk", "up")
            server = hosts.host("s", 0, ["-p", "18999", "-g", "0"], vdev_extra=",ipv4=10.0.0.1/24")
            try:
                local = ""
                deadline = time.monotonic() + 30
                while "local address" not in local and time.monotonic() < deadline:
                    local = server.stdout.readline()
                gid = LOCAL.search(local).group(4)  # fe80::<EUI-64 of the port's MAC>
                ns.run("ping", "-c", "1", "-W", "1", "10.0.0.1", check=False)
                neigh = ns.run("ip", "neigh", "show", "10.0.0.1", "dev", "vk").stdout
            finally:
                server.terminate()
                server.communicate(timeout=30)
        m = re.search(r"lladdr ([0-9a-f:]{17})", neigh)
        self.assertIsNotNone(m, f"the kernel did not resolve 10.0.0.1: {neigh!r}")
        mac = bytes.fromhex(m.group(1).replace(":", ""))
        groups = [int(g, 16) for g in gid.split("::")[1].split(":")]
        eui = b"".join(g.to_bytes(2, "big") for g in groups)
        self.assertEqual(mac, bytes([eui[0] ^ 2]) + eui[1:3] + eui[5:8], f"{m.group(1)} is not {gid}'s MAC")


if __name__ == "__main__":
    unittest.main()
