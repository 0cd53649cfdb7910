"""The suite runner's limit on one test: a stuck test is ended with a report
of the machine, its processes killed, and the run goes on with the next."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

RUNNER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run_all.py")

STUCK = textwrap.dedent("""
    import subprocess, unittest
    class Stuck(unittest.TestCase):
        def test_a_child_that_never_ends(self):
            subprocess.run(["sleep", "300"])
        def test_b_the_next_one(self):
            pass
    """)

DRIVER = textwrap.dedent("""
    import importlib.util, sys, unittest
    spec = importlib.util.spec_from_file_location("run_all", sys.argv[1])
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    sys.path[:0] = [sys.argv[2], run_all.INTEGRATION]
    suite = unittest.defaultTestLoader.loadTestsFromName("test_stuck")
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout, resultclass=run_all.TimedResult).run(suite)
    print("errors", [test.id() for test, _ in result.errors], "run", result.testsRun)
    """)


class TimeLimit(unittest.TestCase):
    def test_a_stuck_test_is_ended_with_a_report_and_the_run_goes_on(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "test_stuck.py"), "w") as f:
                f.write(STUCK)
            run = subprocess.run([sys.executable, "-c", DRIVER, RUNNER, tmp], capture_output=True, text=True,
                                 timeout=60, env=dict(os.environ, CNA_TEST_LIMIT="2"))
        out = run.stdout + run.stderr
        self.assertIn("test_stuck.Stuck.test_a_child_that_never_ends still runs after 2 s", out)
        self.assertIn("load average", out)
        self.assertIn('test_stuck.py", line 5 in test_a_child_that_never_ends', out)
        self.assertIn("errors ['test_stuck.Stuck.test_a_child_that_never_ends'] run 2", out)
        self.assertNotIn("sleep 300", subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout)


if __name__ == "__main__":
    unittest.main()
