# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# The step harness of the multi-step scripts (tests/run-all.sh,
# tests/reliability/run.sh, .ci/packages.sh, tools/demo.sh), sourced, not
# run:
#   steps_run [-q] NAME LOG CMD...
#                      run CMD, record NAME PASS/FAIL with its duration,
#                      return CMD's status.  Its output goes to the
#                      terminal and to LOG; with LOG "-" to the terminal
#                      only, and CMD runs in this shell (a function may
#                      set variables); with -q to LOG only, and the last
#                      40 lines are shown if CMD fails.
#   steps_note TEXT    add a line of its own to the summary
#   steps_summary TITLE [FILE]
#                      print the records (and keep them in FILE); returns
#                      1 if a step failed
steps_rows=()
steps_failed=0

steps_run()
{
	local quiet=0 name log t0 rc=0

	if [ "$1" = -q ]; then
		quiet=1
		shift
	fi
	name=$1
	log=$2
	shift 2

	echo "=============== $name ==============="
	t0=$(date +%s)
	if [ "$log" = - ]; then
		"$@" || rc=$?
	elif [ "$quiet" = 1 ]; then
		"$@" >"$log" 2>&1 || rc=$?
	else
		"$@" 2>&1 | tee "$log" || rc=$?
	fi
	if [ "$rc" = 0 ]; then
		steps_note "$(printf '%-23s PASS %5ss' "$name" \
			$(( $(date +%s) - t0 )))"
	else
		steps_failed=1
		steps_note "$(printf '%-23s FAIL %5ss (exit %s%s)' "$name" \
			$(( $(date +%s) - t0 )) "$rc" \
			"$([ "$log" = - ] || echo "; log $log")")"
		if [ "$quiet" = 1 ]; then
			tail -n 40 "$log" | sed 's/^/    /'
		fi
	fi
	return "$rc"
}

steps_note()
{
	steps_rows+=("$1")
}

steps_summary()
{
	local title=$1 file=${2:-/dev/null}

	echo "=============== $title ==============="
	printf '%s\n' "${steps_rows[@]}" | tee "$file"
	return "$steps_failed"
}
