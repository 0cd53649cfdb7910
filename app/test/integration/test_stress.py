"""Stress through the real clients, for failures that show once in many
runs: link flaps under full load (testpmd's prompt interleaved with the
link events it prints from its interrupt thread once looked like a hang),
and pings through l3fwd right after it comes up.

Iteration counts are bounded for the suite; CNA_STRESS_SCALE multiplies them
for a longer search (e.g. CNA_STRESS_SCALE=10)."""
import os
import random
import re
import time
import unittest

from harness.l3fwd import HOSTS, L3fwdRig
from harness.testpmd import TestPmd

SCALE = max(1, int(os.environ.get("CNA_STRESS_SCALE", "1")))
CABLED = ["net_cna0,adapter=s,ports=2,wire=cable", "net_cna1,adapter=s,port=1"]


class LinkFlapsUnderLoad(unittest.TestCase):
    FLAPS = 150 * SCALE

    def test_every_flap_answers_and_traffic_resumes(self):
        seed = int(os.environ.get("CNA_STRESS_SEED", time.time_ns() % 1_000_000))
        rng = random.Random(seed)
        with TestPmd(CABLED, timeout=15) as tp:
            tp.cmd("start tx_first")
            for i in range(self.FLAPS):
                port = rng.choice((0, 1))
                with self.subTest(flap=i, port=port, seed=seed):
                    # the event lines must reach the output even when they
                    # land inside the prompt
                    tp.cmd_with_events(f"set link-down port {port}", [rf"Port {port}: link state change event"])
                    if rng.random() < 0.1:
                        tp.cmd("stop")
                        tp.cmd("start tx_first")
                    tp.cmd(f"set link-up port {port}")
            for port in (0, 1):
                self.assertEqual(tp.link(port)[0], "up")
            tp.cmd("stop")
            before = [tp.port_stats(p)["RX-packets"] for p in (0, 1)]
            tp.run_forwarding(0.5)
            after = [tp.port_stats(p)["RX-packets"] for p in (0, 1)]
            self.assertTrue(all(a > b for a, b in zip(after, before)), f"no traffic after the flaps: {before} {after}")
            tp.quit()
            self.assertEqual(tp.exit_status, 0)


class PingsThroughL3fwd(unittest.TestCase):
    RUNS = 6 * SCALE

    def test_no_ping_lost_from_the_first_one(self):
        lost = []
        for run in range(self.RUNS):
            with L3fwdRig() as rig:
                for src in (0, 1):
                    out = rig.ping(src)
                    if not re.search(r"\b3 received", out.stdout):
                        lost.append(f"run {run}, from host {'AB'[src]} to {HOSTS[1 - src][0]}:\n{out.stdout}")
        self.assertEqual(lost, [], f"{len(lost)} of {2 * self.RUNS} pings lost frames")


if __name__ == "__main__":
    unittest.main()
