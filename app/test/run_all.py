#!/usr/bin/python3
"""Run every cna test: googletest unit suites (through meson test) and the
integration suites that drive Debian's testpmd, for the regular build and,
when given, for the ASan+UBSan build; the unit suites again on the
ThreadSanitizer build, when given. Ends with one line `N passed, N failed`.
"""
import argparse
import faulthandler
import os
import re
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
INTEGRATION = os.path.join(HERE, "integration")
STATIC = os.path.join(HERE, "static")
# The regular build's integration suites that run a second time on the
# scalar fastpath (EAL limited to 64-bit vectors): the default run takes the
# vector path where the CPU has AVX2.
SCALAR_SUITES = ["test_foundation", "test_classification", "test_l2_acceptance"]
SCALAR_EAL = {"CNA_TESTPMD_EAL_EXTRA": "--force-max-simd-bitwidth=64"}
# The integration suites the ASan+UBSan build runs again: those that feed
# the parsers untrusted input (devargs, packets from the kernel, the
# firmware image, VF and daemon messages, verbs from unmodified
# applications, faults) and those that run the threads (engines, passes on
# lcores and service cores, interrupt thread, secondaries, killed clients,
# link flaps under load). The others
# (guests, installation and packaging, examples, figures, the soak's
# repetition of the control paths these cover) run once, in the regular
# pass; the fuzz targets and the TSan units cover their parsers and threads.
SANITIZED_SUITES = ["test_foundation", "test_error_paths", "test_fw_files", "test_classification",
                    "test_l2_acceptance", "test_l2_acceptance_ops", "test_l2_acceptance_tx", "test_flow",
                    "test_sriov", "test_daemon", "test_multiprocess", "test_stress", "test_verbs_provider",
                    "test_rdma_pingpong", "test_engine_placement", "test_rdma_cm", "test_switchdev"]


# The integration tests that failed, with their tracebacks' last lines,
# printed again at the end: CI keeps a run's head and tail, not its middle.
RECAP = []
RECAP_LINES = 40


def print_recap():
    for name, trace in RECAP:
        print(f"failed: {name}")
        for line in trace.rstrip().splitlines()[-RECAP_LINES:]:
            print(f"  | {line}")


