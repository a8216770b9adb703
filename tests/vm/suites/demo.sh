#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest half of tools/demo.sh: the daxlease story on real rxe and emulated
# NVDIMMs, one recorded step at a time.
#
# Patched kernel, once on ext4-dax and once on xfs with dax=always (the
# xfs pass's steps are named STEP-xfs): daxlease_rdma_server registers a
# file (8 MiB) and drops the layout lease, so only the pins hold the blocks; the client
# RDMA-WRITEs a 4 MiB data set into it; the server persists and checks it.
# While the MR is held, /proc/<pid>/file_pins and `daxlease pins` show the
# pin and a truncate to 4 MiB (cutting only the pinned tail beyond the
# data set) fails with ETXTBSY.  After deregistration the same truncate
# succeeds, the file system is remounted and the data set is checked
# against the seed and the sha256 taken before.
#
# Stock kernel: the FS-DAX registration must be refused with the library's
# explicit message, and the same RDMA flow runs on device DAX instead.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the test VM (tests/vm/run.sh --suites demo).  Uses
  DAXLEASE_KERNEL, DAXLEASE_EXT4, DAXLEASE_EXT4_DEV, DAXLEASE_XFS,
  DAXLEASE_XFS_DEV, DAXLEASE_DEVDAX, DAXLEASE_RDMA_DEV and
  DAXLEASE_RESULTS; DAXLEASE_DEMO_ADDR (default
  10.77.0.1) is the IPv4 address given to the rxe netdev.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

# lib.sh sits one level up, in the tree and in the guest (/opt/daxlease/vm).
. "$(dirname "$0")/../lib.sh"

kernel=${DAXLEASE_KERNEL:-stock}
dev=${DAXLEASE_RDMA_DEV:-rxe0}
addr=${DAXLEASE_DEMO_ADDR:-10.77.0.1}
port=7471
seed=42
mr_size=$((8 << 20))
data_size=$((4 << 20))
work=$(mktemp -d /tmp/demo.XXXXXX)
server_log=$work/server.log
server_pid=
shown=0
stepno=0
# appended to the step names of the current pass ("" or "-xfs")
tsfx=
t_begin=${EPOCHREALTIME/./}

step()
{
	stepno=$((stepno + 1))
	local ds=$(( (${EPOCHREALTIME/./} - t_begin) / 100000 ))

	printf '\n==== demo step %d (t=%d.%ds): %s\n' "$stepno" \
		$((ds / 10)) $((ds % 10)) "$*"
}

# Print the server's output lines not yet shown.
show_server()
{
	[ -f "$server_log" ] || return 0
	tail -n +$((shown + 1)) "$server_log" | sed 's/^/  server| /'
	shown=$(wc -l < "$server_log")
}

