"""Precise time with tools no one here wrote: DPDK's ptpclient (Debian's
source, built unmodified) locks the adapter's PTP clock to linuxptp's ptp4l,
the master on the port's TAP wire with software timestamping; the clock,
stepped half a second behind ptpclient's back, is steered back at its next
exchange.

The bound on the steady-state offset: ptp4l stamps in the kernel (the TAP's
transmit, the receive of what the adapter writes to the TAP), the adapter
when its engine takes a frame from the TAP and before it writes one. The
two paths differ by the engine's reading of the TAP, a few to tens of
microseconds on an idle 2-core machine, and ptpclient's offset is off by
half that asymmetry: measured, the median |delta| is 4-11 us and the 99th
percentile 22-118 us (the higher under load). The test allows 100 us for the median and 1 ms for any
delta once locked, the room a loaded CI machine needs, three orders of
magnitude under the step it corrects.

Over a cable both ends stamp in the adapter: ptpclient on PF 0 locks to the
project's ptp_master (examples/ptp_master) on PF 1 of a two-port cabled
adapter, from a quarter of a second off, across a cable given a delay of
50 us with an asymmetry of 5 us (cna-adapterctl cable-delay: 55 us from the
master, 45 us back). Both ports' clocks run from the host's one raw clock,
and a frame's Rx stamp is of the instant it came out of the cable, however
late the engine took it: the exchange measures the cable as it is, to the
nanosecond. Locked, the mean path delay is the cable's 50 us, ptpclient's
deltas 0, and the slave's clock is the asymmetry (5 us) behind the
master's, as IEEE 1588 says an uncorrected asymmetry leaves it
(cna-adapterctl ptp-offset reads both clocks at one instant). The test
allows 1 us for each: a frame stamped when the engine delivers it is off
by the engine's latency, 15-21 us measured, and a lost stamp or a
mixed-up exchange by milliseconds.

RTE_ETH_RX_OFFLOAD_TIMESTAMP through Debian's testpmd (--enable-rx-timestamp;
verbose rxonly prints each mbuf's timestamp field): the frames the kernel
sends on the port's TAP wire carry the adapter's clock, stepped 1000 s
ahead of the host's behind testpmd's back, between its readings around
the sends, in the order they came. (dpdk-dumpcap cannot show them: DPDK
22.11's pdump stamps every copy with the TSC when it makes it, and never
reads the mbuf's timestamp; see the guide.)"""
import re
import statistics
import time
import unittest

from harness.daemon import AdapterDaemon, adapterctl
from harness.ptp import MASTER_PORT, SLAVE_PORT, PtpCableRig, PtpClientRig, magnitudes
from harness.testpmd import Netns, TestPmd, frame, parse_verbose, unique_tag, wait_for_iface

STEP_NS = 500_000_000
MEDIAN_BOUND_NS = 100_000
LOCKED_BOUND_NS = 1_000_000

CABLE_OFFSET_NS = 250_000_000  # the slave's clock ahead of the master's at the start
CABLE_ROUNDS = 30              # ~4 s at 8 Syncs a second
CABLE_LOCKED_ROUNDS = 10
CABLE_DELAY_NS = 50_000
CABLE_ASYMMETRY_NS = 5_000     # from the master's end: 55 us out, 45 us back
CABLE_BOUND_NS = 1_000


class PtpClientAgainstPtp4l(unittest.TestCase):
    def test_ptpclient_keeps_the_adapters_clock_on_ptp4ls_and_steers_it_back_from_a_step(self):
        with PtpClientRig() as rig:
            before = rig.wait_deltas(40)  # 5 s at 8 Syncs a second
            rig.step(STEP_NS)
            after = rig.wait_deltas(len(before) + 40)[len(before):]
        locked = before[8:]
        _, median, p99 = magnitudes(locked)
        self.assertLess(median, MEDIAN_BOUND_NS, f"locked to ptp4l: {locked}")
        self.assertLess(max(abs(d) for d in locked), LOCKED_BOUND_NS, f"no stray step: {locked}")

        # The step shows as an offset of -0.5 s at the next exchange or two
        # (one under way may straddle it), which ptpclient corrects at once.
        stepped = [i for i, d in enumerate(after) if abs(d + STEP_NS) < LOCKED_BOUND_NS]
        self.assertTrue(stepped and stepped[0] < 3, f"the step seen: {after[:6]}")
        relocked = after[stepped[-1] + 2:]
        self.assertGreater(len(relocked), 30)
        _, median_after, _ = magnitudes(relocked)
        self.assertLess(median_after, MEDIAN_BOUND_NS, f"steered back: {after}")
        self.assertLess(max(abs(d) for d in relocked), LOCKED_BOUND_NS, f"steered back: {after}")
        print(f"\nptpclient against ptp4l, |delta|: median {median} ns, p99 {p99} ns; after the step, median "
              f"{median_after} ns")


