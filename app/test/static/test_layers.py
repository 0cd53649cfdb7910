"""The layer order of layers.txt holds on every include of the tree, and
check_layers.py catches each way of breaking it."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_layers  # noqa: E402


class Layers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.order = check_layers.Order()

    def test_no_include_of_the_tree_goes_against_the_order(self):
        includes = check_layers.tree_includes(self.order)
        self.assertGreater(len(includes), 200, "the check read the tree's sources")
        self.assertEqual(check_layers.violations(self.order, includes), [])

    def test_the_script_passes_on_the_tree(self):
        run = subprocess.run([sys.executable, os.path.join(HERE, "check_layers.py")], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertRegex(run.stdout, r"layers: \d+ files, \d+ includes, 0 against the order")

    def check(self, src, target):
        return check_layers.violations(self.order, {src: [target]})

    def test_an_upward_include_is_refused(self):
        [v] = self.check("firmware/src/l2/rx.h", "firmware/src/pf/pf_firmware.h")
        self.assertIn("firmware.l2 may not include firmware.pf, a higher layer", v)
        [v] = self.check("base/ecore/ecore_spq.cpp", "base/ecore/ecore_rdma.h")
        self.assertIn("host.spq may not include host.rdma, a higher layer", v)

    def test_a_peer_include_is_refused(self):
        [v] = self.check("firmware/src/roce/requester.cpp", "firmware/src/l2/rx.h")
        self.assertIn("firmware.roce may not include firmware.l2, a peer", v)

    def test_a_stack_reaches_only_what_it_uses(self):
        [v] = self.check("pmd/rdma/cna_rdma_memory.cpp", "pmd/net/cna_eth_port.h")
        self.assertIn("a stack rdma does not use", v)
        [v] = self.check("base/ecore/ecore_dev.cpp", "firmware/src/adapter/adapter_impl.h")
        self.assertIn("a stack host does not use", v)
        self.assertEqual(self.check("pmd/rdma/cna_rdma_memory.cpp", "pmd/net/cna_rdma_port.h"), [])

    def test_includes_within_a_layer_and_downward_pass(self):
        self.assertEqual(self.check("firmware/src/pf/spq.cpp", "firmware/src/pf/pf_firmware.h"), [])
        self.assertEqual(self.check("firmware/src/adapter/grc.cpp", "firmware/src/base/log.h"), [])
        self.assertEqual(self.check("firmware/src/wire/port.cpp", "hsi/hsi_common.h"), [])

    def test_a_file_in_no_layer_is_named(self):
        [v] = self.check("firmware/src/newroom/thing.cpp", "firmware/src/base/log.h")
        self.assertIn("in no layer of layers.txt", v)

    def test_each_tree_file_has_a_layer(self):
        missing = [s for s in check_layers.sources(self.order) if self.order.layer_of(s) is None]
        self.assertEqual(missing, [])


if __name__ == "__main__":
    unittest.main()
