#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part of the guest suite "bench" (tests/vm/suites/bench.sh runs it after
# dl-bench): unmodified programs.  Debian's ib_write_bw (64 KiB) and
# ib_write_lat (64 B) over the rxe loopback with the server's buffer on
# FS-DAX (an ext4-dax file, through `daxlease run`), on device DAX (the
# bandwidth only: ib_write_lat's buffer is smaller than the device's 2 MiB
# mapping unit) and in DRAM, the cases interleaved: every round runs each case once, in an order
# of its own; and dl-reg-bench (4 KiB anonymous ibv_reg_mr + ibv_dereg_mr)
# with and without the preload library.  Writes {"suite":"bench",
# "bench":{...}} records (group "app", and "pair": a round's figure over
# the same round's DRAM or plain one) for bench/report.py, and the sanity
# of each case as suite "bench_apps".
#
# usage: bench_apps.sh ROUNDS
set -euo pipefail

# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"

rounds=${1:-7}
dev=${DAXLEASE_RDMA_DEV:-rxe0}
gid=${DAXLEASE_GID_INDEX:-0}
prefix=${DAXLEASE_PREFIX:-/opt/daxlease}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=19600
fsfile=${DAXLEASE_EXT4:-/mnt/ext4}/bench-app.dat
results=${DAXLEASE_RESULTS:-/dev/null}

emit()	# GROUP CASE PHASE SIZE UNIT FILE-OF-VALUES
{
	local g=$1 c=$2 ph=$3 s=$4 u=$5 f=$6
	sort -g "$f" | awk -v g="$g" -v c="$c" -v ph="$ph" -v s="$s" -v u="$u" '
		{ v[NR] = $1 }
		END {
			printf "{\"suite\":\"bench\",\"bench\":{\"group\":\"%s\",\"case\":\"%s\",\"phase\":\"%s\",\"size\":%d,\"unit\":\"%s\",\"runs\":%d", g, c, ph, s, u, NR
			if (NR) printf ",\"median\":%.4f,\"min\":%.4f,\"max\":%.4f}}\n", v[int((NR + 1) / 2)], v[1], v[NR]
			else printf ",\"median\":null,\"min\":null,\"max\":null,\"error\":\"no run succeeded\"}}\n"
		}' >> "$results"
}

# one perftest run: PROGRAM CASE ARGS...; prints the figure (bw: average
# MB/s; lat: typical us) or nothing
perftest()
{
	local prog=$1 case=$2 spid col srv=()
	shift 2
	port=$((port + 1))
	case "$case" in
	fsdax) srv=(daxlease run -- "$prog" --mmap="$fsfile") ;;
	devdax) srv=("$prog" --mmap="${DAXLEASE_DEVDAX:-/dev/dax2.0}") ;;
	dram) srv=("$prog") ;;
	esac
	(cd "$tmp" && exec timeout 120 "${srv[@]}" -d "$dev" -x "$gid" -F \
		-p "$port" "$@") > "$tmp/srv.log" 2>&1 &
	spid=$!
	sleep 2
	(cd "$tmp" && exec timeout 120 "$prog" -d "$dev" -x "$gid" -F \
		-p "$port" "$@" 127.0.0.1) > "$tmp/cli.log" 2>&1 || true
	wait "$spid" 2>/dev/null || true
	# bw: "#bytes #iterations peak average msgrate"; lat: t_typical is
	# the 5th column
	[ "$prog" = ib_write_bw ] && col=4 || col=5
	awk -v c="$col" '$1 ~ /^[0-9]+$/ && NF >= c && $2 ~ /^[0-9]+$/ { print $c; exit }' "$tmp/cli.log"
}

suite_begin bench_apps
head -c $((4 << 20)) /dev/zero > "$fsfile"
# device DAX maps in 2 MiB units: the bandwidth runs use 16 QPs, which
# makes perftest's buffer 2 MiB (64 KiB x 2 x 16) in every case
bw_args=(-s 65536 -q 16 -n 100)
lat_args=(-s 64 -n 200)
for c in fsdax devdax dram; do
	: > "$tmp/bw_$c"
	: > "$tmp/lat_$c"
