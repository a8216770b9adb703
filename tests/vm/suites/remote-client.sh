#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The client of a two-guest run (tests/vm/run-pair.sh), on Debian's stock
# kernel with rdma-core only: nothing of daxlease is in its kernel or in
# the programs it runs.  For each case of remote-lib.sh it connects to
# the server guest across the link (rdma_cm), retrying until the server
# serves that case, and checks its side: the example client must see
# the server's acknowledgement of its persisted and verified data set,
# perftest's client must finish its run.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the client guest of tests/vm/run-pair.sh (suite
  remote-client), with DAXLEASE_IP and DAXLEASE_PEER; REMOTE_WAIT
  (default 600) bounds each case's wait for the server.
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
peer=${DAXLEASE_PEER:-}

# until_served NAME LOG CMD...: run CMD until it gets past connecting,
# or wait_s seconds have gone; its last exit status.  Connecting fails
# while the server guest boots or serves an earlier case.  Each attempt
# gets attempt_s seconds (default 300); an exit status listed in retry_rc
# is tried again too.  The attempts are in $tries afterwards.
tries=0
until_served()
{
	local name=$1 log=$2 t0=$SECONDS rc

	shift 2
	tries=0
	while :; do
		tries=$((tries + 1))
		rc=0
		timeout "${attempt_s:-300}" "$@" > "$log" 2>&1 || rc=$?
		[ "$rc" = 0 ] && break
		case " ${retry_rc:-} " in
		*" $rc "*) ;;
		*) grep -Eq "$name" "$log" || break ;;
		esac
		[ $((SECONDS - t0)) -lt "$wait_s" ] || break
		sleep 1
	done
	echo "  ($tries attempt(s), $((SECONDS - t0)) s)"
	return "$rc"
}

# example NAME PORT SEED
example()
{
	local name=$1 port=$2 seed=$3 log=$tmp/$1.log rc=0

	echo "  \$ daxlease_rdma_client -a $peer -p $port -s $REMOTE_DATA --seed $seed"
	until_served "^daxlease_rdma_client: rdma_(create_ep|connect):" "$log" \
		daxlease_rdma_client -a "$peer" -p "$port" -s "$REMOTE_DATA" \
		--seed "$seed" || rc=$?
	sed 's/^/  client| /' "$log"
	if [ "$rc" = 0 ] && grep -q "server persisted and verified the data set" "$log"; then
		result "write_$name" pass "$REMOTE_DATA bytes of seed $seed RDMA-written to the server's $name MR across the link; acknowledged as persisted and verified: $(grep -o 'in [0-9]* us ([0-9.]* MB/s)' "$log" || true)"
	else
		result "write_$name" fail "client exit $rc: $(tail -n 2 "$log" | tr '\n' ' ')"
	fi
}

# perftest PORT: ib_write_bw's client, unmodified
perftest()
{
	local port=$1 log=$tmp/pt.log rc=0

	echo "  \$ ib_write_bw $(remote_pt_args) $port $peer"
	# perftest's client can crash on a failed connect (SIGSEGV: 139) or
	# hang in it (killed after 120 s: 124, or 143 from busybox); the
	# server then starts its single-connection ib_write_bw again
	# (remote-server.sh), so try again too
	# shellcheck disable=SC2046
	attempt_s=120 retry_rc="124 139 143" \
	until_served "Unable to perform rdma_client function|Failed to .*rdma|Couldn't .*connect|REJECTED|ADDR_ERROR|UNREACHABLE" \
		"$log" ib_write_bw $(remote_pt_args) "$port" "$peer" || rc=$?
	sed 's/^/  client| /' "$log" | tail -n 25
	if [ "$rc" = 0 ] && grep -Eq '^ *65536' "$log"; then
		result write_perftest pass "ib_write_bw (perftest, unmodified) wrote into the server's FS-DAX file across the link after $tries attempt(s): $(grep -E '^ *65536' "$log" | head -n 1 | tr -s ' ')"
	else
		result write_perftest fail "ib_write_bw client exit $rc: $(tail -n 3 "$log" | tr '\n' ' ')"
	fi
}

