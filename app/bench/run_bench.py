#!/usr/bin/python3
"""The fastpath benchmark: net_cna against DPDK's own software ports, in one run.

Throughput: Debian's dpdk-testpmd, io forwarding, burst 32, one forwarding
lcore, --no-huge, the same EAL options for every configuration. Each
configuration is two ports forwarding into each other; a fresh testpmd is
started for every (configuration, frame size). After a warm-up, the Rx
counters of both ports are read at the edges of several windows; each window
gives one aggregate Rx rate, and the table shows median, min and max. Under
the table, the comparisons with as many busy cores on each side: net_cna
inline against memif (one core each), and net_cna with its engine thread
against memif on two forwarding lcores with two queues per port (`memif 2
lcores`, two cores each).

Two processes (two_process_rows.py): after the table, testpmd pairs with
one port each, the ports connected across the processes (net_cna through
cna-adapterd's two cabled PFs, two VFs of one PF through cna-adapterd,
memif and vhost/virtio-user through a third testpmd that switches between
them, and memif and vhost/virtio-user directly), at 64 B: the aggregate of
both ports, as above, and the adapter rows' ratios to the switch rows.
`--no-two-process` skips them; `--only` selects them by name as the other
rows (`--only net_cna_vf`: the VF row).

In a guest: testpmd io forwarding on one port in a QEMU/TCG guest booted by
app/vm/vm_run.py, once on a VF of cna-adapterd (one port on a loopback wire)
and once on QEMU's virtio-net-pci with a TAP backend whose host side tc
sends every frame back; the guests alternate, and the last line of the
section is `vm: net_cna_vf/virtio-net: R`, the ratio of their median Rx
rates: TCG makes both slow, the ratio is the figure. `--only vm` runs just
that section (its last line then `net_cna_vf/virtio-net: R`), `--no-vm`
skips it; without root, QEMU or a guest kit it says `vm: skipped: why`.

Instructions: the fastpath harness (fastpath_harness.cpp) runs under
callgrind with collection switched on only inside net_cna's recv_pkts and
xmit_pkts; the inclusive counts divided by the packets give instructions per
packet, the figure to compare between commits (wall-clock rates on a
2-core machine are noisy; instruction counts are not); then again with
Rx timestamps (RTE_ETH_RX_OFFLOAD_TIMESTAMP), and what they add to the
PMD, and to the adapter's Rx engine (RxEngine::receive, which writes the
stamps; on its own thread, or on the lcore with engine=inline).

Rx timestamps in Mpps: the `net_cna` and `net_cna inline` rows at 64 B with
and without testpmd's --enable-rx-timestamp, the two alternating in fresh
processes (a process's rate is settled by how the engine and the
forwarding lcore fall into step: rows run one after the other differ by
more than the stamps cost); the medians and their ratio. `--only
timestamps`, `--no-timestamps`.

Adapter engine: engine_bench (engine_bench.cpp) measures the software
adapter's engine thread alone, driven through the HSI by a host loop that
does no per-packet work, for 64 and 1518 B over 1, 2, 4 and 8 queue pairs;
its table is printed as its own section. `--only engine` (or
`--engine-only`) runs just that section, `--no-engine` skips it.

Port switch: switch_bench (switch_rows.py): rte_flow transfer rules' insertion
and deletion rates, and a frame's lookup as the table grows (1, 1,000 and
100,000 rules), in the embedded adapter's Mpps; `--only switch` runs just
that section, `--no-switch` skips it. Then Open vSwitch (ovs_rows.py): a
VF's stream to another VF and to the wire with its flows offloaded beside
the same through its own DPDK datapath, for each placement of the threads,
`ovs VF->VF offloaded/datapath, <placement>: R`; `--only ovs`, `--no-ovs`.

Precise time (ptp_rows.py): DPDK's ptpclient against linuxptp's ptp4l on a
TAP wire for a minute, the median and 99th percentile of the offsets it
measures; `--only ptp`, `--no-ptp`.

RDMA: rdma_perf (examples/rdma_perf) with both ends in one process on two
cabled ports of one adapter, one application lcore on CPU 1 stepping both
QPs and the adapter's engine thread pinned to CPU 0: RC WRITE, READ and SEND
bandwidth at 64 B, 4 KiB, 64 KiB and 1 MiB, and one-way latency (half the
round trip) of 8-byte SENDs and WRITEs, path MTU 4096 (port MTU 9000);
beside them net_cna's L2 figure of the same run (testpmd io forwarding of
1518-byte frames, as Gbit/s of frames). Then WRITE's 64 B message rate,
8 B one-way latency and 64 KiB bandwidth with `engine=inline` (the
application's lcore runs the adapter's passes: one core) beside the engine
thread, alternating, medians of three, against the marks for inline. Then
what the verbs provider
costs: the same rdma_perf tests built on libibverbs (rdma_perf_verbs) run
under cna-rdma-run on the same ports and CPUs, alternating with the RDMA
PMD's own, WRITE 64 KiB bandwidth and SEND and WRITE 8 B latency, medians of
three; and Debian's perftest through the provider (ib_write_bw 64 KiB,
ib_send_lat and ib_write_lat 8 B), and UCX's UCP tag_bw 64 KiB (over the
provider's rc_verbs, wired up over ud_verbs), beside rdma_perf on the
PMD's API, both between two processes on TAP wires in one bridge (needs
root). `--only rdma`
runs just that section (with the L2 reference),
`--no-rdma` skips it.

The last line is `net_cna/memif: R`, R the ratio of the median aggregate
rates at 64 B; with `--only rdma`, `rdma write 64KiB: X Gbit/s`.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import pexpect

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# The integration suite already knows how to hand the PMD to EAL (it stages
# builds that live below world-writable directories, which EAL refuses).
sys.path.insert(0, os.path.join(ROOT, "app", "test", "integration"))
from harness.testpmd import pmd_path  # noqa: E402
from bench_testpmd import (APP_ARGS, FWD_CPU, MAIN_CPU, TESTPMD, TWO_LCORE_APP_ARGS, TWO_LCORES, BenchError, Run, Session, all_rates,  # noqa: E402
                           core_latency, last_lines, wait_links_up, window_rate, window_rates)
from guest_rows import run_vm  # noqa: E402
from ovs_rows import run_ovs_rows  # noqa: E402
from ptp_rows import run_ptp_rows  # noqa: E402
from switch_rows import run_switch  # noqa: E402
from two_process_rows import run_two_process  # noqa: E402
from verbs_rows import (RDMA_BW_ROW, RDMA_LAT_ROW, print_provider_row, run_daemon_rows,  # noqa: E402
                        run_perftest_rows, run_rdma_cm)

SIZES = (64, 1518)
FWD_LCORES = "0-1"
MEMIF_TWO_LCORES = "memif 2 lcores"


class Config:
    """One benchmark configuration: two ports that forward into each other.

    vdevs(size) gives the --vdev arguments, attach(tmp) the devices that can
    only be hot-plugged once testpmd has configured the first ones, and
    tx_first whether the ports start empty (so `start tx_first` must inject
    the first bursts) or generate traffic themselves.
    """

    def __init__(self, name, vdevs, tx_first=True, attach=None, note="", two_lcores=False, app_extra=()):
        self.name = name
        self.vdevs = vdevs
        self.tx_first = tx_first
        self.attach = attach or (lambda tmp: [])
        self.note = note
        # Two forwarding lcores with two queues per port (bench_testpmd's
        # TWO_LCORES) instead of one.
        self.two_lcores = two_lcores
        self.app_extra = list(app_extra)

    def eal(self, pmd):
        return eal_args(pmd, TWO_LCORES if self.two_lcores else None)

    def app_args(self):
        return (TWO_LCORE_APP_ARGS if self.two_lcores else APP_ARGS) + self.app_extra


def configurations(engine_devarg):
    cna = "net_cna0,adapter=a,ports=2,wire=cable" + engine_devarg
    return [
        Config("net_cna", lambda size, tmp: [cna, "net_cna1,adapter=a,port=1"]),
        # The adapter's dataplane on the forwarding lcore itself: one busy
        # core, as memif's.
        Config("net_cna inline", lambda size, tmp: ["net_cna0,adapter=b,ports=2,wire=cable,engine=inline",
                                                    "net_cna1,adapter=b,port=1"]),
        # Two busy cores, both forwarding: two queues per port, each lcore
        # passing the adapter for its own.
        Config("net_cna inline 2 lcores", lambda size, tmp: ["net_cna0,adapter=c,ports=2,wire=cable,engine=inline",
                                                             "net_cna1,adapter=c,port=1"], two_lcores=True),
        # net_null's Rx synthesises frames of its own `size` devarg on every
        # call: there is nothing to inject, so plain `start`.
        Config("net_null x2", lambda size, tmp: [f"net_null0,size={size}", f"net_null1,size={size}"],
               tx_first=False, note="Rx generates frames; plain start"),
        # A ring port's Tx ring is its own Rx ring: each burst testpmd sends
        # out of a port comes back on it and is forwarded to the other.
        Config("net_ring x2", lambda size, tmp: ["net_ring0", "net_ring1"]),
        Config("memif", lambda size, tmp: [
            f"net_memif0,role=server,socket={tmp}/memif.sock,socket-abstract=no",
            f"net_memif1,role=client,socket={tmp}/memif.sock,socket-abstract=no"]),
        # Two busy cores each: memif on two forwarding lcores against
        # net_cna's one and its engine thread (the first row).
        Config(MEMIF_TWO_LCORES, lambda size, tmp: [
            f"net_memif0,role=server,socket={tmp}/memif2l.sock,socket-abstract=no",
            f"net_memif1,role=client,socket={tmp}/memif2l.sock,socket-abstract=no"], two_lcores=True),
        # net_vhost creates its socket only when testpmd configures the port,
        # after every --vdev was probed; virtio-user, which connects at probe,
        # is therefore attached afterwards.
        Config("vhost/virtio packed", lambda size, tmp: [f"net_vhost0,iface={tmp}/vhost-packed.sock,queues=1"],
               attach=lambda tmp: [f"net_virtio_user0,path={tmp}/vhost-packed.sock,queues=1,packed_vq=1"]),
        Config("vhost/virtio split", lambda size, tmp: [f"net_vhost0,iface={tmp}/vhost-split.sock,queues=1"],
               attach=lambda tmp: [f"net_virtio_user0,path={tmp}/vhost-split.sock,queues=1,packed_vq=0"]),
    ]


def eal_args(pmd, lcores=None):
    # Loading net_cna in every configuration keeps the EAL options identical.
    cores = ["--lcores", lcores] if lcores else ["-l", FWD_LCORES]
    return cores + ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "-d", pmd]


def start_forwarding(session, config, size, tmp, args):
    """Both ports up and forwarding `size`-byte frames."""
    for dev in config.attach(tmp):
        session.cmd(f"port attach {dev}")
        session.cmd("port start all")
    ports = len(re.findall(r"Infos for port", session.cmd("show port info all")))
    if ports != 2:
        raise BenchError(f"{ports} port(s) instead of 2: " + last_lines(session.startup))
    if size > 1514:
        # A frame of `size` bytes without FCS carries size - 14 bytes of
        # L3: above the default MTU of 1500, which net_cna enforces (as
        # hardware does) and the software peers ignore.
        for port in (0, 1):
            session.cmd(f"port config mtu {port} {size - 14}")
    wait_links_up(session, 2)
    session.cmd(f"set txpkts {size}")
    session.cmd(f"start tx_first {args.tx_first}" if config.tx_first else "start")
    time.sleep(args.warmup)


def measure(pmd, config, size, tmp, args):
    """Aggregate Rx rates (packets/s) of the windows of one run."""
    session = Session(config.eal(pmd), config.vdevs(size, tmp), app_args=config.app_args())
    try:
        start_forwarding(session, config, size, tmp, args)
        return window_rates([session], args)
    finally:
        session.close()


def trace(args, pmd):
    """--trace: one net_cna process at 64 B, each second's rate with the
    CPU0-CPU1 round trip measured during that second (while both CPUs
    forward, so about twice the idle figure): the rate follows the
    machine's vCPU placement from second to second (doc/performance.md).
    Run it once per build to compare builds in the same state."""
    config = configurations(engine_devarg(pmd))[0]
    with tempfile.TemporaryDirectory(prefix="cna-bench-") as tmp:
        session = Session(eal_args(pmd), config.vdevs(64, tmp))
        try:
            start_forwarding(session, config, 64, tmp, args)
            reading = session.rx_packets()
            for _ in range(args.trace):
                rtt = core_latency(args)
                time.sleep(max(0.0, 1.0 - (time.monotonic() - reading[0])))
                rate, reading = window_rate(session, reading)
                print(f"{rate / 1e6:.1f} Mpps ({rtt if rtt is not None else '?'} ns)", flush=True)
            session.cmd("stop")
        finally:
            session.close()


def engine_devarg(pmd):
    """`,engine_cpu=N` if the PMD declares that devarg, as dpdk-pmdinfo.py
    would find it: the parameter string is embedded in the .so."""
    with open(pmd, "rb") as f:
        if b"engine_cpu=" in f.read():
            return f",engine_cpu={MAIN_CPU}"
    return ""


def cpu_mhz():
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"cpu MHz\s*:\s*([\d.]+)", f.read())
        return float(m.group(1)) if m else None
    except OSError:
        return None


def measure_run(pmd, config, size, tmp, args):
    before = core_latency(args)
    rates = measure(pmd, config, size, tmp, args)
    return Run(rates, before, core_latency(args))


def run_throughput(args, pmd):
    eal = eal_args(pmd)
    devarg = engine_devarg(pmd)
    print("testpmd: " + " ".join([TESTPMD] + eal + ["--vdev ..."] + ["--"] + APP_ARGS))
    print(f"{MEMIF_TWO_LCORES}: --lcores {TWO_LCORES} ... -- " + " ".join(TWO_LCORE_APP_ARGS))
    print(f"windows: {args.windows} x {args.window:g} s after {args.warmup:g} s warm-up, "
          f"in each of {args.runs} fresh testpmd run(s) per row; median, min and max over all of them")
    configs = configurations(devarg)
    results = {}  # (name, size) -> each process's Run, or a string saying why it failed
    with tempfile.TemporaryDirectory(prefix="cna-bench-") as tmp:
        for size in SIZES:
            for config in configs:
                if args.only and not any(o in config.name for o in args.only):
                    continue
                try:
                    # Several processes, not only several windows: net_cna's
                    # rate depends on how the engine and the forwarding lcore
                    # fall into step, which is settled once per process.
                    results[(config.name, size)] = [measure_run(pmd, config, size, tmp, args)
                                                    for _ in range(args.runs)]
                except BenchError as e:
                    results[(config.name, size)] = str(e)
                except (pexpect.ExceptionPexpect, OSError) as e:
                    results[(config.name, size)] = f"{type(e).__name__}: {e}"
    if devarg:
        print(f"net_cna adapter engine: pinned to CPU {MAIN_CPU} ({devarg[1:]}); forwarding lcore on CPU 1")
    else:
        print("net_cna adapter engine: NOT pinned (the PMD has no engine_cpu devarg yet); "
              "the scheduler places it")
    print_table(configs, results, args)
    return results


def print_table(configs, results, args):
    mhz = cpu_mhz()
    print()
    print(f"{'configuration':<22}{'frame':>6}{'median':>9}{'min':>8}{'max':>8}"
          f"{'/memif':>8}{'fwd-core cyc/pkt':>18}  per process: median (CPU0-CPU1 round trip before/after, ns)"
          "   (Mpps, aggregate of both ports)")
    for size in SIZES:
        memif = results.get(("memif", size))
        for config in configs:
            r = results.get((config.name, size))
            if r is None:
                continue
            if isinstance(r, str):
                print(f"{config.name:<22}{size:>6}  failed: {r}")
                continue
            runs = r
            r = all_rates(runs)
            med = statistics.median(r)
            ratio = f"{med / statistics.median(all_rates(memif)):.2f}" if isinstance(memif, list) else "-"
            # Cycles of the forwarding core per packet forwarded (one port's
            # Rx and the other's Tx): net_cna's adapter engine runs elsewhere.
            cyc = f"{mhz * 1e6 / med:.0f}" if mhz else "-"
            per_process = " ".join(f"{statistics.median(run.rates) / 1e6:.1f} ({run.rtt[0]}/{run.rtt[1]})"
                                   for run in runs)
            print(f"{config.name:<22}{size:>6}{med / 1e6:>9.2f}{min(r) / 1e6:>8.2f}{max(r) / 1e6:>8.2f}"
                  f"{ratio:>8}{cyc:>18}  {per_process}")
    # The comparisons with as many busy cores on both sides.
    for name, peer, cores in (("net_cna inline", "memif", "one core each"),
                              ("net_cna", MEMIF_TWO_LCORES, "two cores each (net_cna: forwarding lcore and engine thread)"),
                              ("net_cna inline 2 lcores", MEMIF_TWO_LCORES, "two cores each, both forwarding")):
        ratios = []
        for size in SIZES:
            ours, theirs = results.get((name, size)), results.get((peer, size))
            if isinstance(ours, list) and isinstance(theirs, list):
                ratios.append(f"{size} B {statistics.median(all_rates(ours)) / statistics.median(all_rates(theirs)):.2f}")
        if ratios:
            print(f"{cores}: {name}/{peer}: " + ", ".join(ratios))
    notes = [f"{c.name}: {c.note}" for c in configs if c.note]
    print(f"start: tx_first {args.tx_first} ({args.tx_first} x 32 packets injected per port) except "
          + "; ".join(notes))


# ---- callgrind: instructions per packet in the PMD's fastpath ---------------

def callgrind_counts(args, pmd, mode=None):
    """The harness under callgrind (`mode`: its offloads|timestamp, None for
    neither): (summary, {burst function: inclusive instructions}), or a
    string saying why not."""
    harness = os.path.join(args.build, "app", "bench", "fastpath_harness")
    if not os.access(harness, os.X_OK):
        return f"skipped, {harness} not built"
    with tempfile.TemporaryDirectory(prefix="cna-callgrind-") as tmp:
        out_file = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
               "--toggle-collect=cna::net::recv_pkts*", "--toggle-collect=cna::net::xmit_pkts*",
               "--toggle-collect=cna::fw::RxEngine::receive(*",
               harness, "-l", "0", "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
               "--no-telemetry", "--log-level=lib.*:warning", "-d", pmd, "--vdev", "net_cna0,wire=loopback",
               "--", str(args.iterations)] + ([mode] if mode else [])
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=args.callgrind_timeout)
        except subprocess.TimeoutExpired:
            return f"failed, harness did not finish within {args.callgrind_timeout} s"
        m = re.search(r"checksum\s+(\S+)\s+packets\s+(\d+)\s+rx_calls\s+(\d+)\s+tx_calls\s+(\d+)", run.stdout)
        if run.returncode != 0 or not m or not os.path.exists(out_file):
            return "failed: " + last_lines(run.stdout + run.stderr, 5)
        ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", out_file],
                             capture_output=True, text=True).stdout
    # Whichever burst functions the port chose (recv_pkts or recv_pkts_avx2,
    # ...), each with its own line.
    per_fn = {}
    for base in ("recv_pkts", "xmit_pkts"):
        found = re.findall(r"^\s*([\d,]+)\s+\([^)]*\)\s+\S*cna::net::(" + base + r"\w*)\(", ann, re.M)
        if not found:
            return f"no inclusive count for {base}* in callgrind_annotate's output"
        for count, name in found:
            per_fn[name] = int(count.replace(",", ""))
    engine = re.search(r"^\s*([\d,]+)\s+\([^)]*\)\s+\S*cna::fw::RxEngine::receive\(", ann, re.M)
    if not engine:
        return "no inclusive count for RxEngine::receive in callgrind_annotate's output"
    summary = {"checksum": m.group(1), "packets": int(m.group(2)), "rx_calls": m.group(3), "tx_calls": m.group(4),
               "engine_rx": int(engine.group(1).replace(",", ""))}
    return summary, per_fn


def run_callgrind(args, pmd):
    """Instructions per packet of the burst functions, then of the same with
    Rx timestamps (RTE_ETH_RX_OFFLOAD_TIMESTAMP) and what they add, to them
    and to the adapter's Rx engine."""
    sums, engine = {}, {}
    for mode in (None, "timestamp"):
        counted = callgrind_counts(args, pmd, mode)
        if isinstance(counted, str):
            print(f"callgrind{' (' + mode + ')' if mode else ''}: {counted}")
            return
        summary, per_fn = counted
        packets = summary["packets"]
        print(f"callgrind{', Rx timestamps' if mode else ''}: {packets} packets of 64 B in bursts of 32 on a "
              f"loopback port (rx_burst calls {summary['rx_calls']}, tx_burst calls {summary['tx_calls']}), "
              f"checksum {summary['checksum']}")
        for name, ir in per_fn.items():
            print(f"  {name:<26} {ir / packets:8.1f} instructions/packet (inclusive)")
        sums[mode] = sum(per_fn.values()) / packets
        print(f"  {'sum':<26} {sums[mode]:8.1f} instructions/packet")
        engine[mode] = summary["engine_rx"] / packets
        print(f"  {'adapter: RxEngine::receive':<26} {engine[mode]:8.1f} instructions/frame (inclusive)")
    print(f"callgrind: Rx timestamps cost {sums['timestamp'] - sums[None]:.1f} instructions/packet "
          f"({(sums['timestamp'] / sums[None] - 1) * 100:+.1f} %), the adapter's Rx engine "
          f"{engine['timestamp'] - engine[None]:.1f} instructions/frame "
          f"({(engine['timestamp'] / engine[None] - 1) * 100:+.1f} %)")


