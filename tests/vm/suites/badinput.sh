#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite: the bad-input cases of issue 6 (tests/guest/badinput) on
# rxe with the emulated NVDIMMs, then the same program built with ASan +
# UBSan (badinput-asan) and under valgrind memcheck.  The program reports
# suite "badinput" itself; the tool runs report as suite "badinput-tools".
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the test VM (tests/vm/run.sh --suites badinput); needs the
  DAXLEASE_* environment of the harness.  Alone on a host it runs the
  cases that need no RDMA device.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 2 ;; esac

# suite_begin, result, suite_end: the harness's lib.sh, one level up both
# in the guest (/opt/daxlease/vm) and in the source tree (tests/vm).
# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"

# the program itself: every case, its own JSON lines
rc=0
timeout 600 badinput || rc=$?

suite_begin badinput-tools
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ASan + UBSan copy: any report, or any failed case, fails.  Under ASan,
# TCG and the KASAN kernel a devdax case takes up to ~8 s: time limits x3.
if command -v badinput-asan >/dev/null; then
	st=0
	ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:fast_unwind_on_malloc=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	DAXLEASE_RESULTS=$tmp/asan.jsonl DAXLEASE_TIME_SCALE=3 \
		timeout 900 badinput-asan >"$tmp/asan.log" 2>&1 || st=$?
	if [ "$st" -eq 0 ] && ! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$tmp/asan.log"; then
		result asan_ubsan pass "$(grep '=== suite' "$tmp/asan.log" | tail -1)"
	else
		grep -E -A25 'ERROR: (Address|Leak)Sanitizer|runtime error:|^fail ' "$tmp/asan.log" | head -60 || true
		result asan_ubsan fail "exit $st; $(grep -m1 -E 'SUMMARY: |runtime error:|^fail ' "$tmp/asan.log" || echo 'see log')"
		rc=1
	fi
else
	result asan_ubsan skip "badinput-asan not installed (needs a gcc build with DAXLEASE_GUEST_SANITIZED=ON)"
fi

# valgrind memcheck of the plain program (children are not traced: the
# setuid and crash-test children would only add noise)
if command -v valgrind >/dev/null; then
	st=0
	DAXLEASE_RESULTS=$tmp/vg.jsonl DAXLEASE_TIME_SCALE=6 DAXLEASE_UNDER_VALGRIND=1 \
		timeout 1800 valgrind --tool=memcheck \
		--error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect \
		--child-silent-after-fork=yes --log-file="$tmp/vg.log" \
		"$(command -v badinput)" >"$tmp/vg.out" 2>&1 || st=$?
	summary=$(grep -so 'ERROR SUMMARY: [0-9]* errors' "$tmp/vg.log" | tail -1 || true)
	if [ "$st" -eq 0 ]; then
		result valgrind pass "$summary; $(grep '=== suite' "$tmp/vg.out" | tail -1)"
	else
		head -80 "$tmp/vg.log" "$tmp/vg.out" 2>/dev/null || true
		result valgrind fail "exit $st; $summary"
		rc=1
	fi
else
	result valgrind skip "valgrind is not in the guest image (host run: tests/reliability/run-valgrind.sh)"
fi
suite_end
exit $rc
