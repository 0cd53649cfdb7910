"""RDMA through cna-adapterd: unmodified verbs applications on cna's
provider in two processes, each on a PF of one daemon's port, or each on a
VF of one PF (their PF in a testpmd of its own).
Their memory regions are memory of their own, not DPDK's (rping's and
perftest's buffers come from malloc): the daemon reaches it by copying
through each process's /proc/self/mem, only where the process registered
it. A process killed mid-transfer is its function's level reset, and its
peer's QP fails as a peer that went silent makes it fail."""
import subprocess
import time
import unittest

from harness.rdma import kill_all
from harness.rdma_cm import assert_rping_verified, not_listening_yet
from harness.rdma_daemon import DaemonHosts, VfHosts
from harness.testpmd import TestPmd, unique_tag
from harness.verbs import needs_root_and_tun


def ib_write_bw_killed_mid_transfer(test, hosts, detached):
    """ib_write_bw for 30 s; the server killed (-9) once connected: its
    function's reset (FLR), and the client's QP in error with
    IBV_WC_RETRY_EXC_ERR (12: the peer no longer answers); the daemon
    serves on."""
    argv = ["ib_write_bw", "-x", "1", "-s", "65536", "-D", "30", "-p", hosts.tcp_port()]
    server = hosts.verbs_host("s", argv)
    try:
        for _ in range(20):
            client = hosts.verbs_host("c", [*argv, "127.0.0.1"])
            try:
                out, _ = client.communicate(timeout=3)
            except subprocess.TimeoutExpired:
                break  # connected: it runs for 30 s
            test.assertTrue(not_listening_yet(out), out)
            time.sleep(0.5)
        else:
            test.fail("the client never reached its server")
    except BaseException:
        kill_all(server)
        raise
    kill_all(server)
    out, _ = client.communicate(timeout=hosts.timeout)
    test.assertNotEqual(client.returncode, 0, out)
    test.assertRegex(out, r"Failed status 12\b", out)
    test.assertRegex(hosts.daemon.output(), detached)
    test.assertIsNone(hosts.daemon.proc.poll(), "the daemon serves on")


@needs_root_and_tun
class ThroughTheDaemon(unittest.TestCase):
    def test_rping_verifies_every_ping_between_two_pfs(self):
        with DaemonHosts() as hosts:
            assert_rping_verified(self, hosts, 10)

    def test_perftest_moves_its_buffers_through_the_daemon(self):
        """Their buffers are malloc's: the daemon reaches them through each
        process's memory; the client tries until the server listens."""
        with DaemonHosts() as hosts:
            for test in ("ib_write_bw", "ib_read_bw", "ib_send_bw"):
                with self.subTest(test=test):
                    argv = [test, "-x", "1", "-s", "65536", "-n", "200", "-p", hosts.tcp_port()]
                    _, client = hosts.cm_pair(argv, [*argv, "127.0.0.1"])
                    self.assertRegex(client, r"(?m)^\s*65536\s+200\s+\d", client)

    def test_a_process_killed_mid_transfer_is_an_flr_and_its_peer_sees_retry_exceeded(self):
        """The client's PF is still its own after the server's reset."""
        with DaemonHosts() as hosts:
            ib_write_bw_killed_mid_transfer(self, hosts, r"on pf0: detached")


@needs_root_and_tun
class BetweenVfs(unittest.TestCase):
    """Two VFs of one port: their RoCE goes through the port's switch, not
    on the wire; each VF's RDMA slowpath and objects are its own."""

    def test_rping_verifies_every_ping(self):
        with VfHosts() as hosts:
            assert_rping_verified(self, hosts, 10)

    def test_a_vfs_rdma_is_asked_for_and_keeps_a_status_block(self):
        """rdma=1 leaves the port 3 of its 4 queue pairs (its RDMA's CNQ
        and EQ take the last status block); without it, all 4."""
        with VfHosts() as hosts:
            for rdma, queues in (("1", 3), ("0", 4)):
                vdev = f"net_cna_vf0,daemon={hosts.daemon.socket},pf=0,vf=0,rdma={rdma}"
                with TestPmd([vdev], memory=["--no-huge", "-m", "256", "--file-prefix", f"{unique_tag()}vf"]) as tp:
                    info = tp.cmd("show port info 0")
                    self.assertRegex(info, rf"Max possible RX queues: {queues}\b", info)

    def test_perftest_never_touches_the_wire(self):
        """The frames the wire carries meanwhile are the addresses'
        announcements and resolutions (broadcasts, a few per process), not
        the 12,800 RoCE packets of 200 x 64 KiB at a 1024-byte path MTU."""
        with VfHosts() as hosts:
            before = hosts.wire_tx()
            argv = ["ib_write_bw", "-x", "1", "-s", "65536", "-n", "200", "-p", hosts.tcp_port()]
            _, client = hosts.cm_pair(argv, [*argv, "127.0.0.1"])
            self.assertRegex(client, r"(?m)^\s*65536\s+200\s+\d", client)
            self.assertLess(hosts.wire_tx() - before, 64, "RoCE between VFs of a port stays in its switch")

    def test_a_vf_process_killed_mid_transfer_is_its_flr_and_its_peer_sees_retry_exceeded(self):
        with VfHosts() as hosts:
            ib_write_bw_killed_mid_transfer(self, hosts, r"vf0\S*: detached")
            self.assertRegex(hosts.pf.cmd("show port info 0"), r"Link status: up", "the PF is not disturbed")


if __name__ == "__main__":
    unittest.main()
