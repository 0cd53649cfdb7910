"""rdma-core's own Python tests (tests/ of the rdma-core source ./cna setup
fetched, run with Debian's python3-pyverbs) on cna's verbs provider: the
device, PD, MR, CQ, CQ-event, QP, atomic, SRQ and address-handle modules. The tests connect
QPs of one device to each other, over the port's loopback wire.

Every test that does not pass is named below with its reason, and listed
in the guide: a test that fails for another reason, or skips for a reason
not listed, fails this suite."""
import json
import os
import re
import subprocess
import tempfile
import unittest

from harness.verbs import rdma_run_path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
TESTS = os.environ.get("CNA_RDMA_CORE_TESTS", os.path.join(ROOT, ".sdk", "rdma", "tests"))
RUNNER = os.path.join(HERE, "harness", "rdma_core_tests.py")
MODULES = ["test_device", "test_pd", "test_mr", "test_cq", "test_cq_events", "test_qp", "test_atomic",
           "test_srq", "test_addr"]

# Tests that cannot pass, and why.
NEWER_PYVERBS = "uses pyverbs newer than Debian 12's 44"
EXPECTED_ERRORS = {
    "tests.test_device.DeviceTest.test_get_pkey_index": NEWER_PYVERBS + " (Context.get_pkey_index)",
    "tests.test_device.DeviceTest.test_query_port": NEWER_PYVERBS + " (PortAttr.active_speed_ex)",
    "tests.test_qp.QPTest.test_query_data_in_order": NEWER_PYVERBS + " (IBV_QUERY_QP_DATA_IN_ORDER_RETURN_CAPS)",
}
# Skips the tests make themselves when the device answers EOPNOTSUPP (or
# reports no support) for what cna does not have.
SKIP_REASONS = re.compile(
    r"Device memory is not supported|Allocating dmabuf is not supported|Create (UD|UC|Raw Packet) QP .*not supported"
    r"|Create QP type 4 is not supported|Create RC QP (with|without) extended attrs is not supported"
    r"|Create MW is not supported|Create memory window of type 3 is not supported|Rereg MR is not supported"
    r"|Create XRCD is not supported|SRQ resize is not supported")
# What must pass: each area's own tests.
MUST_PASS = [
    "tests.test_device.DeviceTest.test_query_device_ex", "tests.test_device.DeviceTest.test_query_gid_table",
    "tests.test_pd.PDTest.test_multiple_pd_creation", "tests.test_mr.MRTest.test_reg_mr_bad_flags",
    "tests.test_cq.CQAPITest.test_create_cq_bad_flow", "tests.test_cq.CQAPITest.test_create_cq_with_comp_channel",
    "tests.test_cq_events.CqEventsTestCase.test_cq_events_rc", "tests.test_qp.QPTest.test_create_rc_qp_with_attr",
    "tests.test_atomic.AtomicTest.test_atomic_fetch_and_add", "tests.test_atomic.AtomicTest.test_atomic_cmp_and_swap",
    "tests.test_atomic.AtomicTest.test_atomic_invalid_rkey", "tests.test_srq.SrqTestCase.test_rc_srq_traffic",
    "tests.test_srq.SrqTestCase.test_modify_srq_limit",
    "tests.test_qp.QPTest.test_create_ud_qp_with_attr", "tests.test_qp.QPTest.test_create_ud_qp_no_attr",
    "tests.test_cq_events.CqEventsTestCase.test_cq_events_ud", "tests.test_addr.AHTest.test_create_ah",
    "tests.test_addr.AHTest.test_create_ah_roce", "tests.test_addr.AHTest.test_destroy_ah",
    "tests.test_cq.CQTest.test_resize_cq",
]


@unittest.skipUnless(os.path.isdir(TESTS), f"no rdma-core tests at {TESTS} (./cna setup fetches them)")
class RdmaCoreTests(unittest.TestCase):
    def test_the_device_pd_mr_cq_qp_atomic_srq_and_ah_modules(self):
        with tempfile.TemporaryDirectory() as bin_dir:
            # The tests ask `rdma link show` for each device's netdev; the
            # tool asks the kernel's RDMA netlink, which this machine has
            # not. cna's devices have no netdev, which "[]" says.
            rdma = os.path.join(bin_dir, "rdma")
            with open(rdma, "w") as f:
                f.write("#!/bin/sh\necho '[]'\n")
            os.chmod(rdma, 0o755)
            env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"],
                       CNA_RDMA_DEVARGS="wire=loopback,ipv4=10.3.0.1/24")
            run = subprocess.run([rdma_run_path(), "/usr/bin/python3", RUNNER, TESTS, ",".join(MODULES)],
                                 capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(run.returncode, 0, run.stderr[-4000:])
        outcomes = json.loads(run.stdout.strip().splitlines()[-1])
        errors = {t: r for t, (o, r) in outcomes.items() if o in ("error", "fail")}
        self.assertEqual(sorted(errors), sorted(EXPECTED_ERRORS), f"errors and failures:\n{json.dumps(errors, indent=1)}")
        odd_skips = {t: r for t, (o, r) in outcomes.items() if o == "skip" and not SKIP_REASONS.search(r)}
        self.assertEqual(odd_skips, {}, "skipped for a reason not listed")
        for test in MUST_PASS:
            self.assertEqual(outcomes.get(test, ["missing"])[0], "ok", test)
        passed = sum(o == "ok" for o, _ in outcomes.values())
        self.assertGreaterEqual(passed, 40, "tests that pass")
        print(f"\nrdma-core's tests: {passed} of {len(outcomes)} pass", flush=True)


if __name__ == "__main__":
    unittest.main()
