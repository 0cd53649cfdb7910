#!/usr/bin/python3
"""Runs modules of rdma-core's own Python tests (tests/ of the rdma-core
source that ./cna setup fetched) with Debian's python3-pyverbs, and prints
one JSON line at the end: {test id: [outcome, reason]}.

    rdma_core_tests.py TESTS_DIR MODULE[,MODULE...] [the tests' own options]

The tests are rdma-core 56.1's, pyverbs is Debian 12's 44, so:
- only the modules named are imported (the tests' package would import
  every module, some of them mlx5's, of pyverbs newer than 44);
- their shared utils.py imports pyverbs.mem_alloc.madvise, newer than 44:
  a stand-in that raises is given, and a test that calls it fails, named as
  such by the caller.
"""
import gc
import json
import sys
import types
import unittest


def main():
    tests_dir, modules = sys.argv[1], sys.argv[2].split(",")
    sys.path.insert(0, tests_dir)
    import pyverbs.mem_alloc as mem_alloc
    if not hasattr(mem_alloc, "madvise"):
        def madvise(*args, **kw):
            raise NotImplementedError("pyverbs.mem_alloc.madvise is newer than this pyverbs")
        mem_alloc.madvise = madvise
    package = types.ModuleType("tests")
    package.__path__ = [tests_dir]
    sys.modules["tests"] = package
    from args_parser import parser
    sys.argv = [sys.argv[0], *sys.argv[3:]]
    parser.parse_args()

    suite = unittest.defaultTestLoader.loadTestsFromNames([f"tests.{m}" for m in modules])
    outcomes = {test.id(): ["ok", ""] for test in _tests(suite)}
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stderr).run(suite)
    for what, entries in (("skip", result.skipped), ("error", result.errors), ("fail", result.failures)):
        for test, reason in entries:
            outcomes[test.id()] = [what, reason.strip().splitlines()[-1] if reason.strip() else ""]
    print(json.dumps(outcomes))
    # The tests' objects close now, while pyverbs can still log: a skipped
    # test's setUp leaves its context to the garbage collector.
    del suite, result
    gc.collect()


def _tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _tests(t)
        else:
            yield t


if __name__ == "__main__":
    main()
