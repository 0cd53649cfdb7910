"""Linux's Soft-RoCE (rdma_rxe) as an independent RoCE peer: ../shared/rxekit
boots Debian's kernel in a QEMU guest attached to a bridge in a network
namespace, where rdma_pingpong on a cna port, or a verbs application on cna's
provider (its TAP in the same bridge), meets Debian's ibv_rc_pingpong or
perftest on rxe.

    with RxePeer() as peer:
        out = peer.run("server", commands)     # the guest runs `commands`
        ...
"""
import glob
import os
import subprocess
import threading
import time

from harness.rdma import EAL, end_all, example, kill_all
from harness.testpmd import TestPmdError, sh, unique_tag
from harness.verbs import rdma_run_path

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
RXEKIT = os.environ.get("CNA_RXEKIT", os.path.join(os.path.dirname(ROOT), "shared", "rxekit"))
RXEKIT_WORK = os.environ.get("RXEKIT_WORK", os.path.expanduser("~/.cache/rxekit"))
BRIDGE_IP = "192.0.2.1"   # the namespace's kernel: TCP for the connection exchange
CNA_IP = "192.0.2.30"     # the cna port's RoCE address (ipv4=)
GUEST_IP = {"server": "192.0.2.21", "client": "192.0.2.22"}


def available():
    """Why rxekit cannot run here, or None."""
    if not os.path.isfile(os.path.join(RXEKIT, "rxe-peer.sh")):
        return f"no rxekit at {RXEKIT}"
    for artifact in ("vmlinux", "initrd.gz"):
        if not os.path.isfile(os.path.join(RXEKIT_WORK, artifact)):
            return f"rxekit's {artifact} is missing from {RXEKIT_WORK} (./cna setup makes it)"
    return None


class RxePeer:
    def __init__(self, build=None):
        self.build = build
        self.tag = unique_tag()
        self.ns = f"rx{self.tag}"
        self.tap = f"cnx{self.tag}"[:15]

    def _peer(self, *args, timeout=300, check=True):
        return sh("bash", os.path.join(RXEKIT, "rxe-peer.sh"), *args, timeout=timeout, check=check)

    def __enter__(self):
        self._peer("setup", "-n", self.ns, "-b", "br0", "-a", f"{BRIDGE_IP}/24")
        # One persistent TAP in the bridge for every rdma_pingpong run: the
        # bridge keeps its port while the processes come and go.
        self._peer("addtap", "-n", self.ns, "-b", "br0", "-t", self.tap)
        return self

    def __exit__(self, *exc):
        self._peer("teardown", "-n", self.ns, check=False)
        for left in glob.glob(os.path.join(RXEKIT_WORK, "logs", f"cna-{self.tag}-*.ready")):
            os.unlink(left)

    def guest(self, role, command, limit=120):
        """The rxe guest, running `command` (sh, with $RXE_DEV and $RXE_GID
        set) after rxe0 is up; a Popen whose output ends with rxe-peer's
        result line. Its console goes to self.console."""
        os.makedirs(os.path.join(RXEKIT_WORK, "logs"), exist_ok=True)  # rxekit makes it only without -l
        self.console = os.path.join(RXEKIT_WORK, "logs", f"cna-{self.tag}-{role}.log")
        # The guest reads the command from the host's root, which it
        # mounts: the kernel's command line that would carry it holds
        # 2 KiB, a few tools' worth.
        script = os.path.join(RXEKIT_WORK, "logs", f"cna-{self.tag}-{role}.sh")
        with open(script, "w") as f:
            f.write(command + "\n")
        argv = ["bash", os.path.join(RXEKIT, "rxe-peer.sh"), role, "-n", self.ns, "-b", "br0", "-q",
                "-w", str(limit), "-T", str(limit + 60), "-l", self.console, "-c", f"sh {script}"]
        if role == "client":
            argv += ["-p", BRIDGE_IP]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def console_text(self):
        """What the guest's console showed so far."""
        if not os.path.exists(self.console):
            return ""
        with open(self.console, errors="replace") as f:
            return f.read()

    def wait_console(self, text, count, timeout=120):
        """Until the guest's console shows `text` `count` times."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.console_text().count(text) >= count:
                return
            time.sleep(0.1)
        raise TestPmdError(f"the rxe guest did not print {text!r} {count} times within {timeout} s")

    def cna(self, args, server=None, timeout=60, gid=1):
        """rdma_pingpong on a cna port whose TAP joins the bridge, with its
        GID index `gid` (1: the IPv4 address, 0: the link-local IPv6 one);
        its output."""
        argv = [example("rdma_pingpong", self.build), "-l", "1", *EAL, "--file-prefix", f"cx{self.tag}", "--vdev",
                f"net_cna0,{self.devargs()}", "--", "-g", str(gid), *args]
        return self._run(argv, server, timeout)

    def verbs(self, argv, server=None, timeout=60):
        """A verbs application (argv) on cna's provider (cna-rdma-run), its
        device's port on the bridge as cna()'s; its output, with the CM's
        MADs if it used RDMA CM."""
        return self._run([rdma_run_path(self.build), *argv], server, timeout, self.verbs_env())

    def flag(self, name):
        """The file the host makes when `name` is ready, for the guest's
        command to wait on: the guest sees the host's root."""
        return os.path.join(RXEKIT_WORK, "logs", f"cna-{self.tag}-{name}.ready")

    def listener(self, argv, ready, timeout=400, abandoned=None):
        """A verbs application on cna's provider that listens through RDMA
        CM: flag(ready) is made once cna's librdmacm says it listens
        (CNA_CM_LOG), so the guest's requester never meets a port still
        coming up; its output when it ends. It is ended after `timeout`
        seconds, or once the guest's console shows `abandoned` (its
        requester gave up: it would wait for that requester for good)."""
        proc = self._start([rdma_run_path(self.build), *argv], self.verbs_env())
        finished = threading.Event()

        def watch():
            deadline = time.monotonic() + timeout
            while not finished.wait(0.5):
                if time.monotonic() > deadline or (abandoned is not None and abandoned in self.console_text()):
                    end_all(proc)
                    return

        watchdog = threading.Thread(target=watch, daemon=True)
        watchdog.start()
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                if "listening on port" in line:
                    open(self.flag(ready), "w").close()
            proc.wait()
        finally:
            finished.set()
            watchdog.join()
            proc.stdout.close()
        out = "".join(lines)
        if proc.returncode != 0:
            raise TestPmdError(f"{argv[0]} failed ({proc.returncode}):\n{out}")
        return out

    def devargs(self):
        return f"adapter=cx{self.tag},wire=tap:{self.tap},ipv4={CNA_IP}/24"

    def verbs_env(self):
        return dict(os.environ, CNA_RDMA_DEVARGS=self.devargs(), CNA_CM_LOG="1")

    def _start(self, argv, env=None):
        """argv in the bridge's namespace, leading a session of its own
        (kill_all ends it and whatever it started)."""
        return subprocess.Popen(["ip", "netns", "exec", self.ns, *argv], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)

    def _run(self, argv, server, timeout, env=None):
        program = os.path.basename(argv[0])
        proc = self._start([*argv, *([server] if server else [])], env)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TestPmdError(f"{program} timed out:\n{kill_all(proc)}") from None
        if proc.returncode != 0:
            raise TestPmdError(f"{program} failed ({proc.returncode}):\n{out}")
        return out
