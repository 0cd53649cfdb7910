"""Debian's testpmd in a QEMU/TCG guest driving a VF of cna-adapterd's
adapter through VFIO: app/vm/vm_run.py boots the guest (Debian's kernel, the
host's root read-only over 9p, the VF at PCI 0000:00:10.0), binds the VF to
vfio-pci and runs testpmd -i on it; the guest's ttyS1 is the session pexpect
drives, with TestPmd's commands and parsed views:

    with Rig(vfs=2, vf_list=(1,)) as rig, GuestTestPmd(rig.daemon.socket, vf=0) as guest:
        guest.cmd("set fwd mac")
        guest.link(0)

Quitting testpmd ends the guest's command: the guest powers off and vm_run
exits with testpmd's status. Each guest has a console log file of its own
(the guest kernel's messages), printed with any failure inside the `with`.
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pexpect

from harness.daemon import adapterctl
from harness.testpmd import (PROMPT, SANITIZER_ENV, TestPmd, TestPmdError, _interleaved, build_dir, pmd_path,
                             tool_env, unique_tag)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "app", "vm"))
import adapter as vm_run_adapter  # noqa: E402 (vm-run's own reading of the daemon's status)
VM_RUN = os.path.join(ROOT, "app", "vm", "vm_run.py")
GUEST_KIT = os.path.join(ROOT, "app", "vm", "guest_kit.sh")
QEMU = "/usr/bin/qemu-system-x86_64"
PYTHON = "/usr/bin/python3"
# vm_run.py's slot of the VF in the guest
VF_PCI = "0000:00:10.0"
# Under TCG the guest boots in ~5 s and testpmd reaches its prompt in ~10 to
# 40 s more, depending on what else the two host CPUs run.
START_TIMEOUT = 240
CMD_TIMEOUT = 60


def unavailable():
    """Why no guest can run here, or None."""
    if os.geteuid() != 0:
        return "needs root (the guest's VF, TAP wires, network namespaces)"
    if not os.access(QEMU, os.X_OK):
        return f"no {QEMU} (Debian's qemu-system-x86)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    return None


_kit = None


def guest_kit():
    """The guest kit's directory: CNA_VM_KIT (./cna test makes it), else the
    one ./cna vm-run boots, made (or found made) by guest_kit.sh in the
    checkout's build/ (the kit is Debian's kernel and the guest's init: one
    serves every build)."""
    global _kit
    kit = os.environ.get("CNA_VM_KIT")
    if kit:
        return kit
    if _kit is None:
        proc = subprocess.run(["bash", GUEST_KIT, os.path.join(ROOT, "build")], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=1800)
        if proc.returncode != 0:
            raise TestPmdError(f"{GUEST_KIT} failed ({proc.returncode}):\n{proc.stderr}")
        _kit = proc.stdout.strip().splitlines()[-1]
    return _kit


def children(pid):
    """The pids whose parent is `pid`."""
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name in parentheses may hold spaces: fields after its ')'
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            kids.append(int(entry))
    return kids


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def testpmd_argv(allow, app_args, log_level="pmd.net.cna*:info", eal_extra=(), build=None):
    """The guest's testpmd command line on the PCI functions `allow` (bound to
    vfio-pci) with the PMD of `build`: IOVA as physical addresses (the VF's
    transport maps guest RAM by guest-physical address), the sanitizer
    runtimes the suite preloads for the host's testpmd."""
    eal = (["-l", "0-1", "--iova-mode=pa"] + [a for dev in allow for a in ("-a", dev)]
           + ["-d", pmd_path(build), f"--log-level={log_level}"]
           + os.environ.get("CNA_TESTPMD_EAL_EXTRA", "").split() + list(eal_extra))
    # the guest's testpmd loads the same instrumented PMD, so it gets the
    # host's sanitizer runtimes too (the guest's command starts with a clean
    # environment)
    sanitizers = [f"{k}={os.environ[k]}" for k in SANITIZER_ENV if os.environ.get(k)]
    return ["env"] + sanitizers + ["dpdk-testpmd"] + eal + ["--", "--total-num-mbufs=8192"] + list(app_args)


