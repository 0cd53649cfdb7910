#!/usr/bin/python3
"""vm-run: run a command as root in a QEMU/TCG guest booted from Debian's
kernel (the kit guest_kit.sh makes), with a VF of cna-adapterd's adapter as a
PCI device, and exit with the command's status.

The guest sees the host's root read-only at the same paths, starts in the
caller's working directory, has hugepages at /dev/hugepages and the VF's PCI
address in CNA_VF_PCI. The command's stdin, stdout and stderr are the guest's
second serial port, fed from vm-run's stdin and written to its stdout; the
guest's console goes to a log file. `./cna vm-run` builds the project and the
kit, then runs this.
"""
import argparse
import base64
import contextlib
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import termios
import threading
import time
import tty

from adapter import VmRunError, provide_vf, say, stop_process, tail

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# cna-vm puts the VF at this slot of the guest's root bus
VF_SLOT = 0x10
VF_PCI = f"0000:00:{VF_SLOT:02x}.0"
# The VF's transport maps guest RAM by guest-physical address, which is
# contiguous only below the 32-bit PCI hole (q35 puts RAM above 2 GiB beyond
# 4 GiB).
MAX_VF_MEMORY_MB = 2048
# The kernel's COMMAND_LINE_SIZE on x86, less its terminating NUL
MAX_KERNEL_CMDLINE = 2047
# vm-run's own exit statuses, as timeout(1) has them
EXIT_TIMEOUT = 124
EXIT_NO_STATUS = 125


class Interrupted(Exception):
    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def parse_args(argv):
    options, command = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    p = argparse.ArgumentParser(
        prog="./cna vm-run", usage="%(prog)s [options] -- COMMAND [ARG...]",
        description="Run COMMAND as root in a QEMU/TCG guest with a VF of cna-adapterd's adapter; exit with its "
                    "status, or vm-run's own: 118 to 123 the guest's set-up failed (it says why), 124 timed out, "
                    "125 the guest reported no status.",
        epilog="COMMAND and its ARGs are taken as words, as by exec (a shell line: sh -c 'LINE'). Option values "
               "starting with '-' take the --opt=VALUE form, as --qemu-arg=-device.")
    p.add_argument("--daemon", metavar="SOCKET", default="/run/cna/vm.sock",
                   help="the adapter daemon's socket, joined or started (default %(default)s)")
    p.add_argument("--pf", type=int, default=0, help="the VF's PF (default %(default)s)")
    p.add_argument("--vf", type=int, default=0, help="the VF (default %(default)s)")
    p.add_argument("--no-vf", action="store_true", help="boot without a VF (no daemon)")
    p.add_argument("--memory", metavar="MB", type=int, default=1024, help="guest RAM (default %(default)s)")
    p.add_argument("--cpus", type=int, default=2, help="guest CPUs (default %(default)s)")
    p.add_argument("--hugepages", metavar="N", type=int,
                   help="2 MiB hugepages in the guest (default: half its RAM)")
    p.add_argument("--log", metavar="FILE", help="the guest's console log (default BUILD/vmkit/logs/TIME.log)")
    p.add_argument("--timeout", metavar="SECONDS", type=float, default=600,
                   help="kill the guest after this long and exit 124 (default %(default)s)")
    p.add_argument("--tap", metavar="NAME", help="add a virtio-net NIC on TAP interface NAME")
    p.add_argument("--qemu-arg", metavar="ARG", action="append", default=[],
                   help="appended to QEMU's command line (repeatable)")
    p.add_argument("--ports", type=int, default=1, help="ports of a daemon vm-run starts (default %(default)s)")
    p.add_argument("--wire", default="loopback", help="wire of a daemon vm-run starts (default %(default)s)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"), help=argparse.SUPPRESS)
    p.add_argument("--kit", help=argparse.SUPPRESS)
    args = p.parse_args(options)
    if not command:
        p.error("no command: give it after --")
    if args.memory < 256:
        p.error("--memory: at least 256 MB")
    if not args.no_vf and args.memory > MAX_VF_MEMORY_MB:
        p.error(f"--memory: at most {MAX_VF_MEMORY_MB} MB with a VF: its transport maps guest RAM by "
                "guest-physical address, which is contiguous only below the 32-bit PCI hole")
    if args.cpus < 1:
        p.error("--cpus: at least 1")
    if args.pf < 0 or args.vf < 0:
        p.error("--pf, --vf: at least 0")
    if args.hugepages is None:
        args.hugepages = args.memory // 4
    if not 0 <= args.hugepages * 2 <= args.memory - 128:
        p.error("--hugepages: leave the guest at least 128 MB besides its hugepages")
    args.command = command
    args.kit = args.kit or os.path.join(args.build, "vmkit")
    if args.log is None:
        args.log = os.path.join(args.kit, "logs", time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}.log")
    args.log = os.path.abspath(args.log)
    return args


