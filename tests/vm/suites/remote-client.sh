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
# while the server guest boots or serves an earlier case.
until_served()
{
	local name=$1 log=$2 t0=$SECONDS rc tries=0

	shift 2
	while :; do
		tries=$((tries + 1))
		rc=0
		timeout 300 "$@" > "$log" 2>&1 || rc=$?
		[ "$rc" = 0 ] && break
		grep -Eq "$name" "$log" || break
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
	# shellcheck disable=SC2046
	until_served "Unable to perform rdma_client function|Failed to .*rdma|Couldn't .*connect|REJECTED|ADDR_ERROR|UNREACHABLE" \
		"$log" ib_write_bw $(remote_pt_args) "$port" "$peer" || rc=$?
	sed 's/^/  client| /' "$log" | tail -n 25
	if [ "$rc" = 0 ] && grep -Eq '^ *65536' "$log"; then
		result write_perftest pass "ib_write_bw (perftest, unmodified) wrote into the server's FS-DAX file across the link: $(grep -E '^ *65536' "$log" | head -n 1 | tr -s ' ')"
	else
		result write_perftest fail "ib_write_bw client exit $rc: $(tail -n 3 "$log" | tr '\n' ' ')"
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
libs=$(/lib64/ld-linux-x86-64.so.2 --list "$(command -v daxlease_rdma_client)" 2>&1 || true)
echo "$libs" | grep -qi daxlease && why="${why:+$why; }daxlease_rdma_client loads $(echo "$libs" | grep -i daxlease | awk '{ print $1 }' | tr '\n' ' ')"
echo "$libs" | grep -q librdmacm || why="${why:+$why; }daxlease_rdma_client does not link librdmacm: $libs"
if [ -z "$why" ]; then
	result stock_client pass "stock kernel $(uname -r), no file_pins; daxlease_rdma_client links $(echo "$libs" | awk '/=>/ { print $1 }' | grep -E 'ibverbs|rdmacm' | tr '\n' ' ')"
else
	result stock_client fail "$why"
fi
while read -r name port seed; do
	echo "---- case $name, port $port"
	case "$name" in
	perftest) perftest "$port" ;;
	*) example "$name" "$port" "$seed" ;;
	esac
done < <(remote_cases)
suite_end
