#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "leasepath": ibv_reg_dax_mr() takes the lease path on the patched kernel: capabilities,
# LEASE_PIN strategy, RDMA WRITE over rxe verified by reading the file,
# IBV_DAX_MR_RELEASE_LEASE, file_pins (tests/guest/kernel/leasepath.c).
# Runs inside the test VM (tests/vm/run.sh --suites leasepath); results go to
# $DAXLEASE_RESULTS as JSON lines written by the program itself.
#
# Usage and environment: program-suite.sh --help.
set -euo pipefail

exec bash "$(dirname "$0")/program-suite.sh" leasepath dl-leasepath-test 900 "$@"