# acked LOG: the last "acked SEQ" of a put's output, or -1
acked() { sed -n 's/^acked \([0-9]*\)$/\1/p' "$1" | tail -n 1 | grep . || echo -1; }

# wait_acked LOG PID: until LOG has an ack or PID has ended (60 s)
wait_acked()
{
	local i

	for ((i = 0; i < 600; i++)); do
		grep -q "^acked " "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# by_flush LOG: true unless daxlease.persist=flush and the put of LOG made
# no range durable with RDMA FLUSH
by_flush()
{
	[ "${DAXLEASE_PERSIST:-}" != flush ] ||
		grep -Eq '^put: .* \([1-9][0-9]* RDMA FLUSH,' "$1"
}

# serve_case PORT: the clients of the server's daxlease serve
serve_case()
{
	local port=$1 rec=$REMOTE_REC i rc p why log n b
	local -a pids
	local c=("${REMOTE_CLIENT[@]}" -a "$peer" -p "$port" -t 30000)

	# one client: waits for the server to serve (-R)
	log=$tmp/s1.log
	echo "  \$ ${c[*]} -R $wait_s put --id 1 --count 200 --size $rec --base 0 -q"
	rc=0
	"${c[@]}" -R "$wait_s" put --id 1 --count 200 --size "$rec" --base 0 -q \
		> "$log" 2>&1 || rc=$?
	sed 's/^/  client| /' "$log"
	if [ "$rc" = 0 ] && [ "$(acked "$log")" = 199 ] && by_flush "$log"; then
		result put_one pass "200 records of $rec bytes, each written and acknowledged durable: $(grep '^put:' "$log")"
	else
		result put_one fail "exit $rc, last acked $(acked "$log"), want 199$(by_flush "$log" || echo ", and RDMA FLUSH (daxlease.persist=flush): $(grep -m1 '^put:' "$log")")"
	fi

	# four at once, four records a PERSIST
	pids=()
	for i in 2 3 4 5; do
		"${c[@]}" put --id "$i" --count 100 --size "$rec" \
			--base $((i << 22)) --batch 4 -q > "$tmp/s$i.log" 2>&1 &
		pids+=($!)
	done
	why=
	for i in 2 3 4 5; do
		rc=0
		wait "${pids[$((i - 2))]}" || rc=$?
		sed 's/^/  client '"$i"'| /' "$tmp/s$i.log"
		[ "$rc" = 0 ] && [ "$(acked "$tmp/s$i.log")" = 99 ] ||
			why="${why:+$why; }client $i exit $rc, last acked $(acked "$tmp/s$i.log")"
	done
	if [ -z "$why" ]; then
		result put_four pass "4 clients at once, 100 records each, all acknowledged"
	else
		result put_four fail "$why"
	fi

	# killed mid-transfer
	log=$tmp/s6.log
	"${c[@]}" put --id 6 --count 2000 --size "$rec" --base $((24 << 20)) \
		> "$log" 2>&1 &
	p=$!
	why=
	if wait_acked "$log" "$p"; then
		sleep 0.5
		kill -KILL "$p" 2>/dev/null || why="it ended before the kill"
	else
		why="no ack before the kill"
	fi
	rc=0
	wait "$p" || rc=$?
	[ -z "$why" ] && [ "$rc" != 137 ] && why="exit $rc, want 137 (SIGKILL)"
	if [ -z "$why" ]; then
		result killed_client pass "client 6 SIGKILLed after record $(acked "$log") was acknowledged"
	else
		result killed_client fail "$why"
	fi

	# silent: stopped until the server's idle timeout drops it
	log=$tmp/s7.log
	# (a short bound: once resumed it waits for a queue pair that is gone)
	"${c[@]}" -t 8000 put --id 7 --count 2000 --size "$rec" --base $((32 << 20)) \
		> "$log" 2>&1 &
	p=$!
	why=
	if wait_acked "$log" "$p" && kill -STOP "$p" 2>/dev/null; then
		n=$(acked "$log")
		sleep $((REMOTE_SERVE_IDLE + 10))
		kill -CONT "$p"
	else
		why="no ack before the stop"
	fi
	rc=0
	wait "$p" || rc=$?
	sed 's/^/  client 7| /' "$log" | tail -n 4
	[ -z "$why" ] && [ "$rc" = 0 ] && why="it finished: the server did not drop it"
	if [ -z "$why" ]; then
		result silent_client pass "client 7 stopped after record $n for $((REMOTE_SERVE_IDLE + 10)) s; the server dropped it, it failed on resuming (exit $rc): $(grep -v '^acked' "$log" | tail -n 1)"
	else
		result silent_client fail "$why"
	fi

	# every acknowledged record of clients 1-5 is there (RDMA READ)
	why=
	for i in 1 2 3 4 5; do
		n=200 b=0
		[ "$i" = 1 ] || { n=100; b=$((i << 22)); }
		"${c[@]}" check --id "$i" --count "$n" --size "$rec" --base "$b" \
			> "$tmp/c$i.log" 2>&1 ||
			why="${why:+$why; }client $i: $(tail -n 1 "$tmp/c$i.log")"
	done
	if [ -z "$why" ]; then
		result read_back pass "the 600 records of clients 1-5 read back intact over RDMA READ"
	else
		result read_back fail "$why"
	fi

	# the server still serves
	log=$tmp/s8.log
	rc=0
	"${c[@]}" put --id 8 --count 10 --size "$rec" --base $((48 << 20)) \
		> "$log" 2>&1 || rc=$?
	if [ "$rc" = 0 ] && [ "$(acked "$log")" = 9 ]; then
		result put_after pass "a client after the killed and the silent ones is served"
	else
		result put_after fail "exit $rc: $(tail -n 2 "$log" | tr '\n' ' ')"
	fi
}

suite_begin remote-client
if [ "${DAXLEASE_ROLE:-}" != client ] || [ -z "$peer" ]; then
	result role fail "not the client of a two-guest run (daxlease.role=${DAXLEASE_ROLE:-}, daxlease.peer=$peer): use tests/vm/run-pair.sh"
	suite_end
	exit 1
fi
result role pass "client $(remote_my_ip) on $(uname -r), rxe0 over $(rdma link show | awk '/rxe0/ { print $NF }'), server $peer"
# a client needs nothing of daxlease: a stock kernel, the example client
# linked against rdma-core only
why=
case "$(uname -r)" in *daxlease*) why="the kernel is $(uname -r)" ;; esac
[ -e /proc/self/file_pins ] && why="${why:+$why; }/proc/self/file_pins exists (the series' kernel)"
# (no ldd in the image: the dynamic loader lists what it would load)
progs=(daxlease_rdma_client daxlease-remote-client)
# daxlease.persist=flush: the client built against a newer rdma-core too
[ "${DAXLEASE_PERSIST:-}" = flush ] && progs+=("$REMOTE_FLUSH_CLIENT")
for prog in "${progs[@]}"; do
	libs=$(/lib64/ld-linux-x86-64.so.2 --list "$(command -v "$prog")" 2>&1 || true)
	# by name: the newer rdma-core's own path has daxlease in it
	sonames=$(echo "$libs" | awk '{ print $1 }')
	echo "$sonames" | grep -qi daxlease && why="${why:+$why; }$prog loads $(echo "$sonames" | grep -i daxlease | tr '\n' ' ')"
	echo "$libs" | grep -q librdmacm || why="${why:+$why; }$prog does not link librdmacm: $libs"
done
if [ -z "$why" ]; then
	result stock_client pass "stock kernel $(uname -r), no file_pins; ${progs[*]##*/} link $(echo "$libs" | awk '/=>/ { print $3 }' | grep -E 'ibverbs|rdmacm' | tr '\n' ' ')"
else
	result stock_client fail "$why"
fi
while read -r name port seed; do
	echo "---- case $name, port $port"
	case "$name" in
	perftest) perftest "$port" ;;
	serve) serve_case "$port" ;;
	*) example "$name" "$port" "$seed" ;;
	esac
done < <(remote_cases)
suite_end
