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
from harness.rdma_cm import not_listening_yet

SIZES = (1, 1023, 1024, 1025, 65536)
ITERS = 10


def retried_in_guest(command, tries=20, pause="0.5"):
    """The guest's shell running `command` until it succeeds, at most
    `tries` times, `pause` seconds apart; the guest fails if it never does."""
    return (f"ok=0; for t in $(seq {tries}); do if {command}; then ok=1; break; fi; sleep {pause}; done; "
            "[ $ok = 1 ] || exit 1")


def rxe_loop(server, sizes=SIZES, gid="$RXE_GID"):
    """The guest's command: ibv_rc_pingpong once per size, stopping at the
    first failure (its status is the guest's). A client tries to connect
    for up to 10 s, until the cna server listens. rxe's GID index: its
    IPv4 one unless told."""
    if server:
        return "; ".join(f"ibv_rc_pingpong -d $RXE_DEV -g {gid} -n {ITERS} -s {s} || exit $?" for s in sizes)
    return "; ".join(retried_in_guest(f"ibv_rc_pingpong -d $RXE_DEV -g {gid} -n {ITERS} -s {s} {rxe.BRIDGE_IP}")
                     for s in sizes)


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
SEND_BW = ["ib_send_bw", "-x", "1", "-n", str(PERF_ITERS), "-s", str(PERF_SIZE)]
UD_SEND_BW = ["ib_send_bw", "-c", "UD", "-x", "1", "-n", str(PERF_ITERS), "-s", str(UD_SIZE)]


def rxe_verbs_loop(server):
    """The guest's command for the provider's tests: ibv_rc_pingpong over
    the sizes, then ib_send_bw over RC and over UD, then ibv_ud_pingpong
    (unreliable datagrams at rxe's MTU); a client retries until the cna
    server listens, as rxe_loop's. The guest's ib_send_bw with -F: under
    TCG its clock calibration may find the cycle counter too irregular
    (r^2 < 0.9) and, without -F, exit 1 after a good run; the figures
    checked are the host's."""
    send_bw = f"ib_send_bw -d $RXE_DEV -x $RXE_GID -F -n {PERF_ITERS} -s {PERF_SIZE}"
    ud_bw = f"ib_send_bw -c UD -d $RXE_DEV -x $RXE_GID -F -n {PERF_ITERS} -s {UD_SIZE}"
    ud = f"ibv_ud_pingpong -d $RXE_DEV -g $RXE_GID -n {ITERS} -s {UD_SIZE}"
    if server:
        return f"{rxe_loop(True)}; {send_bw} || exit $?; {ud_bw} || exit $?; {ud} || exit $?"
    clients = "; ".join(retried_in_guest(f"{cmd} {rxe.BRIDGE_IP}") for cmd in (send_bw, ud_bw, ud))
    return f"{rxe_loop(False)}; {clients}"


@unittest.skipIf(rxe.available(), rxe.available())
class RxeInteropThroughTheProvider(RxeCase):
    """Debian's own ibverbs-utils and perftest on both sides: on rxe in the
    guest, and on cna's verbs provider (cna-rdma-run) on the host, in both
    roles; one guest boot per role. Once, in the regular pass
    (run_all.SANITIZED_SUITES): the sanitized pass's provider runs the same
    verbs in test_verbs_provider."""

    def check_send_bw(self, out, size=PERF_SIZE):
        self.assertIn(f"GID: 00:00:00:00:00:00:00:00:00:00:255:255:{':'.join(f'{int(b):02d}' for b in rxe.CNA_IP.split('.'))}",
                      out)
        row = re.search(rf"^ {size}\s+{PERF_ITERS}\s+[\d.]+\s+([\d.]+)", out, re.M)
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
            self.check_send_bw(self.client_of_the_guest(peer, SEND_BW))
            self.check_send_bw(self.client_of_the_guest(peer, UD_SEND_BW), UD_SIZE)
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
            self.check_send_bw(peer.verbs(SEND_BW, timeout=120))
            self.check_send_bw(peer.verbs(UD_SEND_BW, timeout=120), UD_SIZE)
            with self.subTest(datagrams=UD_SIZE):
                self.check(peer.verbs(UD_PINGPONG, timeout=90), UD_SIZE, rxe.GUEST_IP["client"])
            self.finish(guest)


