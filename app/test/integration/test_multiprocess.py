"""Multi-process: Debian's secondary tools attached to a testpmd primary that
drives net_cna ports. A secondary reads the adapter's counters through the
primary (the PCI function is the primary's), so dpdk-proc-info must print
exactly what testpmd prints; dpdk-dumpcap must capture every frame testpmd
sends and receives; a secondary testpmd forwards on the primary's queues,
with the embedded adapter and with a daemon's, PF and VF ports alike.
"""
import os
import re
import tempfile
import time
import unittest

from harness.secondary import (Dumpcap, file_prefix, proc_info, proc_info_stats, proc_info_xstats, require_hugepages,
                       tshark_frames)
from harness.daemon import AdapterDaemon
from harness.sriov import Rig
from harness.testpmd import TestPmd, forward_stats, port_mac, unique_tag, xstats

TESTPMD_BURST = 32  # testpmd's default --burst
CABLED = ["net_cna0,adapter=mp,ports=2,wire=cable", "net_cna1,adapter=mp,port=1"]
STAT_KEYS = ("RX-packets", "RX-bytes", "RX-errors", "TX-packets", "TX-bytes", "TX-errors")


class SharedMemoryTest(unittest.TestCase):
    def setUp(self):
        if "libasan" in os.environ.get("LD_PRELOAD", ""):
            # A secondary must map DPDK's memory at the primary's addresses;
            # ASan's shadow mappings take address space at random, so the
            # secondary's EAL init fails now and then ("Cannot get a virtual
            # area at requested address"): not a finding about net_cna.
            self.skipTest("DPDK secondary processes cannot reliably map the primary's memory under ASan")
        require_hugepages(self)
        self.prefix = file_prefix()


class MultiProcessTest(SharedMemoryTest):
    def quiesced(self, tp):
        """Forward for a while on both cabled ports, then stop: the counters
        settle once the adapter has delivered what is in flight."""
        tp.run_forwarding(0.5)
        time.sleep(0.3)

    def test_proc_info_prints_the_primarys_stats_and_xstats(self):
        with TestPmd(CABLED, file_prefix=self.prefix) as tp:
            self.quiesced(tp)
            # one report per run: --stats wins over --xstats
            out = proc_info(self.prefix, "--stats")
            stats, xs = proc_info_stats(out), proc_info_xstats(proc_info(self.prefix, "--xstats"))
            self.assertEqual(sorted(stats), [0, 1], out)  # both ports probed in the secondary
            for port in (0, 1):
                mine = tp.port_stats(port)
                self.assertGreater(mine["RX-packets"], 100)
                self.assertEqual({k: stats[port][k] for k in STAT_KEYS}, {k: mine[k] for k in STAT_KEYS},
                                 f"port {port}:\n{out}")
                self.assertEqual(xs[port], xstats(tp, port), f"port {port}")
            tp.quit()

    def test_secondary_sees_resets_and_new_traffic(self):
        with TestPmd(CABLED, file_prefix=self.prefix) as tp:
            self.quiesced(tp)
            tp.cmd("clear port stats all")
            zero = proc_info_stats(proc_info(self.prefix, "--stats"))
            self.assertEqual(zero[0]["RX-packets"], 0)
            self.quiesced(tp)
            again = proc_info_stats(proc_info(self.prefix, "--stats"))
            self.assertEqual(again[1]["TX-packets"], tp.port_stats(1)["TX-packets"])
            self.assertGreater(again[1]["TX-packets"], 0)
            tp.quit()

    def test_dumpcap_captures_every_frame_sent_and_received(self):
        size, bursts = 200, 3
        with TestPmd(["net_cna0"], file_prefix=self.prefix) as tp, tempfile.TemporaryDirectory() as tmp:
            mac = port_mac(tp, 0)
            peer = re.search(r"peer=([0-9A-Fa-f:]{17})", tp.cmd("show config fwd")).group(1).lower()
            tp.cmd("set fwd rxonly")  # the traffic is the tx_first bursts, returned by the loopback wire
            tp.cmd(f"set txpkts {size}")
            cap = os.path.join(tmp, "cna.pcapng")
            with Dumpcap(self.prefix, "net_cna0", cap) as capture:
                tp.cmd(f"start tx_first {bursts}")
                sent = bursts * TESTPMD_BURST
                counted = capture.wait_for(2 * sent)
                tp.cmd("stop")  # before dumpcap leaves: see Dumpcap
                out = capture.stop()
            frames = tshark_frames(cap)
            self.assertEqual(counted, 2 * sent, out)
            self.assertEqual(len(frames), 2 * sent, out)
            stats = tp.port_stats(0)  # settled: every frame was captured back
            self.assertEqual((stats["TX-packets"], stats["RX-packets"]), (sent, sent))
            # Tx and Rx copies look alike: the loopback wire returns each frame
            self.assertEqual({f[0] for f in frames}, {size}, frames[:4])
            self.assertEqual({f[1] for f in frames}, {mac}, frames[:4])
            self.assertEqual({f[2] for f in frames}, {peer}, frames[:4])
            tp.quit()


