"""RDMA CM without the kernel: Debian's unmodified rdmacm-utils and perftest
(-R) on cna's librdmacm.so.1, through cna-rdma-run, between two processes,
each with its own adapter on a TAP wire, the TAPs bridged. Connections are
made, used and ended; what crosses the bridge is the InfiniBand CM in MADs
on QP1 that tshark decodes (the IP CM service's addresses and ports
included) and whose every ICRC scapy recomputes, beside each port's ARP
announcement; fio's rdma engine moves blocks whose every byte is checked
where it lands; and what goes wrong (no listener, a peer that never
answers) ends as librdmacm says it does."""
import contextlib
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import unittest

from scapy.all import ARP, rdpcap

from harness.rdma import kill_all
from harness.testpmd import PYTHON
from harness.roce_wire import bad_icrcs, roce_frames
from harness.rdma_cm import CmHosts, assert_rping_verified, cm_probe, not_listening_yet
from harness.verbs import CLIENT_IP, SERVER_IP, needs_root_and_tun, regular_pass_only

# The kernel's end of the bridge, which answers ARP and nothing on UDP 4791:
# a peer that never answers a REQ.
SILENT_IP = "10.0.0.254"
# Short CM waits for the faults: 4.096 us << 12 (17 ms) plus two packet
# lifetimes, sent 3 times in all.
QUICK_CM = {"CNA_CM_RESPONSE_TIMEOUT": "12", "CNA_CM_RETRIES": "2"}
# fio's rdma ioengine: the server's buffers (one per I/O in flight) and
# the client's block; the pattern the blocks carry.
FIO_BUFFERS = 4
FIO_BLOCK = 64 << 10
FIO_PATTERN = bytes((i * 89 + 7) % 256 for i in range(251))


