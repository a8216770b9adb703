#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Run the pyverbs tests with JSON-lines results (suite "python").

usage: /usr/bin/python3 run_tests.py [--suite NAME] [MODULE ...]
Default module: test_$DAXLEASE_KERNEL (test_stock or test_patched).  Results go to
$DAXLEASE_RESULTS (tests/common/dtest.h schema) and stdout.
"""
import argparse
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)

from dtest_result import DtestResult  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="python")
    ap.add_argument("modules", nargs="*")
    args = ap.parse_args()
    # the tests of the kernel the VM booted: test_stock or test_patched
    kernel = os.environ.get("DAXLEASE_KERNEL", "stock")
    mods = args.modules or [f"test_{kernel}"]
    DtestResult.suite_name = args.suite
    suite = unittest.defaultTestLoader.loadTestsFromNames(mods)
    runner = unittest.TextTestRunner(resultclass=DtestResult, verbosity=2,
                                     stream=sys.stdout)
    res = runner.run(suite)
    return 0 if res.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
