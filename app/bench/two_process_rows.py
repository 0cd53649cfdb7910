"""The two-process rows of ./cna bench: testpmd pairs with one port each,
the ports connected across the processes, at 64 B, the aggregate Rx rate of
both ports. Process A forwards on CPU 1, B on CPU 0 (each main lcore idle
at its prompt on the other CPU); a third busy thread, where a row has one,
is not pinned: net_cna's adapter engine in cna-adapterd, or the switch
process of the software rows. Those rows are what users sharing one
adapter between processes would run instead: two DPDK processes joined
through a software switch process (a third testpmd io-forwarding between
two memif ports, or two vhost-user ports), three busy threads as net_cna
through cna-adapterd has; the daemon's and the VFs' rows print their ratio
to them. memif direct (two threads, no switch and no isolation between the
processes) is shown as the bound."""
import contextlib
import os
import statistics
import subprocess
import tempfile
import time

import pexpect

from bench_testpmd import BenchError, Run, Session, all_rates, last_lines, print_rows, wait_links_up, window_rates

class TwoProcessConfig:
    """Two testpmd processes with one port each, the ports connected:
    sides(tmp) gives each process's --vdev list, setup(tmp) what must run
    before them (a context manager: net_cna's adapter daemon, and a VF
    row's PF). mac_forwarding: each side forwards with `set fwd mac` to the
    other's MAC (ports behind a switch: a frame forwarded unchanged would go
    back to its sender), not io."""

    def __init__(self, name, sides, setup=None, mac_forwarding=False):
        self.name = name
        self.sides = sides
        self.setup = setup or (lambda tmp: contextlib.nullcontext())
        self.mac_forwarding = mac_forwarding


def two_process_eal(pmd, lcores, who):
    """EAL options of one process of a pair: its main lcore and forwarding
    lcore (--lcores), its own file prefix."""
    return ["--lcores", lcores, "--file-prefix", f"cnabench-{who}{os.getpid()}", "--no-huge", "-m", "512",
            "--no-pci", "-d", pmd]


