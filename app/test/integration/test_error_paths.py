"""Errors a user meets through Debian's testpmd: a bad value for every
devarg, every firmware fault the adapter can simulate, and a TAP interface
deleted under traffic. Each is reported with a message that names what is
wrong; testpmd keeps answering, the failed probe gives back the DMA memory
it took (no cna memzone is left), and testpmd quits with status 0, its
hugepages free for the next process of the same prefix.
"""
import os
import re
import time
import unittest

from harness.secondary import require_hugepages
from harness.testpmd import (TestPmd, hugetlbfs_mounts, remove_hugepage_files, run_testpmd_once, sh,
                             unique_tag)

# key=value, and what the message must say besides naming them
BAD_DEVARGS = [
    ("adapter=" + "a" * 33, r"a name of 1 to 32 characters"),
    ("ports=3", r"1, 2 or 4"),
    ("port=4", r"a port number from 0 to 3"),
    ("wire=fiber", r"loopback, cable or tap:<ifname>"),
    ("wire=tap:" + "x" * 16, r"loopback, cable or tap:<ifname>"),
    ("mac=01:00:5e:00:00:01", r"a unicast MAC address other than zero"),
    ("mac=02:00:00:00:00", r"a unicast MAC address other than zero"),
    ("fw_file=", r"a file path"),
    ("engine_threads=5", r"1 to 4"),
    ("engine_cpu=[0,x]", r"a CPU number, or one per engine thread"),
    ("fault=meltdown", r"mfw_silent, fw_assert, lose_ramrod or dma_fault"),
    ("rdma=2", r"0 or 1"),
    ("roce_loss=1000001", r"RoCE frames lost per million sent, 0 to 1000000"),
    ("ipv4=10.0.0.300/24", r"an IPv4 address and prefix length"),
    ("ipv4=10.0.0.1", r"an IPv4 address and prefix length"),
    ("ipv6=fe80::1/129", r"an IPv6 address and prefix length"),
]

# fault, what ecore says, what the adapter says (its own log)
FAULTS = [
    ("mfw_silent", r"MFW did not answer", None),
    ("fw_assert", r"storms did not start .*STORM_STATUS is asserted", r"storms: firmware assert"),
    ("lose_ramrod", r"ramrod PF_START \(echo \d+\) not completed by the firmware within \d+ ms",
     r"ramrod .* lost \(fault injection\)"),
    ("dma_fault", r"PF_START: the device reports \d+ DMA fault\(s\)", r"DMA fault: no IOMMU mapping covers IOVA"),
]


def memzones(output):
    return re.findall(r"Zone \d+: name:<([^>]*)>", output)


class ErrorPaths(unittest.TestCase):
    def assert_failed_probe_is_clean(self, devargs, *patterns, file_prefix=None, timeout=60):
        """testpmd with net_cna0,<devargs>: the probe fails saying why, testpmd
        still answers, holds no memzone of ours and quits with status 0."""
        status, sig, out = run_testpmd_once([f"net_cna0,{devargs}"], commands=["dump_memzone"],
                                            timeout=timeout, file_prefix=file_prefix)
        self.assertIsNone(sig, f"testpmd died with signal {sig}:\n{out}")
        for pattern in patterns:
            self.assertRegex(out, pattern)
        self.assertRegex(out, r"No probed ethernet devices")
        self.assertIn("Zone 0: name:<", out, "testpmd stopped answering after the failed probe")
        self.assertEqual([z for z in memzones(out) if z.startswith("cna")], [],
                         "the failed probe kept DMA memory")
        self.assertEqual(status, 0, out)
        return out

    def test_every_devarg_with_a_bad_value_is_named(self):
        for kv, expected in BAD_DEVARGS:
            with self.subTest(devarg=kv):
                self.assert_failed_probe_is_clean(kv, re.escape(f"invalid devarg '{kv}'"), expected)

    def test_an_unknown_devarg_is_named(self):
        self.assert_failed_probe_is_clean("colour=blue", r"colour")

    def test_every_firmware_fault_fails_the_probe_cleanly_on_hugepages(self):
        require_hugepages(self)
        for fault, driver_says, adapter_says in FAULTS:
            with self.subTest(fault=fault):
                prefix = f"cnaerr{unique_tag()}"
                self.addCleanup(remove_hugepage_files, prefix)
                patterns = [driver_says] + ([adapter_says] if adapter_says else [])
                self.assert_failed_probe_is_clean(f"fault={fault}", *patterns, file_prefix=prefix)
                # EAL keeps its hugepage files after a clean exit (for
                # secondaries); nothing of the first process holds on to them:
                # a primary of the same prefix takes them over and works.
                self.assertTrue([n for m in hugetlbfs_mounts() for n in os.listdir(m) if n.startswith(prefix)])
                with TestPmd(["net_cna0"], file_prefix=prefix) as tp:
                    self.assertEqual(tp.link(0)[0], "up")
                    tp.quit()
                    self.assertEqual(tp.exit_status, 0)


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
class VanishingTap(unittest.TestCase):
    def test_a_tap_deleted_under_traffic_is_a_pulled_cable(self):
        ifname = f"cnagone{unique_tag()}"[:15]
        self.addCleanup(sh, "ip", "link", "del", ifname, check=False)
        with TestPmd([f"net_cna0,wire=tap:{ifname}"]) as tp:
            sh("ip", "link", "set", ifname, "up")
            self.assertEqual(tp.link(0)[0], "up")
            tp.cmd("set fwd txonly")
            tp.cmd("start")
            time.sleep(0.5)
            sh("ip", "link", "del", ifname)
            events = tp.collect(r"Port 0: link state change event", timeout=5)
            self.assertRegex(events, rf"TAP interface {ifname} is gone .*: the port has lost its carrier")
            self.assertRegex(events, r"Port 0: link state change event")
            stop = tp.cmd("stop")
            self.assertRegex(stop, r"TX-packets: [1-9]\d*", "nothing was sent before the TAP went")
            self.assertEqual(tp.link(0)[0], "down")
            tp.cmd("port stop all")
            tp.cmd("port close all")
            self.assertEqual(set(tp.mempool_in_use().values()), {0}, "mbufs lost")
            out = tp.quit()
            self.assertEqual(tp.exit_status, 0, out)
            self.assertNotRegex(out, r"cannot set its carrier")


if __name__ == "__main__":
    unittest.main()
