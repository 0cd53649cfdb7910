"""dpdk-pmdinfo.py reads the PMD_INFO_STRINGs embedded in the .so: they
must name the drivers testpmd reports (net_cna, and net_cna_vf for its VFs)
and list exactly the devargs the user guide documents; net_cna_vf's name the
PCI device it drives in a VM (ivshmem) and the kernel module it needs.
"""
import json
import os
import re
import subprocess
import unittest

from harness.testpmd import TestPmd, build_dir

PMDINFO = "/usr/bin/dpdk-pmdinfo.py"
GUIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "doc", "guide", "cna.md")


def guide_section(title):
    with open(GUIDE) as f:
        return f.read().split(title + "\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]


def table_keys(title):
    """Keys of the devargs table of a section of the user guide."""
    return set(re.findall(r"^\| `(\w+)` \|", guide_section(title), re.M))


class PmdInfoTest(unittest.TestCase):
    def pmdinfo(self):
        """The drivers' infos by name."""
        so = os.path.join(build_dir(), "pmd", "net", "librte_net_cna.so")
        proc = subprocess.run([PMDINFO, so], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        drivers = {d["name"]: d for d in json.loads(proc.stdout)}
        self.assertEqual(len(drivers), 2, proc.stdout)
        return drivers

    def test_names_the_drivers_testpmd_reports(self):
        info = self.pmdinfo()
        with TestPmd(["net_cna0,vfs=1", "net_cna_vf0,adapter=net_cna0,port=0,vf=0"]) as tp:
            drivers = [re.search(r"Driver name: (\S+)", tp.cmd(f"show port info {p}")).group(1) for p in (0, 1)]
            tp.quit()
        self.assertEqual(sorted(info), sorted(drivers))

    def test_params_are_the_documented_devargs(self):
        info = self.pmdinfo()
        keys = set(re.findall(r"(\w+)=", info["net_cna"]["params"]))
        self.assertGreaterEqual(len(keys), 7)
        self.assertEqual(keys, table_keys("## Devargs"))
        vf_keys = set(re.findall(r"(\w+)=", info["net_cna_vf"]["params"]))
        self.assertEqual(vf_keys, {"daemon", "pf", "adapter", "port", "vf", "rdma", "ipv4", "ipv6"})
        self.assertEqual(vf_keys, table_keys("### net_cna_vf devargs"))

    def test_the_vf_driver_claims_ivshmem_devices_through_vfio(self):
        info = self.pmdinfo()
        self.assertNotIn("pci_ids", info["net_cna"], "net_cna is a vdev driver only")
        self.assertEqual(info["net_cna_vf"]["pci_ids"], [{"vendor": "1af4", "device": "1110"}])
        self.assertEqual(info["net_cna_vf"].get("kmod"), "vfio-pci")


if __name__ == "__main__":
    unittest.main()