def run_timestamps(args, pmd, callgrind):
    """Rx timestamps' cost in Mpps (see the module's docstring), and in
    instructions with `callgrind` (the throughput section counts them
    otherwise); False if it could not be measured."""
    print()
    if callgrind and not args.no_callgrind and shutil.which("valgrind"):
        run_callgrind(args, pmd)
    configs = {c.name: c for c in configurations(engine_devarg(pmd))}
    ok = True
    with tempfile.TemporaryDirectory(prefix="cna-bench-") as tmp:
        for name in ("net_cna", "net_cna inline"):
            plain = configs[name]
            stamped = Config(name, plain.vdevs, app_extra=["--enable-rx-timestamp"])
            rates = {plain: [], stamped: []}
            try:
                for _ in range(args.timestamp_pairs):
                    for config in (plain, stamped):
                        rates[config] += measure(pmd, config, 64, tmp, args)
            except (BenchError, pexpect.ExceptionPexpect, OSError) as e:
                print(f"rx timestamps, {name}: failed, {e}")
                ok = False
                continue
            without, with_stamps = statistics.median(rates[plain]), statistics.median(rates[stamped])
            print(f"rx timestamps, {name}, 64 B: {with_stamps / 1e6:.2f} Mpps with, {without / 1e6:.2f} without "
                  f"({with_stamps / without:.3f}), {args.timestamp_pairs} alternating processes each")
    return ok


