#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Server of the durable-write latency benchmark (bench/remote, two guests
# of tests/vm/run-pair.sh): daxlease serve of an ext4-dax file and of
# device DAX, and librpma's server (dl-rpma-test, as librpma's users write
# it) on the same device DAX, for remote-bench-client's rounds:
# daxlease.bench_rounds=R (default 7), two connections a round each.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the server guest of bench/remote (suite remote-bench-server),
  with DAXLEASE_IP, DAXLEASE_EXT4, DAXLEASE_DEVDAX; daxlease.bench_rounds=R
  on the kernel command line (default 7).
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 2 ;; esac

# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"
# shellcheck disable=SC1091
. "$(dirname "$0")/../remote-lib.sh"

rounds=7
# shellcheck disable=SC2013 # words of /proc/cmdline, not lines
for a in $(cat /proc/cmdline 2>/dev/null); do
	case "$a" in
	daxlease.bench_rounds=*) rounds=${a#*=} ;;
	esac
done
conns=$((2 * rounds))
rpma_conns=$conns
# with RDMA FLUSH (bench/remote --client-persist flush), each daxlease
# serve has the PERSIST and the FLUSH client of every round and size
[ "${DAXLEASE_PERSIST:-}" = flush ] && conns=$((4 * rounds))
me=$(remote_my_ip)
tmp=$(mktemp -d)
f=$DAXLEASE_EXT4/bench.dat

suite_begin remote-bench-server
rm -f "$f"
fallocate -l 8M "$f"
# the client makes its writes durable with RDMA FLUSH
flush=()
[ "${DAXLEASE_PERSIST:-}" = flush ] && flush=(--flush)
daxlease serve "$f" -l 8M -b "$me" -p "$REMOTE_BENCH_FSDAX" "${flush[@]}" \
	--exit-after "$conns" > "$tmp/fsdax.log" 2>&1 &
p1=$!
daxlease serve "$DAXLEASE_DEVDAX" -l 2M -b "$me" -p "$REMOTE_BENCH_DEVDAX" \
	"${flush[@]}" --exit-after "$conns" > "$tmp/devdax.log" 2>&1 &
p2=$!
(
	for ((i = 0; i < rpma_conns; i++)); do
		timeout 600 dl-rpma-test server "$me" "$REMOTE_BENCH_RPMA" \
			"$DAXLEASE_DEVDAX" 2097152 - || exit 1
	done
) > "$tmp/rpma.log" 2>&1 &
p3=$!
for what in fsdax:$p1 devdax:$p2 rpma:$p3; do
	rc=0
	wait "${what#*:}" || rc=$?
	name=${what%%:*}
	sed "s/^/  $name| /" "$tmp/$name.log" | tail -n 4
	if [ "$rc" = 0 ]; then
		n=$conns
		[ "$name" = rpma ] && n=$rpma_conns
		result "serve_$name" pass "$n connections served: $(grep -m1 -E 'serving|registered' "$tmp/$name.log" | cut -c1-150)"
	else
		result "serve_$name" fail "exit $rc: $(tail -n 2 "$tmp/$name.log" | tr '\n' ' ')"
	fi
done
rm -f "$f"
rm -rf "$tmp"
suite_end
