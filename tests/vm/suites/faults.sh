#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "faults": two processes on one file, a conflicting write
# lease, kill -9 at fixed and random points and at each stop point of the
# library's test build (then fsck and a remount), fork() and exec() after
# registration, the lease holder's own layout changes, persistence across
# unmount/mount (tests/guest/kernel/faults.c).
# Runs inside the test VM (tests/vm/run.sh --suites faults); results go to
# $DAXLEASE_RESULTS as JSON lines written by the program itself.
#
# Usage and environment: program-suite.sh --help.
set -euo pipefail

exec bash "$(dirname "$0")/program-suite.sh" faults dl-faults-test 1200 "$@"
