"""RDMA between two processes, each an RDMA host with its own embedded
adapter, their TAP wires in one Linux bridge: rdma_pingpong (ibv_rc_pingpong's
protocol) for message sizes across the path MTU, PSNs starting just before
the 24-bit wrap, completion events instead of polling, and what goes over the
wire as tshark (not our code) decodes it."""
import os
import tempfile
import unittest

from harness.rdma import RESULT, BridgedHosts, addresses
from harness.secondary import run


def tshark_roce(path):
    """[(opcode, psn)] of every RoCEv2 packet in a capture, as tshark decodes it."""
    rc, out = run(["tshark", "-r", path, "-d", "udp.port==4791,infiniband", "--disable-protocol", "rpcordma",
                   "-Y", "infiniband", "-T", "fields", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn"])
    if rc != 0:
        raise AssertionError(f"tshark cannot read {path} ({rc}):\n{out}")
    return [(int(o), int(p)) for o, p in (line.split("\t") for line in out.splitlines() if line.count("\t") == 1)]


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
class Pingpong(unittest.TestCase):
    def check_run(self, server_out, client_out, iters):
        (s_local, s_remote), (c_local, c_remote) = addresses(server_out), addresses(client_out)
        self.assertEqual(s_local, c_remote, "the client knows the server as it is")
        self.assertEqual(c_local, s_remote, "the server knows the client as it is")
        self.assertTrue(s_local[3].startswith("fe80::"), s_local[3])
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


if __name__ == "__main__":
    unittest.main()