def b64(text):
    return base64.b64encode(text.encode()).decode()


def kernel_cmdline(args, terminal):
    keys = ["console=ttyS0", "intel_iommu=on", "panic=-1", "quiet",
            # Debian zeroes every page it allocates: under TCG, reserving the
            # hugepages alone would take seconds
            "init_on_alloc=0",
            f"cna.cmd={b64(shlex.join(args.command))}", f"cna.cwd={b64(os.getcwd())}",
            f"cna.hugepages={args.hugepages}"]
    if not args.no_vf:
        keys.append(f"cna.vf={VF_PCI}")
    if terminal:
        keys.append("cna.tty=1")
        term = os.environ.get("TERM", "")
        if re.fullmatch(r"[\w.+-]+", term):
            keys.append(f"cna.term={term}")
        with contextlib.suppress(OSError):
            size = os.get_terminal_size(0)
            if size.lines and size.columns:
                keys += [f"cna.rows={size.lines}", f"cna.cols={size.columns}"]
    cmdline = " ".join(keys)
    if len(cmdline) > MAX_KERNEL_CMDLINE:
        raise VmRunError(f"the command is too long: it travels base64-encoded on the kernel command line, "
                         f"{len(cmdline)} bytes of at most {MAX_KERNEL_CMDLINE}")
    return cmdline


def cna_vm_path(args):
    return os.path.join(args.build, "transport", "cna-vm")


def qemu_option(value):
    return value.replace(",", ",,")


def guest_command(args, terminal):
    qemu = ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-smp", str(args.cpus),
            "-machine", "q35,kernel-irqchip=split", "-device", "intel-iommu",
            "-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot",
            "-kernel", os.path.join(args.kit, "vmlinux"), "-initrd", os.path.join(args.kit, "initrd.gz"),
            "-append", kernel_cmdline(args, terminal),
            # ttyS0: the console, to the log; ttyS1: the command's stdio
            "-chardev", f"file,id=console,path={qemu_option(args.log)}", "-serial", "chardev:console",
            "-chardev", "stdio,id=cmdio", "-serial", "chardev:cmdio",
            "-fsdev", "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot"]
    if args.tap:
        qemu += ["-netdev", f"tap,id=tap0,ifname={qemu_option(args.tap)},script=no,downscript=no",
                 "-device", "virtio-net-pci,netdev=tap0,romfile="]
    qemu += args.qemu_arg
    if args.no_vf:
        return qemu + ["-m", str(args.memory)]
    # cna-vm attaches the VF and runs QEMU with the guest's RAM (-m and a
    # shared memory backend) and the VF's ivshmem device added, passing on
    # signals and QEMU's exit status
    return [cna_vm_path(args), "--socket", args.daemon, "--pf", str(args.pf), "--vf", str(args.vf),
            "--memory", str(args.memory), "--slot", hex(VF_SLOT), "--"] + qemu


