"""RDMA through cna-adapterd: unmodified verbs applications on cna's
provider in two processes, each on a PF of one daemon's two-port cabled
adapter. Their memory regions are memory of their own, not DPDK's (rping's
and perftest's buffers come from malloc): the daemon reaches it by copying
through each process's /proc/self/mem, only where the process registered
it. A process killed mid-transfer is its PF's function level reset, and
its peer's QP fails as a peer that went silent makes it fail."""
import subprocess
import time
import unittest

from harness.daemon import AdapterDaemon
from harness.rdma import kill_all
from harness.rdma_cm import CmHosts, assert_rping_verified, not_listening_yet
from harness.verbs import CLIENT_IP, SERVER_IP, needs_root_and_tun


class DaemonHosts(CmHosts):
    """The server on PF 0 of the daemon's adapter, the client on PF 1, the
    two ports cabled (their TCP exchange, if any, in the hosts' namespace)."""

    def __enter__(self):
        super().__enter__()
        self.daemon = AdapterDaemon(["--ports", "2", "--wire", "cable"])
        self.daemon.start()
        return self

    def __exit__(self, *exc):
        if self.daemon.proc.poll() is None:
            self.daemon.stop()
        return super().__exit__(*exc)

    def devargs(self, role):
        pf, ip = (0, SERVER_IP) if role == "s" else (1, CLIENT_IP)
        return f"daemon={self.daemon.socket},pf={pf},ipv4={ip}/24"


@needs_root_and_tun
class ThroughTheDaemon(unittest.TestCase):
    def test_rping_verifies_every_ping_between_two_pfs(self):
        with DaemonHosts() as hosts:
            assert_rping_verified(self, hosts, 10)

    def test_perftest_moves_its_buffers_through_the_daemon(self):
        """The server's port is up only once the client's PF, the cable's
        other end, is loaded: the client starts at once, and again until
        the server listens."""
        with DaemonHosts() as hosts:
            for test in ("ib_write_bw", "ib_read_bw", "ib_send_bw"):
                with self.subTest(test=test):
                    argv = [test, "-x", "1", "-s", "65536", "-n", "200", "-p", hosts.tcp_port()]
                    _, client = hosts.cm_pair(argv, [*argv, "127.0.0.1"])
                    self.assertRegex(client, r"(?m)^\s*65536\s+200\s+\d", client)

    def test_a_process_killed_mid_transfer_is_an_flr_and_its_peer_sees_retry_exceeded(self):
        """ib_write_bw for 30 s; the server killed (-9) three seconds in: the
        daemon resets its PF (FLR), the client's QP goes to error with
        IBV_WC_RETRY_EXC_ERR (12: the peer no longer answers), and the
        daemon serves on: the client's PF is still its own."""
        with DaemonHosts() as hosts:
            argv = ["ib_write_bw", "-x", "1", "-s", "65536", "-D", "30", "-p", hosts.tcp_port()]
            server = hosts.verbs_host("s", argv)
            try:
                for _ in range(20):
                    client = hosts.verbs_host("c", [*argv, "127.0.0.1"])
                    try:
                        out, _ = client.communicate(timeout=3)
                    except subprocess.TimeoutExpired:
                        break  # connected: it runs for 30 s
                    self.assertTrue(not_listening_yet(out), out)
                    time.sleep(0.5)
                else:
                    self.fail("the client never reached its server")
            except BaseException:
                kill_all(server)
                raise
            kill_all(server)
            out, _ = client.communicate(timeout=hosts.timeout)
            self.assertNotEqual(client.returncode, 0, out)
            self.assertRegex(out, r"Failed status 12\b", out)
            self.assertRegex(hosts.daemon.output(), r"on pf0: detached")
            self.assertIsNone(hosts.daemon.proc.poll(), "the daemon serves on")


if __name__ == "__main__":
    unittest.main()