class SecondaryForwarding(SharedMemoryTest):
    """testpmd's own multi-process mode: the primary owns the ports and
    queue 0 of each, a secondary (--proc-type=secondary, its lcores mapped
    onto the same CPUs) forwards on queue 1. A flow rule steers every frame
    to queue 1 and the primary does not forward at all, so whatever moves
    after the secondary's tx_first burst is the secondary's io forwarding
    through the adapter."""

    MP = ["--rxq=2", "--txq=2", "--num-procs=2", "--forward-mode=io"]

    def primary(self, vdevs):
        return TestPmd(vdevs, ["--proc-id=0", *self.MP], file_prefix=self.prefix)

    def secondary(self):
        return TestPmd([], ["--proc-id=1", *self.MP], lcores="2@0,3@1",
                       memory=["--proc-type=secondary", "--file-prefix", self.prefix])

    def forward(self, sec, seconds=1.0):
        sec.cmd("start tx_first")
        time.sleep(seconds)
        return forward_stats(sec.cmd("stop"))

    def check(self, vdevs):
        with self.primary(vdevs) as tp:
            for port in (0, 1):
                self.assertIn("created", tp.cmd(f"flow create {port} ingress pattern eth / end "
                                                 "actions queue index 1 / end"))
            with self.secondary() as sec:
                self.assertNotIn("no Rx/Tx here", sec.startup_output)
                self.assertIn("Rx burst", sec.startup_output)
                fwd = self.forward(sec)
                # far more than the 2 x 32 frames of tx_first: forwarded round and round
                self.assertGreater(fwd[0]["RX-packets"], 10000, fwd)
                time.sleep(0.3)  # what the adapter still holds lands in the rings
                stats = [tp.port_stats(p) for p in (0, 1)]
                self.assertEqual(stats[0]["TX-packets"], stats[1]["RX-packets"], stats)
                self.assertEqual(stats[1]["TX-packets"], stats[0]["RX-packets"], stats)

                # The primary stops the ports: the secondary's bursts go dummy
                # (no store to a torn-down queue) and come back with the start.
                tp.cmd("port stop all")
                stopped = self.forward(sec, 0.3)
                self.assertEqual(stopped[0]["TX-packets"] + stopped[1]["TX-packets"], 0, stopped)
                tp.cmd("port start all")
                deadline = time.monotonic() + 5
                while tp.link(0)[0] != "up" or tp.link(1)[0] != "up":
                    self.assertLess(time.monotonic(), deadline, "links did not come back")
                    time.sleep(0.05)
                again = self.forward(sec)
                self.assertGreater(again[1]["RX-packets"], 10000, again)
                sec.quit()
            # every mbuf the secondary took or sent is back once the primary stops the ports
            tp.cmd("port stop all")
            self.assertEqual(set(tp.mempool_in_use().values()), {0})
            tp.quit()

    def test_a_secondary_forwards_on_the_embedded_adapters_queues(self):
        self.check(CABLED)

    def test_a_secondary_forwards_on_a_daemons_functions(self):
        with AdapterDaemon(["--ports", "2", "--wire", "cable"]) as daemon:
            self.check([f"net_cna0,daemon={daemon.socket},pf=0", f"net_cna1,daemon={daemon.socket},pf=1"])

    def test_a_secondary_forwards_between_vf_ports(self):
        """VFs 0 and 1 of a daemon's PF (its testpmd elsewhere, vfs=2) are
        the primary's ports; a secondary testpmd forwards between them (mac
        forwarding to each other's MAC, switched inside the port) on their
        one queue pair each while the primary does not forward at all."""
        with Rig(vf_list=()) as rig:
            vdevs = [f"net_cna_vf{vf},daemon={rig.daemon.socket},pf=0,vf={vf}" for vf in (0, 1)]
            with TestPmd(vdevs, [], file_prefix=self.prefix) as tp:
                macs = [port_mac(tp, port) for port in (0, 1)]
                with TestPmd([], [], lcores="2@0,3@1",
                             memory=["--proc-type=secondary", "--file-prefix", self.prefix]) as sec:
                    self.assertNotIn("no Rx/Tx here", sec.startup_output)
                    sec.cmd("set fwd mac")
                    sec.cmd(f"set eth-peer 0 {macs[1]}")
                    sec.cmd(f"set eth-peer 1 {macs[0]}")
                    fwd = self.forward(sec)
                    self.assertGreater(fwd[1]["RX-packets"], 10000, fwd)
                    stats = [tp.port_stats(p) for p in (0, 1)]
                    self.assertGreater(stats[0]["RX-packets"], 10000, "the primary reads the VF's counters")
                    sec.quit()
                tp.cmd("port stop all")
                self.assertEqual(set(tp.mempool_in_use().values()), {0})
                tp.quit()


if __name__ == "__main__":
    unittest.main()