done
: > "$tmp/reg_preload"
: > "$tmp/reg_plain"
: > "$tmp/pair_bw_fsdax"
: > "$tmp/pair_bw_devdax"
: > "$tmp/pair_lat_fsdax"
: > "$tmp/pair_reg"
regbench=$(command -v dl-reg-bench || echo "$prefix/libexec/daxlease/tests/dl-reg-bench")
preload=$prefix/lib/daxlease/libdaxlease-preload.so
for r in $(seq 1 "$rounds"); do
	declare -A bw=() lat=()
	# the cases in an order of this round's own
	for c in $(printf 'fsdax\ndevdax\ndram\n' |
		   awk -v r="$r" 'BEGIN { srand(r) } { print rand(), $0 }' |
		   sort -g | cut -d' ' -f2); do
		bw[$c]=$(perftest ib_write_bw "$c" "${bw_args[@]}")
		# device DAX maps in 2 MiB units, ib_write_lat's 64 B test maps
		# 8 KiB: no latency case on it
		lat[$c]=
		[ "$c" = devdax ] ||
			lat[$c]=$(perftest ib_write_lat "$c" "${lat_args[@]}")
		[ -z "${bw[$c]}" ] || echo "${bw[$c]}" >> "$tmp/bw_$c"
		[ -z "${lat[$c]}" ] || echo "${lat[$c]}" >> "$tmp/lat_$c"
	done
	for c in fsdax devdax; do
		[ -n "${bw[$c]}" ] && [ -n "${bw[dram]}" ] &&
			awk -v a="${bw[$c]}" -v b="${bw[dram]}" 'BEGIN { if (b > 0) printf "%.4f\n", a / b }' >> "$tmp/pair_bw_$c"
	done
	[ -n "${lat[fsdax]}" ] && [ -n "${lat[dram]}" ] &&
		awk -v a="${lat[fsdax]}" -v b="${lat[dram]}" 'BEGIN { if (b > 0) printf "%.4f\n", a / b }' >> "$tmp/pair_lat_fsdax"
	# the preload on a registration it passes through, both orders
	if [ $((r % 2)) = 1 ]; then order="plain preload"; else order="preload plain"; fi
	for o in $order; do
		if [ "$o" = preload ]; then
			LD_PRELOAD=$preload "$regbench" 2000 > "$tmp/reg.out" 2>&1 || true
		else
			"$regbench" 2000 > "$tmp/reg.out" 2>&1 || true
		fi
		eval "reg_$o=\$(awk '/^reg_us/ { print \$2 }' \"\$tmp/reg.out\")"
	done
	# shellcheck disable=SC2154 # set by the eval above
	if [ -n "$reg_preload" ] && [ -n "$reg_plain" ]; then
		echo "$reg_preload" >> "$tmp/reg_preload"
		echo "$reg_plain" >> "$tmp/reg_plain"
		awk -v a="$reg_preload" -v b="$reg_plain" 'BEGIN { if (b > 0) printf "%.4f\n", a / b }' >> "$tmp/pair_reg"
	fi
	unset bw lat
done
for c in fsdax devdax dram; do
	emit app "ib_write_bw_$c" total 65536 MBps "$tmp/bw_$c"
	[ "$c" = devdax ] || emit app "ib_write_lat_$c" total 64 us "$tmp/lat_$c"
done
emit app reg_4KiB_anon_preload total 4096 us "$tmp/reg_preload"
emit app reg_4KiB_anon_plain total 4096 us "$tmp/reg_plain"
emit pair ib_write_bw_fsdax vs_dram 65536 ratio "$tmp/pair_bw_fsdax"
emit pair ib_write_bw_devdax vs_dram 65536 ratio "$tmp/pair_bw_devdax"
emit pair ib_write_lat_fsdax vs_dram 64 ratio "$tmp/pair_lat_fsdax"
emit pair reg_4KiB_anon_preload vs_plain 4096 ratio "$tmp/pair_reg"
for f in bw_fsdax bw_devdax bw_dram lat_fsdax lat_dram reg_preload reg_plain; do
	n=$(grep -c . "$tmp/$f" || true)
	if [ "$n" = "$rounds" ]; then
		result "$f" pass "$n of $rounds rounds: $(sort -g "$tmp/$f" | tr '\n' ' ')"
	else
		result "$f" fail "$n of $rounds rounds measured; last server log: $(tail -n 2 "$tmp/srv.log" | tr '\n' ' ')"
	fi
done
rm -f "$fsfile"
suite_end
