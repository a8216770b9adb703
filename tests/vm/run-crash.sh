#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The crash test: no acknowledged write is lost.  Two guests as in
# tests/vm/run-pair.sh; the client (stock kernel, booted once) streams
# records into a pmem file on ext4-dax and one on xfs-dax of the server
# (patched kernel, `daxlease serve`), each record acknowledged durable
# before the next.  ROUNDS times the host kills the server's QEMU with
# SIGKILL at a random moment after the round's first acknowledgement,
# then boots the server again on the same NVDIMM images: it replays the
# journal and the log, checks both file systems read-only (they must be
# clean) and serves the files again, and the client reads back every
# record acknowledged so far and checks each one.  A last boot only
# serves that check.  The random delays come from --seed (printed).
#
# What it proves: the NVDIMM images are shared file mappings that the
# kill does not touch, while the guest's DRAM (page cache, unwritten
# journal buffers, CPU state) is lost; so every acknowledged record must
# be in the image, with the metadata that finds it (size, extents,
# unwritten-to-written conversion) committed, whatever the moment of the
# kill, and replay and fsck must be clean.  What it cannot prove: that
# CPU caches are flushed, or that the ACK follows the persist: QEMU TCG
# models no cache, so an RDMA WRITE is in the image the moment it lands,
# and a server that maps with MAP_SYNC (its registration then commits
# every block's metadata) passes even if it acknowledges first; nor host
# power loss, ADR versus eADR, or races at hardware speed.
#
# --broken runs the negative control (crash-server.sh: a server that maps
# without MAP_SYNC and acknowledges without persisting, on files without
# blocks); the run passes only if every boot served and the check caught
# acknowledged records missing or damaged on both file systems.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--line 6.1|6.12] [--rounds N] [--seed S] [--broken] [options]
  --line L           kernel line (default 6.12)
  --rounds N         kills (default 5)
  --seed S           of the kill delays (default: random, printed)
  --broken           the negative control: passes only if records are lost
  --max-delay MS     kill at most MS after the round's first ack (default
                     8000; --broken: 1500)
  --server-kernel BZIMAGE  (default: build-kernel.sh --line L)
  --out DIR          OUT/client, OUT/server-R (default build/vm-crash-L)
  --client-persist M send (default) or flush: the client makes its records
                     durable with RDMA FLUSH (tests/vm/run-pair.sh)
  --no-build         use build/vm-build as it is
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/vm/pair-lib.sh
. "$here/pair-lib.sh"
line=6.12
rounds=5
seed=
broken=0
max_delay=
server_kernel=
out=
do_build=1
build=$top/build/vm-build
persist=send
while [ $# -gt 0 ]; do
	case "$1" in
	--line) line=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--broken) broken=1; shift ;;
	--max-delay) max_delay=$2; shift 2 ;;
	--server-kernel) server_kernel=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--client-persist) persist=$2; shift 2 ;;
	--no-build) do_build=0; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "$0: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
done
case "$line" in 6.1|6.12) ;; *) usage >&2; exit 2 ;; esac
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "$0: --rounds wants a count" >&2; exit 2; }
[ -n "$seed" ] || seed=$(( $(od -An -N2 -tu2 /dev/urandom) ))
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "$0: --seed wants a number" >&2; exit 2; }
[ -n "$max_delay" ] || max_delay=$([ "$broken" = 1 ] && echo 1500 || echo 8000)
: "${out:=$top/build/vm-crash-$line$([ "$broken" = 1 ] && echo -broken)}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out"/server-* "$out/client" "$out/rounds.txt"
t_start=$SECONDS
phase() { echo "run-crash.sh: [$((SECONDS - t_start))s] $*"; }
RANDOM=$seed
pair_persist "$persist" "$out" "$line" || exit 1
pargs=$PAIR_PERSIST_ARGS

if [ -z "$server_kernel" ]; then
	bash "$top/kernel-headers/build-kernel.sh" --line "$line"
	server_kernel=$(bash "$top/kernel-headers/build-kernel.sh" --line "$line" --print-path)
