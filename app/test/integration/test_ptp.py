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
adapter, from a quarter of a second off. Both ports' clocks run from the
host's one raw clock, and a frame's Rx stamp is of the instant it came off
the cable, which for a cable of no length is the sender's Tx instant:
locked, the measured deltas and path delays are 0 ns. An adapter that
stamps a frame when its engine delivers it instead measured |delta| up to
4 us and a path delay of 15-21 us (the engine's latency, about the same
both ways). The bounds, 20 us for each of the last ten deltas and 50 us
for their mean path delay, hold for either on a loaded 2-CPU machine; a
lost stamp or a mixed-up exchange is off by milliseconds or more."""
import re
import statistics
import unittest

from harness.ptp import SLAVE_PORT, PtpCableRig, PtpClientRig, magnitudes

STEP_NS = 500_000_000
MEDIAN_BOUND_NS = 100_000
LOCKED_BOUND_NS = 1_000_000

CABLE_OFFSET_NS = 250_000_000  # the slave's clock ahead of the master's at the start
CABLE_ROUNDS = 30              # ~4 s at 8 Syncs a second
CABLE_LOCKED_ROUNDS = 10
CABLE_DELTA_BOUND_NS = 20_000
CABLE_PATH_DELAY_BOUND_NS = 50_000


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
    def test_ptpclient_locks_to_ptp_master_at_the_cables_other_end(self):
        def slave_ahead(rig):
            rig.adapterctl("ptp-step", str(SLAVE_PORT), str(CABLE_OFFSET_NS))

        with PtpCableRig(before_start=[slave_ahead]) as rig:
            rounds = rig.wait_rounds(CABLE_ROUNDS)
        master = rig.master_exchanges()
        report = f"ptpclient's rounds: {rounds}\nptp_master:\n{rig.output('master')[-3000:]}"

        # The first exchange sees the offset (and the ports' clocks' own
        # difference, sub-millisecond: both set from the host's at power-on)
        # and steps it away.
        self.assertLess(abs(rounds[0].delta + CABLE_OFFSET_NS), 1_000_000, report)
        locked = rounds[-CABLE_LOCKED_ROUNDS:]
        deltas = [r.delta for r in locked]
        self.assertLess(max(abs(d) for d in deltas), CABLE_DELTA_BOUND_NS, report)
        path_delay = statistics.mean(r.path_delay for r in locked)
        self.assertGreaterEqual(path_delay, 0, report)
        self.assertLess(path_delay, CABLE_PATH_DELAY_BOUND_NS, report)

        # ptpclient's t1 and t4 are the ones ptp_master printed for the
        # exchange: the Follow_Up and the Delay_Resp carried them unchanged.
        printed = {(e.t1, e.t4) for e in master}
        self.assertTrue(all((r.t1, r.t4) in printed for r in locked), report)
        # SIGTERM: ptp_master stops its port and has every mbuf back.
        self.assertEqual(rig.master_returncode, 0, report)
        pool = re.search(r"^mbufs: (\d+) of (\d+) back in the pool$", rig.output("master"), re.MULTILINE)
        self.assertTrue(pool and pool.group(1) == pool.group(2), report)
        print(f"\nptpclient against ptp_master over a cable, the last {len(locked)} rounds: deltas {deltas} ns, "
              f"mean path delay {path_delay:.0f} ns")


if __name__ == "__main__":
    unittest.main()
