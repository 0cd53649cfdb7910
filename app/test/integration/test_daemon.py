"""cna-adapterd: one adapter serving net_cna ports of several processes.
Two unmodified testpmd processes, each attached to one port of a daemon's
two-port cabled adapter, forward between each other with counters that
agree both ways, and see each other's link go down; a port attaches again
after its process closed it; attach errors and bad options are named; the
daemon goes on SIGTERM leaving nothing behind."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

from harness.daemon import AdapterDaemon, adapterctl, daemon_path
from harness.testpmd import TestPmd, build_dir, forward_stats, hugetlbfs_mounts, run_testpmd_once, unique_tag


def attached(socket, pf, tag):
    """A testpmd on PF `pf` of the daemon: its own memory and runtime files."""
    return TestPmd([f"net_cna0,daemon={socket},pf={pf}"],
                   memory=["--no-huge", "-m", "512", "--file-prefix", f"{tag}pf{pf}"])


def assert_counters_agree(test, a, b):
    """Every frame one process sent over the cable arrived at the other
    (received, or missed for want of a buffer), both ways, once the
    processes stopped and the adapter settled."""
    time.sleep(0.3)
    nic = {"a": a.port_stats(0), "b": b.port_stats(0)}
    for src, dst in (("a", "b"), ("b", "a")):
        test.assertEqual(nic[src]["TX-packets"], nic[dst]["RX-packets"] + nic[dst]["RX-missed"],
                         f"frames process {src} sent must all arrive at process {dst}")
        test.assertEqual(nic[src]["TX-bytes"], nic[dst]["RX-bytes"] + 64 * nic[dst]["RX-missed"])


def assert_both_forward(test, a, b, seconds, why):
    """A forwards, B starts with tx_first: for `seconds` both receive."""
    a.cmd("start")
    b.cmd("start tx_first")
    time.sleep(seconds)
    fwd = {"b": forward_stats(b.cmd("stop")), "a": forward_stats(a.cmd("stop"))}
    for name in ("a", "b"):
        test.assertGreater(fwd[name][0]["RX-packets"], 1000, f"process {name} {why}")


class TwoProcesses(unittest.TestCase):
    def test_io_forwarding_between_two_processes_with_consistent_counters(self):
        tag = unique_tag()
        with AdapterDaemon(["--ports", "2", "--wire", "cable"]) as d, \
                attached(d.socket, 0, tag) as a, attached(d.socket, 1, tag) as b:
            for tp in (a, b):
                self.assertEqual(tp.link(0)[0], "up")
            assert_both_forward(self, a, b, 2, "received too little")
            assert_counters_agree(self, a, b)
            # One process pulls its link down: the cable's other end, in the
            # other process, sees it.
            a.cmd("set link-down port 0")
            b.collect(r"Port 0: link state change event", timeout=5)
            self.assertEqual(b.link(0)[0], "down")
            a.cmd("set link-up port 0")
            b.collect(r"Port 0: link state change event", timeout=5)
            self.assertEqual(b.link(0)[0], "up")
            a.quit()
            b.quit()
        self.assertRegex(d.output(), r"client \d+ \(pid \d+\) on pf0: detached")
        self.assertRegex(d.output(), r"client \d+ \(pid \d+\) on pf1: detached")

    def test_a_port_attaches_again_after_its_process_closed_it(self):
        tag = unique_tag()
        with AdapterDaemon(["--ports", "1"]) as d:
            for run in range(3):
                with attached(d.socket, 0, f"{tag}r{run}") as tp:
                    tp.wait_link_up()
                    fwd = forward_stats(tp.run_forwarding(1.0))
                    self.assertGreater(fwd[0]["RX-packets"], 100, f"run {run}: the loopback wire returned nothing")
                    tp.quit()
            self.assertEqual(d.output().count("on pf0: attached"), 3)

    @unittest.skipUnless(hugetlbfs_mounts(), "needs a hugetlbfs mount")
    def test_hugepage_memory_is_lent_through_its_files(self):
        """DPDK memory on hugepages (a hugetlbfs file per page): the daemon
        maps each page's file where the loopback wire's frames land, the
        pages reserved at start (-m) and those EAL adds as testpmd allocates
        (memory hotplug: lent from the mem-event callback)."""
        tag = unique_tag()
        with AdapterDaemon(["--ports", "1"]) as d:
            for name, memory in (("reserved", ["-m", "128"]), ("hotplugged", [])):
                with TestPmd([f"net_cna0,daemon={d.socket},pf=0"],
                             memory=[*memory, "--file-prefix", f"{tag}hp{name[0]}"]) as tp:
                    tp.wait_link_up()
                    fwd = forward_stats(tp.run_forwarding(1.0))
                    self.assertGreater(fwd[0]["RX-packets"], 1000, name)
                    tp.quit()
            self.assertEqual(d.output().count("on pf0: detached"), 2)

    def test_a_process_killed_mid_traffic_is_a_function_level_reset(self):
        """kill -9 of the process on PF 0 while it forwards: the daemon
        resets PF 0, the process on PF 1 never notices beyond its link, and
        a new process takes PF 0 and forwards again; 20 times, the daemon
        keeping no file and no memory of the dead."""
        tag = unique_tag()
        with AdapterDaemon(["--ports", "2", "--wire", "cable"]) as d, attached(d.socket, 1, tag) as b:
            b.cmd("start")
            baseline = None
            for i in range(20):
                with attached(d.socket, 0, f"{tag}k{i}") as a:
                    a.cmd("start tx_first")
                    first = b.port_stats(0)["RX-packets"]
                    deadline = time.monotonic() + 5
                    while b.port_stats(0)["RX-packets"] < first + 1000:
                        self.assertLess(time.monotonic(), deadline, f"round {i}: no traffic through PF 1")
                        time.sleep(0.05)
                    os.kill(a.child.pid, signal.SIGKILL)
                    a.child.wait()
                deadline = time.monotonic() + 5
                while d.output().count("on pf0: detached") < i + 1:
                    self.assertLess(time.monotonic(), deadline, f"round {i}: the daemon did not detach PF 0")
                    time.sleep(0.05)
                self.assertEqual(d.output().count("pf0 function level reset"), i + 1)
                if i == 1:
                    baseline = (d.open_fds(), d.rss_kb())
            self.assertEqual(d.open_fds(), baseline[0], "file descriptors of dead clients kept")
            self.assertLess(d.rss_kb() - baseline[1], 4096, "memory of dead clients kept (kB)")
            self.assertIsNotNone(re.search(r"Forward statistics", b.cmd("stop")), "PF 1's process carries on")
            b.quit()

def daemon_pids(socket):
    """The cna-adapterd processes serving `socket`, from /proc."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"cna-adapterd") and socket.encode() in argv:
            pids.append(int(pid))
    return pids


