#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "stock" (tests/guest/stock/stock.c): daxlease on the stock
# Debian 6.1 kernel.  Loop-mounts a small non-DAX ext4 on tmpfs for the
# page-cache case, then runs dl-stock-test, which writes the results.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the test VM (tests/vm/run.sh --suites stock); uses the
  DAXLEASE_* environment of tests/vm/setup-guest.sh.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

if [ "${DAXLEASE_KERNEL:-stock}" != stock ]; then
	. "${DAXLEASE_PREFIX:-/opt/daxlease}/vm/lib.sh"
	suite_begin stock
	result stock-contract skip "the stock-kernel suite asserts what an unpatched 6.1 lacks; this is the $DAXLEASE_KERNEL kernel"
	suite_end
	exit 0
fi

img=/tmp/stock-nodax-ext4.img
mnt=/mnt/ext4-nodax
cleanup()
{
	if grep -q " $mnt " /proc/mounts; then
		umount "$mnt" || true
	fi
	rm -f "$img"
}
trap cleanup EXIT

why=
if ! truncate -s 64M "$img" 2>/dev/null ||
   ! mkfs.ext4 -q -F "$img" > /tmp/stock-mkfs.log 2>&1; then
	why="mkfs.ext4 of a 64 MiB image on tmpfs failed: $(tail -n 1 /tmp/stock-mkfs.log 2>/dev/null)"
elif ! mkdir -p "$mnt" ||
     ! out=$(mount -t ext4 -o loop,dax=never "$img" "$mnt" 2>&1); then
	why="loop mount failed (no loop device on this kernel?): $out"
fi
if [ -z "$why" ]; then
	export DAXLEASE_NODAX_EXT4=$mnt
	echo "stock.sh: non-DAX ext4: $(grep " $mnt " /proc/mounts)"
else
	export DAXLEASE_NODAX_WHY=$why
	echo "stock.sh: $why"
fi
export DAXLEASE_TMPFS=/tmp
timeout 1200 dl-stock-test
