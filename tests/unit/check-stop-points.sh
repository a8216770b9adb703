#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host unit test (no device): every test stop point of the library
# (dl_test_stop("STAGE") in providers/daxlease/*.c) is killed at by the
# guest fault tests on both file systems (faults/f_stop_STAGE_ext4 and
# _xfs in the patched manifest), and the manifest names no stage the
# library does not have.
set -euo pipefail

usage()
{
	echo "usage: $0 SOURCE_DIR"
}
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
	usage
	exit 0
fi
[ $# -eq 1 ] || { usage >&2; exit 2; }
src=$1
manifest=$src/tests/vm/manifests/faults.patched.txt

lib=$(grep -oh 'dl_test_stop("[a-z_]*")' "$src"/providers/daxlease/*.c |
	sed 's/.*("\(.*\)")/\1/' | sort -u)
if [ -z "$lib" ]; then
	echo "fail unit-stop-points: no dl_test_stop() in providers/daxlease"
	exit 1
fi
want=$(for s in $lib; do echo "faults/f_stop_${s}_ext4"; echo "faults/f_stop_${s}_xfs"; done | sort)
have=$(grep '^faults/f_stop_' "$manifest" | sort)
if [ "$want" = "$have" ]; then
	echo "pass unit-stop-points: $(echo "$lib" | wc -l) stop points, each in $manifest on ext4 and xfs"
	exit 0
fi
echo "fail unit-stop-points: stop points and faults manifest differ (< library, > manifest)"
diff <(echo "$want") <(echo "$have") || true
exit 1
