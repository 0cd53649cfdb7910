"""The flow_classifier example (examples/flow_classifier), the in-tree build:
frames of three classes from the kernel through port 0's TAP wire, out of
port 1's, classified by net_cna's rte_flow rules on the way
(harness/flow_classifier.py holds the scenario, for any build of the app);
its VF administration through rte_pmd_cna.h; its option errors and
--duration."""
import os
import unittest

from harness.flow_classifier import in_tree_binary, run_app, run_scenario, verify

BINARY = in_tree_binary()


@unittest.skipUnless(os.path.exists(BINARY), f"{BINARY} not built")
class ExampleFlowClassifier(unittest.TestCase):
    @unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
    def test_classifies_and_forwards(self):
        r = run_scenario(BINARY)
        verify(self, r)
        self.assertRegex(r.output, r"(?m)^port 0: no VFs \(the devarg vfs=N enables them\)$")
        self.assertEqual(r.vfs, {})

    @unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/net/tun"), "needs root and /dev/net/tun")
    def test_forces_vf_macs_of_a_pf_with_vfs(self):
        """vfs=2 on port 0: VF n gets the base MAC + n, forced, and the
        classification goes on as without VFs."""
        r = run_scenario(BINARY, port0_devargs="vfs=2", app_args=["--vf-mac-base", "02:cf:00:00:aa:fe"])
        verify(self, r)
        log = "\n" + r.output
        self.assertEqual(sorted(r.vfs), [0, 1], log)
        # the base + 1 carries into the next byte
        for vf, mac in ((0, "02:cf:00:00:aa:fe"), (1, "02:cf:00:00:aa:ff")):
            self.assertEqual(r.vfs[vf]["mac"], mac, log)
            self.assertEqual(r.vfs[vf]["forced"], 1, log)
            self.assertEqual(r.vfs[vf]["acquired"], 0, "no VF driver in the scenario" + log)
            self.assertEqual(r.vfs[vf]["link_up"], 1, "port 0's link, on the VF's bulletin" + log)
        # the PMD's own log of the change (INFO)
        self.assertRegex(r.output, r"(?m)^net_cna0: vf1: MAC forced to 02:CF:00:00:AA:FF$")

    def test_duration_ends_the_run(self):
        vdevs = ["net_cna0,adapter=fcd,ports=2,wire=cable", "net_cna1,adapter=fcd,port=1"]
        status, out, seconds = run_app(BINARY, ["--duration", "1"], vdevs=vdevs)
        self.assertEqual(status, 0, out)
        self.assertGreaterEqual(seconds, 1.0)
        self.assertRegex(out, r"(?m)^forwarding between ports 0 and 1 on lcore 0 \(1 s\)$")
        self.assertRegex(out, r"(?m)^class vxlan: total 0$")
        self.assertRegex(out, r"(?m)^forwarded port 1 -> port 0: packets 0 dropped 0$")
        self.assertRegex(out, r"(?m)^mbufs: (\d+) of \1 back in the pool$")

    def test_bad_options_exit_2_with_a_message(self):
        cases = [
            (["--bogus"], r"unrecognized option '--bogus'"),
            (["--duration", "1x"], r"invalid --duration '1x': expected whole seconds"),
            (["--duration"], r"option '--duration' requires an argument"),
            (["--vf-mac-base", "01:00:5e:00:00:01"], r"invalid --vf-mac-base '01:00:5e:00:00:01'"),
            (["stray"], r"unexpected argument 'stray'"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                status, out, _ = run_app(BINARY, args)
                self.assertEqual(status, 2, out)
                self.assertRegex(out, message)
                self.assertRegex(out, r"usage: \S*flow_classifier <EAL options> -- \[--duration SECONDS\]")

    def test_help_and_missing_ports(self):
        status, out, _ = run_app(BINARY, ["--help"])
        self.assertEqual(status, 0, out)
        self.assertIn("--vf-mac-base MAC", out)
        status, out, _ = run_app(BINARY, [], vdevs=["net_cna0"])
        self.assertEqual(status, 1, out)
        self.assertIn("needs ports 0 and 1", out)


if __name__ == "__main__":
    unittest.main()
