#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "python": tests/python (pyverbs + ctypes on libdaxlease) with
# the distribution's /usr/bin/python3, which has pyverbs.
set -euo pipefail
case "${1:-}" in
-h|--help) echo "usage: $0  (inside the test VM; tests/vm/run.sh --suites python)"; exit 0 ;;
esac
cd "${DAXLEASE_SRC:-/opt/daxlease/src}/tests/python"
export PYTHONDONTWRITEBYTECODE=1
exec timeout 1200 /usr/bin/python3 run_tests.py --suite python
