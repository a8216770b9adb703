#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite: the bad-input cases (tests/guest/badinput) on
# rxe with the emulated NVDIMMs, then the same program built with ASan +
# UBSan (badinput-asan) and under valgrind memcheck.  The program reports
# suite "badinput" itself; the tool runs report as suite "badinput-tools".
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the test VM (tests/vm/run.sh --suites badinput); needs the
  DAXLEASE_* environment of the harness, its RDMA device above all: a
  device that cannot be opened fails the suite (badinput/rdma_device),
  it does not skip the cases that need one.  On a host without RDMA,
  'badinput --no-device' runs the cases that need no device.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 2 ;; esac

# suite_begin, result, suite_end: the harness's lib.sh, one level up both
# in the guest (/opt/daxlease/vm) and in the source tree (tests/vm).
# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"
# DL_*_OPTIONS, DL_MEMCHECK: tests/lib, in the guest under DAXLEASE_SRC
# shellcheck source=tests/lib/checkers.sh
. "${DAXLEASE_SRC:-$(dirname "$0")/../../..}/tests/lib/checkers.sh"

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
	ASAN_OPTIONS=$DL_ASAN_OPTIONS_STACKS UBSAN_OPTIONS=$DL_UBSAN_OPTIONS \
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
# setuid and crash-test children would only add noise), with the
# options and third-party suppressions of the host run.  mkinitramfs.sh
# puts valgrind into the image or fails, so the skip is only for a suite
# run outside that image.
supp=$DL_VALGRIND_SUPP
if ! command -v valgrind >/dev/null; then
	result valgrind skip "no valgrind in PATH ($PATH): not the tests/vm image? (host run: tests/reliability/run-valgrind.sh)"
elif [ ! -r "$supp" ]; then
	result valgrind fail "no suppression file $supp"
	rc=1
else
	st=0
	DAXLEASE_RESULTS=$tmp/vg.jsonl DAXLEASE_TIME_SCALE=6 DAXLEASE_UNDER_VALGRIND=1 \
		timeout 1800 "${DL_MEMCHECK[@]}" --log-file="$tmp/vg.log" \
		"$(command -v badinput)" >"$tmp/vg.out" 2>&1 || st=$?
	summary=$(grep -so 'ERROR SUMMARY: .*' "$tmp/vg.log" | tail -1 || true)
	cases=$(grep '=== suite' "$tmp/vg.out" | tail -1 || true)
	# memcheck's own verdict, and the program's: a case failing under
	# valgrind fails too (badinput exits 1 then, not 99)
	grep -E 'definitely|indirectly|possibly|reachable|suppressed:' \
		"$tmp/vg.log" || true
	if [ "$st" -eq 0 ]; then
		result valgrind pass "$summary; $cases"
	else
		grep -A30 -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched|Source and|Argument|Process terminating|[0-9,]+ .*bytes in .* blocks are (definitely|indirectly))' \
			"$tmp/vg.log" | head -400 || true
		grep -E '^fail ' "$tmp/vg.out" | head -20 || true
		result valgrind fail "exit $st; $summary; $cases"
		rc=1
	fi
fi
suite_end
exit $rc