class Isolation(unittest.TestCase):
    def test_a_rogue_client_reaches_nothing_of_another_function(self):
        """While two processes forward through PFs 0 and 1, a rogue client
        on PF 2 (app/test/tools/rogue_client) overwrites every byte of every
        fd it was given and points a PTT at every page of storm RAM: its
        files are its PF's pages alone and cannot grow, another PF's areas
        are refused, and the two forward on with counters that agree."""
        tag = unique_tag()
        with AdapterDaemon(["--ports", "4", "--wire", "cable"]) as d, \
                attached(d.socket, 0, tag) as a, attached(d.socket, 1, tag) as b:
            a.cmd("start")
            b.cmd("start tx_first")
            rogue = subprocess.run([os.path.join(build_dir(), "app", "test", "tools", "rogue_client"), "--daemon",
                                    d.socket, "--pf", "2"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            self.assertEqual(rogue.returncode, 0, rogue.stdout)
            for name in ("gtt", "doorbells", "mailbox"):
                self.assertRegex(rogue.stdout, rf"(?m)^{name}: \d+ bytes, as announced$")
                self.assertRegex(rogue.stdout, rf"(?m)^{name}: cannot grow$")
                self.assertRegex(rogue.stdout, rf"(?m)^{name}: every byte overwritten$")
            self.assertRegex(rogue.stdout, r"ptt: [1-9]\d* lines of its own or shared written, [1-9]\d* of other PFs "
                                           r"refused, 0 of other PFs reached")
            received = {name: tp.port_stats(0)["RX-packets"] for name, tp in (("a", a), ("b", b))}
            time.sleep(1)
            for name, tp in (("a", a), ("b", b)):
                self.assertGreater(tp.port_stats(0)["RX-packets"] - received[name], 1000,
                                   f"process {name} forwards on after the rogue")
            b.cmd("stop")
            a.cmd("stop")
            assert_counters_agree(self, a, b)
        self.assertRegex(d.output(), r"client \d+ \(pid \d+\) on pf2: detached")


class DaemonDeath(unittest.TestCase):
    def test_kill_9_of_the_daemon_is_a_removal_and_a_new_daemon_serves_the_ports_again(self):
        """Two testpmd processes forward through cna-adapterd; then kill -9
        of the daemon. Each hears it at once: link down (an LSC) and a
        device removal event within a second, on which testpmd stops,
        closes and detaches its port, at once and with every mbuf back in
        its pool. Once a daemon serves the socket again, `port attach`
        brings each port back and the two forward again."""
        tag = unique_tag()
        with AdapterDaemon(["--ports", "2", "--wire", "cable"]) as d, \
                attached(d.socket, 0, tag) as a, attached(d.socket, 1, tag) as b:
            a.cmd("start")
            b.cmd("start tx_first")
            time.sleep(1)
            t0 = time.monotonic()
            d.kill()
            for name, tp in (("a", a), ("b", b)):
                out = tp.collect(r"Now total ports is 0", timeout=10)
                for line in (r"Port 0: link state change event", r"Port 0: device removal event",
                             r"Device is detached", r"Now total ports is 0"):
                    self.assertRegex(out, line, f"process {name}")
            # Heard from the hang-up, and stopped, closed and detached
            # without waiting out any timeout (the mailbox's is 5 s).
            self.assertLess(time.monotonic() - t0, 3.0)
            for name, tp in (("a", a), ("b", b)):
                self.assertEqual(sum(tp.mempool_in_use().values()), 0, f"process {name}: every mbuf back")
            d.start()
            for pf, tp in ((0, a), (1, b)):
                tp.cmd("stop")  # testpmd went on forwarding, on no port
                out = tp.cmd(f"port attach net_cna0,daemon={d.socket},pf={pf}")
                self.assertRegex(out, r"Port 0 is attached")
                tp.cmd("port start 0")
            for tp in (a, b):  # each end of the cable up
                tp.wait_link_up(0)
            assert_both_forward(self, a, b, 1, "forwards again")


class OnDemand(unittest.TestCase):
    """No daemon serves the socket: the first port starts one with its
    layout devargs, the ports after it join, and the daemon leaves once it
    has had no client for SPAWNED_DAEMON_IDLE_EXIT_S."""

    IDLE_EXIT_S = 10

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cna-ondemand-")
        self.socket = os.path.join(self.dir, "adapter.sock")
        self.tag = unique_tag()

    def tearDown(self):
        for pid in daemon_pids(self.socket):
            os.kill(pid, signal.SIGTERM)
        shutil.rmtree(self.dir, ignore_errors=True)

    def port(self, pf, layout="", name="a"):
        return TestPmd([f"net_cna0,daemon={self.socket},pf={pf}{layout}"],
                       memory=["--no-huge", "-m", "512", "--file-prefix", f"{self.tag}{name}"])

    def log(self):
        with open(self.socket + ".log") as f:
            return f.read()

    def test_the_first_port_starts_the_daemon_which_leaves_when_idle(self):
        with self.port(0, ",ports=2,wire=cable") as a:
            self.assertIn(f"no adapter daemon served it: started cna-adapterd (log: {self.socket}.log)",
                          a.startup_output)
            pids = daemon_pids(self.socket)
            self.assertEqual(len(pids), 1, pids)
            with self.port(1, name="b") as b:
                self.assertNotIn("started cna-adapterd", b.startup_output)
                self.assertEqual(daemon_pids(self.socket), pids, "the second port joins the daemon")
                a.wait_link_up()
                b.wait_link_up()
                b.cmd("start")
                a.run_forwarding(0.5)
                self.assertGreater(forward_stats(b.cmd("stop"))[0]["RX-packets"], 1000, "the cable carried little")
                b.quit()
            a.quit()
        self.assertIn("2 port(s), 2 PF(s)", self.log())
        # Not pinned to the CPU of the main lcore that started it.
        with open(f"/proc/{pids[0]}/status") as f:
            allowed = re.search(r"Cpus_allowed_list:\s*(\S+)", f.read()).group(1)
        self.assertEqual(allowed, f"0-{os.cpu_count() - 1}" if os.cpu_count() > 1 else "0")
        deadline = time.monotonic() + self.IDLE_EXIT_S + 5
        while daemon_pids(self.socket):
            self.assertLess(time.monotonic(), deadline, "the idle daemon did not leave")
            time.sleep(0.2)
        self.assertIn(f"no client for {self.IDLE_EXIT_S} s: powering the adapter off", self.log())
        self.assertEqual(os.listdir(self.dir), ["adapter.sock.log"], "the daemon leaves its log only")

    def test_ports_starting_together_share_one_daemon(self):
        ports = [self.port(0, ",ports=2,wire=cable"), self.port(1, ",ports=2,wire=cable", name="b")]
        errors = []

        def start(tp):
            try:
                tp.start()
            except Exception as e:  # reported below, from the test's thread
                errors.append(e)
        threads = [threading.Thread(target=start, args=(tp,)) for tp in ports]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        try:
            self.assertEqual(errors, [])
            self.assertEqual(len(daemon_pids(self.socket)), 1)
            self.assertEqual(self.log().count("serving on"), 1, self.log())
            self.assertEqual(sum("started cna-adapterd" in tp.startup_output for tp in ports), 1)
            for pf in (0, 1):
                self.assertIn(f"on pf{pf}: attached", self.log())
        finally:
            for tp in ports:
                tp.close()


class Control(unittest.TestCase):
    def test_adapterctl_lists_clients_pulls_the_cable_and_reads_the_wire(self):
        tag = unique_tag()
        with AdapterDaemon(["--ports", "2", "--wire", "cable", "--name", "ctl"]) as d:
            self.assertRegex(adapterctl(d.socket, "status"),
                             r"adapter ctl: 2 port\(s\), 2 PF\(s\)\npf0  port 0  free\npf1  port 1  free")
            with attached(d.socket, 0, tag) as a, attached(d.socket, 1, tag) as b:
                status = adapterctl(d.socket, "status")
                self.assertIn(f"pf0  port 0  client pid {a.child.pid}", status)
                self.assertIn(f"pf1  port 1  client pid {b.child.pid}", status)
                b.cmd("start")
                forward_stats(a.run_forwarding(0.5))
                b.cmd("stop")
                time.sleep(0.3)
                sent = a.port_stats(0)["TX-packets"]
                wire = dict(re.findall(r"(\w+) (\d+)", adapterctl(d.socket, "counters", "0").split(":", 1)[1]))
                self.assertEqual(int(wire["wire_tx_frames"]), sent, "the wire carried what PF 0 sent")
                adapterctl(d.socket, "carrier", "0", "down")
                for tp in (a, b):
                    tp.collect(r"Port 0: link state change event", timeout=5)
                    self.assertEqual(tp.link(0)[0], "down")
                adapterctl(d.socket, "carrier", "0", "up")
                for tp in (a, b):
                    tp.collect(r"Port 0: link state change event", timeout=5)
                    self.assertEqual(tp.link(0)[0], "up")
                self.assertRegex(adapterctl(d.socket, "dma-faults", "0"), r"pf0: 0 DMA fault\(s\)")
                a.quit()
                b.quit()
            self.assertIn("pf0  port 0  free", adapterctl(d.socket, "status"))
            self.assertIn("usage:", adapterctl(d.socket, "carrier", "0", "sideways", check=False))


class TapWire(unittest.TestCase):
    def test_the_daemon_releases_its_tap_on_sigterm(self):
        ifname = f"cnad{unique_tag()[-8:]}"
        d = AdapterDaemon(["--ports", "1", "--wire", f"tap:{ifname}"])
        d.start()
        try:
            self.assertEqual(subprocess.run(["ip", "link", "show", ifname], capture_output=True).returncode, 0,
                             "the daemon's port has its TAP interface")
            with attached(d.socket, 0, unique_tag()) as tp:
                tp.wait_link_up()
                tp.quit()
        finally:
            self.assertEqual(d.stop(), 0)
        self.assertNotEqual(subprocess.run(["ip", "link", "show", ifname], capture_output=True).returncode, 0,
                            "the TAP interface goes with the daemon")


class Errors(unittest.TestCase):
    def probe_fails(self, vdev, pattern):
        _, _, out = run_testpmd_once([vdev])
        self.assertRegex(out, pattern)
        self.assertIn("No probed ethernet devices", out)

    def test_attach_errors_are_named(self):
        tag = unique_tag()
        self.probe_fails("net_cna0,daemon=/nonexistent/cna.sock,pf=0",
                         r"no adapter daemon at /nonexistent/cna\.sock, and starting one failed: cannot start "
                         r"\S*cna-adapterd: No such file or directory")
        with AdapterDaemon(["--ports", "1"]) as d:
            self.probe_fails(f"net_cna0,daemon={d.socket},pf=1", r"cannot attach PF 1: No such device")
            self.probe_fails(f"net_cna0,daemon={d.socket},pf=0,ports=2",
                             rf"the daemon at {d.socket} has an adapter of 1 port\(s\), not 2")
            with attached(d.socket, 0, tag):
                self.probe_fails(f"net_cna0,daemon={d.socket},pf=0",
                                 r"cannot attach PF 0: Device or resource busy")
            self.assertIn("another client has it", d.output())
        self.probe_fails("net_cna0,daemon=/tmp/x.sock,port=1", r"invalid devarg 'port' with 'daemon': a daemon's PF is its 'pf'")
        self.probe_fails("net_cna0,daemon=/tmp/x.sock,wire=tap:cnax",
                         r"invalid devarg 'wire=tap:cnax' with 'daemon': start cna-adapterd with --wire tap:<ifname>")
        self.probe_fails("net_cna0,pf=1", r"invalid devarg 'pf' without 'daemon'")

    def test_bad_options_sigterm_and_a_live_socket(self):
        bad = subprocess.run([daemon_path(), "--socket", "/tmp/x.sock", "--ports", "3"], capture_output=True,
                             text=True, timeout=10)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("invalid --ports '3': expected 1, 2 or 4", bad.stderr)
        missing = subprocess.run([daemon_path(), "--ports", "1"], capture_output=True, text=True, timeout=10)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("--socket PATH is required", missing.stderr)
        d = AdapterDaemon(["--ports", "2", "--wire", "cable"])
        d.start()
        second = subprocess.run([daemon_path(), "--socket", d.socket], capture_output=True, text=True, timeout=10)
        self.assertEqual(second.returncode, 1)
        self.assertIn(f"a daemon already serves {d.socket}", second.stderr)
        self.assertEqual(d.stop(), 0)
        self.assertRegex(d.output(), r"signal 15: detaching 0 client\(s\)")
        self.assertFalse(os.path.exists(d.socket), "the socket file goes with the daemon")


if __name__ == "__main__":
    unittest.main()
