#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The man pages own the API documentation; <infiniband/verbs_dax.h> keeps
# one line a function.  For every exported function (libdaxlease.map):
#  - a man page NAME.3.md whose NAME line is "NAME - ...", whose SYNOPSIS
#    has the header's prototype (whitespace aside), and whose ERRORS
#    section names only errno values <errno.h> defines (or says "None");
#  - in the header, a one-line summary "/* NAME - ... */" right before the
#    prototype, with no errno names (the errno lists live in the pages);
#  - daxlease.7.md lists it.
set -euo pipefail

if [ "${1:-}" = --help ] || [ $# -ne 0 ]; then
	echo "usage: $0      (checks the man pages beside this script)"
	[ "${1:-}" = --help ] && exit 0
	exit 64
fi
man=$(cd "$(dirname "$0")" && pwd)
ext=$(dirname "$man")
header=$ext/infiniband/verbs_dax.h
map=$ext/libdaxlease.map
passed=0
failed=0
ok()  { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1: $2"; }

errnos() { { grep -oE '\bE[A-Z0-9]{2,}\b' || true; } | sort -u; }
# every errno name the C library knows
known=$(printf '#include <errno.h>\n' | ${CC:-cc} -E -dM - 2>/dev/null |
	sed -n 's/^#define \(E[A-Z0-9]*\) .*/\1/p' | sort -u)
[ -n "$known" ] || { echo "FAIL cannot list the errno names of <errno.h>"; exit 1; }
# a prototype on one line, blanks squeezed: "int f(int a, char *b);"
oneline() { tr '\n\t' '  ' | sed 's/  */ /g; s/( /(/g; s/ )/)/g; s/^ //; s/ $//'; }

funcs=$(sed -n 's/^[[:space:]]*\(ibv_[a-z_]*\);$/\1/p' "$map")
[ -n "$funcs" ] || { echo "FAIL no functions in $map"; exit 1; }
for f in $funcs; do
	# header: "/* f - summary */" then the prototype up to ";"
	proto=$(awk -v f="$f" '
		want && /;/ { print; exit } want { print; next }
		$0 ~ "^/\\* " f " - .*\\*/$" { want = 1 }' "$header" | oneline)
	summary=$(grep -E "^/\* $f - .+\*/$" "$header" || true)
	if [ -z "$summary" ]; then
		bad "$f-summary" "no one-line comment \"/* $f - ... */\" in $header"
	elif ! grep -qE "[ *]$f\(" <<<"$proto"; then
		bad "$f-summary" "the line after \"/* $f - ... */\" does not declare $f"
	elif [ -n "$(grep -F -x -f <(echo "$known") <(errnos <<<"$summary") || true)" ]; then
		bad "$f-summary" "errno names in the header's summary; the man page lists them"
	else
		ok "$f-summary"
	fi

	page=$man/$f.3.md
	if [ ! -f "$page" ]; then
		bad "$f-page" "no man page $page"
		continue
	fi
	if grep -qE "^$f - .+" "$page"; then
		ok "$f-page"
	else
		bad "$f-page" "NAME section has no line \"$f - ...\""
	fi

	synopsis=$(awk '/^# SYNOPSIS/ { on = 1; next } /^# / { on = 0 }
			on && /^```c/ { code = 1; next } on && /^```/ { code = 0 }
			code && !/^#include/' "$page" | oneline)
	if [ -n "$proto" ] && [ "$synopsis" = "$proto" ]; then
		ok "$f-synopsis"
	else
		bad "$f-synopsis" "man page: \"$synopsis\"; header: \"$proto\""
	fi

	section=$(awk '/^# ERRORS/ { on = 1; next } /^# / { on = 0 } on' "$page")
	have=$(errnos <<<"$section")
	unknown=$(grep -v -F -x -f <(echo "$known") <<<"$have" || true)
	if [ -z "$(awk '/^# ERRORS/' "$page")" ]; then
		bad "$f-errors" "no ERRORS section"
	elif [ -z "$have" ] && ! grep -q '^None' <<<"$section"; then
		bad "$f-errors" "ERRORS names no errno value and does not say None"
	elif [ -n "$unknown" ]; then
		bad "$f-errors" "not errno names: $(echo $unknown)"
	else
		ok "$f-errors ($(echo ${have:-none}))"
	fi

	if grep -q "\*\*$f\*\*(3)" "$man/daxlease.7.md"; then
		ok "$f-in-daxlease.7"
	else
		bad "$f-in-daxlease.7" "daxlease.7.md does not list $f"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
