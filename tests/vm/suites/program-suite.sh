#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Shared body of the guest suites that run one C program (kernel,
# leasepath, faults, attacks, bench): finds the program, runs it under a
# time limit, and writes the records the program could not write itself
# (not installed, killed by the limit).  Not a suite itself.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 SUITE PROGRAM DEFAULT_LIMIT [ARGS...]
  Runs PROGRAM (from PATH, or \$DAXLEASE_PREFIX/libexec/daxlease/tests)
  with ARGS under 'timeout LIMIT' (DAXLEASE_SUITE_TIMEOUT overrides
  DEFAULT_LIMIT).  Uses DAXLEASE_EXT4, DAXLEASE_XFS, DAXLEASE_EXT4_DEV,
  DAXLEASE_XFS_DEV, DAXLEASE_DEVDAX, DAXLEASE_RDMA_DEV, DAXLEASE_GID_INDEX,
  DAXLEASE_KERNEL and DAXLEASE_RESULTS; DAXLEASE_SUITE_NEEDS says what
  the program needs to be built, for the record when it is missing.
  Exit status: the program's (0: no failure).
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
[ $# -ge 3 ] || { usage >&2; exit 2; }

suite=$1
prog=$2
limit=${DAXLEASE_SUITE_TIMEOUT:-$3}
shift 3
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
results=${DAXLEASE_RESULTS:-/dev/null}

# A record the program could not write itself (missing, killed).
record()
{
	printf '{"suite":"%s","test":"%s","result":"%s","reason":"%s"}\n' \
		"$suite" "$1" "$2" "$(printf '%s' "$3" | tr -d '"\\')" >>"$results"
	echo "$2 $suite/$1: $3"
}

bin=$(command -v "$prog" || true)
if [ -z "$bin" ]; then
	bin=${DAXLEASE_PREFIX:-/opt/daxlease}/libexec/daxlease/tests/$prog
fi
if [ ! -x "$bin" ]; then
	echo "{\"suite\":\"$suite\",\"event\":\"start\"}" >>"$results"
	record setup_program fail "$prog not installed (${DAXLEASE_SUITE_NEEDS:-tests/guest/kernel needs the dtest_rcloop and daxlease targets})"
	echo "{\"suite\":\"$suite\",\"event\":\"end\",\"pass\":0,\"fail\":1,\"skip\":0}" >>"$results"
	exit 1
fi

echo "suite $suite: $bin on kernel $(uname -r) (${DAXLEASE_KERNEL:-?})"
start=$(date +%s)
rc=0
timeout -k 10 "$limit" "$bin" "$@" || rc=$?
took=$(($(date +%s) - start))
# 124/137 after the limit: timeout(1) stopped it; 137 before it: the
# program was killed (SIGKILL, or an oops in its system call)
if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ "$took" -ge "$limit" ]; }; then
	record suite_timeout fail "$prog did not finish within $limit s"
	echo "{\"suite\":\"$suite\",\"event\":\"end\",\"pass\":0,\"fail\":1,\"skip\":0}" >>"$results"
elif [ "$rc" -eq 137 ]; then
	record suite_killed fail "$prog was killed after $took s (SIGKILL, or an oops in a system call it made: see the kernel log above)"
	echo "{\"suite\":\"$suite\",\"event\":\"end\",\"pass\":0,\"fail\":1,\"skip\":0}" >>"$results"
fi
echo "suite $suite: exit $rc after $took s"
exit "$rc"
