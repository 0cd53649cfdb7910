"""rdma_perf between two RDMA hosts (two processes, each with its own
embedded adapter, their TAP wires in one Linux bridge): the bandwidth and
latency test of every opcode with every payload byte and atomic result
verified, sizes across the path MTU and PSNs across the 24-bit wrap; the
wire losing RoCE frames (net_cna's roce_loss fault switch) while transfers
still complete with the right data; and frames scapy injects into the
bridge, one with a bad ICRC and one with a PSN beyond the window, dropped
or NAKed and counted while the transfer they land in completes. And the
way ./cna bench runs it: both ends in one process on cabled ports, on the
RDMA PMD's API and, as rdma_perf_verbs, through cna's verbs provider."""
import os
import re
import subprocess
import time
import unittest

from scapy.all import IP, UDP, Ether, Raw, sendp
from scapy.contrib.roce import BTH

from harness.rdma import EAL, REMOTE_PERF, LOCAL_PERF, BridgedHosts, example, perf_counters, perf_rows
from harness.testpmd import build_dir, sh
from harness.verbs import rdma_run_path

SIZES = [1, 1023, 1024, 1025, 1 << 20]  # across the 1024-byte path MTU, and 1 MiB
SERVER_MAC = "02:00:00:00:0a:01"


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
class Perf(unittest.TestCase):
    def run_perf(self, hosts, args, sizes, **kw):
        server, client = hosts.perf(args, **kw)
        self.assertEqual(sorted(perf_rows(client)), sizes, client)
        for size in sizes:
            self.assertIn(f" {size} bytes: payload verified", server)
        return server, client

    def test_bandwidth_of_every_opcode(self):
        sizes = ",".join(map(str, SIZES))
        with BridgedHosts(timeout=180) as hosts:
            for test in ("send", "write", "read"):
                with self.subTest(test=test):
                    self.run_perf(hosts, ["-T", test, "-s", sizes, "-m", "1024", "-n", "30", "--check",
                                          "--psn", "0xfffff0"], SIZES)
            for atomic in ("FETCH_AND_ADD", "CMP_AND_SWAP"):
                with self.subTest(atomic=atomic):
                    self.run_perf(hosts, ["-T", "atomic", "-A", atomic, "-n", "300", "--check"], [8])

    def test_latency_of_every_opcode(self):
        with BridgedHosts(timeout=180) as hosts:
            for test in ("send", "write", "read"):
                with self.subTest(test=test):
                    self.run_perf(hosts, ["-T", test, "--latency", "-s", "1,1024,1025,65536", "-m", "1024",
                                          "-n", "20", "--check"], [1, 1024, 1025, 65536])
            self.run_perf(hosts, ["-T", "atomic", "--latency", "-n", "50", "--check"], [8])

    def test_transfers_complete_over_a_lossy_wire(self):
        loss = ",roce_loss=20000"  # 2 % of the RoCE frames each port sends
        with BridgedHosts(timeout=180) as hosts:
            for test in ("write", "read", "send"):
                with self.subTest(test=test):
                    server, client = self.run_perf(
                        hosts, ["-T", test, "-s", "4096,65536", "-m", "1024", "-n", "60", "--check", "--counters"],
                        [4096, 65536], server_vdev=loss, client_vdev=loss)
                    lost = perf_counters(client)["retransmitted"]
                    self.assertGreater(lost, 0, f"nothing retransmitted over a lossy wire:\n{client}")
                    self.assertEqual(perf_counters(client, "qp")["retransmitted"], lost, "one QP did it all")

    def test_injected_bad_icrc_and_psn_beyond_the_window_are_counted(self):
        with BridgedHosts(timeout=180) as hosts:
            veth = f"vi{hosts.tag}"[:13]
            sh("ip", "link", "add", veth, "type", "veth", "peer", "name", veth + "b")
            sh("ip", "link", "set", veth + "b", "netns", hosts.ns.name)
            hosts.ns.run("ip", "link", "set", veth + "b", "master", "br0", "up")
            sh("ip", "link", "set", veth, "up")
            server, client = hosts.start_pair(
                "rdma_perf", ["-p", hosts.tcp_port(), "-x", "1", "-T", "write", "-s", "4096", "-n", "100000",
                              "--check", "--counters"],
                server_vdev=f",ipv4=10.0.0.1/24,mac={SERVER_MAC}", client_vdev=",ipv4=10.0.0.2/24")
            head = []
            deadline = time.monotonic() + 60
            while not any(REMOTE_PERF.search(l) for l in head) and time.monotonic() < deadline:
                line = server.stdout.readline()
                if not line:
                    break
                head.append(line)
            local = next((LOCAL_PERF.search(l) for l in head if LOCAL_PERF.search(l)), None)
            remote = next((REMOTE_PERF.search(l) for l in head if REMOTE_PERF.search(l)), None)
            self.assertTrue(local and remote, "".join(head))
            qpn, client_psn = int(local.group(1), 16), int(remote.group(2), 16)

            def frame(psn, icrc=None):
                return (Ether(dst=SERVER_MAC) / IP(src="10.0.0.2", dst="10.0.0.1") /
                        UDP(sport=49152, dport=4791) / BTH(opcode=4, dqpn=qpn, psn=psn, icrc=icrc) / Raw(b"\x5a" * 8))
            # The transfer is far from 2^22 packets: this PSN stays ahead of
            # the expected one for all of it.
            beyond = (client_psn + (1 << 22)) & 0xffffff
            sendp([frame(client_psn, icrc=0xDEADBEEF)] * 5 + [frame(beyond)] * 3, iface=veth, verbose=False)
            out_server, out_client = hosts.finish("rdma_perf", server, client)
        out_server = "".join(head) + out_server
        self.assertIn(" 4096 bytes: payload verified", out_server)
        port, qp = perf_counters(out_server), perf_counters(out_server, "qp")
        self.assertGreaterEqual(port["icrc_errors"], 5, out_server)
        self.assertGreaterEqual(port["out_of_sequence"], 3, out_server)
        self.assertGreaterEqual(qp["out_of_sequence"], 3, out_server)
        self.assertGreaterEqual(port["naks_sent"], 1, "a PSN beyond the window is NAKed")


