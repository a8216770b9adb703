#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The reliability tooling in one command: ASan+UBSan build and
# ctest (from -DENABLE_SANITIZERS=ON, and from CFLAGS with gcc and clang
# as a distribution's sanitizer build), valgrind memcheck of the test
# binaries, the TSan threaded run and the libFuzzer targets, each
# time-boxed.  Exit status is non-zero if any
# step found anything (or could not run).  The guest halves (badinput,
# threads) are VM suites: tests/vm/run.sh --suites badinput,threads.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--only STEP[,STEP]] [--fuzz-seconds N] [--tsan-seconds N] [--out DIR]
  steps: sanitizers sanitizers-cflags sanitizers-cflags-clang valgrind
         tsan fuzz (default: all)
  --fuzz-seconds N  per fuzz target (default 60)
  --tsan-seconds N  threaded TSan run (default 60)
  --out DIR         logs (default build/reliability/logs)
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
only=
fuzz_secs=60
tsan_secs=60
out=$rel_build_root/logs
while [ $# -gt 0 ]; do
	case "$1" in
	--only) only=,$2,; shift 2 ;;
	--fuzz-seconds) fuzz_secs=$2; shift 2 ;;
	--tsan-seconds) tsan_secs=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
mkdir -p "$out"

# name, time box (s), command
steps=(
	"sanitizers|3600|$here/run-sanitizers.sh"
	"sanitizers-cflags|3600|$here/run-sanitizers.sh --cflags"
	"sanitizers-cflags-clang|3600|$here/run-sanitizers.sh --cflags --cc clang-14"
	"valgrind|3600|$here/run-valgrind.sh"
	"tsan|$((tsan_secs * 3 + 1800))|$here/run-tsan.sh --seconds $tsan_secs"
	"fuzz|$((fuzz_secs * 4 + 1800))|$here/run-fuzz.sh --seconds $fuzz_secs"
)
# shellcheck source=tests/lib/steps.sh
. "$here/../lib/steps.sh"
for s in "${steps[@]}"; do
	IFS='|' read -r name box cmd <<<"$s"
	if [ -n "$only" ] && [[ "$only" != *,$name,* ]]; then
		continue
	fi
	# shellcheck disable=SC2086
	steps_run "reliability: $name" "$out/$name.log" \
		timeout "$box" bash $cmd || true
done
steps_summary "reliability summary" "$out/summary.txt" || exit 1
