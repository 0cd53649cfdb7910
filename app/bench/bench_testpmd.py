"""What the benchmark's rows share: an interactive testpmd session (Session),
its Rx rate over timed windows, and one process's result (Run) with the
cache-line round trip between the two CPUs around it."""
import os
import re
import statistics
import subprocess
import time

import pexpect

TESTPMD = "/usr/bin/dpdk-testpmd"
PROMPT = "testpmd> "
# Lcore 0 is testpmd's main lcore (idle at the prompt), lcore 1 forwards.
MAIN_CPU = 0
FWD_CPU = 1


class BenchError(Exception):
    """A configuration that could not be measured; the message says why."""


APP_ARGS = ["-i", "--forward-mode=io", "--burst=32", "--nb-cores=1", "--rxd=1024", "--txd=1024",
            "--total-num-mbufs=16384"]
# Two forwarding lcores, one per CPU, each with a queue of each port
# (testpmd's main lcore beside the first, idle at the prompt). The first
# bursts are of many flows (a source address each): one flow would reach
# one Rx queue of a port that steers by RSS, and one lcore would forward
# everything while the other polled empty queues.
TWO_LCORES = "0@0,1@0,2@1"
TWO_LCORE_APP_ARGS = ([a for a in APP_ARGS if a != "--nb-cores=1"] +
                      ["--nb-cores=2", "--rxq=2", "--txq=2", "--txonly-multi-flow"])


class Session:
    """One interactive testpmd."""

    def __init__(self, eal, vdevs, timeout=30, app_args=APP_ARGS):
        args = list(eal)
        for v in vdevs:
            args += ["--vdev", v]
        self.spawn([TESTPMD] + args + ["--"] + list(app_args), timeout)

    def spawn(self, argv, timeout):
        """Runs argv, which ends at testpmd's prompt within `timeout` s."""
        self.child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", timeout=timeout, codec_errors="replace")
        found = self.child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT])
        if found != 0:
            why = "it ended" if found == 1 else f"in {timeout:g} s"
            raise BenchError(f"testpmd did not reach its prompt ({why}): " + last_lines(self.child.before))
        self.startup = self.child.before

    def cmd(self, line, timeout=30):
        self.child.sendline(line)
        found = self.child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT], timeout=timeout)
        out = self.child.before
        if found == 2:
            # An asynchronous message (a link state change, a vhost event)
            # printed in the middle of the prompt splits it: ask for a new one.
            # (A timed-out expect keeps its input: before then holds it all.)
            self.child.sendline("")
            found = self.child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT], timeout=5)
            out = self.child.before
        if found != 0:
            raise BenchError(f"testpmd stopped answering after {line!r}: " + last_lines(out))
        return out.replace("\r\n", "\n")

    def mac(self, port):
        m = re.search(r"MAC address: ([0-9A-Fa-f:]{17})", self.cmd(f"show port info {port}"))
        if not m:
            raise BenchError(f"no MAC address for port {port}")
        return m.group(1).lower()

    def rx_packets(self):
        """(time, {port: RX-packets}); the time is the middle of the command."""
        t0 = time.monotonic()
        out = self.cmd("show port stats all")
        t1 = time.monotonic()
        counts = {int(p): int(n) for p, n in
                  re.findall(r"NIC statistics for port (\d+)\s*#+\s*RX-packets:\s+(\d+)", out)}
        return (t0 + t1) / 2, counts

    def close(self):
        if self.child.isalive():
            self.child.sendline("quit")
            self.child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=15)
        self.child.close(force=True)


def last_lines(text, n=3):
    lines = [l.strip() for l in (text or "").replace("\r", "").split("\n") if l.strip()]
    return " | ".join(lines[-n:]) or "(no output)"


def wait_links_up(session, ports, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        out = session.cmd("show port info all")
        states = re.findall(r"Link status:\s*(\w+)", out)
        if len(states) >= ports and all(s == "up" for s in states):
            return
        if time.monotonic() > deadline:
            raise BenchError(f"links not up after {timeout:.0f} s: {states}")
        time.sleep(0.2)


def window_rate(session, last):
    """(rate in packets/s since `last`, the new reading); last is a reading
    of rx_packets()."""
    t_prev, c_prev = last
    t, c = session.rx_packets()
    return sum(c[p] - c_prev.get(p, 0) for p in c) / (t - t_prev), (t, c)


def window_rates(sessions, args, window=None):
    """Forwarding is under way in every session: the aggregate Rx rate
    (packets/s, all their ports) of each window (args.window s unless
    `window` is given); then forwarding stops."""
    readings = [s.rx_packets() for s in sessions]
    rates = []
    for _ in range(args.windows):
        time.sleep(window or args.window)
        rate = 0
        for i, s in enumerate(sessions):
            r, readings[i] = window_rate(s, readings[i])
            rate += r
        rates.append(rate)
    for s in reversed(sessions):
        s.cmd("stop")
    if statistics.median(rates) == 0:
        raise BenchError("no packet forwarded")
    return rates


class Run:
    """One testpmd process of a row: its windows' rates and the cache-line
    round trip between the two CPUs just before and just after it (ns, or
    None), which net_cna's rate follows (doc/performance.md)."""

    def __init__(self, rates, rtt_before, rtt_after):
        self.rates = rates
        self.rtt = (rtt_before, rtt_after)


def core_latency(args):
    tool = os.path.join(args.build, "app", "bench", "core_latency")
    try:
        out = subprocess.run([tool, str(MAIN_CPU), str(FWD_CPU)], capture_output=True, text=True, timeout=30)
        m = re.match(r"(\d+) ns", out.stdout)
        return int(m.group(1)) if out.returncode == 0 and m else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def all_rates(runs):
    """The windows of every process of a row, as one list."""
    return [rate for run in runs for rate in run.rates]


def print_rows(results, width, digits, per_run):
    """A line per row of `results` ({name: [Run] or why it failed}): the
    median, min and max of its windows' rates (Mpps, `digits` decimals),
    then per_run(run) of each of its processes."""
    for name, runs in results.items():
        if isinstance(runs, str):
            print(f"{name:<{width}}  failed: {runs}")
            continue
        r = all_rates(runs)
        print(f"{name:<{width}}{statistics.median(r) / 1e6:>9.{digits}f}{min(r) / 1e6:>8.{digits}f}"
              f"{max(r) / 1e6:>8.{digits}f}  " + " ".join(per_run(run) for run in runs))
