#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "kernel": the points 0-9 of doc/design.md §1 on ext4-dax and xfs-dax
# with raw syscalls and raw verbs (tests/guest/kernel/kernel.c), then a scan
# of the kernel log since boot for WARN/BUG/lockdep/KASAN/hung-task reports.
# Runs inside the test VM (tests/vm/run.sh --suites kernel); results go to
# $DAXLEASE_RESULTS as JSON lines written by the program itself.
#
# Usage and environment: program-suite.sh --help.
set -euo pipefail

exec bash "$(dirname "$0")/program-suite.sh" kernel dl-kernel-test 1800 "$@"
