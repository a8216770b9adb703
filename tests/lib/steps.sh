# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# The step harness of the multi-step scripts (tests/run-all.sh,
# tests/reliability/run.sh), sourced, not run:
#   steps_run NAME LOG CMD...   run CMD in a child bash with errexit, its
#                               output on the terminal and in LOG, and
#                               record NAME PASS/FAIL with its duration
#   steps_summary TITLE FILE    print the records (and keep them in FILE);
#                               returns 1 if a step failed
steps_rows=()
steps_failed=0

steps_run()
{
	local name=$1 log=$2 t0 res
	shift 2

	echo "=============== $name ==============="
	t0=$(date +%s)
	if "$@" 2>&1 | tee "$log"; then
		res=PASS
	else
		res=FAIL
		steps_failed=1
	fi
	steps_rows+=("$(printf '%-23s %s %5ss' "$name" "$res" \
		$(( $(date +%s) - t0 )))")
}

steps_summary()
{
	local title=$1 file=$2

	echo "=============== $title ==============="
	printf '%s\n' "${steps_rows[@]}" | tee "$file"
	return "$steps_failed"
}
