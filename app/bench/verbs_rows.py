"""The bench's rows of Debian's own RDMA applications on cna's verbs
provider, between two processes, each with its own adapter on a TAP wire of
one bridge (as the integration suites run them): perftest and UCX beside
rdma_perf on the RDMA PMD's API, and RDMA CM (cna's librdmacm): what a
connection costs to make, and that a connection made by RDMA CM moves data
as fast as one made over perftest's TCP exchange."""
import os
import re
import statistics
import time

from bench_testpmd import BenchError, last_lines
from harness.rdma_cm import CmHosts, cm_probe, not_listening_yet
from harness.rdma_daemon import DaemonHosts, VfHosts
from harness.testpmd import TestPmdError
from harness.verbs import SERVER_IP, UCX_ENV, UCX_FINAL, VerbsHosts

# perftest's result rows, which rdma_perf prints too: bandwidth (size,
# iterations, peak, average, message rate) and latency (size, iterations,
# min, max, typical, average, stdev, 99 %, 99.9 %).
RDMA_BW_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
RDMA_LAT_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
                          r"\s+([\d.]+)\s+([\d.]+)\s*$", re.M)


def print_provider_row(label, width, figures, bandwidth):
    """A row of what the provider costs: the medians of the RDMA PMD's and
    the provider's figures ({False: PMD's, True: provider's}), and the cost
    (bandwidth: % of the PMD's; latency: us more)."""
    pmd, provider = statistics.median(figures[False]), statistics.median(figures[True])
    cost = f"{(pmd - provider) / pmd * 100:+.1f} %" if bandwidth else f"{provider - pmd:+.3f} us"
    print(f"{label:<{width}}{pmd:>10.2f}{provider:>10.2f}{cost:>16}")




def perftest_figure(argv, regex, group):
    """A provider side: perftest's figure from its result row, its
    connection made over its TCP exchange, or with -R by RDMA CM (hosts:
    CmHosts)."""
    def run(hosts):
        _, out = hosts.cm_pair(argv, [*argv, SERVER_IP]) if "-R" in argv else hosts.verbs_pair(argv)
        m = regex.search(out)
        if not m:
            raise BenchError(f"no result row in:\n{last_lines(out, 6)}")
        return float(m.group(group))
    return run


def ucx_tag_bw_gbits(size):
    """A provider side: UCP's tag_bw with UCX's own choice of transports
    (rc_verbs, wired up over ud_verbs), its overall MiB/s in Gbit/s."""
    def run(hosts):
        _, out = hosts.verbs_pair(["ucx_perftest", "-t", "tag_bw", "-s", str(size), "-n", "2000"], env=UCX_ENV)
        m = UCX_FINAL.search(out)
        if not m:
            raise BenchError(f"no Final line in:\n{last_lines(out, 6)}")
        return float(m.group(6)) * 1024 * 1024 * 8 / 1e9
    return run


def run_perftest_rows(args, rounds=3):
    """Debian's perftest, and UCX's ucx_perftest, through the verbs provider
    beside rdma_perf on the RDMA PMD's API, both between two processes,
    each with its own adapter on a TAP interface of one bridge (as
    test_verbs_provider runs them), alternating; medians of `rounds`. False
    if a row failed."""
    print()
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        print("perftest through the verbs provider: skipped: needs root and /dev/net/tun")
        return True
    print("perftest and UCX through the verbs provider (two processes, each with its own adapter on a TAP wire, one "
          f"bridge) beside rdma_perf on the RDMA PMD's API in the same layout, alternating, medians of {rounds}; "
          "the kernel's TAP and bridge carry every frame")
    print(f"{'row':<32}{'RDMA PMD':>10}{'provider':>10}{'provider cost':>16}")
    # (label, rdma_perf options, rdma_perf's figure, the provider's side, bandwidth?)
    rows = (("ib_write_bw 64 KiB Gbit/s", ["-T", "write", "-s", "65536", "-n", "2000"], 4,
             perftest_figure(["ib_write_bw", "-x", "1", "-s", "65536", "-n", "2000", "--report_gbits"], RDMA_BW_ROW, 4),
             True),
            ("ib_send_lat 8 B one-way us", ["-T", "send", "--latency", "-s", "8", "-n", "2000"], 5,
             perftest_figure(["ib_send_lat", "-x", "1", "-s", "8", "-n", "2000"], RDMA_LAT_ROW, 5), False),
            ("ib_write_lat 8 B one-way us", ["-T", "write", "--latency", "-s", "8", "-n", "2000"], 5,
             perftest_figure(["ib_write_lat", "-x", "1", "-s", "8", "-n", "2000"], RDMA_LAT_ROW, 5), False),
            # UCP's protocol over the provider against the PMD's bare WRITEs
            # of the same size: what UCX and the provider cost together.
            ("ucx_perftest tag_bw 64 KiB Gbit/s", ["-T", "write", "-s", "65536", "-n", "2000"], 4,
             ucx_tag_bw_gbits(65536), True))
    ok = True
    with VerbsHosts(build=args.build) as hosts:
        ips = {"server_vdev": ",ipv4=10.0.0.1/24", "client_vdev": ",ipv4=10.0.0.2/24"}
        for label, options, perf_group, provider_side, bandwidth in rows:
            regex = RDMA_BW_ROW if bandwidth else RDMA_LAT_ROW
            figures = {False: [], True: []}
            try:
                for _ in range(rounds):
                    _, pmd = hosts.perf(options, gid=1, **ips)
                    m = regex.search(pmd)
                    if not m:
                        raise BenchError(f"no result row in:\n{last_lines(pmd, 6)}")
                    figures[False].append(float(m.group(perf_group)))
                    figures[True].append(provider_side(hosts))
            except (BenchError, AssertionError, TestPmdError) as e:
                print(f"{label:<32}  failed: {e}")
                ok = False
                continue
            print_provider_row(label, 32, figures, bandwidth)
    return ok

