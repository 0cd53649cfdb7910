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

PtpCableRig puts hardware stamps at both ends: ptpclient on PF 0 of a
two-port adapter whose ports are joined by a cable, and the project's
ptp_master (examples/ptp_master, the meson-built binary) on PF 1. Steps
given as before_start run once the daemon serves and before either program
starts (a clock put off, the cable's settings through cna-adapterctl):

    def behind(rig):
        rig.adapterctl("ptp-step", str(SLAVE_PORT), "-1000000")
    with PtpCableRig(before_start=[behind]) as rig:
        rounds = rig.wait_rounds(30)    # ptpclient's Round()s, in order
        rig.master_exchanges()          # ptp_master's MasterExchange()s
    rig.master_returncode, rig.output("master")   # kept after the exit
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from .daemon import AdapterDaemon, adapterctl
from .examples import build_example
from .testpmd import Netns, Started, TestPmdError, build_dir, eal_args, unique_tag, wait_for_iface

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
        return wait_for(self.deltas, count, "deltas", timeout,
                        (("ptpclient", self.client), ("ptp4l", self.master)),
                        lambda: f"{self.output()[-3000:]}\nptp4l:\n{self.output('master')[-2000:]}")

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


# -- ptpclient against ptp_master over a cable ---------------------------------

SLAVE_PORT = 0   # the adapter's port (and PF) of ptpclient
MASTER_PORT = 1  # ptp_master's, at the cable's other end

# ptpclient's report of each Delay_Resp: the exchange's four times (the
# slave's before its correction) and the correction it made.
ROUND = re.compile(r"T2 - Slave  Clock\.  (-?\d+)s (-?\d+)ns\s*\n"
                   r"T1 - Master Clock\.  (-?\d+)s (-?\d+)ns\s*\n"
                   r"T3 - Slave  Clock\.  (-?\d+)s (-?\d+)ns\s*\n"
                   r"T4 - Master Clock\.  (-?\d+)s (-?\d+)ns\s*\n"
                   r"Delta between master and slave clocks:(-?\d+)ns")
EXCHANGE = re.compile(r"^seq (\d+) t1 (\d+)\.(\d{9}) t4 (\d+)\.(\d{9})$", re.MULTILINE)
NS_PER_S = 1_000_000_000


@dataclass(frozen=True)
class Round:
    """One of ptpclient's exchanges, in ns: t1 and t4 on the master's clock,
    t2 and t3 on the slave's; delta is what ptpclient stepped its clock by."""
    t1: int
    t2: int
    t3: int
    t4: int
    delta: int

    @property
    def path_delay(self):
        return ((self.t2 - self.t1) + (self.t4 - self.t3)) / 2


@dataclass(frozen=True)
class MasterExchange:
    seq: int
    t1: int
    t4: int


def ptp_master_binary(build=None):
    """The in-tree build of examples/ptp_master."""
    return os.path.join(os.path.abspath(build or build_dir()), "examples", "ptp_master", "ptp_master")


class PtpCableRig(Started):
    """ptpclient on PF 0 and ptp_master on PF 1 of one daemon's adapter, its
    two ports joined by a cable; before_start: callables of the rig."""

    def __init__(self, build=None, log_sync_interval=-3, before_start=()):
        self.build = build
        self.log_sync_interval = log_sync_interval
        self.before_start = list(before_start)
        self.tag = unique_tag()
        # The engine on CPU 1, beside ptp_master (which sleeps between
        # frames); ptpclient's busy lcore has CPU 0 to itself.
        self.daemon = AdapterDaemon(["--ports", "2", "--wire", "cable", "--engine-cpus", "1"], build=build)
        self.client = self.master = None
        self.client_command = self.master_command = None
        self.master_returncode = None
        self._out = {"client": tempfile.TemporaryFile("w+", errors="replace"),
                     "master": tempfile.TemporaryFile("w+", errors="replace")}
        self._kept = {}

    def adapterctl(self, *command):
        return adapterctl(self.daemon.socket, *command, build=self.build)

    def _eal_args(self, pf, lcore):
        vdevs = [f"net_cna0,daemon={self.daemon.socket},pf={pf}"]
        memory = ["--no-huge", "-m", "512", "--file-prefix", f"ptp{self.tag}pf{pf}"]
        return eal_args(vdevs, self.build, lcores=str(lcore), memory=memory)

    def start(self):
        client_binary = build_example("ptpclient", self.build)
        master_binary = ptp_master_binary(self.build)
        if not os.path.exists(master_binary):
            raise TestPmdError(f"{master_binary} missing: build the project (ninja -C <build>)")
        self.daemon.start()
        for step in self.before_start:
            step(self)
        # ptpclient's stdout is a file here: line-buffered, each round shows
        # as it is printed, and none is lost to the signal that ends it.
        stdbuf = ["stdbuf", "-oL"] if shutil.which("stdbuf") else []
        self.client_command = stdbuf + [client_binary] + self._eal_args(SLAVE_PORT, 0) + ["--", "-p", "0x1"]
        self.client = subprocess.Popen(self.client_command, stdout=self._out["client"], stderr=subprocess.STDOUT)
        self.master_command = [master_binary] + self._eal_args(MASTER_PORT, 1) + \
            ["--", "-p", "0x1", "-l", str(self.log_sync_interval)]
        self.master = subprocess.Popen(self.master_command, stdout=self._out["master"], stderr=subprocess.STDOUT)

    def output(self, which="client"):
        if which in self._kept:
            return self._kept[which]
        f = self._out[which]
        f.seek(0)
        return f.read()

    def rounds(self):
        return [Round(t1=int(s1) * NS_PER_S + int(n1), t2=int(s2) * NS_PER_S + int(n2),
                      t3=int(s3) * NS_PER_S + int(n3), t4=int(s4) * NS_PER_S + int(n4), delta=int(delta))
                for s2, n2, s1, n1, s3, n3, s4, n4, delta in ROUND.findall(self.output())]

    def master_exchanges(self):
        return [MasterExchange(seq=int(seq), t1=int(s1) * NS_PER_S + int(n1), t4=int(s4) * NS_PER_S + int(n4))
                for seq, s1, n1, s4, n4 in EXCHANGE.findall(self.output("master"))]

    def _report(self):
        return (f"ptpclient: {' '.join(self.client_command or [])}\n{self.output()[-3000:]}\n"
                f"ptp_master: {' '.join(self.master_command or [])}\n{self.output('master')[-2000:]}\n"
                f"cna-adapterd:\n{self.daemon.output()[-2000:]}")

    def wait_rounds(self, count, timeout=30):
        return wait_for(self.rounds, count, "rounds", timeout,
                        (("ptpclient", self.client), ("ptp_master", self.master),
                         ("cna-adapterd", self.daemon.proc)), self._report)

    def __exit__(self, *exc):
        try:
            # ptp_master stops its port and reports on SIGTERM. ptpclient has
            # no handler: SIGTERM ends it (SIGINT would not when the suite
            # runs as a background job, which ignores it).
            for proc in (self.master, self.client):
                if proc is not None and proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
            if self.master is not None:
                self.master_returncode = self.master.returncode
        finally:
            if self.daemon.proc is not None:
                self.daemon.stop()
            for which, f in self._out.items():
                self._kept[which] = self.output(which)
                f.close()


def wait_for(read, count, what, timeout, processes, report):
    """read() once it holds `count` of what ptpclient printed, failing with
    report() when one of the (name, process) pairs exits or `timeout` s
    pass first."""
    deadline = time.monotonic() + timeout
    while len(read()) < count:
        for name, proc in processes:
            if proc.poll() is not None:
                raise TestPmdError(f"{name} exited ({proc.returncode}):\n{report()}")
        if time.monotonic() > deadline:
            raise TestPmdError(f"ptpclient printed {len(read())} {what} of {count} in {timeout} s:\n{report()}")
        time.sleep(0.2)
    return read()


def magnitudes(deltas):
    """|delta| sorted, and its median and 99th percentile."""
    m = sorted(abs(d) for d in deltas)
    return m, m[len(m) // 2], m[min(len(m) - 1, (len(m) * 99) // 100)]


if __name__ == "__main__":
    with PtpClientRig() as rig:
        got = rig.wait_deltas(int(os.environ.get("PTP_DELTAS", "80")))
        _, median, p99 = magnitudes(got[len(got) // 2:])
        print(f"{len(got)} deltas; the last half's |delta|: median {median} ns, p99 {p99} ns")