class GuestTestPmd(TestPmd):
    """testpmd -i in a guest on VF `vf` of PF `pf` of the daemon at `socket`.

    allow: the guest's PCI functions given to testpmd with -a (default the
    VF), each bound to vfio-pci first: with bind="sysfs" through sysfs (what
    dpdk-devbind.py does, without its seconds of Python start-up under TCG),
    with bind="devbind" by dpdk-devbind.py, with bind=None not at all.
    prelude: a shell line run in the guest before that, under `set -e` (its
    output begins startup_output). qemu_args: appended to QEMU's command line."""

    def __init__(self, socket, vf=0, pf=0, allow=(VF_PCI,), bind="sysfs", prelude="", eal_extra=(),
                 app_args=(), qemu_args=(), log_level="pmd.net.cna*:info", cpus=2, memory_mb=1024, build=None,
                 timeout=CMD_TIMEOUT, start_timeout=START_TIMEOUT, log_dir=None):
        self.build = os.path.abspath(build or build_dir())
        self.socket, self.vf_id, self.pf_id = socket, vf, pf
        self.allow = list(allow)
        self.timeout, self.start_timeout = timeout, start_timeout
        # removed once the guest's `with` block is left without an exception
        self.own_log_dir = log_dir is None
        self.log_dir = log_dir or tempfile.mkdtemp(prefix="cna-guest-")
        # unique per guest: what vm_run starts (a daemon, a PF driver) would
        # log beside it
        self.log = os.path.join(self.log_dir, f"guest-pf{pf}vf{vf}-{unique_tag()}.log")
        self.testpmd_argv = testpmd_argv(self.allow, ["-i"] + list(app_args), log_level, eal_extra, self.build)
        self.script = self.guest_script(prelude, bind)
        self.argv = [VM_RUN, "--build", self.build, "--kit", guest_kit(), "--daemon", socket,
                     "--pf", str(pf), "--vf", str(vf), "--cpus", str(cpus), "--memory", str(memory_mb),
                     "--log", self.log, "--timeout", "1800"] + [f"--qemu-arg={a}" for a in qemu_args]
        self.argv += ["--", "sh", "-c", self.script]
        # vm_run, cna-vm and QEMU are no testpmd: not under the sanitizers
        self.env = tool_env()
        self.child = None
        self.startup_output = ""
        self.file_prefix = None
        self.exit_status = self.signal_status = None

    def guest_script(self, prelude, bind):
        steps = ["set -e"]
        if prelude:
            steps.append(prelude)
        if bind == "devbind":
            steps.append(shlex.join(["dpdk-devbind.py", "-b", "vfio-pci"] + self.allow))
        elif bind == "sysfs":
            for dev in self.allow:
                sysfs = f"/sys/bus/pci/devices/{dev}"
                steps.append(f"echo vfio-pci >{sysfs}/driver_override; echo {dev} >/sys/bus/pci/drivers_probe; "
                             f"test $(readlink -f {sysfs}/driver) = /sys/bus/pci/drivers/vfio-pci")
        elif bind is not None:
            raise ValueError(f"bind: 'sysfs', 'devbind' or None, not {bind!r}")
        steps.append(shlex.join(["exec"] + self.testpmd_argv))
        return "; ".join(steps)

    # -- lifecycle -------------------------------------------------------
    def __exit__(self, exc_type, exc, tb):
        try:
            self.close()
        finally:
            if exc is None:
                if self.own_log_dir:
                    shutil.rmtree(self.log_dir, ignore_errors=True)
            elif isinstance(exc, AssertionError) and exc.args and isinstance(exc.args[0], str):
                # the failure's message names the guest's console log (kept) and ends with it
                exc.args = (exc.args[0] + "\n" + self.diagnostics(),) + exc.args[1:]
            else:
                print(self.diagnostics())

    def diagnostics(self):
        end = vm_run_adapter.tail(self.log, 40)
        return f"--- the guest's console log {self.log} ends:\n{end}--- (end of {self.log})"

    def start(self):
        """Boots the guest to testpmd's prompt. QEMU under TCG has been seen
        to die of a signal before the guest's kernel printed a line (an
        empty console log; no cna code runs in QEMU's process): such a boot
        is tried once more, said on stdout."""
        for attempt in (1, 2):
            t0 = time.monotonic()
            self.child = pexpect.spawn(PYTHON, self.argv, encoding="utf-8", timeout=self.timeout, env=self.env,
                                       codec_errors="replace", dimensions=(50, 200))
            idx = self.child.expect([PROMPT, pexpect.EOF, pexpect.TIMEOUT], timeout=self.start_timeout)
            self.startup_output = (self.child.before + (_interleaved(self.child) if idx == 0 else "")).replace(
                "\r\n", "\n")
            self.start_seconds = time.monotonic() - t0
            if idx == 0:
                return self.startup_output
            what = "exited" if idx == 1 else f"timed out after {self.start_timeout} s"
            out = self.startup_output
            self.close()
            died = re.search(r"QEMU exited with status (1[3-9][0-9])", out)
            silent = not os.path.exists(self.log) or os.path.getsize(self.log) == 0
            if attempt == 1 and died and silent:
                print(f"\n[guest] QEMU died (status {died.group(1)}) before the guest printed anything: "
                      "booting it again", flush=True)
                name = f"pf{self.pf_id} vf{self.vf_id}"
                deadline = time.monotonic() + 30
                while function_state(self.socket, name, self.build) != "free" and time.monotonic() < deadline:
                    time.sleep(0.2)  # the daemon resets the dead client's VF first
                continue
            raise TestPmdError(f"the guest's testpmd did not reach its prompt ({what}):\n{out}\n"
                               + self.diagnostics())

    def launcher_pid(self):
        """The guest's cna-vm, vm_run's child: the daemon's client for the VF."""
        for pid in children(self.child.pid):
            if comm(pid) == "cna-vm":
                return pid
        raise TestPmdError(f"no cna-vm under vm_run (pid {self.child.pid})")

    def qemu_pid(self):
        """The guest's QEMU, cna-vm's child."""
        for pid in children(self.launcher_pid()):
            if comm(pid) == "qemu-system-x86":
                return pid
        raise TestPmdError(f"no QEMU under cna-vm (pid {self.launcher_pid()})")

    def kill(self):
        """SIGKILL the guest's QEMU (the guest dies as a host crash would have it)."""
        os.kill(self.qemu_pid(), signal.SIGKILL)

    def close(self):
        """Quit testpmd and wait for the guest to power off and vm_run to
        exit (its status: testpmd's); what testpmd printed meanwhile."""
        if self.child is None:
            return ""
        out = ""
        pids = [self.child.pid]
        if self.child.isalive():
            pids += [p for launcher in children(self.child.pid) for p in [launcher] + children(launcher)]
            self.child.sendline("quit")
            self.child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=self.start_timeout)
            out = (self.child.before or "").replace("\r\n", "\n")
        self.child.close(force=True)
        self.exit_status, self.signal_status = self.child.exitstatus, self.child.signalstatus
        self.child = None
        # vm_run stops the guest when it is killed; what is left, is killed
        for pid in pids[1:]:
            if comm(pid) in ("cna-vm", "qemu-system-x86"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.quit_output = out
        return out

    def quit(self):
        """Quit testpmd; the guest must power off with testpmd's status 0."""
        out = self.close()
        if self.exit_status != 0:
            raise TestPmdError(f"vm_run exited with status {self.exit_status} (signal {self.signal_status}):\n"
                               f"{out}\n{self.diagnostics()}")
        return out


def function_state(socket, name, build=None):
    """'free', its client's pid (a string; a VM's client is its cna-vm) or
    None: `name`'s line ('pf0 vf1') in cna-adapterctl status, read as vm-run
    reads it."""
    return vm_run_adapter.function_state(adapterctl(socket, "status", build=build), name)
