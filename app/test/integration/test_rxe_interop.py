"""Interoperability with an independent RoCE stack: Linux's Soft-RoCE
(rdma_rxe) in a QEMU guest, Debian's ibv_rc_pingpong on it, rdma_pingpong
on a cna port, both on one bridge. IPv4 RoCEv2 GIDs resolved by ARP both
ways (and IPv6 link-local ones by neighbour discovery), every message of every size across the path MTU (1024 on rxe) going
through, in both roles."""
import os
import re
import time
import unittest

from harness import rxe
from harness.rdma import RESULT, addresses

SIZES = (1, 1023, 1024, 1025, 65536)
ITERS = 10


def rxe_loop(server, sizes=SIZES, gid="$RXE_GID"):
    """The guest's command: ibv_rc_pingpong once per size, stopping at the
    first failure (its status is the guest's). A client tries to connect
    for up to 10 s, until the cna server listens. rxe's GID index: its
    IPv4 one unless told."""
    if server:
        return "; ".join(f"ibv_rc_pingpong -d $RXE_DEV -g {gid} -n {ITERS} -s {s} || exit $?" for s in sizes)
    runs = []
    for s in sizes:
        runs.append(f"ok=0; for t in $(seq 20); do if ibv_rc_pingpong -d $RXE_DEV -g {gid} -n {ITERS} -s {s} "
                    f"{rxe.BRIDGE_IP}; then ok=1; break; fi; sleep 0.5; done; [ $ok = 1 ] || exit 1")
    return "; ".join(runs)


class RxeCase(unittest.TestCase):
    def check(self, out, size, peer_ip):
        local, remote = addresses(out)
        self.assertEqual(local[3], f"::ffff:{rxe.CNA_IP}")
        self.assertEqual(remote[3], f"::ffff:{peer_ip}")
        m = RESULT.search(out)
        self.assertIsNotNone(m, out)
        self.assertEqual(int(m.group(1)), ITERS, f"size {size}")

    def finish(self, guest):
        out, _ = guest.communicate(timeout=240)
        m = re.search(r"rxe-peer: role=\w+ .* rc=(\d+)", out)
        self.assertIsNotNone(m, out[-2000:])
        if m.group(1) != "0":
            log = re.search(r" log=(\S+)", out)
            console = open(log.group(1), errors="replace").read()[-4000:] if log and os.path.exists(log.group(1)) else ""
            self.fail(f"the guest's command failed (rc={m.group(1)}):\n{out[-2000:]}\n--- its console ends:\n{console}")


@unittest.skipIf(rxe.available(), rxe.available())
class RxeInterop(RxeCase):

    def test_cna_client_rxe_server(self):
        with rxe.RxePeer() as peer:
            guest = peer.guest("server", rxe_loop(server=True))
            for n, size in enumerate(SIZES, 1):
                with self.subTest(size=size):
                    peer.wait_console("local address:", n)  # the n-th server listens
                    out = peer.cna(["-n", str(ITERS), "-s", str(size)], server=rxe.GUEST_IP["server"], timeout=90)
                    self.check(out, size, rxe.GUEST_IP["server"])
            self.finish(guest)

    def test_rxe_client_cna_server(self):
        with rxe.RxePeer() as peer:
            guest = peer.guest("client", rxe_loop(server=False))
            for size in SIZES:
                with self.subTest(size=size):
                    out = peer.cna(["-n", str(ITERS), "-s", str(size)], timeout=90)
                    self.check(out, size, rxe.GUEST_IP["client"])
            self.finish(guest)

    def test_ipv6_link_local_gids(self):
        """RoCEv2 over IPv6 both ways, UDP checksum 0 as both stacks send it:
        rxe resolves the cna port's link-local GID by neighbour discovery,
        the cna port rxe's from the EUI-64 in it."""
        sizes = (1, 1025, 65536)
        with rxe.RxePeer() as peer:
            # The guest's kernel cannot resolve from its link-local address
            # while duplicate address detection still holds it tentative.
            settle = ("for t in $(seq 50); do [ -z \"$(ip -6 addr show dev $RXE_NETDEV tentative)\" ] && break; "
                      "sleep 0.1; done; ")
            guest = peer.guest("server", settle + rxe_loop(server=True, sizes=sizes, gid=0))
            for n, size in enumerate(sizes, 1):
                with self.subTest(size=size):
                    peer.wait_console("local address:", n)
                    out = peer.cna(["-n", str(ITERS), "-s", str(size)], server=rxe.GUEST_IP["server"], timeout=90,
                                   gid=0)
                    local, remote = addresses(out)
                    self.assertTrue(local[3].startswith("fe80::"), local)
                    self.assertTrue(remote[3].startswith("fe80::5054:ff:fe12:"), remote)
                    m = RESULT.search(out)
                    self.assertIsNotNone(m, out)
                    self.assertEqual(int(m.group(1)), ITERS, f"size {size}")
            self.finish(guest)