PINGS = 10


def rping_verified(out, server):
    """How many of rping's pings came back verified (-v): the client's
    lines, or the server's."""
    return len(re.findall(r"^server ping data: rdma-ping-\d+:" if server else r"^ping data: rdma-ping-\d+:", out, re.M))


def perftest_shows(out, listener):
    """Connected through RDMA CM; the requester's figures row."""
    return "Data ex. method : rdma_cm" in out and (listener or PERF_ROW.search(out) is not None)


def perftest(tool, port):
    """perftest over RDMA CM; {dev} is the device option of the side's
    stack; the requester adds the listener's address."""
    return (f"{tool} -R {{dev}} -s {PERF_SIZE} -n {PERF_ITERS} -p {port}", f"{tool} -R {{dev}} -s {PERF_SIZE} "
            f"-n {PERF_ITERS} -p {port} {{addr}}")


# Each tool: its name, the listener's and the requester's command ({addr}:
# the listener's address, {dev}: the side's device option), and what its
# output on the cna side must show. Each on a port of its own (udaddy's is
# fixed, in the UDP port space), so a requester can never meet the
# listener of the tool before it, still on its way out.
CM_TOOLS = [
    ("rping", f"rping -s -a {{addr}} -p 7301 -v -C {PINGS}", f"rping -c -a {{addr}} -p 7301 -v -C {PINGS}",
     lambda out, listener: rping_verified(out, listener) == PINGS),
    ("ucmatose", "ucmatose -p 7302 -c 10", "ucmatose -p 7302 -s {addr} -c 10",
     lambda out, _: "data transfers complete" in out and "return status 0" in out),
    ("udaddy", "udaddy -c 4", "udaddy -s {addr} -c 4",
     lambda out, _: "data transfers complete" in out and "return status 0" in out),
    ("rdma_server", "rdma_server -p 7304", "rdma_client -p 7304 -s {addr}",
     lambda out, _: re.search(r"rdma_(server|client): end 0", out) is not None),
    ("rdma_xserver", "rdma_xserver -p 7305 -c r", "rdma_xclient -p 7305 -s {addr} -c r",
     lambda out, _: re.search(r"rdma_x(server|client): end 0", out) is not None),
    ("ib_send_bw", *perftest("ib_send_bw", 7306), perftest_shows),
    ("ib_write_bw", *perftest("ib_write_bw", 7307), perftest_shows),
    ("ib_read_bw", *perftest("ib_read_bw", 7308), perftest_shows),
    ("ib_send_lat", *perftest("ib_send_lat", 7309), perftest_shows),
]
# perftest -R makes two connections to one port, and its listener listens
# anew between them. rxe under TCG is slow enough for a requester's second
# REQ to find no listener at times (REJ 8 after a REP): perftest then
# ends, its listener waits for good on a second connection that never
# comes, and a requester started again would be taken for it. So the
# guest's perftest listener runs for at most this long and starts again,
# and a requester refused that way waits for it.
PERFTEST_LISTENER_SECONDS = 30
# The same race with the listener on cna: the guest's perftest (4.5-0.17)
# takes the REJ, tries again with the connection IDs it destroyed, and
# crashes in librdmacm. The pair then runs again, at most this many times.
PERFTEST_PAIR_TRIES = 3


def tries_of(name):
    return PERFTEST_PAIR_TRIES if name.startswith("ib_") else 1


def second_request_refused(listener_out):
    """The cna listener refused a REQ that found no listener (its REJ
    names no local communication ID) after it had accepted one."""
    accepted = listener_out.find("received RTU ")
    return accepted >= 0 and re.search(r"sent REJ \S+, comm IDs 00000000 ", listener_out[accepted:]) is not None


PERF_ROW = re.compile(rf"(?m)^ {PERF_SIZE}\s+{PERF_ITERS}\s+[\d.]+")
# The guest's device; its perftest with -F: under TCG its clock calibration
# may find the cycle counter too irregular and fail a good run.
RXE_DEV = "-d $RXE_DEV -F"
CNA_DEV = "-d cna0"


def for_side(command, addr, dev):
    return command.format(addr=addr, dev=dev)


