"""The precise-time row of ./cna bench: DPDK's ptpclient (Debian's source,
built unmodified) on PF 0 of cna-adapterd, whose port's wire is a TAP
interface where linuxptp's ptp4l is the master with software timestamping
(harness.ptp). Over a minute of 8 Syncs a second, the offsets ptpclient
measures at each exchange (its `Delta between master and slave clocks`,
the adapter's clock's offset before each correction), after the first
second: the median and the 99th percentile of their magnitude.

    ptp ptpclient against ptp4l, 60 s: |offset| median N ns, p99 N ns (K exchanges)
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "integration"))
from harness.ptp import PtpClientRig, magnitudes  # noqa: E402

SECONDS = 60
SYNCS_PER_SECOND = 8


def run_ptp_rows(args):
    """Prints the row; False if it could not be measured."""
    print()
    if shutil.which("ptp4l") is None:
        print("ptp: skipped, linuxptp is not installed")
        return True
    try:
        with PtpClientRig(build=args.build) as rig:
            deltas = rig.wait_deltas(SECONDS * SYNCS_PER_SECOND, timeout=SECONDS * 2)
    except Exception as e:  # noqa: BLE001 - any failure is a row that could not be measured
        print(f"ptp: failed, {e}")
        return False
    settled = deltas[SYNCS_PER_SECOND:]
    _, median, p99 = magnitudes(settled)
    print(f"ptp ptpclient against ptp4l, {SECONDS} s: |offset| median {median} ns, p99 {p99} ns "
          f"({len(settled)} exchanges)")
    return True
