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
magnitude under the step it corrects."""
import unittest

from harness.ptp import PtpClientRig, magnitudes

STEP_NS = 500_000_000
MEDIAN_BOUND_NS = 100_000
LOCKED_BOUND_NS = 1_000_000


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


if __name__ == "__main__":
    unittest.main()
