#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The crash test's client (tests/vm/run-crash.sh), on the stock kernel,
# booted once for all rounds (daxlease.crash=ROUNDS).  Each round, for
# each file system of remote_crash_cases at once: reconnect to the
# server that the host has booted again (-R), read back every record
# acknowledged so far (RDMA READ; the last REMOTE_CRASH_SLOTS of them)
# and check that each is intact: result intact_FS; then stream new
# records, each acknowledged durable before the next, until the host
# kills the server (the first "acked SEQ" line of each round goes to the
# console: the host waits for it before it picks the moment of the kill).  The round after the last
# kill only checks.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the client guest of tests/vm/run-crash.sh (suite
  crash-client), with DAXLEASE_CRASH (the number of kills) and
  DAXLEASE_PEER.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 2 ;; esac

# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"
# shellcheck disable=SC1091
. "$(dirname "$0")/../remote-lib.sh"

rounds=${DAXLEASE_CRASH:-}
peer=${DAXLEASE_PEER:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A acked id port

suite_begin crash-client
if ! [[ "$rounds" =~ ^[0-9]+$ ]] || [ -z "$peer" ]; then
	result rounds fail "not a crash test boot (daxlease.crash=$rounds, daxlease.peer=$peer)"
	suite_end
	exit 1
fi
fss=()
while read -r fs p i; do
	fss+=("$fs")
	port[$fs]=$p
	id[$fs]=$i
	acked[$fs]=-1
done < <(remote_crash_cases)

cli() # FS ARGS...: the client against FS's server
{
	local fs=$1

	shift
	"${REMOTE_CLIENT[@]}" -a "$peer" -p "${port[$fs]}" -t 10000 -R 900 "$@"
}

for ((r = 1; r <= rounds + 1; r++)); do
	echo "crash-client: round $r"
	for fs in "${fss[@]}"; do
		a=${acked[$fs]}
		[ "$a" -ge 0 ] || continue
		# the last SLOTS - 1 of them: the record in flight at the kill
		# (a + 1) may have overwritten the slot of a + 1 - SLOTS
		first=$((a + 2 > REMOTE_CRASH_SLOTS ? a + 2 - REMOTE_CRASH_SLOTS : 0))
		rc=0
		cli "$fs" check --id "${id[$fs]}" --start "$first" \
			--count $((a + 1 - first)) --size "$REMOTE_REC" \
			--slots "$REMOTE_CRASH_SLOTS" > "$tmp/check.$fs" 2>&1 || rc=$?
		sed "s/^/  $fs| /" "$tmp/check.$fs"
		if [ "$rc" = 0 ]; then
			result "intact_$fs" pass "round $r: records $first..$a, every one acknowledged before the kill, intact after the server's reboot"
		else
			result "intact_$fs" fail "round $r: $(grep -v '^connected' "$tmp/check.$fs" | tail -n 2 | tr '\n' ' ')"
		fi
	done
	[ "$r" -le "$rounds" ] || break
	pids=()
	for fs in "${fss[@]}"; do
		# until the kill: more records than fit between two kills
		cli "$fs" put --id "${id[$fs]}" --start $((acked[$fs] + 1)) \
			--count "$REMOTE_CRASH_SLOTS" --size "$REMOTE_REC" \
			--slots "$REMOTE_CRASH_SLOTS" 2>&1 |
			tee "$tmp/put.$fs" |
			awk -v p="  $fs| " '$1 == "acked" && n++ { next } { print p $0; fflush() }' &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || true
	done
	for fs in "${fss[@]}"; do
		n=$(sed -n 's/^acked \([0-9]*\)$/\1/p' "$tmp/put.$fs" | tail -n 1)
		if grep -q "^put: .* durable in" "$tmp/put.$fs"; then
			# the kill must cut every stream: a finished one means
			# the next round would check a server never rebooted
			result "acked_$fs" fail "round $r: all records acknowledged before the kill: more records a round (slots) or a shorter --max-delay"
			[ -n "$n" ] && acked[$fs]=$n
		elif [ -n "$n" ] && [ "$n" -gt "${acked[$fs]}" ]; then
			result "acked_$fs" pass "round $r: records $((acked[$fs] + 1))..$n acknowledged, then: $(grep -v '^acked' "$tmp/put.$fs" | tail -n 1)"
			acked[$fs]=$n
		else
			result "acked_$fs" fail "round $r: no record acknowledged: $(tail -n 2 "$tmp/put.$fs" | tr '\n' ' ')"
		fi
	done
done
suite_end
