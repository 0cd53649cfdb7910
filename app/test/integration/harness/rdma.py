"""Two RDMA "hosts": two processes, each with its own embedded adapter
whose port's wire is a TAP interface, both TAPs in a Linux bridge inside a
network namespace of their own. The examples (rdma_pingpong, rdma_perf) run
in it; dumpcap can watch the bridge.

    with BridgedHosts() as hosts:
        server, client = hosts.pingpong(["-s", "4096", "--chk"])
        server, client = hosts.perf(["-T", "read", "-s", "4096", "--check"])
"""
import contextlib
import glob
import os
import re
import signal
import subprocess
import time

from harness.testpmd import Netns, TestPmdError, build_dir, unique_tag

EAL = ["--no-huge", "-m", "256", "--no-pci", "--no-shconf", "--no-telemetry"]
# ibv_ud_pingpong puts a colon, not a comma, before its local GID.
LOCAL = re.compile(r"local address:\s+LID 0x([0-9a-f]+), QPN 0x([0-9a-f]+), PSN 0x([0-9a-f]+)[,:] GID (\S+)")
REMOTE = re.compile(r"remote address: LID 0x([0-9a-f]+), QPN 0x([0-9a-f]+), PSN 0x([0-9a-f]+), GID (\S+)")
RESULT = re.compile(r"(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter")


def example(name, build=None):
    return os.path.join(build or build_dir(), "examples", name, name)


class BridgedHosts:
    def __init__(self, build=None, timeout=60):
        self.build, self.timeout = build, timeout
        self.tag = unique_tag()
        self.ns = None
        self.capture = None

    def __enter__(self):
        self.ns = Netns(self.tag)
        self.ns.run("ip", "link", "add", "br0", "type", "bridge")
        self.ns.run("ip", "link", "set", "br0", "up")
        return self

    def __exit__(self, *exc):
        self.stop_capture()
        if self.ns:
            self.ns.delete()

    def start_capture(self, path):
        """dumpcap on the bridge, writing `path` until stop_capture()."""
        self.capture = self.ns.popen("dumpcap", "-q", "-i", "br0", "-w", path, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop_capture(self):
        if self.capture:
            time.sleep(0.3)
            self.capture.terminate()
            self.capture.wait(timeout=10)
            self.capture = None

    def host(self, role, lcore, args, server=None, vdev_extra="", program="rdma_pingpong"):
        """One example process on a TAP that is on the bridge before it
        starts: the process sends as soon as its link is up, and a frame sent
        before the TAP joined would be lost to the RC retries' budget."""
        ifname = f"r{self.tag}{role}"[:15]
        if self.ns.run("ip", "link", "show", ifname, check=False).returncode != 0:
            self.ns.run("ip", "tuntap", "add", "mode", "tap", "name", ifname)
            self.ns.run("ip", "link", "set", ifname, "master", "br0", "up")
        argv = [example(program, self.build), "-l", str(lcore), *EAL, "--file-prefix", f"rp{self.tag}{role}",
                "--vdev", f"net_cna0,adapter=rp{self.tag}{role},wire=tap:{ifname}{vdev_extra}", "--", *args]
        if server:
            argv.append(server)
        return self.ns.popen(*argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)

    def tcp_port(self):
        return str(18515 + int(self.tag.split("x")[1]) % 1000)

    def pingpong(self, args, gid=0, server_vdev="", client_vdev=""):
        """rdma_pingpong server and client with the same options, GID index
        `gid`; their outputs (server's, client's). Raises if either fails."""
        return self.pair("rdma_pingpong", ["-p", self.tcp_port(), "-g", str(gid), *args], server_vdev, client_vdev)

    def perf(self, args, gid=0, server_vdev="", client_vdev=""):
        """rdma_perf server and client, as pingpong()."""
        return self.pair("rdma_perf", ["-p", self.tcp_port(), "-x", str(gid), *args], server_vdev, client_vdev)

    def start_pair(self, program, args, server_vdev="", client_vdev=""):
        """The server, then the client once the server listens: (server, client)."""
        server = self.host("s", 0, args, vdev_extra=server_vdev, program=program)
        try:
            self.wait_listening(server)
            client = self.host("c", 1, args, server="127.0.0.1", vdev_extra=client_vdev, program=program)
        except BaseException:
            kill_all(server)  # a server left waiting would spin on its lcore for good
            raise
        return server, client

    def wait_listening(self, server):
        """Until the server listens on the TCP port (the client tries once,
        as ibv_rc_pingpong's does): a slow start, under ASan say, is no
        failure."""
        deadline = time.monotonic() + self.timeout
        while f":{self.tcp_port()} " not in self.ns.run("ss", "-ltnH").stdout:
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the server does not listen on port {self.tcp_port()}")
            time.sleep(0.05)

    def pair(self, program, args, server_vdev="", client_vdev=""):
        return self.finish(program, *self.start_pair(program, args, server_vdev, client_vdev))

    def finish(self, program, server, client):
        """Both processes' outputs (server's, client's); raises, with both,
        if either fails."""
        outputs, failures = [], []
        for role, proc in (("server", server), ("client", client)):
            try:
                out, _ = proc.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                out = kill_all(proc)
                failures.append(f"{role} timed out")
            if proc.returncode != 0 and len(failures) < len(outputs) + 1:
                failures.append(f"{role} failed ({proc.returncode})")
            outputs.append(out)
        if failures:
            raise TestPmdError(f"{program}: {', '.join(failures)}\n--- server:\n{outputs[0]}\n--- client:\n{outputs[1]}")
        return outputs[0], outputs[1]


def descendants(pid):
    """The processes `pid` started, and theirs, as /proc has them now."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in glob.glob(f"/proc/{parent}/task/*/children"):
            try:
                with open(task) as f:
                    children = [int(c) for c in f.read().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def kill_all(proc):
    """end_all(proc); what it printed."""
    end_all(proc)
    return proc.communicate()[0]


def end_all(proc):
    """Ends a host's process and every process it started (it leads a
    session of its own, whose processes would hold its output open and
    outlive the test; fio's job processes start sessions of their own,
    so its descendants are ended one by one too). For a thread other than
    the one reading its output."""
    family = [proc.pid, *descendants(proc.pid)]
    for pid in family:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)  # stopped, none starts another
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in family:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def addresses(output):
    """The (local, remote) (LID, QPN, PSN, GID) rdma_pingpong printed."""
    local, remote = LOCAL.search(output), REMOTE.search(output)
    if not local or not remote:
        raise TestPmdError(f"no address lines in:\n{output}")
    def parse(m):
        return int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(4)
    return parse(local), parse(remote)


LOCAL_PERF = re.compile(r"local address: LID 0x[0-9a-f]+ QPN 0x([0-9a-f]+) PSN 0x([0-9a-f]+)")
REMOTE_PERF = re.compile(r"remote address: LID 0x[0-9a-f]+ QPN 0x([0-9a-f]+) PSN 0x([0-9a-f]+)")
BW_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
LAT_ROW = re.compile(r"^ (\d+)\s+(\d+)(\s+[\d.]+){7}\s*$", re.M)


def perf_rows(output):
    """{size: iterations} of rdma_perf's result rows (bandwidth or latency)."""
    return {int(m.group(1)): int(m.group(2)) for r in (BW_ROW, LAT_ROW) for m in r.finditer(output)}


def perf_counters(output, which="port"):
    """rdma_perf --counters: {name: value} of its `port` or `qp` line."""
    m = re.search(rf"^ {which} counters: (.*)$", output, re.M)
    if not m:
        raise TestPmdError(f"no {which} counters in:\n{output}")
    words = m.group(1).split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}
