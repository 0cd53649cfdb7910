"""The port switch's rows of ./cna bench (switch_bench): how fast transfer
rules go in and out through rte_flow, one thread (each a ramrod and its
completion), and a 64-byte frame's lookup as the table grows to 1, 1,000
and 100,000 rules of one mask (VF 0 to VF 1 by one of them, on an embedded
adapter with one engine thread: its Mpps is the lookup's cost)."""
import os
import re
import subprocess

from bench_testpmd import last_lines


def run_switch(args, pmd, seconds=2.0):
    """Prints switch_bench's lines; False if it failed."""
    bench = os.path.join(args.build, "app", "bench", "switch_bench")
    if not os.access(bench, os.X_OK):
        print(f"switch: failed, {bench} not built")
        return False
    argv = [bench, "-l", "0", "--no-huge", "-m", "1024", "--no-pci", "-d", pmd,
            "--log-level=pmd.net.cna*:warning", "--", f"{seconds:g}"]
    print()
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        print("switch: failed, switch_bench did not finish within 300 s")
        return False
    rows = [line for line in run.stdout.splitlines() if line.startswith("switch ")]
    for line in rows:
        print(line)
    rates = [float(m.group(1)) for m in (re.search(r"rules: ([\d.]+) Mpps", r) for r in rows) if m]
    if run.returncode != 0 or len(rates) != 3:
        print(f"switch: failed (exit {run.returncode}): " + last_lines(run.stderr, 5))
        return False
    print(f"switch lookup 100000/1 rules: {rates[2] / rates[0]:.2f}")
    return True
