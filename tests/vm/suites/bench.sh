#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "bench": the daxlease benchmarks (bench/dl-bench.c), then
# the unmodified programs of bench_apps.sh.  The
# program writes each measurement as a {"suite":"bench","bench":{...}}
# record and a dtest pass/fail record of its sanity to $DAXLEASE_RESULTS;
# bench/run extracts the measurements on the host.  The kernel command line
# option daxlease.bench=quick (bench/run --quick) selects the reduced set;
# daxlease.bench_args=A,B passes extra dl-bench arguments.
#
# Usage and environment: program-suite.sh --help; the arguments of the
# kernel command line come before ARGS.
set -euo pipefail

args=()
# shellcheck disable=SC2013 # words of /proc/cmdline, not lines
for a in $(cat /proc/cmdline 2>/dev/null); do
	case "$a" in
	daxlease.bench=quick) args+=(--quick) ;;
	daxlease.bench_args=*)
		a=${a#*=}
		# shellcheck disable=SC2206 # the comma list, split into words
		args+=(${a//,/ }) ;;
	esac
done

export DAXLEASE_SUITE_NEEDS="bench/ needs daxlease, dl_ktest and librpma-dev"
rc=0
bash "$(dirname "$0")/program-suite.sh" bench dl-bench 1500 \
	"${args[@]}" "$@" || rc=$?
# unmodified programs (bench_apps.sh): fewer rounds in the quick set
rounds=7
case " ${args[*]} " in
*" --quick "*) rounds=1 ;;
*" --profile "*) exit $rc ;;	# a profile, not the benchmark
esac
bash "$(dirname "$0")/bench_apps.sh" "$rounds" || rc=1
exit $rc
