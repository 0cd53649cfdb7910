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
# testpmd writes its prompt one character at a time, and its interrupt
# thread prints whole lines (link events, the PMD's log) whenever they
# happen: a line can land inside the prompt ("tes" "Port 0: link state
# change event\n" "tpmd> "). The prompt is matched with such lines between
# its characters, each gap captured so no event is lost from the output.
PROMPT = "".join(("" if i == 0 else r"((?:[^\n]*\n)*?)") + re.escape(c) for i, c in enumerate("testpmd> "))


def _interleaved(child):
    """The lines a matched prompt had between its characters."""
    return "".join(g or "" for g in child.match.groups())
# testpmd's default pool is sized for its largest rings on every port; an
# explicit size keeps --no-huge memory small (and ASan runs within it).
APP_DEFAULTS = ["--total-num-mbufs=8192"]


def build_dir():
    return os.environ.get("CNA_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "build"))


def daemon_path(build=None):
    return os.path.join(build or build_dir(), "transport", "cna-adapterd")


def testpmd_env(build=None, env=None):
    """testpmd's environment: the caller's, with the cna-adapterd a port
    starts on demand (net_cna finds it beside the PMD, which is not where a
    staged copy of the PMD is)."""
    return dict(os.environ, CNA_ADAPTERD=daemon_path(build), **(env or {}))


def eal_driver_dir():
    """Where the installed DPDK's EAL loads drivers from by default (its
    build configuration's RTE_EAL_PMD_PATH), and where an install puts net_cna."""
    with open("/usr/include/x86_64-linux-gnu/dpdk/rte_build_config.h") as f:
        return re.search(r'#define RTE_EAL_PMD_PATH "([^"]+)"', f.read()).group(1)


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
    # A running primary has the staged file mapped: never write into it. A
    # new build goes to a new file renamed over the old name (a new inode).
    src = os.stat(so)
    try:
        dst = os.stat(staged)
        if (dst.st_size, dst.st_mtime_ns) == (src.st_size, src.st_mtime_ns):
            return staged
    except FileNotFoundError:
        pass
    tmp = staged + f".{os.getpid()}.tmp"
    shutil.copy2(so, tmp)
    os.replace(tmp, staged)
    return staged


def eal_args(vdevs, build=None, lcores="0-1", memory_mb=512, file_prefix=None, memory=None, plugin=True,
             log_level="pmd.net.cna*:info"):
    """EAL arguments of a primary. By default its memory and runtime state are
    private (--no-huge, --no-shconf); with file_prefix they are shared under
    that prefix, on hugepages, so secondary processes can attach. `memory`
    (EAL options) replaces both. lcores: EAL's --lcores (a secondary maps its
    own lcore ids onto the CPUs: lcore ids index shared per-lcore state such
    as mempool caches, so processes must not share one). plugin=False: no
    -d, the PMD an installed package put in DPDK's driver directory.
    log_level: EAL's --log-level for net_cna's types (a driver loaded with -d
    takes the first of several that name its type)."""
    if memory is None:
        memory = ["--file-prefix", file_prefix] if file_prefix else ["--no-huge", "-m", str(memory_mb), "--no-shconf"]
    args = ["--lcores", lcores] + memory + ["--no-pci", f"--log-level={log_level}"]
    if plugin:
        args += ["-d", pmd_path(build)]
    # e.g. --force-max-simd-bitwidth=64: the suite on net_cna's scalar fastpath
    args += os.environ.get("CNA_TESTPMD_EAL_EXTRA", "").split()
    for v in vdevs:
        args += ["--vdev", v]
    return args


def secondary_eal_args(file_prefix, build=None):
    """EAL arguments of a secondary process (dpdk-proc-info, dpdk-dumpcap)
    attaching to the primary started with file_prefix: it loads the PMD too."""
    return ["--file-prefix", file_prefix, "--no-pci", "--log-level=pmd.net.cna*:info", "-d", pmd_path(build)]


class TestPmdError(AssertionError):
    pass


def meminfo(key):
    """A /proc/meminfo figure (kB, or pages for the HugePages_ ones)."""
    with open("/proc/meminfo") as f:
        return int(re.search(rf"^{key}:\s+(\d+)", f.read(), re.M).group(1))


def hugetlbfs_mounts():
    with open("/proc/mounts") as f:
        return [line.split()[1] for line in f if line.split()[2] == "hugetlbfs"]


def remove_hugepage_files(file_prefix):
    """Removes what a primary started with --file-prefix leaves once it has
    exited: EAL keeps its hugepage files (secondaries map them) and does
    not delete them on exit when its memory was preallocated (-m), so
    every test's unique prefix would otherwise hold its pages for good."""
    for mount in hugetlbfs_mounts():
        for name in os.listdir(mount):
            if name.startswith(file_prefix + "map_"):
                os.unlink(os.path.join(mount, name))
    shutil.rmtree(os.path.join("/var/run/dpdk", file_prefix), ignore_errors=True)


class TestPmd:
    """An interactive testpmd session. Use as a context manager."""

    def __init__(self, vdevs, app_args=(), build=None, timeout=30, env=None, eal_extra=(), file_prefix=None,
                 memory=None, lcores="0-1", plugin=True):
        self.args = (eal_args(vdevs, build, lcores=lcores, file_prefix=file_prefix, memory=memory, plugin=plugin)
                     + list(eal_extra)
                     + ["--", "-i"] + APP_DEFAULTS + list(app_args))
        self.timeout = timeout
        self.env = testpmd_env(build, env)
        self.child = None
        self.startup_output = ""
        eal = self.args[:self.args.index("--")]
        # the primary's hugepage files, removed when it is gone
        primary = "--proc-type=secondary" not in eal
        self.file_prefix = eal[eal.index("--file-prefix") + 1] if primary and "--file-prefix" in eal else None

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
        self.startup_output = self.child.before + (_interleaved(self.child) if idx == 0 else "")
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
        if self.file_prefix is not None:
            remove_hugepage_files(self.file_prefix)
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
        out = (self.child.before + (_interleaved(self.child) if idx == 0 else "")).replace("\r\n", "\n")
        if idx != 0:
            raise TestPmdError(f"testpmd stopped answering after {line!r}:\n{out}")
        # drop the echoed command line; output printed asynchronously before it
        # (testpmd's verbose packet dumps, events) is kept
        first, sep, rest = out.partition("\n")
        if first.strip() == line.strip() or not sep:
            return rest
        lines = out.split("\n")
        for i, ln in enumerate(lines):
            if ln.strip() == line.strip():
                return "\n".join(lines[:i] + lines[i + 1:])
        return rest

    def collect(self, pattern, count=1, timeout=3.0, settle=0.1):
        """Read what testpmd prints on its own (verbose packet dumps, events)
        until `pattern` occurred `count` times, then for `settle` seconds more
        (so extra occurrences show up); returns the text (possibly short of
        count after timeout: the caller asserts)."""
        text = ""
        deadline = time.monotonic() + timeout
        while True:
            done = len(re.findall(pattern, text)) >= count
            left = deadline - time.monotonic()
            if left <= 0:
                break
            wait = min(left, settle) if done else min(left, 0.2)
            idx = self.child.expect([pexpect.TIMEOUT, pexpect.EOF, r"\n"], timeout=wait)
            text += (self.child.before or "") + (self.child.after if idx == 2 else "")
            if idx == 1:
                raise TestPmdError("testpmd exited:\n" + text)
            if idx == 0 and done:
                break
        return text.replace("\r\n", "\n")

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

    def wait_link_up(self, port=0, timeout=5.0):
        deadline = time.monotonic() + timeout
        while self.link(port)[0] != "up":
            if time.monotonic() > deadline:
                raise TestPmdError(f"port {port}'s link did not come up within {timeout} s")
            time.sleep(0.05)

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


def run_testpmd_once(vdevs, commands=(), build=None, timeout=30, eal_extra=(), env=None, file_prefix=None,
                     log_level="pmd.net.cna*:info"):
    """Start testpmd non-interactively expecting it may fail; return (exit
    status, signal, output). With file_prefix it runs on hugepages and leaves
    its files for the caller to look at (remove_hugepage_files)."""
    args = eal_args(vdevs, build, file_prefix=file_prefix, log_level=log_level) + list(eal_extra) + ["--", "-i"] + APP_DEFAULTS
    child = pexpect.spawn(TESTPMD, args, encoding="utf-8", timeout=timeout, codec_errors="replace",
                          env=testpmd_env(build, env))
    idx = child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT])
    out = child.before + (_interleaved(child) if idx == 0 else "")
    if idx == 0:
        for c in commands:
            child.sendline(c)
            idx = child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT])
            out += child.before + (_interleaved(child) if idx == 0 else "")
        child.sendline("quit")
        child.expect([pexpect.EOF, pexpect.TIMEOUT])
        out += child.before or ""
    child.close(force=True)
    return child.exitstatus, child.signalstatus, out


