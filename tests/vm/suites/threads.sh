#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite: threads registering and deregistering DAX MRs on rxe
# (tests/guest/reliability/threads_rxe.c), on one file and on many files,
# built with ThreadSanitizer (threads_rxe-tsan) for DAXLEASE_THREADS_SECONDS
# (default 60), then the ASan+UBSan copy for a third of that.  The program
# reports suite "threads_rxe"; the sanitizer verdicts are suite "threads".
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the test VM (tests/vm/run.sh --suites threads) on the
  harness's RDMA device (DAXLEASE_RDMA_DEV): one that cannot be opened
  fails the suite (threads_rxe/rdma_device), it is no skip.
  DAXLEASE_THREADS_SECONDS (default 60), DAXLEASE_THREADS (default 8).
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 2 ;; esac

# suite_begin, result, suite_end: the harness's lib.sh, one level up both
# in the guest (/opt/daxlease/vm) and in the source tree (tests/vm).
# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"
# DL_*_OPTIONS: tests/lib, in the guest under DAXLEASE_SRC
# shellcheck source=tests/lib/checkers.sh
. "${DAXLEASE_SRC:-$(dirname "$0")/../../..}/tests/lib/checkers.sh"
secs=${DAXLEASE_THREADS_SECONDS:-60}
threads=${DAXLEASE_THREADS:-8}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rc=0
suite_begin threads
if command -v threads_rxe-tsan >/dev/null; then
	st=0
	TSAN_OPTIONS=$DL_TSAN_OPTIONS \
		timeout $((secs * 4 + 300)) threads_rxe-tsan --seconds "$secs" \
		--threads "$threads" 2>&1 | tee "$tmp/tsan.log" || st=$?
	if [ "$st" -eq 0 ] && ! grep -q 'WARNING: ThreadSanitizer' "$tmp/tsan.log"; then
		result tsan pass "${secs}s x $threads threads, no race report"
	else
		grep -A30 'WARNING: ThreadSanitizer' "$tmp/tsan.log" | head -60 || true
		result tsan fail "exit $st; $(grep -m1 'SUMMARY: ThreadSanitizer' "$tmp/tsan.log" || echo 'see log')"
		rc=1
	fi
else
	result tsan skip "threads_rxe-tsan not installed; running the plain build"
	timeout $((secs * 2 + 300)) threads_rxe --seconds "$secs" \
		--threads "$threads" || rc=$?
fi

if command -v threads_rxe-asan >/dev/null; then
	st=0
	ASAN_OPTIONS=$DL_ASAN_OPTIONS UBSAN_OPTIONS=$DL_UBSAN_OPTIONS \
	DAXLEASE_RESULTS=$tmp/asan.jsonl \
		timeout $((secs * 2 + 300)) threads_rxe-asan \
		--seconds $((secs / 3 + 1)) --threads "$threads" \
		>"$tmp/asan.log" 2>&1 || st=$?
	if [ "$st" -eq 0 ] && ! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$tmp/asan.log"; then
		result asan_ubsan pass "$(grep -E '^pass threads_rxe/(one_file|many_files)' "$tmp/asan.log" | sed 's/^pass threads_rxe\///' | tr '\n' ' ')"
	else
		grep -E -A25 'ERROR: (Address|Leak)Sanitizer|runtime error:|^fail ' "$tmp/asan.log" | head -60 || true
		result asan_ubsan fail "exit $st; $(grep -m1 -E 'SUMMARY: |runtime error:|^fail ' "$tmp/asan.log" || echo 'see log')"
		rc=1
	fi
else
	result asan_ubsan skip "threads_rxe-asan not installed"
fi
suite_end
exit $rc