def run_unit(build, label, env_extra):
    """meson test runs each googletest binary; count their test cases."""
    env = dict(os.environ)
    # the unit binaries are instrumented themselves: no preloading
    env.update({k: v for k, v in env_extra.items() if k != "LD_PRELOAD"})
    proc = subprocess.run(["meson", "test", "-C", build, "--print-errorlogs", "--no-rebuild", "-v"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out = proc.stdout
    passed = sum(int(n) for n in re.findall(r"\[  PASSED  \] (\d+) tests?", out))
    failed = sum(int(n) for n in re.findall(r"\[  FAILED  \] (\d+) tests?, listed below", out))
    if proc.returncode != 0 and failed == 0:
        failed = 1  # a binary crashed or failed to start
    for line in out.splitlines():
        if "FAILED" in line or "Sanitizer" in line or "runtime error" in line:
            print(f"  [{label}] {line}")
    print(f"[{label}] unit: {passed} passed, {failed} failed")
    if proc.returncode != 0:
        print(out[-6000:])
    return passed, failed


# No test takes this long (the slowest, guests' and perftest's, take a few
# minutes): one that does is stuck, and is ended with a report rather than
# left to run into CI's time limit with the rest of the run.
TEST_LIMIT = float(os.environ.get("CNA_TEST_LIMIT", "900"))
# What a stuck test's clean-up may take after its processes were killed.
CLEANUP_LIMIT = 120.0


class TestTimeLimit(Exception):
    pass


def parent_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def descendants():
    """The pids of every process this one started, directly or not."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = parent_of(entry)
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


class TimedResult(unittest.TextTestResult):
    """Keeps each module's seconds (its tests', setUpClass's aside), and ends
    a test still running after TEST_LIMIT: a report of the machine (what
    runs, what the kernel holds up), its processes killed, TestTimeLimit
    raised in it; if its clean-up does not end either, the run."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.module_seconds = {}
        self._t0 = 0.0
        self._test = None
        self._killed = False  # the test's processes were killed: its clean-up runs
        signal.signal(signal.SIGALRM, self._over_time)

    def startTest(self, test):
        self._t0 = time.monotonic()
        self._test = test
        self._killed = False
        signal.setitimer(signal.ITIMER_REAL, TEST_LIMIT)
        super().startTest(test)

    def _over_time(self, signum, frame):
        from harness.testpmd import machine_snapshot
        seconds = time.monotonic() - self._t0
        print(f"\n{self._test.id()} still runs after {seconds:.0f} s; the machine:\n{machine_snapshot()}\n"
              "where the test stands:", flush=True)
        faulthandler.dump_traceback(sys.stdout, all_threads=False)
        if self._killed:
            print("its clean-up did not end either: the run ends here", flush=True)
            os._exit(1)
        for pid in descendants():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self._killed = True
        signal.setitimer(signal.ITIMER_REAL, CLEANUP_LIMIT)
        raise TestTimeLimit(f"still running after {TEST_LIMIT:.0f} s: its processes were killed")

    def stopTest(self, test):
        signal.setitimer(signal.ITIMER_REAL, 0)
        super().stopTest(test)
        module = type(test).__module__
        self.module_seconds[module] = self.module_seconds.get(module, 0.0) + time.monotonic() - self._t0


def leftover_processes(build):
    """Processes still running that name the build directory on their
    command line (a daemon, an example, testpmd with the PMD, a guest's
    vm_run): what a suite started and did not stop. Not this process or
    its ancestors."""
    build = os.path.realpath(build).encode()
    ours = set()
    pid = os.getpid()
    while pid > 1:
        ours.add(pid)
        try:
            pid = parent_of(pid)
        except OSError:
            break
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in ours:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if any(build in arg for arg in argv):
            found[int(entry)] = b" ".join(argv).decode(errors="replace").strip()
    return found


def run_integration(build, label, env_extra, modules=None):
    os.environ.update(env_extra)
    os.environ["CNA_BUILD"] = build
    sys.path.insert(0, INTEGRATION)
    if modules:
        suite = unittest.defaultTestLoader.loadTestsFromNames(modules)
    else:
        suite = unittest.defaultTestLoader.discover(INTEGRATION, pattern="test_*.py", top_level_dir=INTEGRATION)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout, resultclass=TimedResult).run(suite)
    print(f"[{label}] integration: the slowest modules: " +
          ", ".join(f"{m} {t:.0f} s" for m, t in sorted(result.module_seconds.items(), key=lambda e: -e[1])[:8]))
    failed = len(result.failures) + len(result.errors)
    for test, trace in result.failures + result.errors:
        RECAP.append((f"[{label}] {test.id()}", trace))
    # Each left-behind process is a failure, and is killed: it would skew
    # the next suite and outlive the run.
    for pid, argv in leftover_processes(build).items():
        print(f"[{label}] integration: left running by the suite: {pid} {argv[:200]}")
        failed += 1
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    # A class skipped in its setUpClass is one skip, of no test run.
    skipped_runs = sum(isinstance(test, unittest.TestCase) for test, _ in result.skipped)
    passed = result.testsRun - failed - skipped_runs
    print(f"[{label}] integration: {passed} passed, {failed} failed, {len(result.skipped)} skipped")
    for k in env_extra:
        os.environ.pop(k, None)
    return passed, failed


def run_static():
    """The tree's own rules: the layer order of every include, the docs'
    source tables true to the tree."""
    suite = unittest.defaultTestLoader.discover(STATIC, pattern="test_*.py", top_level_dir=STATIC)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors)
    print(f"[static] {result.testsRun - failed} passed, {failed} failed")
    return result.testsRun - failed, failed


