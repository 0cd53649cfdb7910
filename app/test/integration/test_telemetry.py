"""Telemetry: Debian's dpdk-telemetry.py, fed commands on stdin, queries the
net_cna ports of a running testpmd. The ethdev telemetry handlers call the
PMD's ops on EAL's telemetry thread, concurrently with testpmd's own.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from harness.secondary import file_prefix, require_hugepages
from harness.testpmd import TestPmd, TestPmdError, pmd_path, port_mac, xstats

TELEMETRY = "/usr/bin/dpdk-telemetry.py"
CABLED = ["net_cna0,adapter=tm,ports=2,wire=cable", "net_cna1,adapter=tm,port=1"]


def telemetry(prefix, *commands):
    """Runs the commands non-interactively; returns their replies in order."""
    proc = subprocess.run([TELEMETRY, "-f", prefix], input="\n".join(commands) + "\n", stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=60)
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or len(replies) != len(commands):
        raise TestPmdError(f"dpdk-telemetry.py -f {prefix} ({proc.returncode}):\n{proc.stdout}")
    return [r[c.split(",")[0]] for r, c in zip(replies, commands)]


class TelemetryTest(unittest.TestCase):
    def setUp(self):
        require_hugepages(self)
        self.prefix = file_prefix()

    def test_stats_xstats_link_and_info_agree_with_testpmd(self):
        with TestPmd(CABLED, file_prefix=self.prefix) as tp:
            tp.run_forwarding(0.5)
            time.sleep(0.3)  # what is in flight lands
            ports, = telemetry(self.prefix, "/ethdev/list")
            self.assertEqual(ports, [0, 1])
            for port in (0, 1):
                stats, xs, link, info = telemetry(self.prefix, f"/ethdev/stats,{port}", f"/ethdev/xstats,{port}",
                                                  f"/ethdev/link_status,{port}", f"/ethdev/info,{port}")
                mine = tp.port_stats(port)
                self.assertGreater(mine["RX-packets"], 100)
                self.assertEqual((stats["ipackets"], stats["ibytes"], stats["opackets"], stats["obytes"]),
                                 (mine["RX-packets"], mine["RX-bytes"], mine["TX-packets"], mine["TX-bytes"]))
                self.assertEqual(stats["q_ipackets"][0], mine["RX-packets"])
                self.assertEqual(xs, xstats(tp, port))
                status, speed = tp.link(port)
                self.assertEqual(link["status"], status.upper())
                self.assertEqual(f"{link['speed'] // 1000} Gbps", speed)
                self.assertEqual(info["name"], f"net_cna{port}")
                self.assertEqual(info["mac_addr"].lower(), port_mac(tp, port))
            tp.quit()

    def test_stats_from_the_telemetry_thread_while_forwarding(self):
        """The telemetry thread, testpmd's and the interrupt thread read the
        adapter at once: counters must only grow, and nothing may break."""
        with TestPmd(CABLED, file_prefix=self.prefix) as tp:
            tp.cmd("start tx_first")
            replies = telemetry(self.prefix, *(["/ethdev/stats,0", "/ethdev/xstats,1"] * 100))
            for _ in range(20):
                tp.port_stats(0)
            # A loaded machine may not schedule the forwarding lcore during
            # a whole batch: more batches until the counter moved.
            for _ in range(50):
                if replies[-2]["ipackets"] > replies[0]["ipackets"]:
                    break
                replies += telemetry(self.prefix, *(["/ethdev/stats,0", "/ethdev/xstats,1"] * 10))
            tp.cmd("stop")
            rx = [r["ipackets"] for r in replies[0::2]]
            self.assertEqual(rx, sorted(rx), "port 0's Rx counter went backwards")
            self.assertGreater(rx[-1], rx[0])
            tx = [r["tx_unicast_packets"] for r in replies[1::2]]
            self.assertEqual(tx, sorted(tx), "port 1's Tx counter went backwards")
            tp.quit()


class TwoCopiesOfTheDriver(unittest.TestCase):
    """A process mapping net_cna twice (the EAL's driver directory and an
    RDMA application's librte_rdma_cna.so, or two -d): the first copy
    serves, the second registers nothing. Were it to register its telemetry
    commands, they would answer every /cna/vf request with the copy that
    owns no port."""

    def setUp(self):
        require_hugepages(self)
        self.prefix = file_prefix()
        # not below a world-writable directory (EAL refuses such plugins)
        stage = tempfile.mkdtemp(dir=os.path.dirname(pmd_path()))
        self.addCleanup(shutil.rmtree, stage)
        self.copy = os.path.join(stage, "librte_net_cna_copy.so")
        shutil.copy(pmd_path(), self.copy)

    def test_the_second_copy_stays_idle(self):
        with TestPmd(["net_cna0,vfs=1"], file_prefix=self.prefix, eal_extra=["-d", self.copy]) as tp:
            self.assertRegex(tp.startup_output, r"net_cna: the driver in \S+ serves this process; "
                             rf"the copy in {self.copy} stays idle")
            commands, info = telemetry(self.prefix, "/", "/cna/vf/info,0,0")
            self.assertEqual([c for c in commands if c.startswith("/cna/vf/")].count("/cna/vf/info"), 1)
            self.assertRegex(info.get("mac", ""), r"(?i)^([0-9a-f]{2}:){5}[0-9a-f]{2}$", info)
            self.assertRegex(tp.cmd("show port info 0"), r"Driver name: net_cna\b")
            tp.quit()


if __name__ == "__main__":
    unittest.main()
