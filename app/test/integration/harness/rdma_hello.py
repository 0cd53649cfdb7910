"""rdma_hello (examples/rdma_hello): the RDMA PMD's verbs from a C program,
both ends of an RC connection in one process on two cabled ports of one
adapter, which the program creates itself. The checks here take the binary,
so they hold for any build of it: the in-tree one, or a copy built with its
Makefile against the installed packages.

    check_operations(testcase, binary)                  # sizes, iterations
    check_bad_options(testcase, binary)                 # usage, exit 2
    check_operations(testcase, copy, eal_extra=[...])   # e.g. a packaged build

`run_hello` runs it once and returns (exit status, output).
"""
import os
import re
import subprocess

from .testpmd import build_dir, unique_tag

# Across the 1024-byte path MTU of the ports' default MTU: one byte, whole
# packets, and one byte more than 64 packets.
SIZES = (1, 4096, 65536 + 1)
ITERATIONS = 5
# What moves a message of --size bytes, and the atomics on an 8-byte word.
MESSAGE_OPERATIONS = ("send", "rdma write", "rdma read")
ATOMIC_OPERATIONS = ("fetch-and-add", "compare-and-swap")
USAGE = re.compile(r"^Usage: \S+ <EAL options> -- \[options\]$", re.M)  # argv[0]: any copy


def in_tree_binary(build=None):
    return os.path.join(os.path.abspath(build or build_dir()), "examples", "rdma_hello", "rdma_hello")


def eal_args(eal_extra=()):
    """One lcore (the program polls both CQs from it; the adapter's engine
    runs on a thread of its own), private memory. No --vdev: the program
    makes its ports; no -d: it links the PMD."""
    return (["--lcores", "0", "--no-huge", "-m", "256", "--no-pci", "--no-shconf", "--no-telemetry",
             "--file-prefix", f"hello{unique_tag()}"]
            + os.environ.get("CNA_TESTPMD_EAL_EXTRA", "").split() + list(eal_extra))


def run_hello(binary, app_args=(), eal_extra=(), timeout=60):
    """(exit status, stdout and stderr together) of one run."""
    proc = subprocess.run([binary, *eal_args(eal_extra), "--", *app_args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return proc.returncode, proc.stdout


def ok_lines(size, iterations):
    """The line each operation prints once all its iterations checked out."""
    def line(op, nbytes):
        return (f"rdma_hello: {op} {nbytes} byte{'' if nbytes == 1 else 's'} ok "
                f"({iterations} iteration{'' if iterations == 1 else 's'})")
    return [line(op, size) for op in MESSAGE_OPERATIONS] + [line(op, 8) for op in ATOMIC_OPERATIONS]


def check_run(test, binary, size, iterations, eal_extra=()):
    """One run: exit 0, both QPs connected over their IPv4 GIDs, every
    operation's line in order, and the final line after the teardown."""
    rc, out = run_hello(binary, ["--size", str(size), "--iterations", str(iterations)], eal_extra)
    log = f"\n--- rdma_hello --size {size} --iterations {iterations}:\n{out}"
    test.assertEqual(rc, 0, log)
    for port, address in ((0, "192.0.2.1"), (1, "192.0.2.2")):
        test.assertRegex(out, rf"(?m)^rdma_hello: net_cna{port}: port {port}, GID 1 ::ffff:{address}, "
                              r"QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}$", log)
    test.assertRegex(out, r"(?m)^rdma_hello: connected, path MTU 1024$", log)
    lines = [line for line in out.splitlines() if line.startswith("rdma_hello: ")]
    expected = ok_lines(size, iterations) + ["rdma_hello: done"]
    test.assertEqual([line for line in lines if line in expected], expected, log)
    test.assertEqual(lines[-1], "rdma_hello: done", log)


def check_operations(test, binary, eal_extra=()):
    """Every size of SIZES, ITERATIONS times each, and the defaults (4096
    bytes, one iteration)."""
    for size in SIZES:
        with test.subTest(size=size):
            check_run(test, binary, size, ITERATIONS, eal_extra)
    with test.subTest(defaults=True):
        rc, out = run_hello(binary, eal_extra=eal_extra)
        test.assertEqual(rc, 0, out)
        for line in ok_lines(4096, 1):
            test.assertIn(line, out.splitlines())


def check_bad_options(test, binary, eal_extra=()):
    """Each bad option: exit 2, what is wrong, and the usage text, before
    any port exists; --help: the usage text and exit 0."""
    cases = [
        (["--bogus"], "unrecognized option '--bogus'"),
        (["--size", "0"], "rdma_hello: invalid size '0'"),
        (["--size", "4k"], "rdma_hello: invalid size '4k'"),
        (["--size", str((1 << 30) + 1)], f"rdma_hello: invalid size '{(1 << 30) + 1}'"),
        (["--iterations", "-1"], "rdma_hello: invalid iteration count '-1'"),
        (["--size"], "option '--size' requires an argument"),
        (["stray"], "rdma_hello: unexpected argument 'stray'"),
    ]
    for args, why in cases:
        with test.subTest(args=args):
            rc, out = run_hello(binary, args, eal_extra)
            test.assertEqual(rc, 2, out)
            test.assertIn(why, out)
            test.assertRegex(out, USAGE)
            test.assertNotIn("net_cna0", out, "no port is created")
    with test.subTest(args=["--help"]):
        rc, out = run_hello(binary, ["--help"], eal_extra)
        test.assertEqual(rc, 0, out)
        test.assertRegex(out, USAGE)
        test.assertIn("--iterations N", out)
