"""Secondary DPDK processes (Debian's dpdk-proc-info, dpdk-dumpcap) attached
to a testpmd primary that shares its memory under a file prefix.
"""
import os
import re
import signal
import subprocess

import pexpect

from .testpmd import TESTPMD, TestPmdError, hugetlbfs_mounts, meminfo, pmd_path, secondary_eal_args, unique_tag

PROC_INFO = "/usr/bin/dpdk-proc-info"
DUMPCAP = "/usr/bin/dpdk-dumpcap"
HUGEPAGES_NEEDED = 256  # 2 MiB pages: one primary's memory and a secondary's pools


def file_prefix():
    return f"cna{unique_tag()}"


def require_hugepages(test):
    """Fails (does not skip) without hugepages: `./cna test` reserves them."""
    free = meminfo("HugePages_Free")
    mounted = bool(hugetlbfs_mounts())
    if free < HUGEPAGES_NEEDED or not mounted:
        test.fail(f"multi-process tests need {HUGEPAGES_NEEDED} free hugepages and a hugetlbfs mount "
                  f"(free: {free}, mounted: {mounted}); `./cna test` sets them up")


def run(argv, env=None, timeout=30):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))
    return proc.returncode, proc.stdout


def proc_info(prefix, *app_args, build=None):
    """dpdk-proc-info's output; raises when it fails."""
    rc, out = run([PROC_INFO] + secondary_eal_args(prefix, build) + ["--"] + list(app_args))
    if rc != 0:
        raise TestPmdError(f"dpdk-proc-info failed ({rc}):\n{out}")
    return out


def proc_info_stats(out):
    """{port: {name: value}} of `--stats` (NIC statistics blocks)."""
    result = {}
    for port, body in re.findall(r"NIC statistics for port (\d+)\s*#+\n(.*?)#{10,}", out, re.S):
        stats = result.setdefault(int(port), {})
        for key, val in re.findall(r"([A-Za-z]+-[A-Za-z]+):\s+(\d+)", body):
            stats.setdefault(key, int(val))  # the port's, before the per-queue lines
    return result


def proc_info_xstats(out):
    """{port: {name: value}} of `--xstats`."""
    result = {}
    for port, body in re.findall(r"NIC extended statistics for port (\d+)(.*?)(?=NIC extended|\Z)", out, re.S):
        result[int(port)] = {k: int(v) for k, v in re.findall(r"^\s*(\w+):\s+(\d+)\s*$", body, re.M)}
    return result


def _mempool_drivers_linked_by(binary):
    out = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, text=True).stdout
    return re.findall(r"=>\s+(\S*librte_mempool_\w+\.so[.\d]*)", out)


class Dumpcap:
    """dpdk-dumpcap capturing a primary's port into a pcapng file, in the
    background (use as a context manager).

    Stop the primary's forwarding before stop(): on its way out dumpcap asks
    the primary to remove its Rx/Tx callbacks and frees its ring and pool at
    once, and DPDK 22.11 removes a callback without waiting for a forwarding
    lcore that is still inside it; that lcore then copies into hugepages the
    primary no longer maps (a segfault in librte_mbuf).

    dpdk-dumpcap takes no EAL options: the PMD is preloaded instead of -d.
    The mempool drivers testpmd links directly are preloaded too: mempool ops
    are numbered in registration order, per process, and the primary copies
    packets into the secondary's pool by that number; Debian's testpmd links
    librte_mempool_dpaa, which dumpcap otherwise registers later."""

    def __init__(self, prefix, interface, path, build=None, timeout=30):
        preload = [os.environ.get("LD_PRELOAD", "")] + _mempool_drivers_linked_by(TESTPMD) + [pmd_path(build)]
        self.argv = ["--file-prefix", prefix, "-i", interface, "-p", "-w", path]
        self.env = dict(os.environ, LD_PRELOAD=" ".join(p for p in preload if p))
        self.timeout = timeout
        self.child = None
        self.output = ""

    def __enter__(self):
        self.child = pexpect.spawn(DUMPCAP, self.argv, env=self.env, encoding="utf-8", timeout=self.timeout,
                                   codec_errors="replace")
        # printed once the primary has installed the callbacks
        if self.child.expect(["Packets captured:", pexpect.EOF, pexpect.TIMEOUT]) != 0:
            out = self.child.before
            self.__exit__()
            raise TestPmdError(f"dpdk-dumpcap did not start capturing:\n{out}")
        self.output = self.child.before + self.child.after
        return self

    def __exit__(self, *exc):
        if self.child is not None:
            self.child.close(force=True)
            self.child = None

    def wait_for(self, count):
        """Waits until dumpcap has written `count` packets; returns how many it
        counted by then (its counter is rewritten in place with backspaces)."""
        seen = 0
        while seen < count:
            if self.child.expect([r"(\d+) ", pexpect.EOF, pexpect.TIMEOUT]) != 0:
                raise TestPmdError(f"dpdk-dumpcap stopped at {seen} of {count} packets:\n{self.output}")
            self.output += self.child.before + self.child.after
            seen = int(self.child.match.group(1))
        return seen

    def stop(self):
        """Ends the capture like Ctrl-C does; returns everything dumpcap printed."""
        self.child.kill(signal.SIGINT)
        self.child.expect([pexpect.EOF, pexpect.TIMEOUT])
        self.output += self.child.before
        self.child.close()
        status, self.child = self.child.exitstatus, None
        if status != 0:
            raise TestPmdError(f"dpdk-dumpcap failed ({status}):\n{self.output}")
        return self.output


def tshark_frames(path):
    """[(length, src, dst)] of every frame tshark reads from a capture file."""
    rc, out = run(["tshark", "-r", path, "-T", "fields", "-e", "frame.len", "-e", "eth.src", "-e", "eth.dst"])
    if rc != 0:
        raise TestPmdError(f"tshark cannot read {path} ({rc}):\n{out}")
    return [(int(n), s.lower(), d.lower()) for n, s, d in
            (line.split("\t") for line in out.splitlines() if line.count("\t") == 2)]
