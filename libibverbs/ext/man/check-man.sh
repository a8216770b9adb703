#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Every exported function (libdaxlease.map) has a man page NAME.3.md, and
# the errno names in the page's ERRORS section are exactly those in the
# function's comment in <infiniband/verbs_dax.h>.  Also checks that
# daxlease.7.md lists every function.
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

errnos() { { grep -oE '\bE[A-Z0-9]{2,}\b' || true; } | { grep -vE '^(EOF|EXCLUSIVE|ERRORS)$' || true; } | sort -u; }

funcs=$(sed -n 's/^[[:space:]]*\(ibv_[a-z_]*\);$/\1/p' "$map")
[ -n "$funcs" ] || { echo "FAIL no functions in $map"; exit 1; }
for f in $funcs; do
	page=$man/$f.3.md
	if [ ! -f "$page" ]; then
		bad "$f" "no man page $page"
		continue
	fi
	ok "$f-page"
	# the header comment: from " * f - " to the closing " */"
	want=$(awk -v f="$f" '$0 ~ "^ \\* " f " - " { on = 1 } on { print }
			      on && /\*\// { exit }' "$header" | errnos)
	have=$(awk '/^# ERRORS/ { on = 1; next } /^# / { on = 0 } on' "$page" |
	       errnos)
	if [ -z "$want" ] && [ -z "$(awk '/^# ERRORS/' "$page")" ]; then
		bad "$f-errors" "no ERRORS section"
	elif [ "$want" = "$have" ]; then
		ok "$f-errors ($(echo $want))"
	else
		bad "$f-errors" "header: $(echo $want); man page: $(echo $have)"
	fi
	if grep -q "\*\*$f\*\*(3)" "$man/daxlease.7.md"; then
		ok "$f-in-daxlease.7"
	else
		bad "$f-in-daxlease.7" "daxlease.7.md does not list $f"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