@contextlib.contextmanager
def adapter_daemon(args, tmp, ports=("--ports", "2", "--wire", "cable")):
    """cna-adapterd with `ports` (its options): by default two cabled ports
    for the two processes."""
    sock = os.path.join(tmp, "adapterd.sock")
    log = open(os.path.join(tmp, "adapterd.log"), "w+")
    proc = subprocess.Popen([os.path.join(args.build, "transport", "cna-adapterd"), "--socket", sock, *ports],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(sock):
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise BenchError("cna-adapterd did not start: " + last_lines(log.read()))
            time.sleep(0.05)
        yield sock
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


@contextlib.contextmanager
def vf_adapter(args, pmd, tmp, vfs=2):
    """cna-adapterd with one port, and PF 0's testpmd with `vfs` VFs enabled
    (started first: the VFs' processes attach to VFs it has enabled). It
    never starts forwarding: its main lcore waits at the prompt and its
    forwarding lcore is parked, both on CPU 0 (testpmd wants a forwarding
    lcore even if it never forwards)."""
    with adapter_daemon(args, tmp, ports=("--ports", "1")) as sock:
        pf = Session(two_process_eal(pmd, "0@0,1@0", "pf"), [f"net_cna0,daemon={sock},pf=0,vfs={vfs}"])
        try:
            wait_links_up(pf, 1)
            yield sock
        finally:
            pf.close()


# Bursts B injects: with 32 frames in flight, two processes whose threads
# share a CPU (net_cna's adapter engine is a third busy thread on this
# 2-core machine) move one burst per scheduler slice; 1024 keep every
# configuration's rings busy across the slices.
TWO_PROCESS_TX_FIRST = 32


@contextlib.contextmanager
def switch_process(pmd, ports):
    """A third testpmd io-forwarding between its two ports (`ports`, its
    --vdev list: the servers A and B connect to), its forwarding lcore
    free to run on either CPU, as the daemon's engine thread is."""
    switch = Session(two_process_eal(pmd, "0@(0,1),1@(0,1)", "sw"), ports)
    try:
        switch.cmd("start")
        yield
    finally:
        switch.close()


MEMIF_SWITCH = "memif through a switch process"
VHOST_SWITCH = "vhost/virtio through a switch process"
SWITCH_ROWS = (MEMIF_SWITCH, VHOST_SWITCH)
# The rows of one adapter shared by processes, compared with the switch rows.
ADAPTER_ROWS = ("net_cna (daemon)", "net_cna_vf: two VFs through cna-adapterd")


def two_process_configurations(args, pmd):
    return [
        TwoProcessConfig(ADAPTER_ROWS[0],
                         lambda tmp: ([f"net_cna0,daemon={tmp}/adapterd.sock,pf=0"],
                                      [f"net_cna0,daemon={tmp}/adapterd.sock,pf=1"]),
                         setup=lambda tmp: adapter_daemon(args, tmp)),
        TwoProcessConfig(ADAPTER_ROWS[1],
                         lambda tmp: ([f"net_cna_vf0,daemon={tmp}/adapterd.sock,pf=0,vf=0"],
                                      [f"net_cna_vf1,daemon={tmp}/adapterd.sock,pf=0,vf=1"]),
                         setup=lambda tmp: vf_adapter(args, pmd, tmp), mac_forwarding=True),
        TwoProcessConfig(MEMIF_SWITCH, lambda tmp: (
            [f"net_memif0,role=client,socket={tmp}/memif-sw-a.sock,socket-abstract=no"],
            [f"net_memif0,role=client,socket={tmp}/memif-sw-b.sock,socket-abstract=no"]),
            setup=lambda tmp: switch_process(pmd, [
                f"net_memif0,role=server,socket={tmp}/memif-sw-a.sock,socket-abstract=no",
                f"net_memif1,role=server,socket={tmp}/memif-sw-b.sock,socket-abstract=no"])),
        TwoProcessConfig(VHOST_SWITCH, lambda tmp: (
            [f"net_virtio_user0,path={tmp}/vhost-sw-a.sock,queues=1,packed_vq=0"],
            [f"net_virtio_user0,path={tmp}/vhost-sw-b.sock,queues=1,packed_vq=0"]),
            setup=lambda tmp: switch_process(pmd, [
                f"net_vhost0,iface={tmp}/vhost-sw-a.sock,queues=1",
                f"net_vhost1,iface={tmp}/vhost-sw-b.sock,queues=1"])),
        TwoProcessConfig("memif direct (no switch)", lambda tmp: (
            [f"net_memif0,role=server,socket={tmp}/memif2.sock,socket-abstract=no"],
            [f"net_memif0,role=client,socket={tmp}/memif2.sock,socket-abstract=no"])),
        TwoProcessConfig("vhost/virtio direct (no switch)", lambda tmp: (
            [f"net_vhost0,iface={tmp}/vhost2.sock,queues=1"],
            [f"net_virtio_user0,path={tmp}/vhost2.sock,queues=1,packed_vq=0"])),
    ]


def measure_two(pmd, config, tmp, args):
    """Aggregate Rx rates (packets/s, both processes' ports) of the windows
    of one pair of processes: A forwards on CPU 1, B on CPU 0, each main
    lcore idle at its prompt on the other CPU."""
    vdevs_a, vdevs_b = config.sides(tmp)
    with config.setup(tmp):
        a = Session(two_process_eal(pmd, "0@0,1@1", "a"), vdevs_a)
        try:
            b = Session(two_process_eal(pmd, "0@1,1@0", "b"), vdevs_b)
            try:
                for session in (a, b):
                    wait_links_up(session, 1)
                    session.cmd("set txpkts 64")
                if config.mac_forwarding:
                    for session, peer in ((a, b.mac(0)), (b, a.mac(0))):
                        session.cmd("set fwd mac")
                        session.cmd(f"set eth-peer 0 {peer}")
                a.cmd("start")
                b.cmd(f"start tx_first {TWO_PROCESS_TX_FIRST}")
                time.sleep(args.warmup)
                return window_rates([a, b], args)
            finally:
                b.close()
        finally:
            a.close()


def run_two_process(args, pmd):
    """The two-process rows at 64 B: {name: [Run] or why it failed}."""
    print()
    print(f"Two processes, one port each (64 B; process A forwards on CPU 1, B on CPU 0, B starts with "
          f"tx_first {TWO_PROCESS_TX_FIRST}; net_cna through cna-adapterd, its engine thread not pinned; "
          "net_cna_vf: VFs 0 and 1 of PF 0, whose testpmd starts first and never forwards, mac forwarding "
          "to each other's MAC)")
    results = {}
    with tempfile.TemporaryDirectory(prefix="cna-bench-") as tmp:
        for config in two_process_configurations(args, pmd):
            if args.only and not any(o in config.name for o in args.only):
                continue
            try:
                results[config.name] = [Run(measure_two(pmd, config, tmp, args), None, None)
                                        for _ in range(args.runs)]
            except BenchError as e:
                results[config.name] = str(e)
            except (pexpect.ExceptionPexpect, OSError) as e:
                results[config.name] = f"{type(e).__name__}: {e}"
    print_two_process(results)
    return results


def print_two_process(results):
    """The rows, and each adapter row's ratio to each switch row."""
    width = max([22] + [len(name) + 2 for name in results])
    print(f"{'configuration':<{width}}{'median':>9}{'min':>8}{'max':>8}  per pair: median"
          "   (Mpps, aggregate of both ports)")
    print_rows(results, width, 2, lambda run: f"{statistics.median(run.rates) / 1e6:.1f}")
    print("Three busy threads each (two forwarders and the adapter's engine, or the switch process):")
    for ours in ADAPTER_ROWS:
        for switch in SWITCH_ROWS:
            a, b = results.get(ours), results.get(switch)
            if isinstance(a, list) and isinstance(b, list):
                ratio = statistics.median(all_rates(a)) / statistics.median(all_rates(b))
                print(f"  {ours} / {switch}: {ratio:.2f}")