PERF_ITERS = 100
PERF_SIZE = 4096
UD_SIZE = 1024  # a datagram of rxe's whole MTU
UD_PINGPONG = ["ibv_ud_pingpong", "-g", "1", "-n", str(ITERS), "-s", str(UD_SIZE)]


def rxe_verbs_loop(server):
    """The guest's command for the provider's tests: ibv_rc_pingpong over
    the sizes, then ib_send_bw, then ibv_ud_pingpong (unreliable datagrams
    at rxe's MTU); a client retries until the cna server listens, as
    rxe_loop's. The guest's ib_send_bw with -F: under TCG its
    clock calibration may find the cycle counter too irregular (r^2 < 0.9)
    and, without -F, exit 1 after a good run; the figures checked are the
    host's."""
    send_bw = f"ib_send_bw -d $RXE_DEV -x $RXE_GID -F -n {PERF_ITERS} -s {PERF_SIZE}"
    ud = f"ibv_ud_pingpong -d $RXE_DEV -g $RXE_GID -n {ITERS} -s {UD_SIZE}"
    if server:
        return f"{rxe_loop(True)}; {send_bw} || exit $?; {ud} || exit $?"
    def retried(cmd):
        return (f"ok=0; for t in $(seq 20); do if {cmd} {rxe.BRIDGE_IP}; then ok=1; break; fi; sleep 0.5; done; "
                "[ $ok = 1 ] || exit 1")
    return f"{rxe_loop(False)}; {retried(send_bw)}; {retried(ud)}"


