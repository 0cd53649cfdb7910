"""Drive Debian's unmodified dpdk-testpmd interactively with net_cna loaded.

Every integration test talks to the PMD the way a user does: through
testpmd's command line, asserting on what testpmd prints.
"""
import hashlib
import os
import re
import shutil
import stat
import time

import pexpect

TESTPMD = shutil.which("dpdk-testpmd") or "/usr/bin/dpdk-testpmd"
PROMPT = "testpmd> "
# testpmd's default pool is sized for its largest rings on every port; an
# explicit size keeps --no-huge memory small (and ASan runs within it).
APP_DEFAULTS = ["--total-num-mbufs=8192"]


def build_dir():
    return os.environ.get("CNA_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "..", "build"))


def _world_writable_ancestor(path):
    d = os.path.dirname(path)
    while True:
        if os.stat(d).st_mode & stat.S_IWOTH:
            return d
        if d == "/":
            return None
        d = os.path.dirname(d)


def pmd_path(build=None):
    """The PMD as testpmd's -d option gets it.

    EAL refuses a plugin below a world-writable directory (a checkout in /tmp,
    say); such a build's .so is staged in a private directory first.
    """
    so = os.path.abspath(os.path.join(build or build_dir(), "pmd", "net", "librte_net_cna.so"))
    if _world_writable_ancestor(so) is None:
        return so
    stage = os.path.join(os.path.expanduser("~"), ".cache", "cna", "plugins",
                         hashlib.sha1(so.encode()).hexdigest()[:12])
    os.makedirs(stage, mode=0o700, exist_ok=True)
    staged = os.path.join(stage, os.path.basename(so))
    shutil.copy2(so, staged)
    return staged


def eal_args(vdevs, build=None, lcores="0-1", memory_mb=512):
    args = ["-l", lcores, "--no-huge", "-m", str(memory_mb), "--no-pci", "--no-shconf",
            "--log-level=pmd.net.cna*:info", "-d", pmd_path(build)]
    for v in vdevs:
        args += ["--vdev", v]
    return args


class TestPmdError(AssertionError):
    pass


class TestPmd:
    """An interactive testpmd session. Use as a context manager."""

    def __init__(self, vdevs, app_args=(), build=None, timeout=30, env=None, eal_extra=()):
        self.args = eal_args(vdevs, build) + list(eal_extra) + ["--", "-i"] + APP_DEFAULTS + list(app_args)
        self.timeout = timeout
        self.env = dict(os.environ, **(env or {}))
        self.child = None
        self.startup_output = ""

    # -- lifecycle -------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        self.child = pexpect.spawn(TESTPMD, self.args, encoding="utf-8", timeout=self.timeout,
                                   env=self.env, codec_errors="replace")
        idx = self.child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT])
        self.startup_output = self.child.before
        if idx != 0:
            raise TestPmdError("testpmd did not reach its prompt:\n" + self.startup_output)
        return self.startup_output

    def close(self):
        if self.child is None:
            return ""
        out = ""
        if self.child.isalive():
            self.child.sendline("quit")
            self.child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=self.timeout)
            out = self.child.before or ""
        self.child.close(force=True)
        self.exit_status = self.child.exitstatus
        self.signal_status = self.child.signalstatus
        self.child = None
        return out

    def quit(self):
        """Quit testpmd and return what it printed while closing the ports."""
        out = self.close()
        if self.signal_status is not None:
            raise TestPmdError(f"testpmd died with signal {self.signal_status}:\n{out}")
        return out

    # -- commands ----------------------------------------------------------
    def cmd(self, line, timeout=None):
        """Run one command; return its output (without the echo and prompt)."""
        self.child.sendline(line)
        idx = self.child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT], timeout=timeout or self.timeout)
        out = self.child.before.replace("\r\n", "\n")
        if idx != 0:
            raise TestPmdError(f"testpmd stopped answering after {line!r}:\n{out}")
        # drop the echoed command line
        return out.split("\n", 1)[1] if "\n" in out else ""

    def cmd_with_events(self, line, events, timeout=5):
        """Run a command and wait until every regex in events has been printed,
        before or after the prompt (events are asynchronous)."""
        seen = self.cmd(line)
        deadline = time.monotonic() + timeout
        while not all(re.search(e, seen) for e in events):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TestPmdError(f"after {line!r}, missing events {events}:\n{seen}")
            self.child.expect([pexpect.TIMEOUT, r"\n"], timeout=min(left, 0.2))
            seen += (self.child.before or "") + (self.child.after if isinstance(self.child.after, str) else "")
        return seen

    # -- parsed views --------------------------------------------------------
    def port_stats(self, port):
        out = self.cmd(f"show port stats {port}")
        stats = {}
        for key, val in re.findall(r"([A-Za-z-]+):\s+(\d+)", out):
            stats.setdefault(key, int(val))
        if "RX-packets" not in stats:
            raise TestPmdError(f"no stats for port {port}:\n{out}")
        return stats

    def link(self, port):
        out = self.cmd(f"show port info {port}")
        m = re.search(r"Link status:\s*(\w+)", out)
        if not m:
            raise TestPmdError(f"no link status for port {port}:\n{out}")
        speed = re.search(r"Link speed:\s*([\w ]+)", out)
        return m.group(1), (speed.group(1).strip() if speed else None)

    def mempool_in_use(self):
        """Mbufs of testpmd's pools not back in the pool (ring + per-lcore caches)."""
        out = self.cmd("dump_mempool")
        in_use = {}
        for block in re.split(r"mempool <", out)[1:]:
            name = block.split(">", 1)[0]
            size = int(re.search(r"\n\s*size=(\d+)", block).group(1))
            cached = int(re.search(r"total_cache_count=(\d+)", block).group(1))
            common = int(re.search(r"common_pool_count=(\d+)", block).group(1))
            in_use[name] = size - cached - common
        if not in_use:
            raise TestPmdError("dump_mempool printed no pool:\n" + out)
        return in_use

    def run_forwarding(self, seconds, tx_first=True):
        self.cmd("start tx_first" if tx_first else "start")
        time.sleep(seconds)
        return self.cmd("stop")


def forward_stats(stop_output):
    """Per-port forward statistics from the output of testpmd's `stop`."""
    result = {}
    for port, body in re.findall(r"Forward statistics for port (\d+)\s*-+\n(.*?)\n\s*-{10,}", stop_output, re.S):
        vals = dict((k, int(v)) for k, v in re.findall(r"([A-Z]+-[a-z]+):\s+(\d+)", body))
        result[int(port)] = vals
    return result


def run_testpmd_once(vdevs, commands=(), build=None, timeout=30, eal_extra=()):
    """Start testpmd non-interactively expecting it may fail; return (status, output)."""
    args = eal_args(vdevs, build) + list(eal_extra) + ["--", "-i"] + APP_DEFAULTS
    child = pexpect.spawn(TESTPMD, args, encoding="utf-8", timeout=timeout, codec_errors="replace")
    idx = child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT])
    out = child.before
    if idx == 0:
        for c in commands:
            child.sendline(c)
            child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT])
            out += child.before
        child.sendline("quit")
        child.expect([pexpect.EOF, pexpect.TIMEOUT])
        out += child.before or ""
    child.close(force=True)
    return child.exitstatus, child.signalstatus, out
