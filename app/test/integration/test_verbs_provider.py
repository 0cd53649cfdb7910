"""Unmodified verbs applications on cna's provider (libcna-rdmav34.so),
through cna-rdma-run: what users run first (ibv_devices, ibv_devinfo -v),
the environment the wrapper makes (and that it leaves the host as it was),
the provider's match with the installed libibverbs's private ABI, and
Debian's ibverbs-utils and perftest between two processes, each with its own
adapter on a TAP wire, the TAPs bridged: every run completes with its
figures, and what crosses the bridge is RoCEv2 that tshark decodes and whose
every ICRC scapy recomputes."""
import ipaddress
import os
import re
import shutil
import subprocess
import tempfile
import threading
import unittest

from scapy.all import rdpcap

from harness.testpmd import Netns, build_dir
from harness.verbs import (CLIENT_IP, SERVER_IP, UCX_ENV, UCX_FINAL, VerbsHosts, needs_root_and_tun, provider_path,
                           rdma_run, rdma_run_path, regular_pass_only)
from harness.roce_wire import bad_icrcs, roce_frames, tshark_roce

TWO_CABLED = "adapter=a,ports=2,wire=cable,ipv4=10.1.0.1/24;adapter=a,port=1,ipv4=10.1.0.2/24"
PINGPONG_RESULT = re.compile(r"(\d+) iters in [\d.]+ seconds = [\d.]+ usec/iter")
# A perftest result row: size, iterations, then the figures.
PERF_ROW = re.compile(r"^ (\d+)[ \t]+(\d+)((?:[ \t]+[\d.]+)+)[ \t]*$", re.M)
PERFTEST_SIZES = [2 ** n for n in range(1, 24)]  # -a: 2 B to 8 MiB


def perf_rows(output):
    """{size: (iterations, [figures])} of perftest's result rows."""
    return {int(m.group(1)): (int(m.group(2)), [float(x) for x in m.group(3).split()])
            for m in PERF_ROW.finditer(output)}


