#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# libFuzzer runs of tests/fuzz/*: builds with clang (-DENABLE_FUZZ=ON,
# ASan + UBSan + libFuzzer) and runs each target for --seconds on a work
# copy of its seed corpus (tests/fuzz/corpus/<target>; the repository copy
# is never written).  Crashes, leaks, timeouts and failed contract checks
# are saved under OUT/artifacts and fail the run.  Prints executions,
# coverage and corpus size per target.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--seconds N] [--build-dir DIR] [--out DIR] [--target NAME]
  --seconds N   time box per target (default 60)
  --build-dir   default build/reliability/fuzz (CC=clang-14)
  --out DIR     work corpora, artifacts, logs (default BUILD/fuzz-out)
  --target NAME run only this target (fuzz_pins, fuzz_init_attr)
USAGE
}

. "$(dirname "$0")/lib.sh"
dir=$rel_build_root/fuzz
secs=60
out=
only=
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) secs=$2; shift 2 ;;
	--build-dir) dir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--target) only=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
out=${out:-$dir/fuzz-out}

cc=$(command -v clang-14 || command -v clang || true)
[ -n "$cc" ] || { echo "run-fuzz: clang missing (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 1; }
mkdir -p "$dir" "$out/artifacts"
CC=$cc CXX=${cc/clang/clang++} rel_configure "$dir" -DENABLE_FUZZ=ON \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo
targets=$(cd "$top/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//')
[ -z "$only" ] || targets=$only
# shellcheck disable=SC2086
rel_build "$dir" --target $targets

export ASAN_OPTIONS=$DL_ASAN_OPTIONS
export UBSAN_OPTIONS=$DL_UBSAN_OPTIONS
rc=0
summary=()
for t in $targets; do
	exe=$(find "$dir" -name "$t" -type f -perm -u+x | head -1)
	[ -x "$exe" ] || { echo "run-fuzz: $t not built" >&2; rc=1; continue; }
	work=$out/corpus/$t
	mkdir -p "$work" "$out/artifacts/$t"
	log=$out/$t.log
	t0=$(date +%s)
	st=0
	timeout $((secs + 120)) "$exe" -max_total_time="$secs" \
		-print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/artifacts/$t/" \
		"$work" "$top/tests/fuzz/corpus/$t" >"$log" 2>&1 || st=$?
	execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -1)
	crashes=$(find "$out/artifacts/$t" -type f | wc -l)
	line=$(printf '%-16s exit %-3s %5ss  execs %-10s %s  artifacts %s' "$t" \
		"$st" $(( $(date +%s) - t0 )) "${execs:-?}" "${cov:-?}" "$crashes")
	summary+=("$line")
	if [ "$st" -ne 0 ] || [ "$crashes" -ne 0 ]; then
		rc=1
		grep -E -A15 'ERROR:|check failed|runtime error' "$log" | head -40 >&2 || true
	fi
done
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
exit $rc