# ---- RDMA: RC between two cabled ports, rdma_perf ----------------------------

RDMA_SIZES = (64, 4096, 65536, 1 << 20)
ENGINE_THREAD = f"engine_cpu={MAIN_CPU}"


def rdma_perf(args, options, timeout=120, verbs=False, engine=ENGINE_THREAD):
    """rdma_perf --cable with `options`: its output, or BenchError. With
    `verbs`, rdma_perf_verbs (the same tests on libibverbs) under
    cna-rdma-run, on the same two cabled ports through cna's provider, its
    thread on the same CPU. `engine`: the adapter's placement devarg(s)."""
    tag = f"cnabench{os.getpid()}"
    name = "rdma_perf_verbs" if verbs else "rdma_perf"
    perf = os.path.join(args.build, "examples", "rdma_perf", name)
    ports = [f"adapter={tag},ports=2,wire=cable,{engine}", f"adapter={tag},port=1"]
    if verbs:
        rdma_run = os.path.join(args.build, "pmd", "rdma", "provider", "cna-rdma-run")
        argv = ["taskset", "-c", str(FWD_CPU), rdma_run, perf, "--cable", *options]
        env = dict(os.environ, CNA_RDMA_DEVARGS=";".join(ports), CNA_RDMA_MTU="9000")
    else:
        eal = ["-l", str(FWD_CPU), "--no-huge", "-m", "1024", "--no-pci", "--no-shconf", "--no-telemetry",
               "--file-prefix", tag, "--log-level=lib.*:warning",
               "--vdev", f"net_cna0,{ports[0]}", "--vdev", f"net_cna1,{ports[1]}"]
        argv = [perf, *eal, "--", "--cable", "--port-mtu", "9000", *options]
        env = None
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{name} {' '.join(options)} did not finish within {timeout} s")
    if run.returncode != 0:
        raise BenchError(f"{name} {' '.join(options)} failed ({run.returncode}): "
                         + last_lines(run.stdout + run.stderr, 4))
    return run.stdout