@unittest.skipIf(rxe.available(), rxe.available())
class RdmaCmWithRxe(RxeCase):
    """RDMA CM between cna's librdmacm (cna-rdma-run) and Linux's rdma_cm
    on rxe: Debian's rdmacm-utils and perftest -R on both sides, in both
    roles; one guest boot per role, running every tool in turn. A
    connection is the InfiniBand CM's REQ, REP and RTU on QP1 with the IP
    CM header (SIDR REQ and REP for udaddy), each side's QP then numbering
    its first packet from the PSN the other announced; DREQ and DREP end
    it."""

    def test_cna_requester_rxe_listener(self):
        server_ip = rxe.GUEST_IP["server"]
        def in_guest(name, listener):
            command = for_side(listener, server_ip, RXE_DEV)
            if name.startswith("ib_"):
                return (f"echo CNA-STEP {name}; "
                        + retried_in_guest(f"timeout {PERFTEST_LISTENER_SECONDS} {command}", tries=5, pause="0"))
            # A listener never met ends in time: the guest does not wait out its limit.
            return f"echo CNA-STEP {name}; timeout 150 {command} || exit 1"
        script = "; ".join(in_guest(name, listener) for name, listener, _, _ in CM_TOOLS)
        with rxe.RxePeer() as peer:
            guest = peer.guest("server", script, limit=900)
            peer.wait_console("CMD-START", 1, timeout=300)
            for name, _, requester, shows in CM_TOOLS:
                with self.subTest(tool=name):
                    out = self.until_listened(peer, for_side(requester, server_ip, CNA_DEV).split())
                    self.assertTrue(shows(out, False), out)
            self.finish(guest)
            with open(peer.console, errors="replace") as f:
                self.assertEqual(rping_verified(re.sub(r"^\[ *[\d.]+\] ", "", f.read(), flags=re.M), server=True),
                                 PINGS)

    def test_rxe_requester_cna_listener(self):
        """Each requester in the guest waits for its listener on cna to say
        it listens: ucmatose's ten REQs, some sent before and some after a
        listener came up, would see rejections and time-outs that are the
        test's doing. A perftest pair whose second REQ came before its
        listener listened again (PERFTEST_LISTENER_SECONDS) runs again."""
        with rxe.RxePeer() as peer:
            def after_listener(name, command, tries):
                flag = peer.flag(f"{name}-$t")
                return (f"echo CNA-STEP {name}; ok=0; for t in $(seq {tries}); do w=0; "
                        f"while [ ! -e {flag} ]; do sleep 0.2; w=$((w+1)); [ $w -lt 1500 ] || exit 1; done; "
                        f"if {command}; then ok=1; break; fi; echo CNA-FAILED {name} $t; done; [ $ok = 1 ] || exit 1")
            script = "; ".join(after_listener(name, for_side(requester, rxe.CNA_IP, RXE_DEV), tries_of(name))
                               for name, _, requester, _ in CM_TOOLS)
            guest = peer.guest("client", script, limit=900)
            for name, listener, _, shows in CM_TOOLS:
                with self.subTest(tool=name):
                    for t in range(1, tries_of(name) + 1):
                        try:
                            out = peer.listener(for_side(listener, rxe.CNA_IP, CNA_DEV).split(), f"{name}-{t}",
                                                abandoned=f"CNA-FAILED {name} {t}\n")
                            break
                        except rxe.TestPmdError as e:
                            if t == tries_of(name) or not second_request_refused(str(e)):
                                raise
                    self.assertTrue(shows(out, True), out)
            self.finish(guest)

    @staticmethod
    def until_listened(peer, argv):
        """argv as the requester, again while the guest's listener is not
        up yet (refused as librdmacm says a REQ or SIDR REQ to no listener
        is)."""
        for attempt in range(60):
            try:
                return peer.verbs(argv, timeout=180)
            except rxe.TestPmdError as e:
                if not not_listening_yet(str(e)) or attempt == 59:
                    raise
                # A REP, then a REJ: perftest's second connection (above).
                time.sleep(PERFTEST_LISTENER_SECONDS + 1 if "received REP" in str(e) else 0.5)


if __name__ == "__main__":
    unittest.main()
