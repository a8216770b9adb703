#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# valgrind memcheck over every test binary ctest knows (scripts are left
# out: memcheck of bash says nothing about daxlease).  A plain -O1 -g
# build; each test runs with the arguments ctest would give it, with
# --error-exitcode, full leak check (definite and indirect leaks are
# errors) and the suppressions in valgrind.supp.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--build-dir DIR] [--timeout SEC]
  Builds in DIR (default build/reliability/valgrind) and runs each ctest
  binary under valgrind memcheck; --timeout bounds each (default 900).
USAGE
}

. "$(dirname "$0")/lib.sh"
dir=$rel_build_root/valgrind
per_test=900
while [ $# -gt 0 ]; do
	case "$1" in
	--build-dir) dir=$2; shift 2 ;;
	--timeout) per_test=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

command -v valgrind >/dev/null || { echo "run-valgrind: valgrind missing (apt-get install valgrind)" >&2; exit 1; }
mkdir -p "$dir"
rel_configure "$dir" -DCMAKE_C_FLAGS="-O1 -g" -DDAXLEASE_GUEST_SANITIZED=OFF
rel_build "$dir"

logdir=$dir/valgrind-logs
mkdir -p "$logdir"
# tests/unit compare total mapping counts, which memcheck's heap changes
export DAXLEASE_UNDER_VALGRIND=1
fails=0
n=0
while IFS=$'\t' read -r name exe args; do
	n=$((n + 1))
	# the test's own environment (ctest ENVIRONMENT), e.g. an LD_PRELOAD
	# that memcheck passes on to the program behind its own
	mapfile -t tenv < <(rel_test_env "$dir" "$name")
	# shellcheck disable=SC2086
	if (cd "$dir" && timeout "$per_test" env "${tenv[@]}" "${DL_MEMCHECK[@]}" --track-origins=yes \
		--log-file="$logdir/$name.log" "$exe" $args \
		>"$logdir/$name.out" 2>&1); then
		errs=$(grep -o 'ERROR SUMMARY: [0-9]*' "$logdir/$name.log" | tail -1)
		echo "pass $name ($errs)"
	else
		st=$?
		echo "FAIL $name: exit $st; $(grep 'ERROR SUMMARY' "$logdir/$name.log" | tail -1)"
		grep -A12 -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall|[0-9,]+ .*bytes in .* blocks are definitely)' \
			"$logdir/$name.log" | head -40 || true
		fails=$((fails + 1))
	fi
done < <(rel_test_commands "$dir")
echo "run-valgrind: $n test binaries, $fails failed (logs in $logdir)"
[ "$n" -gt 0 ] && [ "$fails" -eq 0 ]