class StdinRelay(threading.Thread):
    """Copies vm-run's stdin to QEMU's (a pipe: ttyS1's input) from the moment
    the guest's command has ttyS1 open. Earlier input would be lost: the UART
    takes a FIFO's worth while its port is closed and clears it on opening.
    A terminal on stdin turns raw at that moment too, like ssh's, so that
    Ctrl-C during the boot stops vm-run, and afterwards is the command's."""

    READY = b"CNA-VM-READY"

    def __init__(self, log):
        super().__init__(daemon=True)
        self.qemu_stdin, self.pipe = os.pipe()
        self.log = log
        self.done = threading.Event()

    def run(self):
        try:
            if self.wait_for_command():
                if os.isatty(0):
                    tty.setraw(0, termios.TCSANOW)
                self.copy()
        finally:
            os.close(self.pipe)

    def wait_for_command(self):
        offset, window = 0, b""
        while not self.done.wait(0.05):
            with contextlib.suppress(FileNotFoundError), open(self.log, "rb") as f:
                f.seek(offset)
                data = f.read()
                offset += len(data)
                window = window[-len(self.READY):] + data
                if self.READY in window:
                    return True
        return False

    def copy(self):
        while not self.done.is_set():
            try:
                if select.select([0], [], [], 0.2)[0]:
                    data = os.read(0, 65536)
                    if not data:
                        return
                    os.write(self.pipe, data)
            except BlockingIOError:
                continue
            except OSError:
                return  # stdin closed, or QEMU gone

    def stop(self):
        self.done.set()
        self.join(1)


@contextlib.contextmanager
def terminal_kept():
    """The relay makes a terminal on stdin raw, and QEMU makes its stdout
    non-blocking (a terminal's stdin with it): both are undone however the
    guest ends."""
    saved_tty = termios.tcgetattr(0) if os.isatty(0) else None
    stdout_blocking = os.get_blocking(1)
    try:
        yield
    finally:
        os.set_blocking(1, stdout_blocking)
        if saved_tty is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(0, termios.TCSADRAIN, saved_tty)


def run_guest(args):
    """Boots the guest; the command's exit status, or vm-run's own."""
    argv = guest_command(args, os.isatty(0))
    # the relay must not take a reused log's marker for this guest's
    open(args.log, "wb").close()
    with terminal_kept():
        relay = StdinRelay(args.log)
        # QEMU is no program of ours: runtimes preloaded for the caller's
        # (the sanitizer suite's, for testpmd) are not for it.
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        proc = subprocess.Popen(argv, stdin=relay.qemu_stdin, env=env)
        os.close(relay.qemu_stdin)
        relay.start()
        try:
            status = proc.wait(args.timeout)
        except subprocess.TimeoutExpired:
            stop_process(proc)
            say(f"timed out after {args.timeout:g} s; the guest's console log: {args.log}")
            return EXIT_TIMEOUT
        except Interrupted as e:
            stop_process(proc)
            say(f"{e}: the guest was stopped; its console log: {args.log}")
            return 128 + e.signum
        finally:
            relay.stop()
    try:
        with open(args.log, "rb") as f:
            console = f.read().decode(errors="replace")
    except FileNotFoundError:
        console = ""
    errors = re.findall(r"vm-run: (error: .*)", console)
    for error in errors:
        say(error.strip())
    exits = re.findall(r"CNA-VM-EXIT rc=(\d+)", console)
    if exits:
        if errors:
            say(f"the guest's console log: {args.log}")
        return int(exits[-1])
    how = f"killed by {signal.Signals(-status).name}" if status < 0 else f"exited with status {status}"
    say(f"the guest reported no exit status (QEMU {how}); its console log {args.log} ends:\n{tail(args.log)}")
    return 128 - status if status < 0 else EXIT_NO_STATUS


def main(argv):
    args = parse_args(argv)
    for name in ("vmlinux", "initrd.gz"):
        if not os.path.isfile(os.path.join(args.kit, name)):
            say(f"error: no guest kit in {args.kit}: make it with app/vm/guest_kit.sh {args.build}")
            return 1
    if not args.no_vf and not os.access(cna_vm_path(args), os.X_OK):
        say(f"error: {cna_vm_path(args)} is not built")
        return 1

    def interrupted(signum, frame):
        raise Interrupted(signum)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, interrupted)
    os.makedirs(os.path.dirname(args.log), exist_ok=True)
    try:
        with contextlib.ExitStack() as stack:
            if not args.no_vf:
                provide_vf(args, stack, os.path.splitext(args.log)[0])
            return run_guest(args)
    except VmRunError as e:
        say(f"error: {e}")
        return 1
    except Interrupted as e:
        say(f"{e}: stopped before the guest ran")
        return 128 + e.signum


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
