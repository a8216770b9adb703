#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Smoke suite of the test VM itself: the environment the harness promises.
set -euo pipefail
case "${1:-}" in -h|--help) echo "usage: $0  (inside the test VM)"; exit 0 ;; esac
. /opt/daxlease/vm/lib.sh

suite_begin smoke
check ext4-dax "$DAXLEASE_EXT4 mounted with dax" \
	grep -q " $DAXLEASE_EXT4 ext4 .*dax" /proc/mounts
check xfs-dax "$DAXLEASE_XFS mounted with dax=always" \
	grep -q " $DAXLEASE_XFS xfs .*dax" /proc/mounts
check devdax "$DAXLEASE_DEVDAX is a character device" test -c "$DAXLEASE_DEVDAX"
check rxe "$DAXLEASE_RDMA_DEV listed by ibv_devices" \
	sh -c "ibv_devices | grep -qw $DAXLEASE_RDMA_DEV"
check pyverbs "/usr/bin/python3 imports pyverbs" \
	/usr/bin/python3 -c 'import pyverbs.device'
if out=$(cd /tmp && timeout 60 ibv_rc_pingpong -d "$DAXLEASE_RDMA_DEV" -g "$DAXLEASE_GID_INDEX" -n 10 > /tmp/pp-server.log 2>&1 & sleep 1; timeout 60 ibv_rc_pingpong -d "$DAXLEASE_RDMA_DEV" -g "$DAXLEASE_GID_INDEX" -n 10 localhost 2>&1); then
	result rc-pingpong pass "$(echo "$out" | tail -n 1)"
else
	result rc-pingpong fail "$out"
fi
suite_end