@needs_root_and_tun
class Device(unittest.TestCase):
    """One process, two cabled ports of one adapter: devices cna0 and cna1."""

    def test_ibv_devices_lists_every_device_with_its_guid(self):
        for tool in ("ibv_devices", "ibv_devinfo"):
            with self.subTest(tool=tool):
                rc, out, err = rdma_run([tool], TWO_CABLED)
                self.assertEqual(rc, 0, err)
                if tool == "ibv_devices":
                    guids = dict(re.findall(r"^\s+(cna\d)\s+([0-9a-f]{16})$", out, re.M))
                else:
                    guids = dict(re.findall(r"^hca_id:\s+(cna\d)\n(?:\t.*\n)*?\tnode_guid:\s+([0-9a-f:]{19})$", out,
                                            re.M))
                self.assertEqual(sorted(guids), ["cna0", "cna1"], out)
                # The ports of one adapter: EUI-64s of consecutive MACs.
                value = {dev: int(g.replace(":", ""), 16) for dev, g in guids.items()}
                self.assertEqual(value["cna1"] - value["cna0"], 1, guids)

    def test_ibv_devinfo_shows_a_roce_port_with_real_limits_and_gids(self):
        rc, out, err = rdma_run(["ibv_devinfo", "-v", "-d", "cna1"], TWO_CABLED)
        self.assertEqual(rc, 0, err)
        for line in ("transport:\t\t\tInfiniBand (0)", "link_layer:\t\tEthernet", "state:\t\t\tPORT_ACTIVE (4)",
                     "phys_state:\t\tLINK_UP (5)", "atomic_cap:\t\t\tATOMIC_HCA (1)", "phys_port_cnt:\t\t\t1"):
            self.assertIn(line, out)
        limits = {k: int(v) for k, v in re.findall(r"^\t(max_qp|max_cq|max_mr|max_pd|max_srq|max_sge):\t+(\d+)$",
                                                        out, re.M)}
        self.assertEqual(len(limits), 6, out)
        for name, value in limits.items():
            self.assertGreater(value, 0, name)
        gids = re.findall(r"GID\[\s*(\d+)\]:\s+(\S+), RoCE v2", out)
        self.assertEqual(gids[1], ("1", "::ffff:10.1.0.2"), "index 1: the IPv4-mapped RoCEv2 GID")
        guid = re.search(r"node_guid:\s+([0-9a-f:]{19})", out).group(1)
        self.assertEqual(ipaddress.ip_address(gids[0][1]), ipaddress.ip_address("fe80::" + guid),
                         "index 0: the link-local address of the port's EUI-64, which is its GUID")
        self.assertEqual(len(gids), 2, "empty GID entries are not listed")

    def test_a_lost_link_is_a_port_event(self):
        """ibv_asyncwatch sees IBV_EVENT_PORT_ERR when the port's TAP wire goes."""
        ns = Netns()
        try:
            env = dict(os.environ, CNA_RDMA_DEVARGS="wire=tap:vw0")
            # One process from ip's exec to ibv_asyncwatch's: killing it
            # leaves nothing behind (nor an adapter running).
            proc = ns.popen(rdma_run_path(), "stdbuf", "-oL", "ibv_asyncwatch", env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
            watchdog = threading.Timer(30, proc.kill)
            watchdog.start()
            lines = []
            for line in proc.stdout:  # until libibverbs watches the context's async fd
                lines.append(line)
                if "async event FD" in line:
                    break
            ns.run("ip", "link", "del", "vw0")
            for line in proc.stdout:
                lines.append(line)
                if "event_type" in line:
                    break
            watchdog.cancel()
            proc.kill()
            proc.wait(timeout=10)
        finally:
            ns.delete()
        self.assertIn("  event_type IBV_EVENT_PORT_ERR (10), port 1\n", lines, "".join(lines))

    def test_an_incomplete_environment_is_named(self):
        rc, out, err = rdma_run(["ibv_devices"], "wire=bogus")
        self.assertNotIn("cna0", out)
        self.assertIn("invalid devarg 'wire=bogus'", err)
        self.assertIn("no userspace device-specific driver found for cna0", err)

    def test_without_its_provider_the_wrapper_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            alone = os.path.join(tmp, "cna-rdma-run")
            shutil.copy(rdma_run_path(), alone)
            rc, _, err = rdma_run(["ibv_devices"], rdma_run=alone)
        self.assertEqual(rc, 125)
        self.assertIn("libcna-rdmav34.so is missing", err)

    def test_the_command_sees_a_refusing_device_and_the_host_keeps_its_own(self):
        # Another test's process may still be ending, taking its own runtime
        # directory with it: the host's own is one made here.
        os.makedirs("/var/run/dpdk", exist_ok=True)
        hosts_own = tempfile.mkdtemp(prefix="host-own-", dir="/var/run/dpdk")
        self.addCleanup(os.rmdir, hosts_own)
        before = set(os.listdir("/var/run/dpdk"))
        script = ("stat -c '%F %t:%T' /dev/infiniband/uverbs0; cat /sys/class/infiniband_verbs/uverbs0/dev; "
                  "ls /dev/null /dev/pts /sys/class/net >/dev/null && echo originals-there; "
                  "/bin/echo x > /dev/infiniband/uverbs0 || echo write-refused; ibv_devinfo -l")
        rc, out, err = rdma_run(["sh", "-c", script], "wire=loopback")
        self.assertEqual(rc, 0, err)
        self.assertIn("character special file 1:7", out)
        self.assertIn("\n1:7\n", out)
        self.assertIn("originals-there", out)
        self.assertIn("write-refused", out)
        self.assertIn("No space left on device", err)
        self.assertIn("cna0", out)
        for path in ("/dev/infiniband", "/sys/class/infiniband_verbs", "/sys/class/infiniband"):
            self.assertFalse(os.path.exists(path), f"{path} on the host")
        self.assertTrue(os.path.isdir(hosts_own), "the host's runtime directories are gone")
        self.assertEqual(set(os.listdir("/var/run/dpdk")) - before, set(), "the command left its runtime directory")

    def test_the_kernels_rdma_netlink_is_refused_and_nothing_else(self):
        """libibverbs reads sysfs only where it cannot make an RDMA netlink
        socket: the command cannot, even on a kernel that has RDMA."""
        probe = ("import errno, socket\n"
                 "for proto in (20, 0):\n"
                 "    try:\n"
                 "        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto).close(); print(proto, 'made')\n"
                 "    except OSError as e:\n"
                 "        print(proto, errno.errorcode[e.errno])\n"
                 "print('filters', open('/proc/self/status').read().split('Seccomp_filters:')[1].split()[0])\n")
        rc, out, err = rdma_run(["/usr/bin/python3", "-c", probe], "wire=loopback")
        self.assertEqual(rc, 0, err)
        self.assertIn("20 EPROTONOSUPPORT", out)
        self.assertIn("0 made", out, "route netlink (ip, the TAP wire) works")
        self.assertIn("filters 1", out)

    def test_a_forked_child_that_exits_leaves_the_adapter_to_its_parent(self):
        if "libasan" in os.environ.get("LD_PRELOAD", ""):
            # Seen (gdb): the child waits for good in libasan's free, on a
            # size class's lock the parent's engine thread held at the fork.
            self.skipTest("GCC 12's ASan runtime does not hold its allocator's locks across fork(): a child "
                          "forked while another thread allocates may wait for good; the regular pass runs it")
        script = ("import os, time\n"
                  "import pyverbs.device as d\n"
                  "ctx = d.Context(name='cna0')\n"
                  "pid = os.fork()\n"
                  "if pid == 0:\n"
                  "    raise SystemExit(0)  # the exit handlers of a child run\n"
                  "_, status = os.waitpid(pid, 0)\n"
                  "time.sleep(0.2)\n"
                  "threads = [open(f'/proc/self/task/{t}/comm').read().strip() for t in os.listdir('/proc/self/task')]\n"
                  "print('child', os.waitstatus_to_exitcode(status), 'event thread', 'cna-verbs-ev' in threads)\n"
                  "ctx.close()\n")
        rc, out, err = rdma_run(["/usr/bin/python3", "-c", script], "wire=loopback", timeout=60)
        self.assertEqual(rc, 0, err)
        self.assertIn("child 0 event thread True", out)

    def test_an_empty_devargs_entry_is_refused(self):
        for devargs in ("wire=loopback;", ";wire=loopback", "a;;b"):
            with self.subTest(devargs=devargs):
                rc, _, err = rdma_run(["ibv_devices"], devargs)
                self.assertEqual(rc, 125)
                self.assertIn("an empty entry", err)

    def test_a_bad_number_in_the_environment_is_named(self):
        for name, value, expected in (("CNA_RDMA_MTU", "9601", "from 68 to 9600"),
                                      ("CNA_RDMA_LINK_WAIT", "5s", "from 0 to 3600")):
            with self.subTest(name=name):
                rc, out, err = rdma_run(["ibv_devinfo"], "wire=loopback", env={name: value})
                self.assertNotEqual(rc, 0, out)
                self.assertIn(f"cna: {name}={value}: expected a number {expected}", err)

    def test_the_provider_needs_only_what_the_installed_libibverbs_exports(self):
        needed = subprocess.run(["nm", "-D", "--undefined-only", provider_path()], stdout=subprocess.PIPE,
                                text=True, check=True).stdout
        private = set(re.findall(r"(\w+)@(IBVERBS_PRIVATE_\d+)", needed))
        self.assertIn(("verbs_register_driver_34", "IBVERBS_PRIVATE_34"), private)
        exported = subprocess.run(["objdump", "-T", "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"],
                                  stdout=subprocess.PIPE, text=True, check=True).stdout
        offered = set(re.findall(r"\s(IBVERBS_PRIVATE_\d+)\s+(\w+)$", exported, re.M))
        for symbol, version in private:
            self.assertIn((version, symbol), offered, f"{symbol}@{version}")


@needs_root_and_tun
class Misuse(unittest.TestCase):
    """A verbs application that posts past its queues, with bad or
    deregistered keys, to a destroyed QP (app/test/tools/verbs_misuse.c):
    each mistake gets the errno or the error completion verbs specify, the
    async events come and are taken back as the kernel's, and healthy QPs
    of the same devices exchange messages after each."""

    def test_every_mistake_gets_its_answer_and_the_device_carries_on(self):
        tool = os.path.join(build_dir(), "app", "test", "tools", "verbs_misuse")
        rc, out, err = rdma_run([tool, "1"], TWO_CABLED, timeout=120)
        self.assertEqual(rc, 0, out + err)
        cases = re.findall(r"^(.*): ok$", out, re.M)
        self.assertEqual(len(cases), 16, out)
        self.assertEqual(sum(c.startswith("after ") for c in cases), 6, out)
        self.assertIn("0 failed", out)
        self.assertIn("at exit, every destroy: ok", out, "destroys in an exit handler after the provider's")
        # It listed the devices once per device: still one device each, whose
        # objects the provider's exit handler found.
        self.assertNotIn("abandoned", err)


@needs_root_and_tun
class IbverbsUtils(unittest.TestCase):
    """Debian's ibverbs-utils between two processes on a bridge."""

    def check_pingpong(self, server, client, iters):
        for out in (server, client):
            m = PINGPONG_RESULT.search(out)
            self.assertIsNotNone(m, out)
            self.assertEqual(int(m.group(1)), iters)
        self.assertIn(f"GID ::ffff:{SERVER_IP}", server)
        self.assertIn(f"GID ::ffff:{CLIENT_IP}", server)

    def test_rc_pingpong_polling_and_with_completion_events(self):
        with VerbsHosts() as hosts:
            for events in ([], ["-e"]):
                for size in (1, 4096, 65536):
                    with self.subTest(size=size, events=events):
                        server, client = hosts.verbs_pair(["ibv_rc_pingpong", "-g", "1", "-n", "20", "-s", str(size),
                                                     *events])
                        self.check_pingpong(server, client, 20)

    def test_ud_pingpong_up_to_the_mtu_and_the_wire_carries_datagrams(self):
        """Unreliable datagrams (UD QPs, address handles, GRHs): every size
        up to the port's active MTU, what crosses the bridge UD SEND ONLY
        packets (opcode 0x64) with their DETH, every ICRC good."""
        with VerbsHosts() as hosts, tempfile.TemporaryDirectory() as tmp:
            pcap = os.path.join(tmp, "ud.pcapng")
            hosts.start_capture(pcap)
            for size in (1, 500, 1024):
                with self.subTest(size=size):
                    server, client = hosts.verbs_pair(["ibv_ud_pingpong", "-g", "1", "-n", "20", "-s", str(size)])
                    self.check_pingpong(server, client, 20)
            hosts.stop_capture()
            opcodes = [op for op, _ in tshark_roce(pcap)]
            frames = rdpcap(pcap)
        self.assertGreaterEqual(opcodes.count(0x64), 3 * 2 * 20, "UD SEND ONLY both ways, every iteration")
        self.assertEqual(set(opcodes), {0x64}, "datagrams only: no ACKs")
        roce = roce_frames(frames)
        self.assertEqual(bad_icrcs(roce), [])

    def test_srq_pingpong(self):
        with VerbsHosts() as hosts:
            server, client = hosts.verbs_pair(["ibv_srq_pingpong", "-g", "1", "-n", "50", "-q", "4"])
            self.check_pingpong(server, client, 50)
            self.assertEqual(len(re.findall("remote address", server)), 4, "one per QP")


@needs_root_and_tun
class Perftest(unittest.TestCase):
    """Debian's perftest, every RC test: the bandwidth ones over every size
    (-a; ib_atomic_bw refuses -a, its message being 8 bytes), the latency
    ones too; each run completes with its figures on both sides. Once, in
    the regular pass: the sanitized pass's provider runs the same verbs
    under ibverbs-utils above."""

    @classmethod
    def setUpClass(cls):
        regular_pass_only("perftest")

    def run_perftest(self, hosts, tool, args):
        server, client = hosts.verbs_pair([tool, "-x", "1", *args])
        for side, out in (("server", server), ("client", client)):
            self.assertNotIn("Couldn't", out, f"{tool} {side}")
        return server, client

    def check_all_sizes(self, tool, out, iters):
        rows = perf_rows(out)
        self.assertEqual(sorted(rows), PERFTEST_SIZES, f"{tool}:\n{out}")
        for size, (n, figures) in rows.items():
            self.assertEqual(n, iters, f"{tool} size {size}")
            self.assertTrue(all(f >= 0 for f in figures), f"{tool} size {size}: {figures}")
        return rows

    def test_bandwidth_tests_over_every_size(self):
        with VerbsHosts() as hosts:
            for tool in ("ib_send_bw", "ib_write_bw", "ib_read_bw"):
                with self.subTest(tool=tool):
                    _, client = self.run_perftest(hosts, tool, ["-a", "-n", "5"])
                    rows = self.check_all_sizes(tool, client, 5)
                    self.assertGreater(rows[1 << 20][1][1], 1.0, f"{tool}: MB/s average at 1 MiB")
            with self.subTest(tool="ib_atomic_bw"):
                _, client = self.run_perftest(hosts, "ib_atomic_bw", ["-n", "200"])
                rows = perf_rows(client)
                self.assertEqual(list(rows), [8], client)
                self.assertEqual(rows[8][0], 200)

    def test_latency_tests_over_every_size(self):
        with VerbsHosts() as hosts:
            for tool in ("ib_send_lat", "ib_write_lat", "ib_read_lat"):
                with self.subTest(tool=tool):
                    _, client = self.run_perftest(hosts, tool, ["-a", "-n", "5"])
                    rows = self.check_all_sizes(tool, client, 5)
                    t_min, t_max, t_typical = rows[8][1][:3]
                    self.assertTrue(0 < t_min <= t_typical <= t_max, rows[8])

    def test_send_tests_over_unreliable_datagrams(self):
        """-c UD: SENDs of up to the MTU between UD QPs, addressed through
        address handles; perftest's receiver posts for every message, so
        all arrive."""
        with VerbsHosts() as hosts:
            for tool in ("ib_send_bw", "ib_send_lat"):
                with self.subTest(tool=tool):
                    _, client = self.run_perftest(hosts, tool, ["-c", "UD", "-s", "1024", "-n", "200"])
                    self.assertIn("Connection type : UD", client)
                    rows = perf_rows(client)
                    self.assertEqual(list(rows), [1024], client)
                    self.assertEqual(rows[1024][0], 200)
                    self.assertGreater(rows[1024][1][1], 0, f"{tool}: a figure")

    def test_the_wire_carries_rocev2_whose_every_icrc_checks(self):
        with VerbsHosts() as hosts, tempfile.TemporaryDirectory() as tmp:
            pcap = os.path.join(tmp, "perftest.pcapng")
            hosts.start_capture(pcap)
            # 3000 bytes at path MTU 1024: FIRST, MIDDLE, LAST packets.
            for tool in ("ib_write_bw", "ib_read_bw", "ib_send_bw"):
                self.run_perftest(hosts, tool, ["-s", "3000", "-n", "20"])
            self.run_perftest(hosts, "ib_atomic_bw", ["-n", "20"])
            hosts.stop_capture()
            opcodes = {op for op, _ in tshark_roce(pcap)}
            frames = rdpcap(pcap)
        names = {6: "RDMA WRITE FIRST", 7: "RDMA WRITE MIDDLE", 8: "RDMA WRITE LAST", 12: "RDMA READ REQUEST",
                 13: "READ RESPONSE FIRST", 14: "READ RESPONSE MIDDLE", 15: "READ RESPONSE LAST", 0: "SEND FIRST",
                 2: "SEND LAST", 17: "ACKNOWLEDGE", 18: "ATOMIC ACKNOWLEDGE", 20: "FETCH ADD"}
        for op, name in names.items():
            self.assertIn(op, opcodes, f"no {name} among {sorted(opcodes)}")
        roce = roce_frames(frames)
        self.assertGreater(len(roce), 200)
        self.assertEqual(bad_icrcs(roce), [])




@needs_root_and_tun
class Ucx(unittest.TestCase):
    """Debian's UCX (ucx-utils) on cna's device: its rc_verbs transport,
    UCT-level bandwidth and latency between two processes, and UCP's
    tag matching, which wires up through ud_verbs (UD QPs, address handles,
    IPv4 GIDs: UCX 1.13 reads the GRH's layout from wc.sl)."""

    def test_ucx_info_lists_the_device_with_its_rc_verbs_transport(self):
        rc, out, err = rdma_run(["ucx_info", "-d"], "wire=loopback,ipv4=10.4.0.1/24", env=UCX_ENV)
        self.assertEqual(rc, 0, err)
        self.assertIn("# Memory domain: cna0", out)
        rc_verbs = re.search(r"#      Transport: rc_verbs\n#         Device: cna0:1\n(.*?)\n#\n#      Transport",
                             out, re.S)
        self.assertIsNotNone(rc_verbs, out)
        self.assertNotIn("failed to open interface", rc_verbs.group(1))
        for capability in ("put_zcopy", "get_zcopy", "am_bcopy", "atomic_fadd", "connection: to ep"):
            self.assertIn(capability, rc_verbs.group(1))

    def test_ucx_perftest_over_rc_verbs(self):
        with VerbsHosts() as hosts:
            for test, layout, size in (("am_bw", "bcopy", 4096), ("put_bw", "zcopy", 65536), ("get", "zcopy", 65536),
                                       ("am_lat", "short", 8), ("fadd", "short", 8)):
                with self.subTest(test=test):
                    argv = ["ucx_perftest", "-t", test, "-D", layout, "-d", "cna0:1", "-x", "rc_verbs", "-n", "500",
                            "-s", str(size)]
                    _, client = hosts.verbs_pair(argv, env=UCX_ENV)
                    final = UCX_FINAL.search(client)
                    self.assertIsNotNone(final, client)
                    self.assertEqual(int(final.group(1)), 500)
                    self.assertGreater(float(final.group(8)), 0, "messages/s overall")

    def test_ucp_tag_matching_with_its_defaults(self):
        """ucx_perftest's UCP tests as users run them: no transport named,
        UCX choosing among cna's (rc_verbs, ud_verbs) itself."""
        with VerbsHosts() as hosts:
            for test, size in (("tag_bw", 4096), ("tag_lat", 8), ("tag_bw", 65536), ("ucp_put_bw", 65536)):
                with self.subTest(test=test, size=size):
                    argv = ["ucx_perftest", "-t", test, "-n", "500", "-s", str(size)]
                    _, client = hosts.verbs_pair(argv, env=UCX_ENV)
                    final = UCX_FINAL.search(client)
                    self.assertIsNotNone(final, client)
                    self.assertEqual(int(final.group(1)), 500)
                    self.assertGreater(float(final.group(8)), 0, "messages/s overall")


if __name__ == "__main__":
    unittest.main()
