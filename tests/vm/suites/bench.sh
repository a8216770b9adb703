#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "bench": the daxlease benchmarks (bench/dl-bench.c).  The
# program writes each measurement as a {"suite":"bench","bench":{...}}
# record and a dtest pass/fail record of its sanity to $DAXLEASE_RESULTS;
# bench/run extracts the measurements on the host.  The kernel command line
# option daxlease.bench=quick (bench/run --quick) selects the reduced set;
# daxlease.bench_args=A,B passes extra dl-bench arguments.
set -euo pipefail

suite=bench
prog=dl-bench
limit=${DAXLEASE_SUITE_TIMEOUT:-1500}

usage()
{
	cat <<USAGE
usage: $0 [ARGS...]
  Runs $prog (PATH or \$DAXLEASE_PREFIX/libexec/daxlease/tests) with ARGS
  (plus --quick when the kernel command line has daxlease.bench=quick)
  under 'timeout $limit'.  Uses DAXLEASE_EXT4, DAXLEASE_DEVDAX,
  DAXLEASE_RDMA_DEV, DAXLEASE_GID_INDEX and DAXLEASE_RESULTS.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

results=${DAXLEASE_RESULTS:-/dev/null}

record()
{
	printf '{"suite":"%s","test":"%s","result":"%s","reason":"%s"}\n' \
		"$suite" "$1" "$2" "$(printf '%s' "$3" | tr -d '"\\')" >>"$results"
	echo "$2 $suite/$1: $3"
}

bin=$(command -v "$prog" || true)
[ -n "$bin" ] || bin=${DAXLEASE_PREFIX:-/opt/daxlease}/libexec/daxlease/tests/$prog
if [ ! -x "$bin" ]; then
	echo "{\"suite\":\"$suite\",\"event\":\"start\"}" >>"$results"
	record setup_program fail "$prog not installed (bench/ needs daxlease, dl_ktest and librpma-dev)"
	echo "{\"suite\":\"$suite\",\"event\":\"end\",\"pass\":0,\"fail\":1,\"skip\":0}" >>"$results"
	exit 1
fi

args=()
for a in $(cat /proc/cmdline 2>/dev/null); do
	case "$a" in
	daxlease.bench=quick) args+=(--quick) ;;
	daxlease.bench_args=*) a=${a#*=}; args+=(${a//,/ }) ;;
	esac
done

echo "suite $suite: $bin ${args[*]} $* on kernel $(uname -r) (${DAXLEASE_KERNEL:-?})"
start=$(date +%s)
rc=0
timeout -k 10 "$limit" "$bin" "${args[@]}" "$@" || rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	record suite_timeout fail "$prog did not finish within $limit s"
	echo "{\"suite\":\"$suite\",\"event\":\"end\",\"pass\":0,\"fail\":1,\"skip\":0}" >>"$results"
fi
echo "suite $suite: exit $rc after $(($(date +%s) - start)) s"
exit "$rc"