# The server is alive: not gone and not an unreaped zombie (kill -0
# succeeds on a zombie).
server_alive()
{
	local stat

	stat=$(cat "/proc/$server_pid/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# wait_for ERE SECONDS: until the server logs a match of ERE; 1 if it exits
# or the time runs out first.
wait_for()
{
	local i

	for ((i = 0; i < $2 * 10; i++)); do
		grep -Eq -- "$1" "$server_log" 2>/dev/null && return 0
		server_alive || {
			grep -Eq -- "$1" "$server_log" 2>/dev/null
			return
		}
		sleep 0.1
	done
	return 1
}

# try_truncate FILE SIZE: prints "ok", the errno name, or "hang".
try_truncate()
{
	local rc=0 out

	out=$(timeout 30 /usr/bin/python3 -c '
import errno, os, sys
try:
    os.truncate(sys.argv[1], int(sys.argv[2]))
    print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
' "$1" "$2") || rc=$?
	[ "$rc" = 124 ] && out=hang
	echo "${out:-error}"
}

# dresult STEP RESULT REASON: result of this pass's STEP
dresult() { result "$1$tsfx" "$2" "${3:-}"; }

file_size() { stat -c %s "$1"; }
data_sha() { head -c "$data_size" "$1" | sha256sum | cut -d' ' -f1; }

stop_server()
{
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	server_pid=
}
trap 'stop_server; rm -rf "$work"' EXIT

start_server() # FILE [ARGS...]
{
	: > "$server_log"
	shown=0
	echo "  \$ daxlease_rdma_server -f $* -s $mr_size -b $addr -p $port -H"
	daxlease_rdma_server -f "$@" -s "$mr_size" -b "$addr" -p "$port" -H \
		> "$server_log" 2>&1 &
	server_pid=$!
}

# run_client: RDMA-WRITE the data set; result "rdma-write".
run_client()
{
	local rc=0 t0=${EPOCHREALTIME/./} ms

	echo "  \$ daxlease_rdma_client -a $addr -p $port -s $data_size --seed $seed"
	timeout 300 daxlease_rdma_client -a "$addr" -p "$port" \
		-s "$data_size" --seed "$seed" 2>&1 | sed 's/^/  client| /' ||
		rc=${PIPESTATUS[0]}
	ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
	echo "  client exit $rc after $ms ms"
	wait_for "verified|mismatch" 30 || true
	show_server
	if [ "$rc" = 0 ] && grep -q "verified $data_size bytes" "$server_log"; then
		dresult rdma-write pass "client wrote $data_size bytes over $dev; server persisted them and checked seed $seed"
	else
		dresult rdma-write fail "client exit $rc; server did not report a verified data set"
		return 1
	fi
}

# show_pins FILE: /proc/<pid>/file_pins and `daxlease pins`; results.
show_pins()
{
	local pins=/proc/$server_pid/file_pins out

	wait_for "holding the MR" 30 || true
	show_server
	echo "  \$ cat $pins"
	if [ ! -e "$pins" ] && [ "$kernel" = stock ]; then
		dresult file-pins skip "$pins does not exist on this kernel (the pin tracking is part of the patch series)"
	elif [ ! -e "$pins" ]; then
		dresult file-pins fail "$pins does not exist on the $kernel kernel, whose series adds it"
	else
		sed 's/^/  | /' "$pins"
		if grep -qF "$1" "$pins"; then
			dresult file-pins pass "$pins lists $1 under $(grep -m1 uverbs "$pins" | tr -d '\t' || echo '?')"
		else
			dresult file-pins fail "$pins does not list $1"
		fi
	fi
	if ! command -v daxlease > /dev/null; then
		dresult pins-tool skip "the daxlease tool is not installed"
		return 0
	fi
	# The admin's question: who pins this file?
	echo "  \$ daxlease pins --file $1"
	out=$(timeout 30 daxlease pins --file "$1" 2>&1) || true
	echo "$out" | sed 's/^/  | /'
	if [ ! -e "$pins" ] && [ "$kernel" = stock ]; then
		dresult pins-tool skip "no /proc/<pid>/file_pins to read on this kernel"
	elif [ ! -e "$pins" ]; then
		dresult pins-tool fail "no /proc/<pid>/file_pins to read on the $kernel kernel"
	elif echo "$out" | grep -qw "$server_pid"; then
		dresult pins-tool pass "daxlease pins --file names the server, pid $server_pid"
	else
		dresult pins-tool fail "daxlease pins --file does not name pid $server_pid"
	fi
}

# deregister: SIGUSR1 to the holding server; result "deregister".
deregister()
{
	local rc=0 i

	echo "  \$ kill -USR1 $server_pid"
	kill -USR1 "$server_pid"
	for ((i = 0; i < 600; i++)); do
		server_alive || break
		sleep 0.1
	done
	server_alive && kill -KILL "$server_pid"
	wait "$server_pid" || rc=$?
	server_pid=
	show_server
	if [ "$rc" = 0 ] && grep -q "^daxlease_rdma_server: deregistered" "$server_log"; then
		dresult deregister pass "ibv_dereg_dax_mr() succeeded, server exited 0"
	else
		dresult deregister fail "server exit $rc"
		return 1
	fi
}

# verify FILE NAME WHAT: check the data set with the seed (and sha256).
verify()
{
	local out rc=0

	echo "  \$ daxlease_rdma_server -f $1 -s $data_size -V $seed"
	out=$(timeout 60 daxlease_rdma_server -f "$1" -s "$data_size" \
		-V "$seed" 2>&1) || rc=$?
	echo "$out" | sed 's/^/  | /'
	if [ "$rc" = 0 ]; then
		dresult "$2" pass "$3: ${out##*, }"
	else
		dresult "$2" fail "$3: $out"
		return 1
	fi
}

setup()
{
	local ndev

	step "setup: $kernel kernel $(uname -r), $dev, pmem"
	ndev=$(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/ndevs/0" 2>/dev/null) || true
	if [ -z "$ndev" ]; then
		dresult rdma-address fail "no netdev under RDMA device $dev"
		return 1
	fi
	# The RDMA CM resolves IP addresses; rxe adds a RoCE v2 GID for it.
	ip addr replace "$addr/24" dev "$ndev"
	echo "  $dev on $ndev, $addr; ext4: $(grep " ${DAXLEASE_EXT4:-/mnt/ext4} " /proc/mounts || echo none)"
	dresult rdma-address pass "$dev on $ndev with $addr"
}

# demo_patched MNT DEV FS: the story on the dax file system FS mounted
# at MNT from DEV
demo_patched()
{
	local mnt=$1 mdev=$2 fs=$3
	local file=$mnt/daxlease-demo.dat sha mnt_line fstype opts out

	step "register an 8 MiB $fs-dax file, lease dropped after pinning"
	if [ -z "$mnt" ] || ! grep -q " $mnt .*dax" /proc/mounts; then
		dresult register fail "${mnt:-the $fs mount} is not mounted with dax"
		return 1
	fi
	rm -f "$file"
	start_server "$file" -r
	wait_for "listening" 60 || true
	show_server
	if grep -q "kind fsdax, strategy lease-pin" "$server_log"; then
		dresult register pass "$(grep -o 'kind fsdax.*' "$server_log")"
	else
		dresult register fail "no lease-pin registration of $file"
		return 1
	fi

	step "client RDMA-WRITEs a 4 MiB data set; server persists and checks it"
	run_client || return 1

	step "who pins the file"
	show_pins "$file"

	step "truncate the pinned file to 4 MiB (only the pinned tail)"
	out=$(try_truncate "$file" "$data_size")
	echo "  \$ truncate -s $data_size $file  ->  $out; size $(file_size "$file")"
	if [ "$out" = ETXTBSY ] && [ "$(file_size "$file")" = "$mr_size" ]; then
		dresult truncate-pinned pass "ETXTBSY while pinned, size still $mr_size"
	else
		dresult truncate-pinned fail "truncate gave $out, size $(file_size "$file")"
	fi

	step "record the data set's checksum"
	sha=$(data_sha "$file")
	echo "  sha256 of the first $data_size bytes: $sha"
	verify "$file" checksum "while pinned" || true

	step "deregister the MR"
	deregister || return 1

	step "truncate again, now unpinned"
	out=$(try_truncate "$file" "$data_size")
	echo "  \$ truncate -s $data_size $file  ->  $out; size $(file_size "$file")"
	if [ "$out" = ok ] && [ "$(file_size "$file")" = "$data_size" ]; then
		dresult truncate-unpinned pass "succeeds after deregistration, size $data_size"
	else
		dresult truncate-unpinned fail "truncate gave $out, size $(file_size "$file")"
	fi

	step "remount $mnt"
	mnt_line=$(awk -v m="$mnt" '$2 == m { print $3, $4 }' /proc/mounts)
	fstype=${mnt_line%% *}
	opts=${mnt_line#* }
	echo "  \$ umount $mnt; mount -t $fstype -o $opts $mdev $mnt"
	if timeout 60 umount "$mnt" &&
	   timeout 60 mount -t "$fstype" -o "$opts" "$mdev" "$mnt" &&
	   grep -q " $mnt .*dax" /proc/mounts; then
		dresult remount pass "$mdev remounted ($fstype, $opts)"
	else
		dresult remount fail "could not remount $mdev"
		return 1
	fi

	step "the data set survived"
	out=$(data_sha "$file")
	echo "  sha256 now: $out"
	if [ "$out" = "$sha" ]; then
		verify "$file" data-survives-remount "sha256 unchanged" || true
	else
		dresult data-survives-remount fail "sha256 $out, was $sha"
	fi
	rm -f "$file"
}

demo_stock()
{
	local file=$DAXLEASE_EXT4/daxlease-demo.dat rc=0

	step "register an ext4-dax file on the stock kernel: must be refused"
	rm -f "$file"
	start_server "$file"
	if wait_for "listening" 60; then
		show_server
		dresult fsdax-refused fail "the stock kernel registered an FS-DAX file"
		stop_server
	else
		wait "$server_pid" || rc=$?
		server_pid=
		show_server
		if [ "$rc" != 0 ] && grep -q "Operation not supported.*daxlease-kernel-patches" "$server_log"; then
			dresult fsdax-refused pass "EOPNOTSUPP with the library's message naming the package daxlease-kernel-patches"
		else
			dresult fsdax-refused fail "exit $rc without the expected message"
		fi
	fi
	rm -f "$file"

	step "register device DAX ${DAXLEASE_DEVDAX:-(none)} instead"
	if [ ! -c "${DAXLEASE_DEVDAX:-}" ]; then
		dresult register skip "no device-DAX device in this VM"
		return 0
	fi
	start_server "$DAXLEASE_DEVDAX"
	wait_for "listening" 60 || true
	show_server
	if grep -q "kind devdax, strategy plain" "$server_log"; then
		dresult register pass "$(grep -o 'kind devdax.*' "$server_log")"
	else
		dresult register fail "no plain registration of $DAXLEASE_DEVDAX"
		return 1
	fi

	step "client RDMA-WRITEs a 4 MiB data set; server persists and checks it"
	run_client || return 1

	step "who pins the device"
	show_pins "$DAXLEASE_DEVDAX"
	dresult truncate-pinned skip "device DAX has no file blocks to truncate (doc/design.md §1.0)"

	step "deregister the MR"
	deregister || return 1

	step "the data set outlives the registration"
	verify "$DAXLEASE_DEVDAX" data-survives-dereg "read back after the server exited" || true
}

suite_begin demo
if setup; then
	if [ "$kernel" = stock ]; then
		demo_stock || true
	else
		demo_patched "${DAXLEASE_EXT4:-}" "${DAXLEASE_EXT4_DEV:-}" ext4 || true
		stop_server
		tsfx=-xfs
		demo_patched "${DAXLEASE_XFS:-}" "${DAXLEASE_XFS_DEV:-}" xfs || true
		tsfx=
	fi
fi
stop_server
suite_end
