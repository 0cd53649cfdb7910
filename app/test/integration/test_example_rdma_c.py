"""The rdma_hello example (examples/rdma_hello), the in-tree build: a C
program on the RDMA PMD's verbs, both ends in one process on two cabled
ports: SEND, RDMA WRITE, RDMA READ, fetch-and-add and compare-and-swap with
every byte and value checked, for message sizes around the path MTU and
several iterations; its option errors. harness/rdma_hello.py holds the
checks, for any build of the program."""
import os
import unittest

from harness.rdma_hello import check_bad_options, check_operations, in_tree_binary

BINARY = in_tree_binary()


@unittest.skipUnless(os.path.exists(BINARY), f"{BINARY} not built")
class ExampleRdmaHello(unittest.TestCase):
    def test_every_operation_checks_out(self):
        check_operations(self, BINARY)

    def test_bad_options_print_the_usage(self):
        check_bad_options(self, BINARY)


if __name__ == "__main__":
    unittest.main()
