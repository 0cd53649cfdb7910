"""Foundation: packets through Debian's testpmd on net_cna.

Loopback and cabled ports, counters that add up, port life cycle, link
control with LSC events, mbufs all returned, and clean failures for bad
devargs, a corrupt firmware image, a silent MFW and a device that cannot DMA.
"""
import os
import re
import tempfile
import time
import unittest

from harness.testpmd import TestPmd, build_dir, forward_stats, run_testpmd_once

CABLED = ["net_cna0,adapter=a,ports=2,wire=cable", "net_cna1,adapter=a,port=1"]


def settle(tp, ports, seconds=0.3):
    """Let in-flight frames drain after forwarding stopped, then read NIC stats."""
    time.sleep(seconds)
    return {p: tp.port_stats(p) for p in ports}


class Loopback(unittest.TestCase):
    def test_tx_first_returns_on_own_port(self):
        with TestPmd(["net_cna0"]) as tp:
            self.assertEqual(tp.link(0)[0], "up")
            fwd = forward_stats(tp.run_forwarding(1.0))
            self.assertGreater(fwd[0]["RX-packets"], 1000, "loopback must return frames")
            nic = settle(tp, [0])[0]
            # every frame the port sent came back to it: received or missed
            self.assertEqual(nic["TX-packets"], nic["RX-packets"] + nic["RX-missed"])
            self.assertEqual(nic["TX-bytes"], 64 * nic["TX-packets"])
            tp.quit()


class Cabled(unittest.TestCase):
    def test_io_forwarding_both_ways_with_consistent_counters(self):
        with TestPmd(CABLED) as tp:
            for p in (0, 1):
                self.assertEqual(tp.link(p)[0], "up")
            fwd = forward_stats(tp.run_forwarding(2.0))
            for p in (0, 1):
                self.assertGreater(fwd[p]["RX-packets"], 10000, f"port {p} received too little")
                self.assertGreater(fwd[p]["TX-packets"], 10000, f"port {p} sent too little")
            nic = settle(tp, [0, 1])
            for src, dst in ((0, 1), (1, 0)):
                self.assertEqual(nic[src]["TX-packets"], nic[dst]["RX-packets"] + nic[dst]["RX-missed"],
                                 f"frames sent by port {src} must all arrive at port {dst}")
                self.assertEqual(nic[src]["TX-bytes"], nic[dst]["RX-bytes"] + 64 * nic[dst]["RX-missed"])
                # testpmd saw at most what the NIC delivered
                self.assertLessEqual(fwd[dst]["RX-packets"], nic[dst]["RX-packets"])
            tp.quit()

    def test_stats_reset(self):
        with TestPmd(CABLED) as tp:
            tp.run_forwarding(0.5)
            settle(tp, [0, 1])
            tp.cmd("clear port stats all")
            for p in (0, 1):
                s = tp.port_stats(p)
                self.assertEqual((s["RX-packets"], s["TX-packets"], s["RX-bytes"]), (0, 0, 0))
            tp.quit()


class EngineThreads(unittest.TestCase):
    @unittest.skipIf(os.cpu_count() < 2, "pins engine threads to CPUs 0 and 1")
    def test_two_engine_threads_each_animate_a_loopback_port(self):
        vdevs = ["net_cna0,adapter=e2,ports=2,engine_threads=2,engine_cpu=[0,1]", "net_cna1,adapter=e2,port=1"]
        with TestPmd(vdevs) as tp:
            threads = engine_threads_of(tp.child.pid, "e2")
            self.assertEqual(sorted(threads), ["cna-e2", "cna1-e2"])
            self.assertEqual([threads[name][1] for name in ("cna-e2", "cna1-e2")], ["0", "1"], "engine_cpu=[0,1]")
            before = {name: cpu_ns for name, (cpu_ns, _) in threads.items()}
            fwd = forward_stats(tp.run_forwarding(1.0))
            nic = settle(tp, [0, 1])
            for p in (0, 1):
                self.assertGreater(fwd[p]["RX-packets"], 1000, f"port {p}")
                self.assertEqual(nic[p]["TX-packets"], nic[p]["RX-packets"] + nic[p]["RX-missed"], f"port {p}")
            # each port is a group of its own: each thread carried one port's frames
            after = engine_threads_of(tp.child.pid, "e2")
            for name in before:
                self.assertGreater(after[name][0] - before[name], 10_000_000, f"{name} did (almost) nothing")
            tp.quit()