fi
[ -f "$server_kernel" ] || { echo "$0: no kernel image $server_kernel" >&2; exit 1; }
[ "$do_build" = 1 ] && bash "$here/run.sh" --build-only --build-dir "$build" --out "$out"
timeout 900 bash "$here/get-stock-kernel.sh" --line "$line" > /dev/null

nvdir=$(mktemp -d /dev/shm/daxlease-crash.XXXXXX)
cpid=
spid=
# shellcheck disable=SC2317 # called by the trap
cleanup()
{
	local p

	for p in $spid $cpid; do
		pkill -KILL -P "$p" 2>/dev/null || true
	done
	pkill -KILL -f "mem-path=$nvdir/" 2>/dev/null || true
	rm -rf "$nvdir"
}
trap cleanup EXIT

pair_ports
srv_ip=$PAIR_SERVER_IP
cli_ip=$PAIR_CLIENT_IP
phase "seed $seed, $rounds kills, line $line$([ "$broken" = 1 ] && echo ", BROKEN server (negative control)"), client persists with $persist; link $ps <-> $pc; NVDIMMs in $nvdir"

bash "$here/run.sh" --no-build --build-dir "$build" --kernel stock \
	--line "$line" --smp 1 --timeout $((600 + rounds * 400)) \
	--suites crash-client --out "$out/client" \
	--link "$pc:$ps:$PAIR_CLIENT_MAC" \
	--append "daxlease.role=client daxlease.ip=$cli_ip/24 daxlease.peer=$srv_ip daxlease.crash=$rounds $pargs" \
	> "$out/client.log" 2>&1 &
cpid=$!
ccons=$out/client/console.log

