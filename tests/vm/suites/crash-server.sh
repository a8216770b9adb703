#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# One boot of the crash test's server (tests/vm/run-crash.sh), on the
# patched kernel: daxlease serve of one pmem file per file system
# (remote_crash_cases of remote-lib.sh) until the host kills the guest,
# or, on the final boot, until the client has checked its records.
# The NVDIMMs outlive the guest: on every boot after the first, setup has
# mounted them (journal or log replay), checked them read-only (e2fsck
# -fn, xfs_repair -n) and mounted them again with DAX.
#   daxlease.crash=ROUND[:final][:broken]
# ROUND 1 prepares the files: fallocate, so their extents start
# unwritten and the first write of each block converts it.  broken: the
# negative control, `daxlease serve --unsafe-ack-first` on files made by
# truncate (no blocks yet) with the file systems' commit intervals
# stretched, so that the blocks its registration allocates are not
# durable when the host kills the guest.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the server guest of tests/vm/run-crash.sh (suite
  crash-server), with DAXLEASE_CRASH, DAXLEASE_IP, DAXLEASE_EXT4,
  DAXLEASE_XFS.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 2 ;; esac

# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"
# shellcheck disable=SC1091
. "$(dirname "$0")/../remote-lib.sh"

spec=${DAXLEASE_CRASH:-}
round=${spec%%:*}
final=0
broken=0
case ":$spec:" in *:final:*) final=1 ;; esac
case ":$spec:" in *:broken:*) broken=1 ;; esac
me=$(remote_my_ip)
tmp=$(mktemp -d)

file_of()
{
	case "$1" in
	ext4) echo "$DAXLEASE_EXT4/crash.dat" ;;
	xfs) echo "$DAXLEASE_XFS/crash.dat" ;;
	esac
}

suite_begin crash-server
if ! [[ "$round" =~ ^[0-9]+$ ]] || [ -z "$me" ]; then
	result round fail "not a crash test boot (daxlease.crash=$spec, daxlease.ip=${DAXLEASE_IP:-})"
	suite_end
	exit 1
fi
echo "crash-server: round $round"
echo "crash-server: round $round, final $final, broken $broken on $(uname -r)"

if [ "$broken" = 1 ]; then
	# widen the window in which allocated blocks are not yet durable
	mount -o remount,commit=600 "$DAXLEASE_EXT4"
	echo 720000 > /proc/sys/fs/xfs/xfssyncd_centisecs
fi
pids=()
while read -r fs port _; do
	f=$(file_of "$fs")
	if [ "$round" = 1 ]; then
		rm -f "$f"
		if [ "$broken" = 1 ]; then
			truncate -s "$REMOTE_CRASH_SIZE" "$f"
		else
			fallocate -l "$REMOTE_CRASH_SIZE" "$f"
		fi
		sync
		result "prepare_$fs" pass "$f: $(stat -c %s "$f") bytes, $( [ "$broken" = 1 ] && echo "truncate (no blocks)" || echo "fallocate (unwritten extents)")"
	elif [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" = "$REMOTE_CRASH_SIZE" ]; then
		result "present_$fs" pass "$f after the replay: $REMOTE_CRASH_SIZE bytes, $(filefrag "$f" 2>/dev/null | sed 's/.*: //')"
	else
		result "present_$fs" fail "$f after the replay: $(ls -l "$f" 2>&1)"
	fi
	args=(serve "$f" -l "$REMOTE_CRASH_SIZE" -b "$me" -p "$port")
	[ "$final" = 1 ] && args+=(--exit-after 1)
	[ "$broken" = 1 ] && args+=(--unsafe-ack-first)
	# the client makes its records durable with RDMA FLUSH
	[ "${DAXLEASE_PERSIST:-}" = flush ] && args+=(--flush)
	echo "  \$ daxlease ${args[*]}"
	daxlease "${args[@]}" 2>&1 | tee "$tmp/$fs.log" |
		awk -v p="  $fs| " '{ print p $0; fflush() }' &
	pids+=($!)
done < <(remote_crash_cases)

while read -r fs _; do
	ok=0
	for _ in $(seq 240); do
		grep -q "^daxlease serve: serving" "$tmp/$fs.log" && { ok=1; break; }
		sleep 0.5
	done
	if [ "$ok" = 1 ] && ! grep -q "^daxlease serve: serving .*: kind fsdax, strategy lease-pin" "$tmp/$fs.log"; then
		result "serving_$fs" fail "not FS-DAX with the lease path: $(grep -m1 "^daxlease serve: serving" "$tmp/$fs.log")"
	elif [ "$ok" = 1 ]; then
		result "serving_$fs" pass "$(grep -m1 "^daxlease serve: serving" "$tmp/$fs.log" | cut -c 24-)"
	else
		result "serving_$fs" fail "daxlease serve did not start: $(tail -n 3 "$tmp/$fs.log" | tr '\n' ' ')"
	fi
done < <(remote_crash_cases)
echo "crash-server: round $round serving"

# killed here by the host, unless final: then the client checks, leaves,
# and each server exits after its one client
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
if [ "$rc" = 0 ] && grep -q "^daxlease serve: deregistered" "$tmp/ext4.log" &&
   grep -q "^daxlease serve: deregistered" "$tmp/xfs.log"; then
	result final pass "round $round: both servers saw their client check and leave, deregistered, exit 0"
else
	result final fail "round $round: a server failed or did not deregister"
fi
rm -rf "$tmp"
suite_end