class OverACable(unittest.TestCase):
    def test_ptpclient_locks_to_ptp_master_across_a_cable_and_measures_its_delay(self):
        def cable(rig):
            rig.adapterctl("cable-delay", str(MASTER_PORT), str(CABLE_DELAY_NS), str(CABLE_ASYMMETRY_NS))
            rig.adapterctl("ptp-step", str(SLAVE_PORT), str(CABLE_OFFSET_NS))

        with PtpCableRig(before_start=[cable]) as rig:
            rounds = rig.wait_rounds(CABLE_ROUNDS)
            offset = rig.adapterctl("ptp-offset", str(MASTER_PORT), str(SLAVE_PORT))
        master = rig.master_exchanges()
        report = f"ptpclient's rounds: {rounds}\nptp_master:\n{rig.output('master')[-3000:]}"

        # The first exchange sees the offset (and the ports' clocks' own
        # difference, sub-millisecond: both set from the host's at power-on)
        # and steps it away. Unless ptpclient had no Tx stamp for its
        # Delay_Req within the 1 ms it waits (t3 = 0: the engine not
        # scheduled in time on a loaded 2-core machine): it then steps by a
        # meaningless delta, which its next round takes back. Either way its
        # steps together take the offset away.
        if rounds[0].t3 != 0:
            self.assertLess(abs(rounds[0].delta + CABLE_OFFSET_NS), 1_000_000, report)
        self.assertLess(abs(sum(r.delta for r in rounds) + CABLE_OFFSET_NS), 1_000_000, report)
        locked = rounds[-CABLE_LOCKED_ROUNDS:]
        deltas = [r.delta for r in locked]
        self.assertLess(max(abs(d) for d in deltas), CABLE_BOUND_NS, report)
        delays = [r.path_delay for r in locked]
        self.assertLess(max(abs(d - CABLE_DELAY_NS) for d in delays), CABLE_BOUND_NS, report)
        # PTP cannot see an asymmetry: it leaves the slave half the
        # difference of the two ways (here 5 us) behind.
        slave_minus_master = int(re.search(r": (-?\d+) ns", offset).group(1))
        self.assertLess(abs(slave_minus_master + CABLE_ASYMMETRY_NS), CABLE_BOUND_NS, offset)

        # ptpclient's t1 and t4 are the ones ptp_master printed for the
        # exchange: the Follow_Up and the Delay_Resp carried them unchanged.
        printed = {(e.t1, e.t4) for e in master}
        self.assertTrue(all((r.t1, r.t4) in printed for r in locked), report)
        # SIGTERM: ptp_master stops its port and has every mbuf back.
        self.assertEqual(rig.master_returncode, 0, report)
        pool = re.search(r"^mbufs: (\d+) of (\d+) back in the pool$", rig.output("master"), re.MULTILINE)
        self.assertTrue(pool and pool.group(1) == pool.group(2), report)
        print(f"\nptpclient against ptp_master across a cable of {CABLE_DELAY_NS} ns (asymmetry "
              f"{CABLE_ASYMMETRY_NS} ns), the last {len(locked)} rounds: deltas {deltas} ns, path delays {delays} "
              f"ns; the slave's clock minus the master's {slave_minus_master} ns")


class RxTimestamps(unittest.TestCase):
    def test_every_frame_testpmd_receives_carries_the_adapters_time(self):
        ifname = f"cnr{unique_tag()}"[:15]
        step_ns = 1000 * 10**9
        frames = [frame("02:00:00:00:0b:01", size=64 + 8 * i) for i in range(20)]
        with AdapterDaemon(["--ports", "1", "--wire", f"tap:{ifname}"]) as daemon, \
                TestPmd([f"net_cna0,daemon={daemon.socket},pf=0"],
                        app_args=["--enable-rx-timestamp", "--rxd=256", "--txd=256"]) as tp:
            wait_for_iface(ifname)
            ns = Netns()
            try:
                ns.adopt(ifname)
                ns.bind(ifname)
                adapterctl(daemon.socket, "ptp-step", "0", str(step_ns))
                tp.cmd("set promisc all on")
                tp.cmd("set verbose 1")
                tp.cmd("set fwd rxonly")
                tp.cmd("start")
                before = ptp_ns(adapterctl(daemon.socket, "ptp-time", "0"))
                ns.io(send=[(ifname, f) for f in frames])
                text = tp.collect(r"ol_flags:", len(frames), timeout=5)
                after = ptp_ns(adapterctl(daemon.socket, "ptp-time", "0"))
            finally:
                ns.delete()
        stamps = [int(t) for t in re.findall(r" - timestamp (\d+)", text)]
        lengths = [p["length"] for p in parse_verbose(text)]
        self.assertEqual(lengths, [len(f) for f in frames], text[-2000:])
        self.assertEqual(len(stamps), len(frames), text[-2000:])
        self.assertEqual(stamps, sorted(stamps), "in the order they came")
        self.assertTrue(before <= stamps[0] and stamps[-1] <= after, f"{before} {stamps} {after}")
        self.assertGreater(stamps[0], time.clock_gettime_ns(time.CLOCK_REALTIME) + step_ns // 2,
                           "the adapter's clock, stepped ahead of the host's")


def ptp_ns(text):
    """Nanoseconds of cna-adapterctl ptp-time's 'port P: ptp time S.NNNNNNNNN'."""
    seconds, fraction = re.search(r"ptp time (\d+)\.(\d{9})", text).groups()
    return int(seconds) * 10**9 + int(fraction)


if __name__ == "__main__":
    unittest.main()