def pattern_block():
    """A block as fio fills one with FIO_PATTERN: repeated from its start."""
    return (FIO_PATTERN * (FIO_BLOCK // len(FIO_PATTERN) + 1))[:FIO_BLOCK]


def read_buffers(path):
    """The FIO_BUFFERS blocks of a shared buffer file."""
    with open(path, "rb") as f:
        return [f.read(FIO_BLOCK) for _ in range(FIO_BUFFERS)]


@contextlib.contextmanager
def shared_buffers(content):
    """A file in /dev/shm holding `content`, fio's server's buffers."""
    with tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="cna-fio-") as f:
        f.write(content)
        f.flush()
        yield f.name


def assert_both_complete(test, server, client):
    """librdmacm's examples (cmatose, udaddy) end so when every connection
    moved its data."""
    for out in (server, client):
        test.assertIn("data transfers complete", out)
        test.assertIn("return status 0", out)


def perftest_pair(hosts, argv, attempts=3):
    """perftest's server and client (the server's address appended), the
    client started once the server listens (its CM's log says so). perftest
    itself races there: its client connects again at once (a second RC
    connection; for UD, the SIDR resolution of the server's UD service)
    while its server is still making the listener for it, and a client
    quicker than the server meets none (REJ reason 8; SIDR REP status 1,
    which perftest reports, then crashes on). A client started again alone
    would meet a server further on in its steps, so the pair is run again,
    for that refusal only."""
    def pair():
        return hosts.cm_pair(argv, [*argv, SERVER_IP], env={"CNA_CM_LOG": "1"}, attempts=1,
                             server_ready=r"listening on port \d+ \(TCP\)")

    for _ in range(attempts - 1):
        try:
            return pair()
        except AssertionError as e:
            client = str(e).partition("--- client:")[2]
            if not (not_listening_yet(client) or "RDMA_CM_EVENT_UNREACHABLE; error: 1." in client):
                raise
    return pair()


@needs_root_and_tun
class BetweenTwoProcesses(unittest.TestCase):
    """rdmacm-utils and perftest -R, both ends on cna."""

    def test_rping_verifies_every_ping(self):
        with CmHosts() as hosts:
            assert_rping_verified(self, hosts, 10)

    def test_rping_over_ipv6_from_the_global_address(self):
        """Each port has its link-local GID first: the requester still
        speaks from its address of the destination's scope."""
        with CmHosts() as hosts:
            server, client = hosts.cm_pair(["rping", "-s", "-a", "fd00::1", "-v", "-C", "3"],
                                           ["rping", "-c", "-a", "fd00::1", "-v", "-C", "3"], env={"CNA_CM_LOG": "1"},
                                           devargs=(",ipv6=fd00::1/64", ",ipv6=fd00::2/64"))
        self.assertEqual(len(re.findall(r"^ping data: rdma-ping-\d+:", client, re.M)), 3, client)
        self.assertIn("received REQ fd00::2,", server)
        self.assertIn("received DREQ fd00::2,", server)

    def test_ucmatose_makes_ten_connections_and_moves_data_on_each(self):
        with CmHosts() as hosts:
            assert_both_complete(self, *hosts.cm_pair(["ucmatose", "-c", "10"], ["ucmatose", "-s", SERVER_IP, "-c", "10"]))

    def test_udaddy_resolves_services_through_sidr(self):
        with CmHosts() as hosts:
            assert_both_complete(self, *hosts.cm_pair(["udaddy", "-c", "4"], ["udaddy", "-s", SERVER_IP, "-c", "4"]))

    def test_rdma_server_and_client_on_endpoints(self):
        """The synchronous API: rdma_getaddrinfo, rdma_create_ep,
        rdma_get_request, IDs without a channel."""
        with CmHosts() as hosts:
            server, client = hosts.cm_pair(["rdma_server"], ["rdma_client", "-s", SERVER_IP])
        self.assertIn("rdma_server: end 0", server)
        self.assertIn("rdma_client: end 0", client)

    def test_rdma_xserver_and_xclient_over_rc(self):
        with CmHosts() as hosts:
            server, client = hosts.cm_pair(["rdma_xserver", "-c", "r"], ["rdma_xclient", "-s", SERVER_IP, "-c", "r"])
        self.assertIn("rdma_xserver: end 0", server)
        self.assertIn("rdma_xclient: end 0", client)

    def test_perftest_connects_through_rdma_cm(self):
        """The four over RC; ib_send_lat over UD too, whose listener makes
        its address handle from the first datagram's work completion
        (ibv_create_ah_from_wc), the requester its own from SIDR's reply."""
        regular_pass_only("perftest")
        for tool, extra, size in (("ib_send_bw", [], 4096), ("ib_write_bw", [], 4096), ("ib_read_bw", [], 4096),
                                  ("ib_send_lat", [], 4096), ("ib_send_lat", ["-c", "UD"], 1024)):
            with self.subTest(tool=tool, extra=extra), CmHosts() as hosts:
                argv = [tool, "-R", "-d", "cna0", "-s", str(size), "-n", "100", *extra]
                server, client = perftest_pair(hosts, argv)
                for out in (server, client):
                    self.assertIn("Data ex. method : rdma_cm", out)
                    self.assertRegex(out, rf"(?m)^ {size}\s+100\s+[\d.]+")

    def fio_pair(self, hosts, server_args, client_args, depths=(FIO_BUFFERS, FIO_BUFFERS), size="16m"):
        """fio's rdma ioengine: a server of `depths[0]` 64 KiB buffers, and
        a client moving `size` in blocks of 64 KiB, `depths[1]` at a time,
        to or from them; each block goes to or comes from one of the
        server's buffers chosen at random, so every buffer is hit."""
        common = ["fio", "--ioengine=rdma", "--port=7600", "--bs=64k", f"--size={size}"]
        return hosts.cm_pair([*common, "--name=server", "--rw=read", f"--iodepth={depths[0]}", *server_args],
                             [*common, "--name=client", f"--hostname={SERVER_IP}", "--rw=write",
                              f"--iodepth={depths[1]}", *client_args])

    def fio_send_pair(self, hosts, client_pattern):
        """fio over SEND: the client's blocks carry `client_pattern`, the
        server verifies FIO_PATTERN in each it receives. fio's connection
        asks for no RNR retries, so a SEND that finds no receive posted
        ends the run: the server keeps 16 receives posted (fio's advice:
        the receiver deeper than the sender), the client sends one block at
        a time at 8 MiB/s, and the server may fall 125 ms behind."""
        return self.fio_pair(hosts, ["--verify=pattern", f"--verify_pattern=0x{FIO_PATTERN.hex()}",
                                     "--verify_state_save=0"],  # no state file left in the working directory
                             ["--verb=send", f"--buffer_pattern=0x{client_pattern.hex()}", "--scramble_buffers=0",
                              "--rate=8m"], depths=(16, 1), size="8m")

    def test_fio_rdma_send_is_verified_by_the_receiver(self):
        """Over SEND, fio's receiving side completes each block it receives
        as a read of its own, which --verify checks against the pattern.
        fio's own race, tried again (twice at most): its client sends its
        first block as soon as the control exchange ends, its server posts
        its receives only when its job starts, and with no RNR retries a
        server descheduled in between (two processes, two CPUs) fails the
        run with `RNR retry counter exceeded`."""
        for attempt in range(3):
            try:
                with CmHosts(timeout=30) as hosts:
                    server, _ = self.fio_send_pair(hosts, FIO_PATTERN)
                break
            except AssertionError as e:
                if "RNR retry counter exceeded" not in str(e) or attempt == 2:
                    raise
        self.assertRegex(server, r"issued rwts: total=128,0,")
        self.assertRegex(server, r"err= 0")
        self.assertNotIn("verify failed", server)

    def test_fio_rdma_send_of_another_pattern_fails_the_receivers_verification(self):
        """What makes the test above able to fail: one bit of the pattern
        changed, the receiver's --verify finds it in the first block. (The
        sender then waits for ever; the harness ends it.)"""
        regular_pass_only("fio's failing verification")
        other = bytes(b ^ 1 if n == 0 else b for n, b in enumerate(FIO_PATTERN))
        with CmHosts(timeout=20) as hosts, self.assertRaises(AssertionError) as failed:
            self.fio_send_pair(hosts, other)
        self.assertIn("verify failed at file server.0.0 offset 0,", str(failed.exception))
        self.assertIn("err=84", str(failed.exception))

    def test_fio_rdma_write_lands_every_byte_in_the_servers_buffers(self):
        """fio's --verify cannot check RDMA WRITE or READ (it would read
        back through the same one-way verb), so the server's buffers are a
        shared file the test reads. The client's blocks carry a 251-byte
        pattern (a prime length: a block landing shifted, or a byte lost,
        breaks it); after the run every buffer of the server holds it."""
        with CmHosts() as hosts, shared_buffers(bytes(FIO_BUFFERS * FIO_BLOCK)) as server:
            _, client = self.fio_pair(hosts, [f"--mem=mmapshared:{server}"],
                                      ["--verb=write", f"--buffer_pattern=0x{FIO_PATTERN.hex()}",
                                       "--scramble_buffers=0"])
            landed = read_buffers(server)
        self.assertIn("WRITE: bw=", client)
        self.assertRegex(client, r"issued rwts: total=0,256,")
        for n in range(FIO_BUFFERS):
            self.assertEqual(landed[n], pattern_block(), f"the server's buffer {n}")

    def test_fio_rdma_read_brings_every_byte_of_the_servers_buffers(self):
        """The server's buffers hold the pattern, one byte of each changed
        at a place of its own; the client's RDMA READs bring 256 blocks
        into its own four buffers (shared too), each of which then holds
        one of the server's blocks whole, the changed byte included."""
        blocks = []
        for n in range(FIO_BUFFERS):
            block = bytearray(pattern_block())
            block[1000 + 4099 * n] ^= 0x01
            blocks.append(bytes(block))
        with CmHosts() as hosts, shared_buffers(b"".join(blocks)) as server, \
                shared_buffers(bytes(FIO_BUFFERS * FIO_BLOCK)) as client_buffers:
            _, client = self.fio_pair(hosts, [f"--mem=mmapshared:{server}"],
                                      ["--verb=read", f"--mem=mmapshared:{client_buffers}"])
            landed = read_buffers(client_buffers)
        self.assertRegex(client, r"issued rwts: total=0,256,")
        for n in range(FIO_BUFFERS):
            self.assertIn(landed[n], blocks, f"the client's buffer {n}: not one of the server's blocks")

    def test_the_wire_carries_the_cm_and_its_ip_addresses(self):
        with CmHosts() as hosts, tempfile.TemporaryDirectory() as tmp:
            pcap = os.path.join(tmp, "cm.pcapng")
            hosts.start_capture(pcap)
            hosts.cm_pair(["rping", "-s", "-a", SERVER_IP, "-C", "2"], ["rping", "-c", "-a", SERVER_IP, "-C", "2"])
            hosts.stop_capture()
            fields = subprocess.run(
                ["tshark", "-r", pcap, "-Y", "infiniband.mad.mgmtclass == 0x07", "-T", "fields", "-E", "separator=|",
                 "-e", "infiniband.mad.attributeid", "-e", "infiniband.cm.req.ip_cm.sip4",
                 "-e", "infiniband.cm.req.ip_cm.dip4", "-e", "infiniband.cm.req.serviceid.dport",
                 "-e", "infiniband.cm.req.ip_cm.sport"],
                capture_output=True, text=True, check=True).stdout.split("\n")
            frames = rdpcap(pcap)
        rows = [f.split("|") for f in fields if f]
        attributes = {int(r[0], 16) for r in rows}
        for attribute, name in ((0x10, "REQ"), (0x13, "REP"), (0x14, "RTU"), (0x15, "DREQ"), (0x16, "DREP")):
            self.assertIn(attribute, attributes, f"no {name} on the wire: {rows}")
        req = next(r for r in rows if int(r[0], 16) == 0x10)
        self.assertEqual(req[1:3], [CLIENT_IP, SERVER_IP], "the IP CM header's addresses")
        self.assertEqual(int(req[3], 0), 7174, "rping's port in the service ID")
        self.assertNotEqual(int(req[4], 0), 0, "the client's port in the IP CM header")
        roce = roce_frames(frames)
        self.assertGreater(len(roce), 10)
        self.assertEqual(bad_icrcs(roce), [])
        # Each port announced its address as its link came up (a peer's
        # cache may hold an earlier process's MAC for it).
        announced = {f[ARP].psrc for f in frames if ARP in f and f[ARP].op == 1 and f[ARP].psrc == f[ARP].pdst}
        self.assertEqual(announced, {SERVER_IP, CLIENT_IP})


@needs_root_and_tun
class ManyConnections(unittest.TestCase):
    def test_a_thousand_connections_made_and_ended_leave_nothing_behind(self):
        """Each cycle: resolve, a QP, connect, disconnect, destroy. A QP,
        CQ or MR left behind on either side would run the device out (256
        QPs, 2,048 CQs, 1,024 MRs) long before the end; the client's file
        descriptors are counted."""
        regular_pass_only("the thousand cycles")
        with CmHosts(timeout=600) as hosts:
            server = hosts.probe_server(7500)
            try:
                client = hosts.verbs_host("c", [cm_probe(), "cycles", SERVER_IP, "7500", "1000"])
                out, _ = client.communicate(timeout=hosts.timeout)
            finally:
                kill_all(server)
        self.assertEqual(client.returncode, 0, out)
        match = re.search(r"^cycles 1000 fds (\d+) (\d+)$", out, re.M)
        self.assertIsNotNone(match, out)
        self.assertEqual(match.group(1), match.group(2), "file descriptors left behind")


    def test_ucmatose_holds_a_thousand_connections_at_once(self):
        """Each of ucmatose's connections has a PD, two CQs, a QP and an
        MR, all held until every connection moved its data: 1,000 QPs and
        2,000 CQs a side, five small DMA allocations per connection (which
        share memzones: DPDK has 2,560)."""
        regular_pass_only("a thousand connections")
        with CmHosts(timeout=300) as hosts:
            assert_both_complete(self, *hosts.cm_pair(["ucmatose", "-c", "1000"],
                                                      ["ucmatose", "-s", SERVER_IP, "-c", "1000"]))


@needs_root_and_tun
class Faults(unittest.TestCase):
    def test_a_peer_killed_mid_connection_is_disconnected_after_the_dreq_retries(self):
        with CmHosts() as hosts:
            server = hosts.probe_server(7500)
            client = hosts.verbs_host("c", [cm_probe(), "hold", SERVER_IP, "7500"], stdin=subprocess.PIPE,
                                      env={**QUICK_CM, "CNA_CM_LOG": "1"})
            try:
                self.assertIn("established", (line.strip() for line in iter(client.stdout.readline, "")))
            finally:
                kill_all(server)
            client.stdin.write("disconnect\n")
            client.stdin.flush()
            out, _ = client.communicate(timeout=hosts.timeout)
        self.assertEqual(client.returncode, 0, out)
        self.assertEqual(len(re.findall(r"sent DREQ " + re.escape(SERVER_IP), out)), 3, "the DREQ and 2 retries")
        seconds = float(re.search(r"disconnected after ([\d.]+) s", out).group(1))
        # Three waits of 17 ms plus two packet lifetimes (2 x 268 ms).
        self.assertGreater(seconds, 1.5)
        self.assertLess(seconds, 5)
        self.assertIn("flushed 1", out, "the receive posted completes flushed")

    def test_a_port_nobody_listens_on_is_rejected_as_an_invalid_service(self):
        with CmHosts() as hosts:
            server = hosts.verbs_host("s", ["rping", "-s", "-a", SERVER_IP, "-p", "7000", "-C", "1"])
            try:
                for _ in range(20):
                    rc, out, _ = hosts.client_alone(["rping", "-c", "-a", SERVER_IP, "-p", "7001", "-C", "1"])
                    if "REJECTED" in out:
                        break
                    time.sleep(0.5)  # the server's adapter is not up yet: no answer at all
            finally:
                kill_all(server)
        self.assertNotEqual(rc, 0)
        self.assertRegex(out, r"RDMA_CM_EVENT_REJECTED, error 8\b")

    def test_an_address_nobody_answers_is_an_address_error(self):
        with CmHosts() as hosts:
            rc, out, _ = hosts.client_alone([cm_probe(), "resolve", "10.0.0.77", "7500"])
        self.assertEqual(rc, 0, out)
        self.assertIn("RDMA_CM_EVENT_ADDR_ERROR -113", out)

    def test_a_peer_that_never_answers_is_unreachable_after_the_retries(self):
        with CmHosts() as hosts:
            hosts.ns.run("ip", "addr", "add", f"{SILENT_IP}/24", "dev", "br0")
            rc, out, seconds = hosts.client_alone(["rping", "-c", "-a", SILENT_IP, "-C", "1"],
                                                  env={**QUICK_CM, "CNA_CM_LOG": "1"})
        self.assertNotEqual(rc, 0)
        self.assertRegex(out, r"RDMA_CM_EVENT_UNREACHABLE, error -110\b")
        self.assertEqual(len(re.findall(r"sent REQ " + re.escape(SILENT_IP), out)), 3, "the REQ and 2 retries")
        # Three waits of 17 ms plus two packet lifetimes (2 x 268 ms), and
        # the process's start: well under the default's minutes.
        self.assertLess(seconds, 20)


CM_PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness", "cm_peer.py")


@needs_root_and_tun
class APeerOfTheTestsOwn(unittest.TestCase):
    """harness/cm_peer.py, at the kernel's end of the bridge, does to a
    listening cm_probe what real requesters rarely do, and sees on the wire
    how the listener answers; cm_probe's events and its CM's log say what
    the listener made of it."""

    def meet(self, scenario, seed=None):
        """(the peer's findings, the listener's output)."""
        with CmHosts() as hosts:
            hosts.ns.run("ip", "addr", "add", f"{SILENT_IP}/24", "dev", "br0")
            server = hosts.probe_server(7500, env={"CNA_CM_LOG": "1"}, events=True)
            # Read as it comes: the CM's log of a thousand MADs would fill
            # the pipe and stop the listener.
            server_out = []
            reader = threading.Thread(target=lambda: server_out.append(server.stdout.read()))
            reader.start()
            try:
                peer = hosts.ns.run(PYTHON, CM_PEER, scenario, SILENT_IP, SERVER_IP, "7500",
                                    *([str(seed)] if seed is not None else []), timeout=120)
            finally:
                time.sleep(0.3)
                os.killpg(server.pid, signal.SIGKILL)
                reader.join()
                server.stdout.close()
                server.wait()
        return json.loads(peer.stdout), "".join(server_out)

    @staticmethod
    def names(mads):
        return [m["attr"] for m in mads]

    def test_a_lost_rtu_is_made_good_by_the_rep_sent_again(self):
        found, server = self.meet("lost-rtu")
        mads = found["mads"]
        self.assertEqual(self.names(mads), ["REP", "REP", "DREP"], f"{mads}\n{server}")
        # The REP again after the peer's response time (67 ms) and two of
        # the listener's packet lifetimes (2 x 268 ms).
        self.assertGreater(mads[1]["t"] - mads[0]["t"], 0.5)
        self.assertEqual(mads[0]["sender"], mads[1]["sender"], "the same connection's REP")
        self.assertEqual(re.findall(r"^event (\S+)", server, re.M),
                         ["RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED"],
                         server)

    def test_a_rep_never_answered_ends_in_a_rej_and_an_unreachable_event(self):
        found, server = self.meet("unanswered")
        mads = found["mads"]
        self.assertEqual(self.names(mads), ["REP", "REP", "REP", "REJ"], f"{mads}\n{server}")
        self.assertEqual(mads[3]["reason"], 4, "REJ: timeout")
        self.assertIn("event RDMA_CM_EVENT_UNREACHABLE -110", server)

    def test_a_duplicate_req_makes_no_second_connection(self):
        found, server = self.meet("dup-req")
        replies = [m for m in found["mads"] if m["attr"] != "MRA"]
        # The REQ came again before or after the application accepted: an
        # MRA (it waits) or nothing (its REP is on its way).
        self.assertEqual(self.names(replies), ["REP", "DREP"], f"{found}\n{server}")
        self.assertEqual(len(re.findall(r"^event RDMA_CM_EVENT_CONNECT_REQUEST", server, re.M)), 1, server)
        self.assertEqual(len(re.findall(r"received REQ " + re.escape(SILENT_IP), server)), 3, server)
        self.assertIn("event RDMA_CM_EVENT_DISCONNECTED 0", server)

    def test_a_flood_of_reqs_gets_one_answer_each(self):
        found, server = self.meet("flood")
        answers = found["answers"]
        self.assertEqual(len(answers), found["requests"], f"REQs never answered:\n{found}")
        for comm_id, got in answers.items():
            kinds = {m["attr"] for m in got} - {"MRA"}
            self.assertEqual(len(kinds), 1, f"{comm_id}: {got}")
            if kinds == {"REJ"}:
                self.assertEqual({m["reason"] for m in got}, {3}, f"{comm_id}: REJ for no resources: {got}")
        # The listener's backlog (16) at least made it in, and each of those
        # was ended by its DREQ.
        self.assertGreaterEqual(found["established"], 16, found)
        self.assertEqual(found["dreps"], found["established"], found)
        self.assertEqual(len(re.findall(r"^event RDMA_CM_EVENT_DISCONNECTED", server, re.M)), found["established"])

    def test_mads_of_noise_leave_the_listener_serving(self):
        found, server = self.meet("noise")
        self.assertIn("REP", self.names(found["before"]), found)
        self.assertEqual(self.names(found["after"]), ["REP", "DREP"],
                         f"the listener after {found['sent']} MADs of noise (seed {found['seed']}):\n{found}\n"
                         f"{server[-3000:]}")


if __name__ == "__main__":
    unittest.main()