def run_fuzz(build, seconds):
    """libFuzzer targets (clang, ASan+UBSan) on the parsers facing untrusted input."""
    script = os.path.join(HERE, "fuzz", "run_fuzz.sh")
    proc = subprocess.run([script, build, str(seconds)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(proc.stdout)
    m = re.search(r"fuzz: (\d+) passed, (\d+) failed", proc.stdout)
    if not m:
        return 0, 1
    return int(m.group(1)), int(m.group(2))


def sanitizer_env():
    lib = subprocess.run(["gcc", "-print-file-name=libasan.so"], stdout=subprocess.PIPE, text=True).stdout.strip()
    ubsan = subprocess.run(["gcc", "-print-file-name=libubsan.so"], stdout=subprocess.PIPE, text=True).stdout.strip()
    return {
        # testpmd is not instrumented: the runtimes must come first.
        "LD_PRELOAD": f"{lib} {ubsan}",
        # DPDK maps large address ranges and keeps memory for the process lifetime.
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1:halt_on_error=1",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
    }


def tsan_env():
    # No suppressions: host and device hand over memory with release stores
    # and acquire loads (osal::publish/observe), which TSan follows; a report
    # fails the suite (exit code 66) after every race has been printed.
    return {"TSAN_OPTIONS": "halt_on_error=0:second_deadlock_stack=1:history_size=4"}


class Phases:
    """How long each phase took: ./cna test's set-up ones (CNA_SETUP_PHASES,
    `name=seconds;...`, a name given twice adding up) and the suites'."""

    def __init__(self):
        self.times = {}
        for entry in filter(None, os.environ.get("CNA_SETUP_PHASES", "").split(";")):
            name, _, seconds = entry.rpartition("=")
            self.add(name, float(seconds))

    def add(self, name, seconds):
        self.times[name] = self.times.get(name, 0.0) + seconds

    def run(self, name, call, *args):
        t0 = time.monotonic()
        try:
            return call(*args)
        finally:
            self.add(name, time.monotonic() - t0)

    def print(self):
        print("phase times:")
        for name, seconds in self.times.items():
            print(f"  {name:<36}{seconds:>7.0f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--sanitized-build")
    ap.add_argument("--tsan-build", help="a ThreadSanitizer build whose unit suites to run")
    ap.add_argument("--only", choices=["static", "unit", "integration", "fuzz"])
    ap.add_argument("--fuzz-seconds", type=int, default=0, help="run each fuzz target this long (0: no fuzzing)")
    args = ap.parse_args()

    t0 = time.monotonic()
    phases = Phases()
    totals = [0, 0]
    if args.only in (None, "static"):
        p, f = phases.run("[static] layers and docs", run_static)
        totals[0] += p
        totals[1] += f
    runs = [(args.build, "regular", {})]
    if args.sanitized_build:
        runs.append((args.sanitized_build, "asan+ubsan", sanitizer_env()))
    for build, label, env in runs:
        if args.only in (None, "unit"):
            p, f = phases.run(f"[{label}] unit", run_unit, build, label, env)
            totals[0] += p
            totals[1] += f
        if args.only in (None, "integration"):
            p, f = phases.run(f"[{label}] integration", run_integration, build, label, env,
                              SANITIZED_SUITES if env else None)
            totals[0] += p
            totals[1] += f
            if label == "regular":
                p, f = phases.run("[scalar] integration", run_integration, build, "scalar", SCALAR_EAL,
                                  SCALAR_SUITES)
                totals[0] += p
                totals[1] += f
    if args.tsan_build and args.only in (None, "unit"):
        p, f = phases.run("[tsan] unit", run_unit, args.tsan_build, "tsan", tsan_env())
        totals[0] += p
        totals[1] += f
    if args.fuzz_seconds and args.only in (None, "fuzz"):
        p, f = phases.run("fuzz (building and running)", run_fuzz, args.build, args.fuzz_seconds)
        totals[0] += p
        totals[1] += f
    print_recap()
    phases.print()
    print(f"all suites took {time.monotonic() - t0:.0f} s")
    print(f"{totals[0]} passed, {totals[1]} failed")
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
