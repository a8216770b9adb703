#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# ThreadSanitizer run: builds the tree with -DENABLE_TSAN=ON and runs the
# threaded host test (every pd-less part of daxlease from many threads)
# for --seconds, then the other reliability ctests under TSan.  Any data
# race report fails the run.  The guest half (threads_rxe-tsan on rxe)
# runs in the VM suite tests/vm/suites/threads.sh.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--seconds N] [--threads N] [--build-dir DIR]
  --seconds N   how long threads_host runs (default 60)
  --threads N   worker threads (default 8)
  --build-dir   default build/reliability/tsan
USAGE
}

. "$(dirname "$0")/lib.sh"
dir=$rel_build_root/tsan
secs=60
threads=8
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) secs=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--build-dir) dir=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

mkdir -p "$dir"
rel_configure "$dir" -DENABLE_TSAN=ON
rel_build "$dir" --target threads_host threads_rxe badinput

# exitcode: a report makes the process fail even if the test passed
export TSAN_OPTIONS=$DL_TSAN_OPTIONS
log=$dir/tsan.log
exe=$(rel_test_commands "$dir" | awk -F'\t' '$1 == "threads_host" { print $2 }')
[ -x "$exe" ] || { echo "run-tsan: threads_host not built" >&2; exit 1; }
rc=0
t0=$(date +%s)
timeout $((secs * 3 + 120)) "$exe" --seconds "$secs" --threads "$threads" \
	2>&1 | tee "$log" || rc=$?
echo "run-tsan: threads_host ${secs}s x $threads threads: exit $rc, $(( $(date +%s) - t0 ))s wall"
timeout 600 ctest --test-dir "$dir" --output-on-failure -L reliability \
	-E '^threads_host$' 2>&1 | tee -a "$log" || rc=1
if grep -q 'WARNING: ThreadSanitizer' "$log"; then
	echo "run-tsan: ThreadSanitizer reports in $log:" >&2
	grep -A20 'WARNING: ThreadSanitizer' "$log" | head -60 >&2
	rc=1
fi
exit $rc