@unittest.skipIf(rxe.available(), rxe.available())
class RxeInteropThroughTheProvider(RxeCase):
    """Debian's own ibverbs-utils and perftest on both sides: on rxe in the
    guest, and on cna's verbs provider (cna-rdma-run) on the host, in both
    roles; one guest boot per role. Once, in the regular pass
    (run_all.SANITIZED_SUITES): the sanitized pass's provider runs the same
    verbs in test_verbs_provider."""

    def check_send_bw(self, out):
        self.assertIn(f"GID: 00:00:00:00:00:00:00:00:00:00:255:255:{':'.join(f'{int(b):02d}' for b in rxe.CNA_IP.split('.'))}",
                      out)
        row = re.search(rf"^ {PERF_SIZE}\s+{PERF_ITERS}\s+[\d.]+\s+([\d.]+)", out, re.M)
        self.assertIsNotNone(row, out)
        self.assertGreater(float(row.group(1)), 0.0)

    def client_of_the_guest(self, peer, argv):
        """argv as the client of the guest's server, once it listens."""
        for attempt in range(40):
            try:
                return peer.verbs(argv, server=rxe.GUEST_IP["server"], timeout=120)
            except rxe.TestPmdError as e:
                if "Couldn't connect" not in str(e) or attempt == 39:
                    raise
                time.sleep(0.5)

    def test_provider_client_rxe_server(self):
        with rxe.RxePeer() as peer:
            guest = peer.guest("server", rxe_verbs_loop(server=True))
            for n, size in enumerate(SIZES, 1):
                with self.subTest(size=size):
                    peer.wait_console("local address:", n)
                    out = peer.verbs(["ibv_rc_pingpong", "-g", "1", "-n", str(ITERS), "-s", str(size)],
                                     server=rxe.GUEST_IP["server"], timeout=90)
                    self.check(out, size, rxe.GUEST_IP["server"])
            self.check_send_bw(self.client_of_the_guest(
                peer, ["ib_send_bw", "-x", "1", "-n", str(PERF_ITERS), "-s", str(PERF_SIZE)]))
            with self.subTest(datagrams=UD_SIZE):
                out = self.client_of_the_guest(peer, UD_PINGPONG)
                self.check(out, UD_SIZE, rxe.GUEST_IP["server"])
            self.finish(guest)

    def test_rxe_client_provider_server(self):
        with rxe.RxePeer() as peer:
            guest = peer.guest("client", rxe_verbs_loop(server=False))
            for size in SIZES:
                with self.subTest(size=size):
                    out = peer.verbs(["ibv_rc_pingpong", "-g", "1", "-n", str(ITERS), "-s", str(size)], timeout=90)
                    self.check(out, size, rxe.GUEST_IP["client"])
            self.check_send_bw(peer.verbs(["ib_send_bw", "-x", "1", "-n", str(PERF_ITERS), "-s", str(PERF_SIZE)],
                                          timeout=120))
            with self.subTest(datagrams=UD_SIZE):
                self.check(peer.verbs(UD_PINGPONG, timeout=90), UD_SIZE, rxe.GUEST_IP["client"])
            self.finish(guest)


PINGS = 10


def rping_verified(out, server):
    """How many of rping's pings came back verified (-v): the client's
    lines, or the server's."""
    return len(re.findall(r"^server ping data: rdma-ping-\d+:" if server else r"^ping data: rdma-ping-\d+:", out, re.M))


@unittest.skipIf(rxe.available(), rxe.available())
class RdmaCmWithRxe(RxeCase):
    """RDMA CM between cna's librdmacm (cna-rdma-run) and Linux's rdma_cm
    on rxe: Debian's rping on both sides, in both roles; one guest boot per
    role. The connection is the InfiniBand CM's REQ, REP and RTU on QP1
    with the IP CM header, each side's QP then numbering its first packet
    from the PSN the other announced; DREQ and DREP end it."""

    def test_cna_requester_rxe_listener(self):
        with rxe.RxePeer() as peer:
            server_ip = rxe.GUEST_IP["server"]
            guest = peer.guest("server", f"rping -s -a {server_ip} -v -C {PINGS}")
            peer.wait_console("CMD-START", 1, timeout=300)
            for attempt in range(40):  # until rxe's rping listens (no REJ, reason 8)
                try:
                    out = peer.verbs(["rping", "-c", "-a", server_ip, "-v", "-C", str(PINGS)], timeout=120)
                    break
                except rxe.TestPmdError as e:
                    if "REJECTED" not in str(e) or attempt == 39:
                        raise
                    time.sleep(0.5)
            self.assertEqual(rping_verified(out, server=False), PINGS, out)
            self.finish(guest)
            with open(peer.console, errors="replace") as f:
                self.assertEqual(rping_verified(re.sub(r"^\[ *[\d.]+\] ", "", f.read(), flags=re.M), server=True),
                                 PINGS)

    def test_rxe_requester_cna_listener(self):
        with rxe.RxePeer() as peer:
            client = (f"ok=0; for t in $(seq 40); do if rping -c -a {rxe.CNA_IP} -v -C {PINGS}; then ok=1; break; fi; "
                      "sleep 0.5; done; [ $ok = 1 ] || exit 1")
            guest = peer.guest("client", client)
            out = peer.verbs(["rping", "-s", "-a", rxe.CNA_IP, "-v", "-C", str(PINGS)], timeout=400)
            self.assertEqual(rping_verified(out, server=True), PINGS, out)
            self.finish(guest)


if __name__ == "__main__":
    unittest.main()