def daemon_perftest_figure(hosts, argv, regex, group):
    """perftest's figure between the daemon's two functions: the client
    tries until the server listens (a PF's link is up only once the cable's
    other end is loaded)."""
    _, out = hosts.cm_pair(argv, [*argv, "127.0.0.1"])
    m = regex.search(out)
    if not m:
        raise BenchError(f"no result row in:\n{last_lines(out, 6)}")
    return float(m.group(group))


def run_daemon_rows(args, rounds=3):
    """perftest between two processes sharing one adapter through
    cna-adapterd: on two PFs of one port, and on two VFs of one PF (their
    RoCE through the port's switch either way; each VF's RDMA slowpath its
    own); medians of `rounds`. False if a row failed."""
    print()
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        print("perftest through cna-adapterd: skipped: needs root and /dev/net/tun")
        return True
    print(f"perftest through cna-adapterd: two processes on two PFs, then two VFs, of one port (RoCE through the "
          f"port's switch; the daemon's engine a third busy thread), medians of {rounds}")
    print(f"{'row':<32}{'two PFs':>10}{'two VFs':>10}{'VFs/PFs':>16}")
    rows = (("ib_write_bw 64 KiB Gbit/s", ["ib_write_bw", "-x", "1", "-s", "65536", "-n", "2000", "--report_gbits"],
             RDMA_BW_ROW, 4),
            ("ib_send_lat 8 B one-way us", ["ib_send_lat", "-x", "1", "-s", "8", "-n", "2000"], RDMA_LAT_ROW, 5))
    figures = {label: {} for label, *_ in rows}
    try:
        for name, hosts_class in (("pf", DaemonHosts), ("vf", VfHosts)):
            with hosts_class(build=args.build, timeout=300) as hosts:
                for label, argv, regex, group in rows:
                    figures[label][name] = statistics.median(
                        daemon_perftest_figure(hosts, [*argv, "-p", hosts.tcp_port()], regex, group)
                        for _ in range(rounds))
    except (BenchError, AssertionError, TestPmdError) as e:
        print(f"perftest through cna-adapterd  failed: {e}")
        return False
    for label, _, _, _ in rows:
        pf, vf = figures[label]["pf"], figures[label]["vf"]
        print(f"{label:<32}{pf:>10.2f}{vf:>10.2f}{vf / pf:>15.2f}x")
    return True


def against_listener(hosts, server_argv, attempt, what):
    """`server_argv` as the listener, and `attempt()` (a client run:
    (its figure, or None when it failed; its output)) until the listener
    was up; the figure."""
    server = hosts.verbs_host("s", server_argv)
    try:
        for _ in range(20):
            figure, out = attempt()
            if figure is not None:
                return figure
            if not not_listening_yet(out):
                raise BenchError(f"{what}: {last_lines(out, 4)}")
            time.sleep(0.5)
        raise BenchError(f"{what}: the listener never came up")
    finally:
        server.kill()
        server.communicate()


def ucmatose_seconds(hosts, connections):
    """The wall time of ucmatose's requester, its process start included,
    making `connections` connections (one message each) to a listener
    already up."""
    def attempt():
        start = time.monotonic()
        client = hosts.verbs_host("c", ["ucmatose", "-s", SERVER_IP, "-c", str(connections), "-C", "1"])
        out, _ = client.communicate(timeout=hosts.timeout)
        return (time.monotonic() - start if client.returncode == 0 else None), out
    return against_listener(hosts, ["ucmatose", "-c", str(connections), "-C", "1"], attempt,
                            f"ucmatose -c {connections}")


