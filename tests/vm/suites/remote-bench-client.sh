#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Client of the durable-write latency benchmark (bench/remote), on the
# stock kernel: each round, for 64 B and 4 KiB, in an order of the
# round's own, the latency of a durable write (RDMA WRITE + PERSIST +
# ACK, one at a time, daxlease-remote-client lat) to the server's FS-DAX
# file and to its device DAX, and librpma's rpma_write() +
# rpma_flush(PERSISTENT) to the same device DAX (dl-rpma-test lat).  With
# daxlease.persist=flush (bench/remote --client-persist flush) also
# fsdax_flush and devdax_flush: RDMA WRITE + RDMA FLUSH to the same two
# servers, by the client built against a newer rdma-core.  One
# record per measurement: {"suite":"remote-bench","case":C,"size":S,
# "round":R,"median_us":M,"p99_us":P}; bench/remote takes the ratios of
# each round's medians.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the client guest of bench/remote (suite remote-bench-client),
  with DAXLEASE_PEER; daxlease.bench_rounds=R (default 7) and
  daxlease.bench_iters=N (default 300) on the kernel command line.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 2 ;; esac

# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"
# shellcheck disable=SC1091
. "$(dirname "$0")/../remote-lib.sh"

rounds=7
iters=300
# shellcheck disable=SC2013 # words of /proc/cmdline, not lines
for a in $(cat /proc/cmdline 2>/dev/null); do
	case "$a" in
	daxlease.bench_rounds=*) rounds=${a#*=} ;;
	daxlease.bench_iters=*) iters=${a#*=} ;;
	esac
done
peer=${DAXLEASE_PEER:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A got

# measure CASE SIZE: one latency run; its record; 0 or 1
measure()
{
	local c=$1 size=$2 log=$tmp/lat.log rc=0 t0=$SECONDS line

	case "$c" in
	fsdax|devdax|fsdax_flush|devdax_flush)
		port=$REMOTE_BENCH_FSDAX
		[ "${c%_flush}" = devdax ] && port=$REMOTE_BENCH_DEVDAX
		cl=(daxlease-remote-client --persist send)
		[ "${c%_flush}" = "$c" ] ||
			cl=("$REMOTE_FLUSH_CLIENT" --persist flush)
		"${cl[@]}" -a "$peer" -p "$port" -R 300 -t 30000 \
			lat --size "$size" --iters "$iters" > "$log" 2>&1 || rc=$?
		;;
	rpma)
		# librpma's server serves one connection, then starts again
		while :; do
			rc=0
			timeout 300 dl-rpma-test lat "$peer" "$REMOTE_BENCH_RPMA" \
				"$size" "$iters" > "$log" 2>&1 || rc=$?
			[ "$rc" = 0 ] || [ $((SECONDS - t0)) -gt 300 ] && break
			sleep 0.5
		done
		;;
	esac
	line=$(grep '^lat: ' "$log" || true)
	if [ "$rc" != 0 ] || [ -z "$line" ]; then
		echo "  $c $size: exit $rc: $(tail -n 2 "$log" | tr '\n' ' ')"
		return 1
	fi
	echo "  round $r $c $size B: $line"
	# lat: S bytes x N: min A median B p99 C max D us
	# shellcheck disable=SC2086 # the fields of the line
	set -- $line
	printf '{"suite":"remote-bench","case":"%s","size":%d,"round":%d,"iters":%d,"min_us":%s,"median_us":%s,"p99_us":%s,"max_us":%s}\n' \
		"$c" "$size" "$r" "$iters" "$7" "$9" "${11}" "${13}" >> "$DAXLEASE_RESULTS"
	got[$c.$size]=$(( ${got[$c.$size]:-0} + 1 ))
}

suite_begin remote-bench-client
cases=(fsdax devdax rpma)
[ "${DAXLEASE_PERSIST:-}" = flush ] && cases+=(fsdax_flush devdax_flush)
for ((r = 1; r <= rounds; r++)); do
	for size in 64 4096; do
		# an order of the round's own: rotate by round and size
		k=$(( (r + size / 64) % ${#cases[@]} ))
		for c in "${cases[@]:k}" "${cases[@]:0:k}"; do
			measure "$c" "$size" || true
		done
	done
done
for c in fsdax devdax rpma; do
	for size in 64 4096; do
		n=${got[$c.$size]:-0}
		f=
		case "${cases[*]}" in
		*"${c}_flush"*) f=${got[${c}_flush.$size]:-0} ;;
		esac
		if [ "$n" = "$rounds" ] && { [ -z "$f" ] || [ "$f" = "$rounds" ]; }; then
			result "lat_${c}_$size" pass "$rounds rounds of $iters durable writes of $size B${f:+, with PERSIST and with RDMA FLUSH}"
		else
			result "lat_${c}_$size" fail "$n of $rounds rounds measured${f:+ with PERSIST, $f with RDMA FLUSH}"
		fi
	done
done
suite_end
