"""The guest rows of ./cna bench: testpmd io forwarding on one port in a
QEMU/TCG guest booted by app/vm/vm_run.py, once on a VF of cna-adapterd (one
port on a loopback wire) and once on QEMU's virtio-net-pci with a TAP backend
whose host side tc sends every frame back. TCG makes both slow: the ratio of
their rates is the figure."""
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

import pexpect

from bench_testpmd import TESTPMD, BenchError, Run, Session, all_rates, core_latency, last_lines, print_rows, \
    wait_links_up, window_rates

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
VM_RUN = os.path.join(ROOT, "app", "vm", "vm_run.py")
GUEST_KIT = os.path.join(ROOT, "app", "vm", "guest_kit.sh")
# Both guests get the rings virtio-net has under QEMU's defaults (a TAP
# backend allows no larger Tx queue), and 8 bursts of 32 in flight.
VM_RING = 256
VM_TX_FIRST = 8
# On a quiet machine a TCG guest boots and its testpmd reaches the prompt in
# 30 to 40 s; this leaves room for a busy one.
VM_BOOT_TIMEOUT = 300


class GuestConfig:
    """One guest row: vm_options(tmp) are vm_run.py's options for its NIC,
    address the shell line that sets A to the NIC's PCI address in the
    guest, prepare() what the host does once the guest's testpmd is at its
    prompt."""

    def __init__(self, name, vm_options, address, prepare=None):
        self.name = name
        self.vm_options = vm_options
        self.address = address
        self.prepare = prepare or (lambda: None)


def reflect_tap(tap):
    """Every frame the guest sends on `tap` comes back to it: tc's ingress
    hook on the TAP's host side redirects it to the TAP's egress, in the
    kernel as part of QEMU's write, so no reflecting thread competes for the
    CPUs. IPv6 goes off first, or the host's neighbour discovery would join
    the loop."""
    ipv6 = f"/proc/sys/net/ipv6/conf/{tap}/disable_ipv6"
    if os.path.exists(ipv6):
        with open(ipv6, "w") as f:
            f.write("1")
    for cmd in (["ip", "link", "set", tap, "up"],
                ["tc", "qdisc", "add", "dev", tap, "ingress"],
                ["tc", "filter", "add", "dev", tap, "parent", "ffff:", "protocol", "all", "u32", "match", "u32",
                 "0", "0", "action", "mirred", "egress", "redirect", "dev", tap]):
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        if run.returncode != 0:
            raise BenchError(f"{' '.join(cmd)}: " + last_lines(run.stderr))


def guest_configurations():
    # QEMU creates the TAP and it goes with QEMU: nothing is left on the host
    tap = f"cnab{os.getpid()}"
    return [
        # vm_run.py starts the daemon (one port on a loopback wire) and PF 0's
        # testpmd, which enables the VF and never forwards
        GuestConfig("net_cna_vf (cna-adapterd, loopback wire)",
                    lambda tmp: ["--daemon", os.path.join(tmp, "vm.sock"), "--ports", "1", "--wire", "loopback"],
                    'A=$CNA_VF_PCI'),
        GuestConfig("virtio-net-pci (TAP, tc reflector)",
                    lambda tmp: ["--no-vf", "--tap", tap],
                    # legacy or modern virtio-net, whichever QEMU made it
                    'A=$(cd /sys/bus/pci/devices && for d in *; do case $(cat $d/vendor):$(cat $d/device) in '
                    '0x1af4:0x1000|0x1af4:0x1041) echo $d;; esac; done); [ -n "$A" ]',
                    prepare=lambda: reflect_tap(tap)),
    ]


class GuestSession(Session):
    """testpmd on one port in a QEMU/TCG guest that vm_run.py boots, its
    prompt on the guest's serial port."""

    def __init__(self, args, kit, pmd, config, tmp):
        app = ["-i", "--forward-mode=io", "--burst=32", "--nb-cores=1", f"--rxd={VM_RING}", f"--txd={VM_RING}",
               "--total-num-mbufs=16384"]
        # The same EAL options for both NICs: net_cna_vf needs IOVA as PA
        # (the adapter reaches guest memory by guest-physical address), and
        # the PMD is loaded for virtio-net too.
        guest = (f'{config.address} || {{ echo "no NIC for testpmd in the guest" >&2; exit 1; }}; '
                 f'dpdk-devbind.py -b vfio-pci "$A" >/dev/null && exec {TESTPMD} -l 0-1 --iova-mode=pa -a "$A" '
                 + shlex.join(["-d", pmd, "--"] + app))
        timeout = VM_BOOT_TIMEOUT + args.vm_warmup + args.windows * args.vm_window + 120
        argv = ["/usr/bin/python3", VM_RUN, "--build", args.build, "--kit", kit, "--cpus", "2", "--memory", "1024",
                "--timeout", f"{timeout:.0f}", *config.vm_options(tmp), "--", "sh", "-c", guest]
        self.child = None
        self.ready = False
        try:
            self.spawn(argv, VM_BOOT_TIMEOUT)
        except BaseException:
            self.close()
            raise
        self.ready = True

    def close(self):
        """testpmd's quit powers the guest off, and vm_run.py then stops
        what it started (QEMU; the VF's daemon and PF driver); on SIGTERM it
        does the same at any point."""
        if self.child is None:
            return
        if self.ready and self.child.isalive():
            self.child.sendline("quit")
            self.child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=90)
        if self.child.isalive():
            self.child.kill(signal.SIGTERM)
            self.child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=60)
        self.child.close(force=True)


