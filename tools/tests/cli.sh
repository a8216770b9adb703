#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test of the daxlease(1) command line: --help and --version, usage
# errors (exit 64), `pins` on saved /proc trees (tools/tests/proc*), the
# shape of every --json document, and the errno exit statuses of `probe -d`
# and `reg` when the device or file is missing.  Needs no RDMA device.
set -euo pipefail

usage()
{
	echo "usage: $0 PATH-TO-daxlease VERSION"
}

if [ "${1:-}" = --help ] || [ $# -ne 2 ]; then
	usage
	[ "${1:-}" = --help ] && exit 0
	exit 64
fi
tool=$1
version=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok()   { passed=$((passed + 1)); echo "ok   $1"; }
bad()  { failed=$((failed + 1)); echo "FAIL $1: $2"; }

# run NAME EXPECTED-STATUS ARGS...: output in $tmp/out, $tmp/err
run()
{
	local name=$1 want=$2 rc=0
	shift 2
	timeout 60 "$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -eq "$want" ]; then
		ok "$name (exit $rc)"
	else
		bad "$name" "exit $rc, wanted $want; stderr: $(head -c 300 "$tmp/err")"
	fi
}

# has NAME FILE PATTERN: grep -q
has()
{
	if grep -q -e "$3" "$2"; then
		ok "$1"
	else
		bad "$1" "no '$3' in $(head -c 300 "$2")"
	fi
}

# pyjson NAME EXPRESSION: evaluate a python assertion on the JSON in out
pyjson()
{
	local name=$1 expr=$2
	if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/out" "$expr" 2>"$tmp/pyerr"; then
		ok "$name"
	else
		bad "$name" "'$expr' false on $(head -c 400 "$tmp/out") $(cat "$tmp/pyerr")"
	fi
}

run version 0 --version
has version-text "$tmp/out" "^daxlease $version\$"
run help 0 --help
for c in probe pins reg; do
	has "help-lists-$c" "$tmp/out" "^  $c "
done
for c in probe pins reg; do
	run "$c-help" 0 "$c" --help
	has "$c-help-usage" "$tmp/out" "^usage: daxlease $c"
done
run no-args 64
run unknown-command 64 frobnicate
has unknown-command-msg "$tmp/err" "unknown command 'frobnicate'"
run probe-extra-arg 64 probe extra
run probe-bad-option 64 probe --bogus
run pins-not-a-pid 64 pins 12x
run reg-no-path 64 reg
run reg-two-paths 64 reg a b
run reg-bad-access 64 reg --access write /tmp
has reg-bad-access-msg "$tmp/err" "bad --access 'write'"
run reg-bad-offset 64 reg --offset -1 /tmp
run reg-bad-length 64 reg --length 0 /tmp
run reg-create-needs-length 64 reg --create /tmp/x
run reg-bad-hold 64 reg --hold soon /tmp

# pins on a saved /proc tree
proc=$here/proc
run pins-table 0 pins --proc "$proc"
has pins-table-header "$tmp/out" "^PID .*COMM .*VIA .*FILE"
has pins-table-owner "$tmp/out" \
	"^100 .*daxlease_rdma_s .*fd 4 /dev/infiniband/uverbs0 .*/mnt/pmem/foo"
has pins-table-mm "$tmp/out" "^100 .* mm .*/mnt/pmem/baz"
run pins-json 0 pins --json --proc "$proc"
pyjson pins-json-scanned 'd["scanned"] == 3 and d["malformed"] == 0'
pyjson pins-json-rows 'len(d["pins"]) == 4'
pyjson pins-json-row0 'd["pins"][0] == {"pid": 100, "comm": "daxlease_rdma_s", "fd": 4, "via": "/dev/infiniband/uverbs0", "file": "/mnt/pmem/foo"}'
pyjson pins-json-mm 'd["pins"][2]["fd"] is None and d["pins"][2]["via"] == "mm"'
pyjson pins-json-no-file-key '"file" not in d'
run pins-pid 0 pins --json --proc "$proc" 200
pyjson pins-pid-only '[p["pid"] for p in d["pins"]] == [200] and d["scanned"] == 1'
run pins-pid-missing 3 pins --proc "$proc" 999
has pins-pid-missing-msg "$tmp/err" "no process 999"

run pins-file 0 pins --file /mnt/pmem/foo --proc "$proc"
has pins-file-answer "$tmp/out" "is pinned by 2 processes"
has pins-file-etxtbsy "$tmp/out" "ETXTBSY"
run pins-file-json 0 pins --file /mnt/pmem/foo --json --proc "$proc"
pyjson pins-file-json-pinned 'd["file"]["pinned"] and d["file"]["processes"] == 2'
pyjson pins-file-json-rows 'sorted(p["pid"] for p in d["pins"]) == [100, 200]'
run pins-file-deleted 0 pins --file /mnt/pmem/bar --json --proc "$proc"
pyjson pins-file-deleted-match 'len(d["pins"]) == 1 and d["pins"][0]["file"].endswith("(deleted)")'
run pins-file-unpinned 0 pins --file "$tmp/nothing" --json --proc "$proc"
pyjson pins-file-unpinned-json 'not d["file"]["pinned"] and d["pins"] == []'
touch "$tmp/real"
run pins-file-unpinned-text 0 pins --file "$tmp/real" --proc "$proc"
has pins-file-unpinned-msg "$tmp/out" "is not pinned by any"

run pins-stock-kernel 95 pins --proc "$here/proc-stock"
has pins-stock-kernel-msg "$tmp/err" "no /proc/<pid>/file_pins"
run pins-malformed 0 pins --json --proc "$here/proc-bad"
pyjson pins-malformed-count 'd["malformed"] == 1 and d["pins"] == []'
has pins-malformed-msg "$tmp/err" "malformed at line 1"

# probe: the host's own kernel; check the document's shape, not its values
run probe-json 0 probe --json
pyjson probe-json-shape 'd["version"] == "'"$version"'" and isinstance(d["kernel"]["layout_lease"], bool) and isinstance(d["kernel"]["file_pins"], bool) and isinstance(d["devices"], list)'
pyjson probe-json-devices 'all(set(("name",)) <= set(x) and ("error" in x or x["strategy"]["devdax"] == "plain") for x in d["devices"])'
run probe-table 0 probe
has probe-table-lease "$tmp/out" "layout lease (F_LAYOUT|F_EXCLUSIVE)"
run probe-no-such-device 19 probe -d no-such-dev0
has probe-no-such-device-msg "$tmp/err" "no RDMA device 'no-such-dev0'"

# reg: errors before and at the device
run reg-missing-file 2 reg "$tmp/missing" -d no-such-dev0
has reg-missing-file-msg "$tmp/err" "No such file"
run reg-offset-past-end 34 reg "$tmp/real" --offset 4096
truncate -s 1M "$tmp/real"
run reg-no-such-device 19 reg "$tmp/real" -d no-such-dev0

# run: LD_PRELOAD in front of the caller's, the program's own exit status
run run-help 0 run --help
has run-help-text "$tmp/out" "daxlease run \[--allow-odp\] \[--debug\]"
run run-no-program 64 run
run run-bad-option 64 run --no-such-option -- true
touch "$tmp/preload.so"
DAXLEASE_PRELOAD=$tmp/missing.so run run-missing-preload 2 run -- true
has run-missing-preload-msg "$tmp/err" "preload library"
LD_PRELOAD=/x/other.so DAXLEASE_PRELOAD=$tmp/preload.so \
	run run-env 0 run --debug --allow-odp -- sh -c \
	'echo "$LD_PRELOAD $DAXLEASE_DEBUG $DAXLEASE_ALLOW_ODP"' 2>/dev/null
has run-env-preload "$tmp/out" "^$tmp/preload.so:/x/other.so 1 1\$"
DAXLEASE_PRELOAD=$tmp/preload.so run run-exit-status 3 run -- sh -c 'exit 3'
DAXLEASE_PRELOAD=$tmp/preload.so run run-not-found 127 run -- "$tmp/no-such-program"
has run-not-found-msg "$tmp/err" "no-such-program"
# the program's own options are its own
DAXLEASE_PRELOAD=$tmp/preload.so run run-program-options 0 run sh -c 'test "$1" = --debug' sh --debug

# serve: the command line (the protocol runs in the test VM's two guests)
if "$tool" --help | grep -q "^  serve "; then
	run serve-help 0 serve --help
	has serve-help-text "$tmp/out" "ibv_dax_mr_persist"
	run serve-no-path 64 serve
	run serve-two-paths 64 serve a b
	run serve-create-no-length 64 serve "$tmp/new" --create
	run serve-clients-zero 64 serve "$tmp/real" --clients 0
	run serve-credits-too-many 64 serve "$tmp/real" --credits 65
	run serve-bad-idle 64 serve "$tmp/real" --idle-timeout x
	run serve-bad-option 64 serve "$tmp/real" --no-such-option
	run serve-unsafe-no-length 64 serve "$tmp/real" --unsafe-ack-first
	run serve-unsafe-flush 64 serve "$tmp/real" -l 4096 --unsafe-ack-first --flush
else
	bad serve "the tool was built without the serve command (librdmacm)"
fi

echo "$passed passed, $failed failed"
# no check executed is a failure too
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
