"""dpdk-pmdinfo.py reads the PMD_INFO_STRING embedded in the .so: it must
name the driver testpmd reports and list exactly the devargs the user guide
documents.
"""
import json
import os
import re
import subprocess
import unittest

from harness.testpmd import TestPmd, build_dir

PMDINFO = "/usr/bin/dpdk-pmdinfo.py"
GUIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "doc", "guide", "cna.md")


def documented_devargs():
    """Keys of the devargs table in the user guide."""
    with open(GUIDE) as f:
        section = f.read().split("## Devargs", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", section, re.M))


class PmdInfoTest(unittest.TestCase):
    def pmdinfo(self):
        so = os.path.join(build_dir(), "pmd", "net", "librte_net_cna.so")
        proc = subprocess.run([PMDINFO, so], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        drivers = json.loads(proc.stdout)
        self.assertEqual(len(drivers), 1, proc.stdout)
        return drivers[0]

    def test_names_the_driver_testpmd_reports(self):
        info = self.pmdinfo()
        with TestPmd(["net_cna0"]) as tp:
            driver = re.search(r"Driver name: (\S+)", tp.cmd("show port info 0")).group(1)
            tp.quit()
        self.assertEqual(info["name"], driver)

    def test_params_are_the_documented_devargs(self):
        keys = set(re.findall(r"(\w+)=", self.pmdinfo()["params"]))
        self.assertGreaterEqual(len(keys), 7)
        self.assertEqual(keys, documented_devargs())


if __name__ == "__main__":
    unittest.main()