# wait_for FILE PATTERN AFTER SEC: a line matching PATTERN after the last
# line that is AFTER in FILE, within SEC seconds
wait_for()
{
	local i

	for ((i = 0; i < $4 * 5; i++)); do
		if [ -f "$1" ] &&
		   awk -v a="$3" -v p="$2" '{ sub(/\r$/, "") } $0 == a { seen = 1; hit = 0 } seen && $0 ~ p { hit = 1 } END { exit !hit }' "$1"; then
			return 0
		fi
		kill -0 "$cpid" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# judge_boot DIR: the boot's own records: setup (replay, fsck) and the
# server's; every one passed, and it was serving
judge_boot()
{
	/usr/bin/python3 - "$1/results.jsonl" <<'PY'
import json, sys
recs = []
lines = [l.strip().strip("\x00") for l in
         open(sys.argv[1], "rb").read().decode("utf-8", "replace").splitlines()]
lines = [l for l in lines if l]
for n, line in enumerate(lines):
    try:
        r = json.loads(line)
        if not isinstance(r, dict):
            raise ValueError
    except ValueError:
        # only the line the kill cut short
        if n != len(lines) - 1:
            print(f"unreadable result line {n + 1}: {line[:80]}"); sys.exit(1)
        continue
    if "test" in r:
        recs.append(r)
bad = [f'{r["suite"]}/{r["test"]}: {r.get("reason", "")}' for r in recs
       if r.get("result") != "pass"]
serving = [r for r in recs if r["test"].startswith("serving_") and r.get("result") == "pass"]
files = [r for r in recs if r["test"].startswith(("prepare_", "present_"))]
setup = [r for r in recs if r.get("suite") == "setup"]
if bad:
    print("; ".join(bad)); sys.exit(1)
if len(serving) != 2 or len(setup) != 7 or len(files) != 2:
    print(f"{len(setup)} setup steps, {len(files)} files, {len(serving)} servers serving (want 7, 2, 2)"); sys.exit(1)
print(f"{len(recs)} records passed (setup: replay + fsck on reboot), both servers serving")
PY
}

status=0
for ((r = 1; r <= rounds + 1; r++)); do
	spec=$r
	[ "$r" -gt "$rounds" ] && spec+=:final
	[ "$broken" = 1 ] && spec+=:broken
	sdir=$out/server-$r
	bash "$here/run.sh" --no-build --build-dir "$build" \
		--kernel "$server_kernel" --smp 2 --timeout 900 \
		--suites crash-server --out "$sdir" --nvdimm-dir "$nvdir" \
		--link "$ps:$pc:$PAIR_SERVER_MAC" \
		--append "daxlease.role=server daxlease.ip=$srv_ip/24 daxlease.peer=$cli_ip daxlease.crash=$spec $pargs" \
		> "$out/server-$r.log" 2>&1 &
	spid=$!
	if [ "$r" -gt "$rounds" ]; then
		phase "boot $r: final, the client checks"
		src=0
		wait "$spid" || src=$?
		spid=
		if [ "$src" = 0 ]; then
			phase "boot $r: PASS: $(judge_boot "$sdir" || true)"
		else
			phase "boot $r: FAIL (run.sh exit $src): $(judge_boot "$sdir" || true); see $out/server-$r.log"
			status=1
		fi
		break
	fi
	# the server has recorded that it serves, and each stream has an ack
	if ! wait_for "$sdir/console.log" "^crash-server: round $r serving" "crash-server: round $r" 900 ||
	   ! wait_for "$ccons" "^  ext4\\| acked [0-9]+" "crash-client: round $r" 900 ||
	   ! wait_for "$ccons" "^  xfs\\| acked [0-9]+" "crash-client: round $r" 900; then
		phase "round $r: the server did not serve or a stream had no acknowledged record within 900 s (client alive: $(kill -0 "$cpid" 2>/dev/null && echo yes || echo no))"
		status=1
		break
	fi
	delay=$(( (RANDOM * 32768 + RANDOM) % max_delay ))
	sleep "$((delay / 1000)).$(printf %03d $((delay % 1000)))"
	if ! pkill -KILL -f "mem-path=$nvdir/nvdimm0.img"; then
		phase "round $r: no server QEMU to kill"
		status=1
	fi
	wait "$spid" || true
	spid=
	if verdict=$(judge_boot "$sdir"); then
		phase "round $r: server killed $delay ms after the first ack; $verdict"
	else
		phase "round $r: FAIL: $verdict"
		status=1
	fi
	echo "$r $delay" >> "$out/rounds.txt"
done

crc=0
wait "$cpid" || crc=$?
cpid=
intact_pass=$(grep -c '"test":"intact_[a-z0-9]*","result":"pass"' "$out/client/results.jsonl" || true)
intact_fail=$(grep -c '"test":"intact_[a-z0-9]*","result":"fail"' "$out/client/results.jsonl" || true)
acked=$(grep -c '"test":"acked_[a-z0-9]*","result":"pass"' "$out/client/results.jsonl" || true)
grep -h '"test":"intact_[a-z0-9]*","result":"fail"' "$out/client/results.jsonl" |
	sed 's/.*"reason":"\([^"]*\)".*/  lost: \1/' | head -n 5 || true
phase "client: run.sh exit $crc; $acked of $((rounds * 2)) streams acknowledged records; read-back checks: $intact_pass intact, $intact_fail with a lost or damaged record (want $((rounds * 2)) and 0)"
if [ "$broken" = 1 ]; then
	# caught on both file systems, by the content of a record, with
	# every boot serving and every stream acknowledged
	caught=0
	for fs in ext4 xfs; do
		grep -q "\"test\":\"intact_$fs\",\"result\":\"fail\",\"reason\":\"[^\"]*\(no record header\|another record's header\|payload differs\|checksum differs\)" \
			"$out/client/results.jsonl" && caught=$((caught + 1))
	done
	if [ "$caught" = 2 ] && [ "$status" = 0 ] && [ "$acked" = $((rounds * 2)) ]; then
		phase "done: PASS: the negative control lost acknowledged records and the test caught it (seed $seed)"
		exit 0
	fi
	phase "done: FAIL: want every boot serving (status $status), $((rounds * 2)) streams acknowledged ($acked) and a lost record caught on both file systems ($caught) (seed $seed)"
	exit 1
fi
if [ "$status" = 0 ] && [ "$crc" = 0 ] && [ "$intact_pass" = $((rounds * 2)) ] &&
   [ "$intact_fail" = 0 ] && [ "$acked" = $((rounds * 2)) ]; then
	phase "done: PASS: $rounds kills, no acknowledged record lost, replay and fsck clean on every boot (seed $seed)"
	exit 0
fi
phase "done: FAIL (seed $seed)"
exit 1
