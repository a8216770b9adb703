#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The server of a two-guest run (tests/vm/run-pair.sh), on the patched
# kernel: serves the cases of remote-lib.sh one after the other to the
# client guest, across the link.  For the example server: it must
# register with the lease path (FS-DAX) or as device DAX, verify the
# client's data set after persisting it, acknowledge and deregister; the
# file system is then unmounted and mounted again and the data set
# checked once more from the file.  For perftest: its server under
# `daxlease run` must take the lease path and both ends must finish.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the server guest of tests/vm/run-pair.sh (suite
  remote-server), with DAXLEASE_IP, DAXLEASE_PEER, DAXLEASE_EXT4(_DEV),
  DAXLEASE_XFS(_DEV), DAXLEASE_DEVDAX; REMOTE_WAIT (default 600) bounds
  each case's wait for the client.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 2 ;; esac

# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"
# shellcheck disable=SC1091
. "$(dirname "$0")/../remote-lib.sh"

wait_s=${REMOTE_WAIT:-600}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
me=$(remote_my_ip)

# target NAME: the file or device of a case
target()
{
	case "$1" in
	ext4) echo "$DAXLEASE_EXT4/remote.dat" ;;
	xfs) echo "$DAXLEASE_XFS/remote.dat" ;;
	devdax) echo "$DAXLEASE_DEVDAX" ;;
	esac
}

# remount MOUNTPOINT DEV FSTYPE OPTS
remount()
{
	umount "$1" && mount -t "$3" -o "$4" "$2" "$1"
}

# example NAME PORT SEED
example()
{
	local name=$1 port=$2 seed=$3 f log=$tmp/$1.log rc=0 want why='' out opt=-r

	f=$(target "$name")
	# FS-DAX: the lease is released once registered, the pins alone
	# hold the blocks
	case "$name" in
	devdax) want="kind devdax"; opt= ;;
	*) want="kind fsdax, strategy lease-pin" ;;
	esac
	echo "  \$ daxlease_rdma_server -f $f -s $REMOTE_MR -b $me -p $port $opt"
	# shellcheck disable=SC2086 # $opt: one option or none
	timeout "$wait_s" daxlease_rdma_server -f "$f" -s "$REMOTE_MR" \
		-b "$me" -p "$port" $opt > "$log" 2>&1 || rc=$?
	sed 's/^/  server| /' "$log"
	if [ "$rc" != 0 ]; then
		why="server exit $rc (124: no client within ${wait_s}s)"
	elif ! grep -q "$want" "$log"; then
		why="the registration is not '$want': $(grep registered "$log" || true)"
	elif ! grep -q "verified $REMOTE_DATA bytes: pattern of seed $seed" "$log"; then
		why="the server did not verify the client's $REMOTE_DATA bytes of seed $seed"
	elif ! grep -q "^daxlease_rdma_server: deregistered" "$log"; then
		why="no deregistration"
	fi
	if [ -z "$why" ]; then
		result "serve_$name" pass "the stock client's $REMOTE_DATA bytes of seed $seed arrived over the link in $f ($want), persisted, checked, acknowledged; deregistered"
	else
		result "serve_$name" fail "$why"
		return 0
	fi
	# the data set outlives the process and a remount (FS-DAX)
	why=
	case "$name" in
	ext4) remount "$DAXLEASE_EXT4" "$DAXLEASE_EXT4_DEV" ext4 dax || why="remount of $DAXLEASE_EXT4 failed" ;;
	xfs) remount "$DAXLEASE_XFS" "$DAXLEASE_XFS_DEV" xfs dax=always || why="remount of $DAXLEASE_XFS failed" ;;
	esac
	if [ -z "$why" ] && out=$(timeout 60 daxlease_rdma_server -f "$f" \
		-s "$REMOTE_DATA" -V "$seed" 2>&1); then
		result "reread_$name" pass "$([ "$name" = devdax ] && echo "read back from $f" || echo "after a remount"): ${out##*: }"
	else
		result "reread_$name" fail "${why:-$out}"
	fi
	[ "$name" = devdax ] || rm -f "$f"
}

# perftest PORT: ib_write_bw's server, unmodified, under daxlease run
perftest()
{
	local port=$1 f=$DAXLEASE_EXT4/perftest.dat log=$tmp/pt.log rc why=
	local t0=$SECONDS starts=0 start_s=240

	head -c $((4 << 20)) /dev/zero > "$f"
	sync
	echo "  \$ daxlease run -- ib_write_bw $(remote_pt_args) $port --mmap=$f"
	# ib_write_bw serves one connection: a client attempt that dies
	# after connecting (remote-client.sh tries again) leaves it waiting
	# for good.  So each start gets start_s, and one that ran out of time
	# (124, or 143 from busybox) is started again while wait_s lasts.
	while :; do
		starts=$((starts + 1))
		rc=0
		# shellcheck disable=SC2046
		(cd "$tmp" && exec timeout "$start_s" daxlease run --debug -- \
			ib_write_bw $(remote_pt_args) "$port" --mmap="$f") \
			> "$log" 2>&1 || rc=$?
		case $rc in 124|143) ;; *) break ;; esac
		[ $((SECONDS - t0 + start_s)) -le "$wait_s" ] || break
		echo "  (ib_write_bw's server got no complete run in $start_s s; starting it again)"
	done
	sed 's/^/  server| /' "$log" | tail -n 25
	if [ "$rc" != 0 ]; then
		why="ib_write_bw server exit $rc after $starts start(s): $(tail -n 3 "$log" | tr '\n' ' ')"
	elif ! grep -q "registered with the layout lease" "$log"; then
		why="its MR did not take the lease path: $(grep daxlease "$log" | head -n 3 | tr '\n' ' ' || true)"
	elif ! truncate -s 0 "$f"; then
		why="truncate of $f after the server exited failed"
	fi
	if [ -z "$why" ]; then
		result serve_perftest pass "ib_write_bw's server under daxlease run on ext4-dax (lease path), the stock client wrote into it over the link (server started $starts time(s)); $(grep -E '^ *65536' "$log" | head -n 1 | tr -s ' ')"
	else
		result serve_perftest fail "$why"
	fi
	rm -f "$f"
}

