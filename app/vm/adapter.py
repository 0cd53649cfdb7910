"""vm-run's side of cna-adapterd: joins or starts the daemon, and makes sure
the VF the guest is to get exists (its PF's driver enabled it) and is free."""
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time


class VmRunError(Exception):
    """What vm-run says before it gives up (exit status 1)."""


def say(message):
    print(f"vm-run: {message}", file=sys.stderr, flush=True)


def tail(path, lines=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def listening(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        try:
            s.connect(path)
            return True
        except OSError:
            return False


def adapter_status(args):
    run = subprocess.run([os.path.join(args.build, "transport", "cna-adapterctl"), "--socket", args.daemon,
                          "status"], capture_output=True, text=True, timeout=30)
    if run.returncode != 0:
        raise VmRunError(f"cna-adapterctl status on {args.daemon} failed: {run.stderr.strip()}")
    return run.stdout


def function_state(status, name):
    """'free', its client's pid, or None when the status lists no function
    `name` ('pf0' or 'pf0 vf1')."""
    m = re.search(rf"^{name}\s+(?:port \d+\s+)?(free|client pid (\d+)(?: \(a VM\))?)$", status, re.M)
    return None if m is None else (m.group(2) or "free")


def stop_process(proc, grace=10):
    """SIGTERM, and SIGKILL if it is still there after `grace` seconds."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_until(ready, proc, timeout, what, log):
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            state = "timed out" if proc.returncode is None else f"exited with status {proc.returncode}"
            raise VmRunError(f"{what}: {state}; its log {log} ends:\n{tail(log)}")
        time.sleep(0.1)


def start_daemon(args, stack, log):
    """Starts cna-adapterd on --daemon, as vm-run's child rather than
    --daemonize'd so that vm-run knows its pid, and stops it at the end
    unless another vm-run's guest or PF driver joined it meanwhile: then
    --idle-exit ends it once it is left without clients."""
    os.makedirs(os.path.dirname(os.path.abspath(args.daemon)), exist_ok=True)
    say(f"starting cna-adapterd on {args.daemon} ({args.ports} port(s), wire {args.wire}); its log: {log}")
    with open(log, "w") as out:
        proc = subprocess.Popen([os.path.join(args.build, "transport", "cna-adapterd"), "--socket", args.daemon,
                                 "--ports", str(args.ports), "--wire", args.wire, "--idle-exit", "60"],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def stop():
        if proc.poll() is None and "client pid" not in adapter_status(args):
            stop_process(proc)
    stack.callback(stop)
    wait_until(lambda: listening(args.daemon), proc, 10, "cna-adapterd did not start", log)


def plugin_path(args, stack):
    """The PMD as testpmd's -d takes it. EAL refuses a plugin below a
    world-writable directory (a build in /tmp), so such a build's .so is
    copied to a private directory for the run."""
    so = os.path.realpath(os.path.join(args.build, "pmd", "net", "librte_net_cna.so"))
    d = os.path.dirname(so)
    while d != "/" and not os.stat(d).st_mode & stat.S_IWOTH:
        d = os.path.dirname(d)
    if d == "/":
        return so
    cache = os.path.join(os.path.expanduser("~"), ".cache", "cna")
    os.makedirs(cache, mode=0o700, exist_ok=True)
    private = tempfile.mkdtemp(prefix="vm-run-", dir=cache)
    stack.callback(shutil.rmtree, private, ignore_errors=True)
    return shutil.copy2(so, private)


def start_pf_driver(args, stack, log):
    """Debian's testpmd drives PF --pf with the VFs up to --vf enabled,
    interactive on a pipe vm-run holds (should vm-run die, the pipe's end
    quits it too), until vm-run sends it 'quit'."""
    prefix = f"cna-vm-pf{os.getpid()}"
    # testpmd wants a forwarding lcore besides its main one, though this one
    # never forwards
    argv = ["dpdk-testpmd", "--lcores", "0-1", "--no-huge", "-m", "256", "--file-prefix", prefix, "--no-pci",
            "-d", plugin_path(args, stack),
            "--vdev", f"net_cna0,daemon={args.daemon},pf={args.pf},vfs={args.vf + 1}",
            "--", "-i", "--total-num-mbufs=8192"]
    say(f"starting PF {args.pf}'s driver (testpmd, vfs={args.vf + 1}); its log: {log}")
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True,
                                env=dict(os.environ, CNA_ADAPTERD=os.path.join(args.build, "firmware",
                                                                               "cna-adapterd")))

    def quit():
        try:
            proc.communicate(b"quit\n", timeout=30)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            proc.kill()
            proc.wait()
        shutil.rmtree(os.path.join("/var/run/dpdk", prefix), ignore_errors=True)
    stack.callback(quit)
    vf = f"pf{args.pf} vf{args.vf}"
    wait_until(lambda: function_state(adapter_status(args), vf) is not None, proc, 60,
               f"PF {args.pf}'s testpmd did not enable {vf}", log)


def provide_vf(args, stack, log_base):
    """Joins or starts the daemon and makes sure the VF exists and is free;
    what it starts, `stack` stops."""
    if not listening(args.daemon):
        start_daemon(args, stack, log_base + "-adapterd.log")
    status = adapter_status(args)
    vf, pf = f"pf{args.pf} vf{args.vf}", f"pf{args.pf}"
    state = function_state(status, vf)
    if state is None:
        pf_state = function_state(status, pf)
        if pf_state is None:
            raise VmRunError(f"the adapter on {args.daemon} has no PF {args.pf}:\n{status}")
        if pf_state != "free":
            raise VmRunError(f"PF {args.pf} is driven by pid {pf_state}, which has not enabled VF {args.vf} "
                               f"(its vfs= is at most {args.vf}):\n{status}")
        start_pf_driver(args, stack, log_base + "-pf-testpmd.log")
    elif state != "free":
        raise VmRunError(f"{vf} is busy: pid {state} drives it")