def engine_threads_of(pid, adapter):
    """{thread name: (CPU ns so far, allowed CPUs)} of an adapter's engine threads in process pid."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            name = f.read().strip()
        if re.fullmatch(rf"cna\d*-{adapter}", name):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                cpu_ns = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                allowed = re.search(r"Cpus_allowed_list:\s*(\S+)", f.read()).group(1)
            threads[name] = (cpu_ns, allowed)
    return threads


class Lifecycle(unittest.TestCase):
    def test_stop_start_cycles_keep_forwarding(self):
        with TestPmd(CABLED) as tp:
            for cycle in range(3):
                tp.cmd("port stop all")
                tp.cmd("port start all")
                for p in (0, 1):
                    self.assertEqual(tp.link(p)[0], "up", f"cycle {cycle}")
                fwd = forward_stats(tp.run_forwarding(0.5))
                for p in (0, 1):
                    self.assertGreater(fwd[p]["RX-packets"], 1000, f"cycle {cycle}, port {p}")
            tp.quit()

    def test_close_returns_every_mbuf(self):
        with TestPmd(CABLED) as tp:
            tp.run_forwarding(1.0)
            tp.cmd("port stop all")
            tp.cmd("port close all")
            self.assertEqual(set(tp.mempool_in_use().values()), {0}, "mbufs lost by stop/close")
            tp.quit()

    def test_stop_returns_every_mbuf_and_restart_works(self):
        with TestPmd(["net_cna0"]) as tp:
            tp.run_forwarding(0.5)
            tp.cmd("port stop 0")
            self.assertEqual(set(tp.mempool_in_use().values()), {0}, "mbufs held by a stopped port")
            tp.cmd("port start 0")
            fwd = forward_stats(tp.run_forwarding(0.5))
            self.assertGreater(fwd[0]["RX-packets"], 1000)
            tp.quit()


class Link(unittest.TestCase):
    def test_link_down_up_with_lsc_events(self):
        with TestPmd(CABLED) as tp:
            tp.cmd_with_events("set link-down port 0",
                               [r"Port 0: link state change event", r"Port 1: link state change event"])
            self.assertEqual(tp.link(0)[0], "down")
            self.assertEqual(tp.link(1)[0], "down", "the cable partner loses carrier too")
            # no traffic crosses a down link
            fwd = forward_stats(tp.run_forwarding(0.3))
            self.assertEqual(fwd[1]["RX-packets"], 0)
            tp.cmd_with_events("set link-up port 0",
                               [r"Port 0: link state change event", r"Port 1: link state change event"])
            self.assertEqual(tp.link(0), ("up", "100 Gbps"))
            self.assertEqual(tp.link(1)[0], "up")
            fwd = forward_stats(tp.run_forwarding(0.5))
            self.assertGreater(fwd[1]["RX-packets"], 1000)
            tp.quit()


class EcoreLog(unittest.TestCase):
    def test_ecore_prints_its_flows_verbosely_at_debug_only(self):
        """EAL's --log-level=pmd.net.cna.ecore:debug turns on ecore's verbose
        prints of every flow (the guide's init_dp), which are off by default."""
        status, _, out = run_testpmd_once(["net_cna0"], log_level="pmd.net.cna.ecore:debug")
        self.assertEqual(status, 0, out)
        for flow in (r"acquired PTT \d+", r"vport 0, MTU \d+", r"posted \S+ cid \d+ echo \d+"):
            self.assertRegex(out, flow)
        status, _, out = run_testpmd_once(["net_cna0"])
        self.assertEqual(status, 0, out)
        self.assertNotRegex(out, r"acquired PTT|vport 0, MTU")


class BadInput(unittest.TestCase):
    def assert_probe_fails(self, vdevs, *patterns, **kw):
        t0 = time.monotonic()
        status, sig, out = run_testpmd_once(vdevs, **kw)
        self.assertIsNone(sig, f"testpmd crashed:\n{out}")
        for pat in patterns:
            self.assertRegex(out, pat)
        self.assertRegex(out, r"No probed ethernet devices|Fail|fail")
        return time.monotonic() - t0, out

    def test_bad_devargs_name_key_and_value(self):
        self.assert_probe_fails(["net_cna0,ports=3"], r"ports=3")
        self.assert_probe_fails(["net_cna0,wire=fiber"], r"wire=fiber")
        self.assert_probe_fails(["net_cna0,bogus=1"], r"bogus")
        self.assert_probe_fails(["net_cna0,adapter=b,ports=2,port=2"], r"port=2")
        self.assert_probe_fails(["net_cna0,fw_file=/nonexistent/cna.bin"], r"/nonexistent/cna.bin")
        self.assert_probe_fails(["net_cna0,engine_threads=0"], r"engine_threads=0")
        self.assert_probe_fails(["net_cna0,engine_cpu=[0,1]"], r"engine_cpu.*2 CPU\(s\) for 1 engine thread")
        # a cable pair is one port group: one thread animates it
        self.assert_probe_fails(["net_cna0,ports=2,wire=cable,engine_threads=2"],
                                r"engine_threads must be 1 up to the number of port groups")

    def test_corrupt_firmware_image(self):
        good = os.path.join(build_dir(), "firmware", "cna_fw.bin")
        with open(good, "rb") as f:
            image = bytearray(f.read())
        image[len(image) // 2] ^= 0xff
        with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
            f.write(image)
            bad = f.name
        try:
            _, out = self.assert_probe_fails([f"net_cna0,fw_file={bad}"], r"(?i)crc")
            self.assertIn(bad, out)
        finally:
            os.unlink(bad)

    def test_good_firmware_file_and_zipped_variant_load(self):
        for name in ("cna_fw.bin", "cna_fw_zipped.bin"):
            path = os.path.join(build_dir(), "firmware", name)
            with TestPmd([f"net_cna0,fw_file={path}"]) as tp:
                self.assertEqual(tp.link(0)[0], "up", name)
                fwd = forward_stats(tp.run_forwarding(0.3))
                self.assertGreater(fwd[0]["RX-packets"], 100, name)
                tp.quit()

    def test_silent_mfw_fails_cleanly(self):
        elapsed, out = self.assert_probe_fails(["net_cna0,fault=mfw_silent"], r"MFW did not answer")
        self.assertLess(elapsed, 20, "a silent MFW must time out, not hang")

    def test_device_that_cannot_dma_fails_saying_why(self):
        # nothing tells the driver through the status block (DMA too): the
        # ramrod's timeout reads the fault registers, the adapter logs its own
        self.assert_probe_fails(["net_cna0,fault=dma_fault"],
                                r"PF_START: the device reports \d+ DMA fault\(s\), the last at IOVA 0x",
                                r"pf0 DMA fault: no IOMMU mapping covers IOVA 0x")


if __name__ == "__main__":
    unittest.main()