def rdma_iterations(size, budget_bytes=2 << 30):
    """About 2 GiB per size, at least 20000 messages and at most 2 million."""
    return max(20000, min(2_000_000, budget_bytes // size))


def run_rdma(args, l2_results):
    """The RDMA table: bandwidth per (opcode, size), one-way latency at 8 B.
    Returns the WRITE 64 KiB average Gbit/s, or None."""
    print()
    print("RDMA (rdma_perf --cable: two cabled ports of one adapter, one app lcore on CPU "
          f"{FWD_CPU}, engine pinned to CPU {MAIN_CPU}; path MTU 4096)")
    print("Each row is one rdma_perf process, followed by the CPU0-CPU1 round trip (ns) before/after it")
    print(f"{'operation':<12}{'size':>9}{'iterations':>12}{'Gbit/s avg':>12}{'Gbit/s peak':>13}{'Mmsg/s':>9}")
    write_64k = None

    def measured(test, size, options, regex):
        """rdma_perf's result row for `options`, and the round trips around
        it; None (and a line saying why) when it failed."""
        before = core_latency(args)
        try:
            m = regex.search(rdma_perf(args, ["-T", test, *options]))
            if not m:
                raise BenchError("no result row")
        except BenchError as e:
            print(f"{test:<12}{size:>9}  failed: {e}")
            return None
        return m, f"   ({before or '?'}/{core_latency(args) or '?'})"

    for test in ("write", "read", "send"):
        for size in RDMA_SIZES:
            iters = rdma_iterations(size)
            row = measured(test, size, ["-s", str(size), "-n", str(iters)], RDMA_BW_ROW)
            if row is None:
                continue
            m, rtt = row
            peak, avg, rate = float(m.group(3)), float(m.group(4)), float(m.group(5))
            print(f"{test:<12}{size:>9}{iters:>12}{avg:>12.1f}{peak:>13.1f}{rate:>9.2f}{rtt}")
            if test == "write" and size == 65536:
                write_64k = avg
    print(f"{'latency':<12}{'size':>9}{'iterations':>12}{'typical us':>12}{'min us':>13}{'99% us':>9}   (one way)")
    for test in ("send", "write"):
        row = measured(test, 8, ["--latency", "-s", "8", "-n", "20000"], RDMA_LAT_ROW)
        if row is None:
            continue
        m, rtt = row
        print(f"{test:<12}{8:>9}{int(m.group(2)):>12}{float(m.group(5)):>12.2f}{float(m.group(3)):>13.2f}"
              f"{float(m.group(8)):>9.2f}{rtt}")
    l2 = l2_results.get(("net_cna", 1518))
    if isinstance(l2, list):
        mpps = statistics.median(all_rates(l2)) / 1e6
        print(f"L2 reference, same run: net_cna testpmd io forwarding at 1518 B: {mpps:.2f} Mpps = "
              f"{mpps * 1518 * 8 / 1e3:.1f} Gbit/s of frames (aggregate of both ports)")
    else:
        print("L2 reference: not measured")
    return write_64k


def alternating(args, options, regex, group, rounds, variants):
    """{variant: [its figure in each round]}: rdma_perf with `options` run
    under each of `variants` (rdma_perf's keyword arguments, by variant) in
    turn, `rounds` times; BenchError if a run gave no result row."""
    figures = {variant: [] for variant in variants}
    for _ in range(rounds):
        for variant, kwargs in variants.items():
            m = regex.search(rdma_perf(args, options, **kwargs))
            if not m:
                raise BenchError("no result row")
            figures[variant].append(float(m.group(group)))
    return figures


def run_rdma_inline(args, rounds=3):
    """rdma_perf with engine=inline (the application's lcore runs the
    adapter's passes: one core) beside the engine thread (two cores), the
    same tests alternating, medians of `rounds`, with issue 29's marks for
    inline. False if a row failed."""
    print()
    print("RDMA with engine=inline (one core: the app lcore on CPU "
          f"{FWD_CPU} also runs the adapter) beside the engine thread (pinned to CPU {MAIN_CPU}: two cores), "
          f"alternating, medians of {rounds}")
    print(f"{'row':<24}{'threads':>10}{'inline':>10}{'mark (inline)':>16}")
    # (label, options, regex, group, the mark and whether it is a floor)
    rows = (("write 64 B Mmsg/s", ["-T", "write", "-s", "64", "-n", "2000000"], RDMA_BW_ROW, 5, 10.0, True),
            ("write 8 B one-way us", ["-T", "write", "--latency", "-s", "8", "-n", "20000"], RDMA_LAT_ROW, 5, 0.3,
             False),
            ("write 64 KiB Gbit/s", ["-T", "write", "-s", "65536", "-n", str(rdma_iterations(65536))], RDMA_BW_ROW,
             4, 80.0, True))
    ok = True
    placements = {"threads": {"engine": ENGINE_THREAD}, "inline": {"engine": "engine=inline"}}
    for label, options, regex, group, mark, floor in rows:
        try:
            figures = alternating(args, options, regex, group, rounds, placements)
        except BenchError as e:
            print(f"{label:<24}  failed: {e}")
            ok = False
            continue
        threads, inline = statistics.median(figures["threads"]), statistics.median(figures["inline"])
        met = inline >= mark if floor else inline <= mark
        print(f"{label:<24}{threads:>10.2f}{inline:>10.2f}{('>= ' if floor else '<= ') + f'{mark:g}':>11} "
              f"{'met' if met else 'not met'}")
    return ok


def run_verbs_provider(args, rounds=3):
    """What cna's verbs provider costs: the same rdma_perf tests on
    libibverbs (rdma_perf_verbs under cna-rdma-run) and on the RDMA PMD's
    own API, same ports, CPUs and options, alternating; medians of
    `rounds`. False if a row failed."""
    print()
    print("RDMA through the verbs provider: rdma_perf_verbs (libibverbs, cna's provider, under cna-rdma-run) "
          "beside rdma_perf (the RDMA PMD's API), the same tests, ports and CPUs as above, "
          f"alternating, medians of {rounds}")
    print(f"{'row':<24}{'RDMA PMD':>10}{'provider':>10}{'provider cost':>16}")
    rows = (("write 64 KiB Gbit/s", ["-T", "write", "-s", "65536", "-n", str(rdma_iterations(65536))],
             RDMA_BW_ROW, 4, True),
            ("send 8 B one-way us", ["-T", "send", "--latency", "-s", "8", "-n", "20000"], RDMA_LAT_ROW, 5, False),
            ("write 8 B one-way us", ["-T", "write", "--latency", "-s", "8", "-n", "20000"], RDMA_LAT_ROW, 5,
             False))
    ok = True
    for label, options, regex, group, bandwidth in rows:
        try:
            figures = alternating(args, options, regex, group, rounds, {False: {"verbs": False}, True: {"verbs": True}})
        except BenchError as e:
            print(f"{label:<24}  failed: {e}")
            ok = False
            continue
        print_provider_row(label, 24, figures, bandwidth)
    return ok


# ---- the adapter engine alone ----------------------------------------------

def run_engine(args):
    """engine_bench's sections, printed as they come: queues and buffers on
    one engine thread, then 1 and 2 engine threads (one loopback port or
    cable pair each, on CPUs 0 and 1; the host loop shares CPU 1 with the
    second). False if one failed."""
    common = ["--windows", str(args.windows), "--window", f"{args.engine_window:g}",
              "--warmup", f"{args.engine_warmup:g}", "--wire", args.engine_wire, "--host-cpu", "1"]
    # rows: sizes x (queue counts, own and shared Rx buffers), engine_bench's defaults; then sizes x threads
    return (engine_bench(args, common + ["--engine-cpus", str(MAIN_CPU)], rows=2 * (4 + 3)) and
            engine_bench(args, common + ["--engine-threads", "1,2", "--engine-cpus", "0,1", "--queues", "1",
                                         "--rx-buffers", "queue"], rows=2 * 2))


def engine_bench(args, options, rows):
    bench = os.path.join(args.build, "app", "bench", "engine_bench")
    if not os.access(bench, os.X_OK):
        print(f"engine: failed, {bench} not built")
        return False
    # Every wait inside is bounded; this only catches a wedged adapter.
    timeout = 60 + rows * (args.engine_warmup + args.windows * args.engine_window + 10)
    print()
    try:
        run = subprocess.run([bench] + options, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        print(out, end="")
        print(f"engine: failed, engine_bench did not finish within {timeout:.0f} s")
        return False
    print(run.stdout, end="")
    if run.returncode != 0:
        print(f"engine: failed (exit {run.returncode}): " + last_lines(run.stderr, 5))
        return False
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build-bench"), help="meson build directory (release)")
    p.add_argument("--windows", type=int, default=3, help="windows per testpmd process")
    p.add_argument("--window", type=float, default=1.0, help="seconds per window")
    p.add_argument("--runs", type=int, default=5, help="fresh testpmd processes per configuration and size")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds before the first window")
    p.add_argument("--tx-first", type=int, default=1, metavar="BURSTS",
                   help="32-packet bursts each port injects at start (`start tx_first BURSTS`)")
    p.add_argument("--only", nargs="*",
                   help="configurations whose name contains one of these; `engine`, `rdma`, `vm`, `switch`, "
                        "`ovs` and `ptp` select the engine, RDMA, guest, port switch, Open vSwitch and precise "
                        "time sections")
    p.add_argument("--engine-only", action="store_true", help="only the adapter engine section (engine_bench)")
    p.add_argument("--no-engine", action="store_true", help="skip the adapter engine section")
    p.add_argument("--no-rdma", action="store_true", help="skip the RDMA section")
    p.add_argument("--no-two-process", action="store_true", help="skip the two-process rows")
    p.add_argument("--no-vm", action="store_true", help="skip the guest rows (the VF beside virtio-net)")
    p.add_argument("--no-switch", action="store_true", help="skip the port switch's rows (switch_bench)")
    p.add_argument("--no-ovs", action="store_true", help="skip the Open vSwitch rows (offloaded and not)")
    p.add_argument("--no-ptp", action="store_true", help="skip the precise time row (ptpclient against ptp4l)")
    p.add_argument("--no-timestamps", action="store_true", help="skip the Rx timestamps' rows")
    p.add_argument("--timestamp-pairs", type=int, default=6, help="processes with and without Rx timestamps")
    p.add_argument("--vm-runs", type=int, default=3, help="guests per guest row")
    p.add_argument("--vm-window", type=float, default=5.0, help="seconds per window in a guest")
    p.add_argument("--vm-warmup", type=float, default=5.0, help="seconds before a guest's first window")
    p.add_argument("--engine-window", type=float, default=0.5, help="seconds per engine_bench window")
    p.add_argument("--engine-warmup", type=float, default=0.5, help="seconds before engine_bench's first window")
    p.add_argument("--engine-wire", choices=("loopback", "cable"), default="loopback",
                   help="engine_bench: one loopback port, or two cabled ports sending to each other")
    p.add_argument("--iterations", type=int, default=2000, help="harness bursts under callgrind")
    p.add_argument("--callgrind-timeout", type=int, default=600)
    p.add_argument("--no-callgrind", action="store_true")
    p.add_argument("--trace", type=int, metavar="SECONDS",
                   help="only: net_cna at 64 B in one testpmd process, each second's rate and CPU0-CPU1 round trip")
    args = p.parse_args()
    if args.engine_only and args.no_engine:
        p.error("--engine-only and --no-engine exclude each other")
    only = [o for o in (args.only or []) if o not in ("engine", "rdma", "vm", "switch", "ovs", "ptp", "timestamps")]
    rdma_only = args.only == ["rdma"]
    vm_only = args.only == ["vm"]
    # testpmd and callgrind unless only the engine was asked for; the engine
    # unless skipped or --only names configurations but not it; RDMA unless
    # skipped or --only names something else. `--only rdma` measures
    # net_cna's L2 reference alongside, nothing else. The guests as RDMA.
    with_testpmd = not args.engine_only and (not args.only or bool(only) or rdma_only)
    with_engine = not args.no_engine and (args.engine_only or not args.only or "engine" in args.only)
    with_rdma = not args.no_rdma and not args.engine_only and (not args.only or "rdma" in args.only)
    with_vm = not args.no_vm and not args.engine_only and (not args.only or "vm" in args.only)
    with_switch = not args.no_switch and not args.engine_only and (not args.only or "switch" in args.only)
    with_ovs = not args.no_ovs and not args.engine_only and (not args.only or "ovs" in args.only)
    with_ptp = not args.no_ptp and not args.engine_only and (not args.only or "ptp" in args.only)
    with_timestamps = not args.no_timestamps and not args.engine_only and (not args.only or "timestamps" in args.only)
    args.only = ["net_cna"] if rdma_only else only
    if rdma_only:
        args.no_callgrind = True
        args.no_two_process = True

    so = os.path.join(args.build, "pmd", "net", "librte_net_cna.so")
    if not os.path.exists(so):
        sys.exit(f"{so} not found: build first (meson setup {args.build} -Dbuildtype=release)")
    pmd = pmd_path(args.build)
    if args.trace:
        return trace(args, pmd)
    # Other work on a 2-core machine skews every figure: say how busy it was.
    print(f"cna benchmark, {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f} at start")
    results = {}
    if with_testpmd:
        if not args.no_callgrind and shutil.which("valgrind"):
            run_callgrind(args, pmd)
        results = run_throughput(args, pmd)
        if not args.no_two_process:
            run_two_process(args, pmd)
    vm_ratio = run_vm(args, pmd) if with_vm else None
    engine_ok = run_engine(args) if with_engine else True
    switch_ok = run_switch(args, pmd) if with_switch else True
    switch_ok = (run_ovs_rows(args) if with_ovs else True) and switch_ok
    ptp_ok = run_ptp_rows(args) if with_ptp else True
    time_ok = (run_timestamps(args, pmd, not with_testpmd) if with_timestamps else True) and ptp_ok
    write_64k = run_rdma(args, results) if with_rdma else None
    if with_rdma:
        run_rdma_inline(args)
        run_verbs_provider(args)
        run_perftest_rows(args)
        run_daemon_rows(args)
        run_rdma_cm(args)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")

    # The last line, whatever ran.
    if rdma_only:
        print(f"rdma write 64KiB: {write_64k:.1f} Gbit/s" if write_64k is not None else "rdma write 64KiB: n/a")
        sys.exit(0 if write_64k is not None else 1)
    if vm_only:
        print(f"net_cna_vf/virtio-net: {vm_ratio:.2f}" if vm_ratio is not None else "net_cna_vf/virtio-net: n/a")
        sys.exit(0 if vm_ratio is not None else 1)
    cna, memif = results.get(("net_cna", 64)), results.get(("memif", 64))
    if isinstance(cna, list) and isinstance(memif, list):
        print(f"net_cna/memif: {statistics.median(all_rates(cna)) / statistics.median(all_rates(memif)):.2f}")
    else:
        print("net_cna/memif: n/a")
        if with_testpmd:
            sys.exit(1)
    if not engine_ok or not switch_ok or not time_ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