class CabledPorts(unittest.TestCase):
    """rdma_perf --cable, as ./cna bench runs it: both ends in one process on
    two cabled ports of one adapter, ethdev MTU 9000 for a 4096-byte path
    MTU; a payload or atomic result that is wrong fails the run."""

    def cable(self, args):
        tag = f"cb{os.getpid()}"
        argv = [example("rdma_perf"), "-l", "1", *EAL, "--file-prefix", tag,
                "--vdev", f"net_cna0,adapter={tag},ports=2,wire=cable", "--vdev", f"net_cna1,adapter={tag},port=1",
                "--", "--cable", "--port-mtu", "9000", "--check", *args]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("Mtu             : 4096[B]", run.stdout)
        return run.stdout

    def test_every_opcode_across_the_4096_byte_path_mtu(self):
        sizes = [64, 4095, 4096, 4097, 65536]
        for test in ("write", "read", "send"):
            with self.subTest(test=test):
                out = self.cable(["-T", test, "-s", ",".join(map(str, sizes)), "-n", "200"])
                self.assertEqual(sorted(perf_rows(out)), sizes, out)
        with self.subTest(test="atomic"):
            self.assertEqual(sorted(perf_rows(self.cable(["-T", "atomic", "-n", "200"]))), [8])
        with self.subTest(test="write latency"):
            self.assertEqual(perf_rows(self.cable(["-T", "write", "--latency", "-s", "8", "-n", "200"])), {8: 200})


class CabledPortsThroughTheProvider(CabledPorts):
    """The same tests as ./cna bench runs rdma_perf_verbs: rdma_perf's code
    on libibverbs, under cna-rdma-run, on the same two cabled ports through
    cna's verbs provider."""

    def cable(self, args):
        tag = f"cv{os.getpid()}"
        env = dict(os.environ, CNA_RDMA_DEVARGS=f"adapter={tag},ports=2,wire=cable;adapter={tag},port=1",
                   CNA_RDMA_MTU="9000")
        perf = os.path.join(build_dir(), "examples", "rdma_perf", "rdma_perf_verbs")
        run = subprocess.run([rdma_run_path(), perf, "--cable", "--check", *args], capture_output=True, text=True,
                             timeout=120, env=env)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("Mtu             : 4096[B]", run.stdout)
        return run.stdout


if __name__ == "__main__":
    unittest.main()
