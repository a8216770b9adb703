#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host unit test (no device): the dynamic symbols libdaxlease.so defines
# are exactly the global symbols of libdaxlease.map, each with the
# version node it is listed under, and the test stop points of the guest
# fault tests (providers/daxlease/teststop.c) are not in it.
set -euo pipefail

usage()
{
	echo "usage: $0 LIBDAXLEASE.so LIBDAXLEASE.map"
}
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
	usage
	exit 0
fi
[ $# -eq 2 ] || { usage >&2; exit 2; }
lib=$1
map=$2

# "sym@@NODE" for every global listed in the map
want=$(awk '
	/^[A-Z0-9_.]+[ \t]*{/ { node = $1; sub(/[ \t]*{.*/, "", node) }
	/local:/ { inglobal = 0 }
	/global:/ { inglobal = 1; next }
	inglobal && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ {
		s = $1; sub(/;.*/, "", s); print s "@@" node
	}' "$map" | sort)
have=$(timeout 60 nm -D --defined-only "$lib" |
	awk '$2 != "A" { print $3 }' | sort)

# dl_test_stop() reads DAXLEASE_TEST_STOP: neither may be in the library
if timeout 60 nm "$lib" 2>/dev/null | grep -qw dl_test_stop ||
   grep -qa DAXLEASE_TEST_STOP "$lib"; then
	echo "fail unit-symbols: $lib carries the test stop points (teststop.c, DAXLEASE_TEST_STOP)"
	exit 1
fi

if [ "$want" = "$have" ]; then
	echo "pass unit-symbols: $(echo "$have" | wc -l) symbols match $map"
	exit 0
fi
echo "fail unit-symbols: exported symbols differ from $map"
diff <(echo "$want") <(echo "$have") || true
exit 1
