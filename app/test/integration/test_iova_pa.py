"""IOVA as physical addresses: Debian's testpmd on hugepages in EAL's IOVA
mode PA, the mode EAL selects by itself for a root process without VFIO,
with memory preallocated at start-up (-m) or allocated on demand, with and
without --in-memory.

A hugepage's IOVA is then its physical address: pages that follow each other
in VA lie anywhere, in any order, in IOVA, so the device IOMMU needs one
mapping per IOVA-contiguous run of pages. Preallocated memory is mapped when
the PF attaches, memory allocated later by the hotplug callback; forwarding
on two cabled ports, stopping and closing them reach both kinds of memory.
"""
import os
import re
import subprocess
import time
import unittest

from harness.testpmd import TestPmd, forward_stats, hugetlbfs_mounts, meminfo, unique_tag

CABLED = ["net_cna0,adapter=pa,ports=2,wire=cable", "net_cna1,adapter=pa,port=1"]
PREALLOCATED_MB = 512
# the preallocated memory and testpmd's pools, in 2 MiB pages, with slack
HUGEPAGES_NEEDED = PREALLOCATED_MB // 2 + 64
NR_HUGEPAGES = "/proc/sys/vm/nr_hugepages"
HUGEPAGES_DIR = "/dev/hugepages"
# what tells that the device could not reach memory the driver gave it
DMA_TROUBLE = re.compile(r"DMA fault|cannot map|cannot unmap|no memory segment holds|hw_init failed|probe failed")


def reserve_hugepages(pages):
    """Makes `pages` default-size hugepages free (we run as root) and a
    hugetlbfs mounted; returns the nr_hugepages to restore, or None."""
    if not hugetlbfs_mounts():
        os.makedirs(HUGEPAGES_DIR, exist_ok=True)
        subprocess.run(["mount", "-t", "hugetlbfs", "nodev", HUGEPAGES_DIR], check=True)
    free = meminfo("HugePages_Free")
    if free >= pages:
        return None
    with open(NR_HUGEPAGES) as f:
        before = int(f.read())
    with open(NR_HUGEPAGES, "w") as f:
        f.write(str(before + pages - free))
    return before


class IovaPa(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.restore_nr = None
        if meminfo("Hugepagesize") != 2048:
            raise unittest.SkipTest("the default hugepage size is not 2 MiB")
        cls.restore_nr = reserve_hugepages(HUGEPAGES_NEEDED)
        free = meminfo("HugePages_Free")
        if free < HUGEPAGES_NEEDED or not hugetlbfs_mounts():
            raise AssertionError(f"IOVA-PA tests need {HUGEPAGES_NEEDED} free 2 MiB hugepages and a hugetlbfs "
                                 f"mount (free: {free}, mounts: {hugetlbfs_mounts()})")

    @classmethod
    def tearDownClass(cls):
        if cls.restore_nr is not None:
            with open(NR_HUGEPAGES, "w") as f:
                f.write(str(cls.restore_nr))  # the kernel frees only pages nobody uses

    def setUp(self):
        self.prefix = f"cnapa{unique_tag()}"

    def hugepage_files(self):
        return [name for mount in hugetlbfs_mounts() for name in os.listdir(mount) if name.startswith(self.prefix)]

    def forward_stop_close(self, memory):
        """testpmd in IOVA-PA mode on `memory` (EAL options): forwarding on
        both ports, counters that add up, then port stop/close and quit."""
        with TestPmd(CABLED, memory=memory + ["--iova-mode=pa"], timeout=40) as tp:
            log = tp.startup_output
            # The check after quit means something only if the memory was
            # in files of this prefix while testpmd ran (none in memory).
            if "--file-prefix" in memory:
                self.assertNotEqual(self.hugepage_files(), [], "no hugepage files while running")
            else:
                self.assertEqual(self.hugepage_files(), [], "hugepage files of an --in-memory run")
            self.assertIn("Selected IOVA mode 'PA'", log)
            self.assertIsNone(DMA_TROUBLE.search(log), log)
            for p in (0, 1):
                self.assertEqual(tp.link(p)[0], "up")
            out = tp.run_forwarding(1.0)
            fwd = forward_stats(out)
            time.sleep(0.3)
            nic = {p: tp.port_stats(p) for p in (0, 1)}
            for src, dst in ((0, 1), (1, 0)):
                self.assertGreater(fwd[dst]["RX-packets"], 10000, f"port {dst} received too little:\n{out}")
                self.assertGreater(fwd[src]["TX-packets"], 10000, f"port {src} sent too little:\n{out}")
                self.assertEqual(nic[src]["TX-packets"], nic[dst]["RX-packets"] + nic[dst]["RX-missed"],
                                 f"frames sent by port {src} must all arrive at port {dst}")
                self.assertEqual(nic[dst]["RX-errors"], 0)
            log += out
            stop = tp.cmd("port stop all")
            self.assertRegex(stop, r"Stopping ports\.\.\.\s*\n(.*\n)*?Done", stop)
            close = tp.cmd("port close all")
            self.assertRegex(close, r"Closing ports\.\.\.\s*\n(.*\n)*?Done", close)
            self.assertEqual(set(tp.mempool_in_use().values()), {0}, "mbufs lost by stop/close")
            log += stop + close + tp.quit()
            self.assertEqual(tp.exit_status, 0, log)
            self.assertIsNone(DMA_TROUBLE.search(log), log)
        self.assertEqual(self.hugepage_files(), [], "hugepage files left behind")

    def test_in_memory_preallocated(self):
        self.forward_stop_close(["--in-memory", "-m", str(PREALLOCATED_MB)])

    def test_in_memory_on_demand(self):
        self.forward_stop_close(["--in-memory"])

    def test_hugepage_files_preallocated(self):
        self.forward_stop_close(["--file-prefix", self.prefix, "-m", str(PREALLOCATED_MB)])

    def test_hugepage_files_on_demand(self):
        self.forward_stop_close(["--file-prefix", self.prefix])


if __name__ == "__main__":
    unittest.main()