def measure_guest(args, kit, pmd, config, tmp):
    """Rx rates (packets/s) of the windows of one guest's port."""
    session = GuestSession(args, kit, pmd, config, tmp)
    try:
        config.prepare()
        wait_links_up(session, 1)
        session.cmd("set txpkts 64")
        # Each port sends to its own MAC: the VF's frames go out on the
        # adapter's loopback wire and pass its MAC filter on the way back
        # (an untrusted VF is never promiscuous); tc returns the TAP's.
        session.cmd(f"set eth-peer 0 {session.mac(0)}")
        session.cmd(f"start tx_first {VM_TX_FIRST}")
        time.sleep(args.vm_warmup)
        return window_rates([session], args, args.vm_window)
    finally:
        session.close()


def vm_unavailable(args):
    """Why no guest can run here, or None."""
    if os.geteuid() != 0:
        return "not root (QEMU creates the TAP, tc makes it reflect)"
    for tool, package in (("qemu-system-x86_64", "qemu-system-x86"), ("tc", "iproute2"), ("ip", "iproute2")):
        if not shutil.which(tool):
            return f"no {tool} (Debian's {package})"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun for the TAP"
    vm = os.path.join(args.build, "transport", "cna-vm")
    if not os.access(vm, os.X_OK):
        return f"{vm} not built"
    return None


def guest_kit(args):
    """The kit's directory (guest_kit.sh makes it once per build), or
    BenchError."""
    try:
        run = subprocess.run(["bash", GUEST_KIT, args.build], capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        raise BenchError("guest_kit.sh did not finish within 900 s")
    if run.returncode != 0 or not run.stdout.strip():
        raise BenchError("guest_kit.sh failed: " + last_lines(run.stderr))
    return run.stdout.strip().splitlines()[-1]


def run_vm(args, pmd):
    """The guest rows; the ratio VF/virtio-net of their medians, or None."""
    print()
    print(f"In a guest (QEMU/TCG, 2 vCPUs, 1 GiB; testpmd io forwarding on one port, 64 B, -l 0-1 --iova-mode=pa, "
          f"rings of {VM_RING}, tx_first {VM_TX_FIRST}, eth-peer its own MAC): the VF of cna-adapterd (1 port, "
          "loopback wire; PF 0's testpmd idle) beside virtio-net-pci on a TAP that tc reflects; "
          f"{args.vm_runs} guest(s) per row, alternating, {args.windows} x {args.vm_window:g} s windows after "
          f"{args.vm_warmup:g} s warm-up; TCG slows both: the ratio is the figure")
    why = vm_unavailable(args)
    try:
        kit = None if why else guest_kit(args)
    except BenchError as e:
        why = f"no guest kit: {e}"
    if why:
        print(f"vm: skipped: {why}")
        return None
    results = {}
    configs = guest_configurations()
    with tempfile.TemporaryDirectory(prefix="cna-bench-") as tmp:
        for _ in range(args.vm_runs):
            # Alternating, so that what else the machine does weighs on both
            for config in configs:
                if isinstance(results.get(config.name), str):
                    continue
                try:
                    before = core_latency(args)
                    rates = measure_guest(args, kit, pmd, config, tmp)
                    results.setdefault(config.name, []).append(Run(rates, before, core_latency(args)))
                except BenchError as e:
                    results[config.name] = str(e)
                except (pexpect.ExceptionPexpect, OSError) as e:
                    results[config.name] = f"{type(e).__name__}: {e}"
    width = max(len(c.name) for c in configs) + 2
    print(f"{'configuration':<{width}}{'median':>9}{'min':>8}{'max':>8}  per guest: median (CPU0-CPU1 round trip "
          "before/after, ns)   (Mpps: the port's Rx, i.e. frames forwarded)")
    print_rows(results, width, 3,
               lambda run: f"{statistics.median(run.rates) / 1e6:.3f} ({run.rtt[0]}/{run.rtt[1]})")
    vf, virtio = (results.get(c.name) for c in configs)
    if not (isinstance(vf, list) and isinstance(virtio, list)):
        print("vm: net_cna_vf/virtio-net: n/a")
        return None
    ratio = statistics.median(all_rates(vf)) / statistics.median(all_rates(virtio))
    print(f"vm: net_cna_vf/virtio-net: {ratio:.2f}")
    return ratio