# serve PORT: daxlease serve on an ext4-dax file for the serve case of
# the client suite; while it serves, its pins hold the file
serve()
{
	local port=$1 f=$DAXLEASE_EXT4/serve.dat log=$tmp/serve.log rc=0 pid
	local why='' i out gone flush=() rel

	# RDMA FLUSH targets: Linux 6.2 and later (rxe); before, --flush is
	# refused with the reason
	rel=$(uname -r)
	if [ "$(printf '%s\n6.2\n' "${rel%%-*}" | sort -V | head -n 1)" = 6.2 ]; then
		flush=(--flush)
	else
		rc=0
		out=$(timeout 60 daxlease serve "$f.flush" -l 8M -c --flush \
			-b "$me" -p $((port + 100)) 2>&1) || rc=$?
		if [ "$rc" = 95 ] && echo "$out" | grep -q FLUSH && [ ! -e "$f.flush" ]; then
			result serve_flush pass "Linux $rel has no RDMA FLUSH: daxlease serve --flush refused (EOPNOTSUPP), nothing left behind: $out"
		else
			result serve_flush fail "daxlease serve --flush on Linux $rel: exit $rc (want 95), file left: $([ -e "$f.flush" ] && echo yes || echo no): $out"
		fi
		rm -f "$f.flush"
		rc=0
	fi
	echo "  \$ daxlease serve $f -l 64M -c -r ${flush[*]} -b $me -p $port --idle-timeout $REMOTE_SERVE_IDLE --exit-after $REMOTE_SERVE_CONNS"
	daxlease serve "$f" -l 64M -c -r "${flush[@]}" -b "$me" -p "$port" \
		--idle-timeout "$REMOTE_SERVE_IDLE" \
		--exit-after "$REMOTE_SERVE_CONNS" > "$log" 2>&1 &
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		grep -q "client .* connected" "$log" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if ! grep -q "serving $f .*kind fsdax, strategy lease-pin, lease released" "$log"; then
		why="not serving $f with the lease path: $(head -n 3 "$log" | tr '\n' ' ')"
	elif ! grep -qF "$f" "/proc/$pid/file_pins" 2>/dev/null; then
		why="/proc/$pid/file_pins does not list $f"
	elif out=$(truncate -s 1M "$f" 2>&1); then
		why="a truncate of the served file succeeded"
	elif ! echo "$out" | grep -q "Text file busy"; then
		why="a truncate of the served file failed otherwise: $out"
	fi
	if [ ${#flush[@]} != 0 ]; then
		if grep -q "serving $f .*RDMA FLUSH target yes" "$log"; then
			result serve_flush pass "Linux $rel: the served FS-DAX region is registered with FLUSH_GLOBAL | FLUSH_PERSISTENT (the kernel took them: rxe refuses FLUSH_PERSISTENT on memory that is not pmem)"
		else
			result serve_flush fail "daxlease serve --flush on Linux $rel: $(head -n 3 "$log" | tr '\n' ' ')"
		fi
	fi
	if [ -z "$why" ]; then
		result serve_pinned pass "while a client is connected: /proc/$pid/file_pins lists $f, a truncate fails: ${out##*: }"
	else
		result serve_pinned fail "$why"
	fi
	for ((i = 0; i < wait_s * 2; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		sleep 5
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" || rc=$?
	sed 's/^/  server| /' "$log"
	gone=$(grep -c "^daxlease serve: client .* gone:" "$log" || true)
	why=
	if [ "$rc" != 0 ]; then
		why="daxlease serve exit $rc (not done within ${wait_s}s?)"
	elif [ "$gone" != "$REMOTE_SERVE_CONNS" ]; then
		why="$gone clients came and went, want $REMOTE_SERVE_CONNS"
	elif ! grep -q "disconnecting: idle timeout" "$log"; then
		why="the stopped client was not dropped by the idle timeout"
	elif ! grep -q "^daxlease serve: deregistered" "$log"; then
		why="no deregistration"
	fi
	if [ -z "$why" ]; then
		result serve_clients pass "$gone clients served one after another and at once; the killed one and the silent one (idle timeout) dropped without disturbing the others; exit 0, deregistered"
	else
		result serve_clients fail "$why"
	fi
	if out=$(truncate -s 0 "$f" 2>&1); then
		result serve_released pass "after the server exited the truncate succeeds"
	else
		result serve_released fail "truncate after the server exited: $out"
	fi
	rm -f "$f"
}

suite_begin remote-server
if [ "${DAXLEASE_ROLE:-}" != server ] || [ -z "$me" ]; then
	result role fail "not the server of a two-guest run (daxlease.role=${DAXLEASE_ROLE:-}, daxlease.ip=${DAXLEASE_IP:-}): use tests/vm/run-pair.sh"
	suite_end
	exit 1
fi
result role pass "server $me on $(uname -r), rxe0 over $(rdma link show | awk '/rxe0/ { print $NF }'), peer ${DAXLEASE_PEER:-?}"
while read -r name port seed; do
	echo "---- case $name, port $port"
	case "$name" in
	perftest) perftest "$port" ;;
	serve) serve "$port" ;;
	*) example "$name" "$port" "$seed" ;;
	esac
done < <(remote_cases)
suite_end
