#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# ASan + UBSan run of the host tests: builds the tree with
# -DENABLE_SANITIZERS=ON (every target, the library included) and runs
# ctest with leak detection on and every report fatal.  With --cflags the
# sanitizers come from CMAKE_C_FLAGS instead, as a distribution builds a
# sanitizer variant, which must build (the shared library included) and
# pass as well.  Exit status is non-zero on any failed test or sanitizer
# report.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--build-dir DIR] [--timeout SEC] [--cflags] [--cc CC]
  Builds with ASan+UBSan (default DIR: build/reliability/asan) and runs
  ctest there; --timeout bounds each test (default 600).
  --cflags  -DCMAKE_C_FLAGS=-fsanitize=address,undefined instead of
            -DENABLE_SANITIZERS=ON (default DIR: .../asan-cflags-CC)
  --cc CC   the C compiler, e.g. clang-14 (C++: the matching clang++/g++)
USAGE
}

. "$(dirname "$0")/lib.sh"
dir=
per_test=600
via_cflags=
cc=
while [ $# -gt 0 ]; do
	case "$1" in
	--build-dir) dir=$2; shift 2 ;;
	--timeout) per_test=$2; shift 2 ;;
	--cflags) via_cflags=1; shift ;;
	--cc) cc=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

if [ -n "$via_cflags" ]; then
	dir=${dir:-$rel_build_root/asan-cflags-${cc:-cc}}
	config=("-DCMAKE_C_FLAGS=-fsanitize=address,undefined")
else
	dir=${dir:-$rel_build_root/asan}
	config=(-DENABLE_SANITIZERS=ON)
fi
if [ -n "$cc" ]; then
	case "$cc" in
	*clang*) cxx=${cc/clang/clang++} ;;
	*gcc*) cxx=${cc/gcc/g++} ;;
	*) cxx=c++ ;;
	esac
	export CC=$cc CXX=$cxx
fi

mkdir -p "$dir"
rel_configure "$dir" "${config[@]}"
rel_build "$dir"

# every program that loads libdaxlease.so is built with the sanitizers
# (the consumer-install test's too), so the ASan runtime comes first
export ASAN_OPTIONS=$DL_ASAN_OPTIONS_STRICT
export UBSAN_OPTIONS=$DL_UBSAN_OPTIONS
log=$dir/ctest.log
rc=0
exclude='_corpus$'
case "${cc:-}" in
*clang*)
	# clang links the ASan runtime into the executable, so an
	# instrumented library in LD_PRELOAD runs its constructors before
	# that runtime is up (CHECK tsd_key_inited): unit-preload runs in the
	# gcc passes (shared runtime) and under valgrind instead
	exclude='_corpus$|^unit-preload$'
	echo "run-sanitizers: unit-preload left out with $cc (static ASan runtime; it runs in the gcc passes and under valgrind)"
	;;
esac
timeout 3000 ctest --test-dir "$dir" --output-on-failure --timeout "$per_test" \
	-E "$exclude" 2>&1 | tee "$log" || rc=$?
# a report printed by a test that still exited 0 (e.g. a forked child)
if grep -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log"; then
	echo "run-sanitizers: sanitizer report in $log" >&2
	rc=1
fi
echo "run-sanitizers: $( grep -E 'tests passed|tests failed' "$log" | tail -1 )"
exit $rc
