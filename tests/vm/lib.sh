# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Guest shell helpers for tests/vm/suites/*.sh: the JSON-lines records of
# tests/common/dtest.h, appended to $DAXLEASE_RESULTS, plus a readable line
# on stdout.  Source it: . /opt/daxlease/vm/lib.sh
#   suite_begin NAME
#   result TEST pass|fail|skip "reason"
#   suite_end            (returns 1 if any result failed)
# Works in bash and busybox sh.

DL_SUITE=
DL_PASS=0
DL_FAIL=0
DL_SKIP=0
DL_T0=

_dl_now() { cut -d' ' -f1 /proc/uptime 2>/dev/null || echo 0; }

# JSON string body: backslash and quote escaped, tab as \t, other control
# characters dropped.
json_str()
{
	printf '%s' "$1" | tr -d '\000-\010\012-\037' |
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/	/\\t/g'
}

_dl_emit() { printf '%s\n' "$1" >> "${DAXLEASE_RESULTS:-/dev/null}"; }

suite_begin()
{
	DL_SUITE=$1
	DL_PASS=0
	DL_FAIL=0
	DL_SKIP=0
	DL_T0=$(_dl_now)
	_dl_emit "{\"suite\":\"$(json_str "$1")\",\"event\":\"start\"}"
	echo "=== suite $1"
}

result()
{
	local name=$1 res=$2 reason=${3:-} now secs

	case "$res" in
	pass) DL_PASS=$((DL_PASS + 1)) ;;
	fail) DL_FAIL=$((DL_FAIL + 1)) ;;
	skip) DL_SKIP=$((DL_SKIP + 1)) ;;
	*) reason="bad result word '$res': $reason"; res=fail
	   DL_FAIL=$((DL_FAIL + 1)) ;;
	esac
	now=$(_dl_now)
	secs=$(awk -v a="${DL_T0:-$now}" -v b="$now" 'BEGIN { printf "%.3f", b - a }')
	DL_T0=$now
	_dl_emit "{\"suite\":\"$(json_str "$DL_SUITE")\",\"test\":\"$(json_str "$name")\",\"result\":\"$res\",\"reason\":\"$(json_str "$reason")\",\"seconds\":$secs}"
	echo "$res $DL_SUITE/$name${reason:+: $reason} (${secs}s)"
}

# check NAME REASON CMD...: pass if CMD succeeds, else fail.
check()
{
	local name=$1 reason=$2

	shift 2
	if "$@"; then
		result "$name" pass "$reason"
	else
		result "$name" fail "$reason (failed: $*)"
	fi
}

suite_end()
{
	_dl_emit "{\"suite\":\"$(json_str "$DL_SUITE")\",\"event\":\"end\",\"pass\":$DL_PASS,\"fail\":$DL_FAIL,\"skip\":$DL_SKIP}"
	echo "=== suite $DL_SUITE: $DL_PASS pass, $DL_FAIL fail, $DL_SKIP skip"
	[ "$DL_FAIL" = 0 ]
}