# -- TAP wires in network namespaces ------------------------------------------
# A port with `wire=tap:<ifname>` has the kernel as its link partner. The tests
# move each TAP interface, once the adapter created it, into a network
# namespace of their own, so frames are sent and captured there without
# touching the host's networking (nsio.py does the raw I/O in the namespace).

import itertools  # noqa: E402
import json  # noqa: E402
import select  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

NSIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nsio.py")
PYTHON = "/usr/bin/python3"  # Debian's python (scapy, pexpect) also inside namespaces
KILL_WAIT = 10  # seconds a killed tool may take to end
_unique = itertools.count(1)


# The sanitizer runtimes the suite preloads for the code under test
# (testpmd with the PMD, the examples, the daemon): the system's tools the
# harness runs (ip, sysctl, ps, its own Python helpers) are not under test.
SANITIZER_ENV = ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")


def tool_env():
    """The environment for a tool of the system: the caller's, without the
    sanitizer runtimes."""
    return {k: v for k, v in os.environ.items() if k not in SANITIZER_ENV}


def sh(*argv, check=True, timeout=20, input=None):
    """Run a tool of the system; on failure raise with its output. One that
    outlives `timeout` is killed and raises subprocess.TimeoutExpired; one
    that a SIGKILL does not end either (stuck in the kernel) is left behind
    with a report of where the kernel holds it, rather than waited for."""
    proc = subprocess.Popen(argv, stdin=None if input is None else subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=tool_env())
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            out, err = proc.communicate(timeout=KILL_WAIT)
        except subprocess.TimeoutExpired:
            raise TestPmdError(f"{' '.join(argv)} did not end in {timeout} s, nor {KILL_WAIT} s after "
                               f"SIGKILL; the machine then:\n{machine_snapshot()}") from None
        raise subprocess.TimeoutExpired(argv, timeout, out, err) from None
    if check and proc.returncode != 0:
        raise TestPmdError(f"{' '.join(argv)} failed ({proc.returncode}):\n{out}{err}")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def machine_snapshot():
    """The load, the busiest threads, the kernel stacks of threads that
    cannot be interrupted (state D: what a kill would not end) and what the
    kernel last logged, for a report of something that took far longer than
    it should."""
    with open("/proc/loadavg") as f:
        load = f.read().strip()
    ps = subprocess.run(["ps", "-eLo", "pid,tid,psr,pcpu,stat,wchan:20,comm", "--sort=-pcpu"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=10,
                        env=tool_env()).stdout.splitlines()
    report = [f"load average {load}", *ps[:16]]
    for line in ps[1:]:
        fields = line.split()
        if len(fields) > 4 and fields[4].startswith("D"):
            try:
                with open(f"/proc/{fields[0]}/task/{fields[1]}/stack") as f:
                    report += [f"kernel stack of {fields[1]} ({fields[-1]}):", f.read().rstrip()]
            except OSError:
                pass
    dmesg = subprocess.run(["dmesg", "--level=err,warn"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=10, env=tool_env()).stdout.splitlines()
    return "\n".join(report + ["the kernel's last warnings:", *dmesg[-12:]])


def unique_tag():
    """Short, unique per process and call: TAP names have at most 15 characters."""
    return f"{os.getpid() % 100000}x{next(_unique)}"


def wait_for_iface(name, timeout=10.0, netns=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if netns is None:
            if os.path.exists(f"/sys/class/net/{name}"):
                return
        elif sh("ip", "-n", netns, "link", "show", name, check=False).returncode == 0:
            return
        time.sleep(0.05)
    raise TestPmdError(f"interface {name} did not appear within {timeout} s")


class Started:
    """A context manager that runs start() on entry and, when it fails half-way,
    __exit__() (which copes with whatever start() left) before raising."""

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.__exit__()
            raise
        return self


class Netns:
    """A network namespace, created on construction, removed by delete().

    IPv6 is disabled in it, so the kernel sends nothing on its own (no router
    solicitations, MLD or DAD) and frame counts stay exact."""

    def __init__(self, tag=None):
        self.name = f"cna-{tag or unique_tag()}"
        self._nsio = self._nsio_log = None
        sh("ip", "netns", "add", self.name)
        for conf in ("all", "default"):
            self.run("sysctl", "-qw", f"net.ipv6.conf.{conf}.disable_ipv6=1")
        self.run("ip", "link", "set", "lo", "up")

    def run(self, *argv, check=True, timeout=20, input=None):
        return sh("ip", "netns", "exec", self.name, *argv, check=check, timeout=timeout, input=input)

    def popen(self, *argv, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.name, *argv], **kw)

    def adopt(self, ifname, mtu=None, mac=None, addr=None, up=True):
        """Move an interface of the host namespace here and configure it."""
        sh("ip", "link", "set", ifname, "netns", self.name)
        if mac:
            self.run("ip", "link", "set", ifname, "address", mac)
        if mtu:
            self.run("ip", "link", "set", ifname, "mtu", str(mtu))
        if addr:
            self.run("ip", "addr", "add", addr, "dev", ifname)
        if up:
            self.run("ip", "link", "set", ifname, "up")

    def mac(self, ifname):
        out = self.run("ip", "-j", "link", "show", ifname).stdout
        return json.loads(out)[0]["address"]

    def bind(self, *ifnames):
        """Have nsio open its sockets on these interfaces now, while the
        CPUs are free (see nsio.py: a bind waits for an RCU grace period)."""
        self._ask({"bind": list(ifnames)}, timeout=60)

    def io(self, send=(), capture=(), expect=None, timeout=1.0, linger=0.2, gap=0):
        """Send raw frames (bytes) [(ifname, frame)] and capture what the
        kernel receives on `capture`; returns [(ifname, bytes)] in order."""
        req = {"send": [[i, bytes(f).hex()] for i, f in send], "capture": list(capture),
               "expect": expect, "timeout": timeout, "linger": linger, "gap": gap}
        answer = self._ask(req, timeout=timeout + 60)
        return [(i, bytes.fromhex(h)) for i, h in answer["captured"]]

    def _ask(self, req, timeout):
        """One request to this namespace's nsio server, started on first use."""
        if self._nsio is None:
            self._nsio_log = tempfile.TemporaryFile("w+")
            self._nsio = self.popen(PYTHON, NSIO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=self._nsio_log, text=True, env=tool_env())
        try:
            self._nsio.stdin.write(json.dumps(req) + "\n")
            self._nsio.stdin.flush()
        except BrokenPipeError:
            pass  # it ended: reported below with its steps
        if not select.select([self._nsio.stdout], [], [], timeout)[0]:
            snapshot = machine_snapshot()
            # its steps last: a recap of the failure keeps a traceback's tail
            raise TestPmdError(f"nsio.py did not answer in {timeout} s; the machine then:\n{snapshot}\n"
                               f"its steps:\n{self._stop_nsio()}")
        line = self._nsio.stdout.readline()
        if not line:
            raise TestPmdError(f"nsio.py ended ({self._nsio.wait()}); its steps:\n{self._stop_nsio()}")
        return json.loads(line)

    def _stop_nsio(self):
        """End the nsio server (its input closed, then a SIGKILL, each waited
        for a bounded time) and return what it logged."""
        proc, log, self._nsio, self._nsio_log = self._nsio, self._nsio_log, None, None
        if proc is None:
            return ""
        for end in (proc.stdin.close, proc.kill):
            try:
                end()
                proc.wait(timeout=KILL_WAIT)
                break
            except (OSError, subprocess.TimeoutExpired):
                continue
        else:
            log.write(f"nsio.py (pid {proc.pid}) did not end after SIGKILL: left behind\n")
        proc.stdout.close()
        log.seek(0)
        steps = log.read()
        log.close()
        return steps

    def delete(self):
        self._stop_nsio()
        sh("ip", "netns", "del", self.name, check=False)


def tap_vdevs(ifnames, adapter=None, extra=""):
    """vdev strings for len(ifnames) ports of one adapter, port p's wire being
    the TAP interface ifnames[p]."""
    if len(ifnames) == 1:
        return [f"net_cna0,wire=tap:{ifnames[0]}{extra}"]
    adapter = adapter or f"t{unique_tag()}"
    vdevs = []
    for p, ifname in enumerate(ifnames):
        head = f"net_cna{p},adapter={adapter}" + (f",ports={len(ifnames)}" if p == 0 else "")
        vdevs.append(f"{head},port={p},wire=tap:{ifname}{extra}")
    return vdevs


class TapRig:
    """testpmd on `nports` net_cna ports of one adapter whose wires are TAP
    interfaces, all moved into one fresh network namespace (up, IPv6 off,
    MTU `kernel_mtu` so jumbo frames can be sent and received there).

        with TapRig(2, app_args=["--rxq=4"]) as rig:
            rig.tp.cmd(...)                       # the TestPmd session
            rig.io(send=[(0, frame)], capture=[1], expect=1)

    Ports are named by their index everywhere; rig.ifname[p] is the kernel's
    name for port p's wire. Leaving the block quits testpmd and removes the
    namespace, also when the test failed."""

    def __init__(self, nports=1, app_args=(), kernel_mtu=9700, build=None, timeout=30, eal_extra=(),
                 vdev_extra="", lcores="0-1"):
        tag = unique_tag()
        self.ifname = [f"cnt{tag}p{p}"[:15] for p in range(nports)]
        self.vdevs = tap_vdevs(self.ifname, extra=vdev_extra)
        # small rings: a dozen queues of the default 1024 would empty the pool
        self.app_args, self.kernel_mtu = ["--rxd=256", "--txd=256"] + list(app_args), kernel_mtu
        self.build, self.timeout, self.eal_extra, self.lcores = build, timeout, list(eal_extra), lcores
        self.ns = None
        self.tp = None

    def __enter__(self):
        try:
            self.ns = Netns()
            self.tp = TestPmd(self.vdevs, app_args=self.app_args, build=self.build, timeout=self.timeout,
                              eal_extra=self.eal_extra, lcores=self.lcores)
            self.tp.start()
            for ifname in self.ifname:
                wait_for_iface(ifname)
                self.ns.adopt(ifname, mtu=self.kernel_mtu)
            self.ns.bind(*self.ifname)
            self.kernel_mac = [self.ns.mac(i) for i in self.ifname]
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        try:
            if self.tp is not None:
                self.tp.close()
        finally:
            if self.ns is not None:
                self.ns.delete()

    def start_rx(self, fwd="rxonly"):
        """Print every received packet, forward with `fwd`, start forwarding."""
        self.tp.cmd("set verbose 1")
        self.tp.cmd(f"set fwd {fwd}")
        self.tp.cmd("start")

    def rx(self, port, frames, count=None, timeout=3.0, settle=0.3):
        """Send frames from the kernel side of `port`; return the packets
        testpmd's verbose output shows (parse_verbose), waiting for `count`
        of them (default: as many as frames were sent)."""
        self.io(send=[(port, f) for f in frames])
        text = self.tp.collect(r"ol_flags:", len(frames) if count is None else count,
                               timeout=timeout, settle=settle)
        return parse_verbose(text)

    def io(self, send=(), capture=(), **kw):
        """Like Netns.io with ports instead of interface names."""
        got = self.ns.io(send=[(self.ifname[p], f) for p, f in send],
                         capture=[self.ifname[p] for p in capture], **kw)
        port_of = {n: p for p, n in enumerate(self.ifname)}
        return [(port_of[i], f) for i, f in got]


# -- what testpmd prints -------------------------------------------------------

def port_mac(tp, port):
    m = re.search(r"MAC address: ([0-9A-Fa-f:]{17})", tp.cmd(f"show port info {port}"))
    if not m:
        raise TestPmdError(f"no MAC address for port {port}")
    return m.group(1).lower()


def parse_verbose(text):
    """Received packets from testpmd's `set verbose 1` output, one dict each:
    port, queue, src, dst, type, length, nb_segs, rss_hash, rss_queue,
    hw_ptype, sw_ptype (lists of names), vlan_tci, ol_flags (set of names)."""
    pkts = []
    for m in re.finditer(r"port (\d+)/queue (\d+): received \d+ packets\n(.*?)(?=\nport \d+/queue \d+: |\Z)",
                         text.replace("\r\n", "\n"), re.S):
        port, queue, body = int(m.group(1)), int(m.group(2)), m.group(3)
        for pm in re.finditer(r"  src=(\S+) - dst=(\S+)(.*?)\n\s+ol_flags: ([^\n]*)", body, re.S):
            fields = pm.group(3)
            p = {"port": port, "queue": queue, "src": pm.group(1).lower(), "dst": pm.group(2).lower(),
                 "ol_flags": set(pm.group(4).split()), "text": pm.group(0)}
            for key, rx, conv in (("type", r"type=(0x[0-9a-f]+)", lambda v: int(v, 16)),
                                  ("length", r"length=(\d+)", int),
                                  ("nb_segs", r"nb_segs=(\d+)", int),
                                  ("rss_hash", r"RSS hash=(0x[0-9a-f]+)", lambda v: int(v, 16)),
                                  ("rss_queue", r"RSS queue=(0x[0-9a-f]+)", lambda v: int(v, 16)),
                                  ("vlan_tci", r"VLAN tci=(0x[0-9a-f]+)", lambda v: int(v, 16)),
                                  ("hw_ptype", r"hw ptype: ([A-Z0-9_ ]*?)\s+-", str.split),
                                  ("sw_ptype", r"sw ptype: ([A-Z0-9_ ]*?)\s+-", str.split)):
                v = re.search(rx, fields)
                p[key] = conv(v.group(1)) if v else None
            pkts.append(p)
    return pkts


def xstats(tp, port):
    out = tp.cmd(f"show port xstats {port}")
    vals = dict((k, int(v)) for k, v in re.findall(r"^\s*(\w+):\s+(\d+)\s*$", out, re.M))
    if not vals:
        raise TestPmdError(f"no xstats for port {port}:\n{out}")
    return vals


def rss_key(tp, port):
    out = tp.cmd(f"show port {port} rss-hash key")
    m = re.search(r"RSS key:\s*\n?\s*([0-9A-Fa-f]+)", out)
    if not m:
        raise TestPmdError(f"no RSS key for port {port}:\n{out}")
    return bytes.fromhex(m.group(1)), out


def rss_reta(tp, port, size=128):
    masks = ",".join(["0xffffffffffffffff"] * (size // 64))
    out = tp.cmd(f"show port {port} rss reta {size} ({masks})")
    reta = {int(i): int(q) for i, q in re.findall(r"hash index=(\d+),\s*queue=(\d+)", out)}
    if len(reta) != size:
        raise TestPmdError(f"RETA of port {port} has {len(reta)} of {size} entries:\n{out}")
    return [reta[i] for i in range(size)]


def set_reta(tp, port, entries, chunk=12):
    """Update RETA entries {index: queue} (a testpmd string token holds 128
    characters: in chunks); returns testpmd's output."""
    items = sorted(entries.items())
    out = ""
    for i in range(0, len(items), chunk):
        out += tp.cmd(f"port config {port} rss reta " + ",".join(f"({k},{q})" for k, q in items[i:i + chunk]))
    return out


def toeplitz(key, data):
    """The Toeplitz hash of data (bytes) under key (bytes), as RSS computes it."""
    k, klen, h = int.from_bytes(key, "big"), len(key) * 8, 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                h ^= (k >> (klen - 32 - (i * 8 + b))) & 0xFFFFFFFF
    return h


# -- frames ---------------------------------------------------------------------

def frame(dst, src="02:00:00:00:0a:01", ip=4, l4="udp", size=None, payload=b"", vlan=None,
          sport=1024, dport=2048, saddr=None, daddr=None, ip_kw=None, l4_kw=None):
    """An Ethernet frame (a scapy packet): IPv4 or IPv6 (ip=4|6|None for a
    non-IP frame), l4 'udp', 'tcp', 'icmp' or None, an optional 802.1Q tag;
    size is the IP packet's length (payload padded to reach it)."""
    from scapy.all import ICMP, IP, TCP, UDP, Dot1Q, Ether, IPv6, ICMPv6EchoRequest, Raw
    pkt = Ether(dst=dst, src=src)
    if vlan is not None:
        pkt = pkt / Dot1Q(vlan=vlan)
    if ip is None:
        return pkt / Raw(payload or bytes(46))
    if ip == 4:
        l3 = IP(src=saddr or "192.0.2.1", dst=daddr or "192.0.2.2", **(ip_kw or {}))
    else:
        l3 = IPv6(src=saddr or "2001:db8::1", dst=daddr or "2001:db8::2", **(ip_kw or {}))
    if l4 == "udp":
        l3 = l3 / UDP(sport=sport, dport=dport, **(l4_kw or {}))
    elif l4 == "tcp":
        l3 = l3 / TCP(sport=sport, dport=dport, **(l4_kw or {}))
    elif l4 == "icmp":
        l3 = l3 / (ICMP() if ip == 4 else ICMPv6EchoRequest())
    if size is not None:
        pad = size - len(l3) - len(payload)
        if pad < 0:
            raise ValueError(f"IP packet of {size} bytes cannot hold the headers and payload")
        payload = payload + bytes((i * 7) & 0xFF for i in range(pad))
    return pkt / l3 / Raw(payload) if payload else pkt / l3


def corrupt_checksum(pkt, layer):
    """pkt (built by scapy) with the checksum of `layer` ('ip', 'udp', 'tcp')
    made wrong (bytes); the other checksums stay right."""
    from scapy.all import IP, TCP, UDP, Ether
    p = Ether(bytes(pkt))
    cls = {"ip": IP, "udp": UDP, "tcp": TCP}[layer]
    good = p[cls].chksum
    p[cls].chksum = good ^ 0x5A5A
    return bytes(p)


def checksums_ok(raw):
    """(ip_ok, l4_ok) of a captured frame: each None when absent; the values
    are recomputed by scapy and compared with the ones on the wire."""
    from scapy.all import IP, TCP, UDP, Ether
    p = Ether(raw)
    ip_ok = l4_ok = None
    if IP in p:
        ip_ok = Ether(bytes(_reset(p, IP)))[IP].chksum == p[IP].chksum
    for cls in (UDP, TCP):
        if cls in p:
            l4_ok = Ether(bytes(_reset(p, cls)))[cls].chksum == p[cls].chksum
    return ip_ok, l4_ok


def _reset(p, cls):
    from scapy.all import Ether
    q = Ether(bytes(p))
    q[cls].chksum = None
    return q
