"""PTP between a net_cna port and linuxptp: DPDK's ptpclient example (Debian's
source, built unmodified) on PF 0 of cna-adapterd, whose port's wire is a
TAP interface in a network namespace of its own, where linuxptp's ptp4l is
the master with software timestamping over IEEE 802.3 (ptpclient speaks
PTP over Ethernet only: no UDP). The daemon lets the test step the port's
clock behind ptpclient's back (cna-adapterctl ptp-step).

ptpclient steers the adapter's clock with timesync_adjust_time by the delta
it measures at each exchange (Sync and Follow_Up, then its Delay_Req and
ptp4l's Delay_Resp) and prints it: the deltas are the offsets of the
adapter's clock from the master's before each correction.

The adapter's engine runs on CPU 1, ptpclient's one lcore on CPU 0:
ptpclient waits at most 1 ms for its Delay_Req's Tx stamp, which the engine
latches when it sends the frame (and takes a missing one for 0, stepping
the clock by decades: it checks nothing).

    with PtpClientRig() as rig:
        rig.wait_deltas(40)
        rig.deltas()          # ns, in order
"""
import os
import re
import signal
import subprocess
import tempfile
import time

from .daemon import AdapterDaemon, adapterctl
from .examples import build_example
from .testpmd import Netns, Started, TestPmdError, eal_args, unique_tag, wait_for_iface

DELTA = re.compile(r"Delta between master and slave clocks:(-?\d+)ns")


class PtpClientRig(Started):
    def __init__(self, build=None, log_sync_interval=-3):
        self.build = build
        self.ifname = f"cnp{unique_tag()}"[:15]
        self.log_sync_interval = log_sync_interval
        self.daemon = AdapterDaemon(["--ports", "1", "--wire", f"tap:{self.ifname}", "--engine-cpus", "1"])
        self.client = self.master = self.ns = None
        self._client_out = tempfile.TemporaryFile("w+", errors="replace")
        self._master_out = tempfile.TemporaryFile("w+", errors="replace")

    def start(self):
        binary = build_example("ptpclient", self.build)
        self.daemon.start()
        vdevs = [f"net_cna0,daemon={self.daemon.socket},pf=0"]
        self.command = [binary] + eal_args(vdevs, self.build, lcores="0") + ["--", "-p", "0x1"]
        self.client = subprocess.Popen(self.command, stdout=self._client_out, stderr=subprocess.STDOUT)
        wait_for_iface(self.ifname)
        self.ns = Netns()
        self.ns.adopt(self.ifname)
        # Master only, its port a master at once (announce receipt timeout
        # 2 x 125 ms): Sync and Follow_Up every 2^log_sync_interval s.
        self.master_command = ["ptp4l", "-i", self.ifname, "-S", "-2", "-m", "--masterOnly", "1",
                               "--logAnnounceInterval", "-3", "--announceReceiptTimeout", "2",
                               "--logSyncInterval", str(self.log_sync_interval)]
        self.master = self.ns.popen(*self.master_command, stdout=self._master_out, stderr=subprocess.STDOUT)

    def step(self, ns):
        """Steps the port's clock (the adapter's, behind ptpclient's back)."""
        adapterctl(self.daemon.socket, "ptp-step", "0", str(ns))

    def output(self, which="client"):
        f = self._client_out if which == "client" else self._master_out
        f.seek(0)
        return f.read()

    def deltas(self):
        return [int(d) for d in DELTA.findall(self.output())]

    def wait_deltas(self, count, timeout=60):
        deadline = time.monotonic() + timeout
        while len(self.deltas()) < count:
            for name, proc in (("ptpclient", self.client), ("ptp4l", self.master)):
                if proc.poll() is not None:
                    raise TestPmdError(f"{name} exited ({proc.returncode}):\n{self.output()}\n{self.output('master')}")
            if time.monotonic() > deadline:
                raise TestPmdError(f"ptpclient printed {len(self.deltas())} deltas of {count} in {timeout} s:\n"
                                   f"{self.output()[-3000:]}\nptp4l:\n{self.output('master')[-2000:]}")
            time.sleep(0.2)
        return self.deltas()

    def __exit__(self, *exc):
        try:
            for proc, sig in ((self.client, signal.SIGINT), (self.master, signal.SIGTERM)):
                if proc is not None and proc.poll() is None:
                    proc.send_signal(sig)
                    try:
                        proc.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
        finally:
            if self.ns is not None:
                self.ns.delete()
            self.daemon.stop()
            self._client_out.close()
            self._master_out.close()


def magnitudes(deltas):
    """|delta| sorted, and its median and 99th percentile."""
    m = sorted(abs(d) for d in deltas)
    return m, m[len(m) // 2], m[min(len(m) - 1, (len(m) * 99) // 100)]


if __name__ == "__main__":
    with PtpClientRig() as rig:
        got = rig.wait_deltas(int(os.environ.get("PTP_DELTAS", "80")))
        _, median, p99 = magnitudes(got[len(got) // 2:])
        print(f"{len(got)} deltas; the last half's |delta|: median {median} ns, p99 {p99} ns")