def rping_first_ping_seconds(hosts):
    """rping's requester from its REQ (the CM's log stamps it on the
    monotonic clock) to its first ping verified (-v: its buffer's address
    sent, the listener's RDMA READ of it, its RDMA WRITE back, the SENDs
    that say so), as the line comes out (line-buffered)."""
    def attempt():
        client = hosts.verbs_host("c", ["stdbuf", "-oL", "rping", "-c", "-a", SERVER_IP, "-v", "-C", "1"],
                                  env={"CNA_CM_LOG": "1"})
        req = first_ping = None
        out = []
        for line in client.stdout:
            out.append(line)
            m = re.match(r"cna rdmacm: (\d+\.\d+) sent REQ", line)
            if m and req is None:
                req = float(m.group(1))
            if line.startswith("ping data:") and first_ping is None:
                first_ping = time.monotonic()
        client.wait()
        done = client.returncode == 0 and req is not None and first_ping is not None
        return (first_ping - req if done else None), "".join(out)
    return against_listener(hosts, ["rping", "-s", "-a", SERVER_IP, "-v", "-C", "1"], attempt, "rping")


def run_rdma_cm(args, rounds=3, connections=1000):
    """RDMA CM through cna's librdmacm: perftest's connection by RDMA CM
    (-R) beside its own TCP exchange, alternating, medians of `rounds`;
    ucmatose's connection rate; cm_probe's connect time. False if a row
    failed."""
    print()
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        print("RDMA CM: skipped: needs root and /dev/net/tun")
        return True
    print("RDMA CM (cna's librdmacm) between two processes on TAP wires of one bridge: perftest connected by its TCP "
          f"exchange and by RDMA CM (-R), alternating, medians of {rounds}")
    print(f"{'row':<32}{'TCP':>10}{'RDMA CM':>10}{'CM cost':>16}")
    rows = (("ib_write_bw 64 KiB Gbit/s", ["ib_write_bw", "-d", "cna0", "-s", "65536", "-n", "2000", "--report_gbits"],
             RDMA_BW_ROW, 4, True),
            ("ib_send_lat 8 B one-way us", ["ib_send_lat", "-d", "cna0", "-s", "8", "-n", "2000"], RDMA_LAT_ROW, 5,
             False))
    ok = True
    with CmHosts(build=args.build, timeout=300) as hosts:
        for label, argv, regex, group, bandwidth in rows:
            figures = {False: [], True: []}
            try:
                for _ in range(rounds):
                    figures[False].append(perftest_figure([*argv, "-x", "1"], regex, group)(hosts))
                    figures[True].append(perftest_figure([*argv, "-R"], regex, group)(hosts))
            except (BenchError, AssertionError, TestPmdError) as e:
                print(f"{label:<32}  failed: {e}")
                ok = False
                continue
            print_provider_row(label, 32, figures, bandwidth)
        try:
            many = statistics.median(ucmatose_seconds(hosts, connections) for _ in range(rounds))
            print(f"ucmatose -c {connections} (all at once), the requester's whole run with "
                  f"its start: {many:.2f} s, {connections / many:.0f} connections/s at least (median of {rounds})")
            first = statistics.median(rping_first_ping_seconds(hosts) for _ in range(rounds))
            print(f"rping -v -C 1, the requester's REQ to its first ping verified: {first * 1e3:.1f} ms "
                  f"(median of {rounds})")
            server = hosts.probe_server(7500)
            try:
                client = hosts.verbs_host("c", [cm_probe(args.build), "cycles", SERVER_IP, "7500", "200"])
                out, _ = client.communicate(timeout=hosts.timeout)
            finally:
                server.kill()
                server.communicate()
            m = re.search(r"connect mean (\d+) us handshake mean (\d+) us cycle mean (\d+) us", out)
            if client.returncode != 0 or not m:
                raise BenchError(f"cm_probe cycles: {last_lines(out, 4)}")
            print(f"cm_probe, 200 connections one after another: rdma_connect to ESTABLISHED {m.group(2)} us; "
                  f"rdma_resolve_addr to ESTABLISHED, the QP made on the way, {m.group(1)} us; the whole cycle "
                  f"{m.group(3)} us ({1e6 / int(m.group(3)):.0f} connections/s)")
        except (BenchError, AssertionError, TestPmdError) as e:
            print(f"connection setup  failed: {e}")
            ok = False
    return ok
