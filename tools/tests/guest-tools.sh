#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "tools": daxlease(1) on rxe and the emulated NVDIMMs of the
# test VM (tests/vm/suites/tools.sh runs it).  What each command must
# report follows from the kernel under test (DAXLEASE_KERNEL):
#   stock    no layout lease, no file_pins: probe says so and gives fsdax
#            "none", reg of an ext4-dax file exits 95 (EOPNOTSUPP) naming
#            kernel-headers/patches, pins exits 95
#   patched  probe gives fsdax "lease-pin"; reg holds a lease-pin MR that
#            pins shows and that makes truncate fail with ETXTBSY; after
#            SIGTERM the truncate succeeds; reg against another process's
#            ordinary read lease exits 11 (EAGAIN)
# devdax and tmpfs registrations are "plain" on both.  By the running
# kernel's release: page cache with write access is "plain" before Linux
# 6.5 and "none" from 6.5 (read-only "plain"); rxe has ATOMIC WRITE from
# 6.2.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '3,18p' "$0"; exit 0 ;; esac
. /opt/daxlease/vm/lib.sh

py=/usr/bin/python3
dev=$DAXLEASE_RDMA_DEV
kernel=${DAXLEASE_KERNEL:-stock}
tmp=$(mktemp -d)
bgpid=
cleanup() { [ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# jq NAME FILE EXPR MSG: pass if the python expression on the JSON in FILE
# (as d) holds
jq()
{
	local name=$1 file=$2 expr=$3 msg=$4
	if "$py" -c 'import json, sys
d = json.loads(open(sys.argv[1]).readline())
sys.exit(0 if eval(sys.argv[2]) else 1)' "$file" "$expr" 2>"$tmp/pyerr"; then
		result "$name" pass "$msg"
	else
		result "$name" fail "$msg: '$expr' false on $(head -c 400 "$file") $(head -c 200 "$tmp/pyerr")"
	fi
}

# status NAME WANT MSG CMD...: pass if CMD exits WANT; output in $tmp/out
status()
{
	local name=$1 want=$2 msg=$3 rc=0
	shift 3
	timeout 120 "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" = "$want" ]; then
		result "$name" pass "$msg (exit $rc)"
	else
		result "$name" fail "$msg: exit $rc, wanted $want: $(head -c 300 "$tmp/err")"
	fi
}

suite_begin tools

status version 0 "daxlease --version" daxlease --version

status probe-json 0 "probe --json -d $dev" daxlease probe --json -d "$dev"
cp "$tmp/out" "$tmp/probe.json"
jq probe-device "$tmp/probe.json" \
	"[x['name'] for x in d['devices']] == ['$dev'] and 'error' not in d['devices'][0]" \
	"probe lists $dev and queried it"
# kernel_at_least MAJOR MINOR: the running kernel's release is at least
kernel_at_least()
{
	local r ma mi
	r=$(uname -r)
	ma=${r%%.*}
	r=${r#*.}
	mi=${r%%[!0-9]*}
	[ "$ma" -gt "$1" ] || { [ "$ma" -eq "$1" ] && [ "$mi" -ge "$2" ]; }
}
if kernel_at_least 6 5; then
	jq probe-devdax-plain "$tmp/probe.json" \
		"d['devices'][0]['strategy']['devdax'] == 'plain' and d['devices'][0]['strategy']['pagecache'] == 'none' and d['devices'][0]['strategy']['pagecache_read_only'] == 'plain' and not d['kernel']['pagecache_write_pin'] and not d['devices'][0]['pagecache_write_pin'] and '-o dax' in d['devices'][0]['pagecache_reason']" \
		"devdax gets plain pins; Linux 6.5+: writable page cache none (the reason says what to do), read-only plain"
else
	jq probe-devdax-plain "$tmp/probe.json" \
		"d['devices'][0]['strategy']['devdax'] == 'plain' and d['devices'][0]['strategy']['pagecache'] == 'plain' and d['devices'][0]['strategy']['pagecache_read_only'] == 'plain' and d['kernel']['pagecache_write_pin'] and d['devices'][0]['pagecache_write_pin'] and 'pagecache_reason' not in d['devices'][0]" \
		"devdax and page cache get plain pins (writable page-cache pins before Linux 6.5)"
fi
if kernel_at_least 6 2; then
	jq probe-atomic-write "$tmp/probe.json" "d['devices'][0]['atomic_write']" \
		"$dev has RDMA ATOMIC WRITE (Linux 6.2+)"
else
	jq probe-atomic-write "$tmp/probe.json" "not d['devices'][0]['atomic_write']" \
		"$dev has no RDMA ATOMIC WRITE before Linux 6.2"
fi
# RDMA FLUSH targets from 6.2; whether this build can post FLUSH is the
# libibverbs it was built against (a bool either way)
if kernel_at_least 6 2; then
	jq probe-flush "$tmp/probe.json" "d['devices'][0]['flush'] and isinstance(d['devices'][0]['flush_post'], bool)" \
		"$dev takes RDMA FLUSH (Linux 6.2+)"
else
	jq probe-flush "$tmp/probe.json" "not d['devices'][0]['flush'] and isinstance(d['devices'][0]['flush_post'], bool)" \
		"$dev takes no RDMA FLUSH before Linux 6.2"
fi
if [ "$kernel" = patched ]; then
	jq probe-kernel "$tmp/probe.json" \
		"d['kernel']['layout_lease'] and d['kernel']['file_pins'] and d['devices'][0]['ext_reg_mr'] and d['devices'][0]['ext_reg_mr_probe'] == 'EINVAL'" \
		"patched kernel: layout lease, file_pins and extended REG_MR (probe answered EINVAL)"
	jq probe-fsdax "$tmp/probe.json" \
		"d['devices'][0]['strategy']['fsdax'] == 'lease-pin'" \
		"patched kernel: fsdax gets lease-pin"
else
	jq probe-kernel "$tmp/probe.json" \
		"not d['kernel']['layout_lease'] and d['kernel']['layout_lease_errno'] == 'EINVAL' and not d['kernel']['file_pins'] and not d['devices'][0]['ext_reg_mr'] and d['devices'][0]['ext_reg_mr_probe'] in ('EPROTONOSUPPORT', 'EOPNOTSUPP')" \
		"stock kernel: F_LAYOUT refused with EINVAL, no file_pins, the extended REG_MR probe answered EPROTONOSUPPORT/EOPNOTSUPP"
	jq probe-fsdax "$tmp/probe.json" \
		"d['devices'][0]['strategy']['fsdax'] == 'none' and 'daxlease-kernel-patches' in d['devices'][0]['fsdax_reason']" \
		"stock kernel: fsdax would fail, the reason names the kernel series"
fi
status probe-table 0 "probe table" daxlease probe -d "$dev"
if grep -q "^  $dev " "$tmp/out"; then
	result probe-table-row pass "table has a $dev row"
else
	result probe-table-row fail "no $dev row in: $(cat "$tmp/out")"
fi

# devdax: plain, no lease (doc/design.md §1.0)
status reg-devdax 0 "reg $DAXLEASE_DEVDAX 2M" \
	daxlease reg "$DAXLEASE_DEVDAX" --length 2M -d "$dev" --hold 0 --json
cp "$tmp/out" "$tmp/devdax.json"
jq reg-devdax-mr "$tmp/devdax.json" \
	"d['kind'] == 'devdax' and d['strategy'] == 'plain' and not d['lease_held'] and d['length'] == 2097152 and d['rkey'] != 0" \
	"devdax MR: plain, no lease, 2M"

# page cache: a file on the initramfs (no DAX)
head -c 1048576 /dev/zero > "$tmp/pc"
status reg-pagecache 0 "reg of a page-cache file" \
	daxlease reg "$tmp/pc" -d "$dev" --hold 0 --json
cp "$tmp/out" "$tmp/pc.json"
jq reg-pagecache-mr "$tmp/pc.json" \
	"d['kind'] == 'pagecache' and d['strategy'] == 'plain' and d['granularity'] == 'page' and d['length'] == 1048576" \
	"page-cache MR: plain, page granularity, whole file by default"
status reg-pagecache-nofallback 95 "--no-fallback refuses page cache" \
	daxlease reg "$tmp/pc" -d "$dev" --no-fallback --hold 0

f=$DAXLEASE_EXT4/tools-reg.dat
rm -f "$f"
if [ "$kernel" != patched ]; then
	status reg-fsdax-stock 95 "ext4-dax on the stock kernel: EOPNOTSUPP" \
		daxlease reg "$f" --create --length 2M -d "$dev" --hold 0
	if grep -q "daxlease-kernel-patches" "$tmp/err"; then
		result reg-fsdax-stock-msg pass "message names the package daxlease-kernel-patches"
	else
		result reg-fsdax-stock-msg fail "message: $(cat "$tmp/err")"
	fi
	status pins-stock 95 "pins on a kernel without file_pins" daxlease pins
	suite_end
	exit
fi

# patched kernel: hold a lease-pin MR in the background
daxlease reg "$f" --create --length 2M -d "$dev" --json >"$tmp/bg.json" \
	2>"$tmp/bg.err" &
bgpid=$!
for _ in $(seq 1 100); do
	[ -s "$tmp/bg.json" ] && break
	kill -0 "$bgpid" 2>/dev/null || break
	sleep 0.2
done
jq reg-fsdax "$tmp/bg.json" \
	"d['kind'] == 'fsdax' and d['strategy'] == 'lease-pin' and d['lease_held'] and d['pid'] == $bgpid" \
	"ext4-dax MR: lease-pin with the lease held"
status pins-file 0 "pins --file while registered" \
	daxlease pins --file "$f" --json
cp "$tmp/out" "$tmp/pins.json"
jq pins-file-owner "$tmp/pins.json" \
	"d['file']['pinned'] and [p['pid'] for p in d['pins']] == [$bgpid] and d['pins'][0]['via'].startswith('/dev/infiniband/uverbs')" \
	"pins names pid $bgpid and its uverbs file"
status pins-pid 0 "pins PID" daxlease pins "$bgpid"
if grep -q "^$bgpid .*$f" "$tmp/out"; then
	result pins-pid-row pass "pins $bgpid lists $f"
else
	result pins-pid-row fail "pins $bgpid: $(cat "$tmp/out")"
fi
if truncate -s 0 "$f" 2>"$tmp/trunc"; then
	result truncate-pinned fail "truncate of a pinned file succeeded"
elif grep -qi "text file busy" "$tmp/trunc"; then
	result truncate-pinned pass "truncate fails with ETXTBSY"
else
	result truncate-pinned fail "truncate failed otherwise: $(cat "$tmp/trunc")"
fi
# exclusive layout leases do not exclude each other (NOTES.md): a second
# process registers the same file too
status reg-second 0 "a second process registers the leased file too" \
	daxlease reg "$f" --length 2M -d "$dev" --hold 0 --json
jq reg-second-mr "$tmp/out" "d['strategy'] == 'lease-pin' and d['lease_held']" \
	"second MR: lease-pin"
kill -TERM "$bgpid"
rc=0
wait "$bgpid" || rc=$?
bgpid=
if [ "$rc" = 0 ]; then
	result reg-sigterm pass "SIGTERM deregisters and exits 0"
else
	result reg-sigterm fail "exit $rc: $(cat "$tmp/bg.err")"
fi
status pins-file-after 0 "pins --file after deregistration" \
	daxlease pins --file "$f" --json
jq pins-file-after-none "$tmp/out" "not d['file']['pinned']" \
	"no pins left"
if truncate -s 0 "$f" 2>"$tmp/trunc"; then
	result truncate-after pass "truncate succeeds once deregistered"
else
	result truncate-after fail "$(cat "$tmp/trunc")"
fi
truncate -s 2M "$f"
# an ordinary read lease of another process: the O_NONBLOCK open of the
# registration would break it, so reg fails at once with EAGAIN (exit 11)
"$py" -c 'import fcntl, os, signal, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)  # the break notice
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
print("held", flush=True)
time.sleep(60)' "$f" >"$tmp/lease.out" 2>&1 &
bgpid=$!
for _ in $(seq 1 100); do
	[ -s "$tmp/lease.out" ] && break
	sleep 0.2
done
status reg-lease-conflict 11 "reg against another process's read lease: EAGAIN" \
	daxlease reg "$f" --length 2M -d "$dev" --hold 0
if grep -q "lease" "$tmp/err" && grep -q "(EAGAIN)" "$tmp/err"; then
	result reg-lease-conflict-msg pass "the library's reason and EAGAIN are printed"
else
	result reg-lease-conflict-msg fail "message: $(cat "$tmp/err") ($(cat "$tmp/lease.out"))"
fi
kill "$bgpid" 2>/dev/null || true
wait "$bgpid" 2>/dev/null || true
bgpid=
status reg-release-lease 0 "reg --release-lease" \
	daxlease reg "$f" --length 2M -d "$dev" --release-lease --hold 0 --json
jq reg-release-lease-mr "$tmp/out" \
	"d['strategy'] == 'lease-pin' and not d['lease_held']" \
	"--release-lease: pinned, lease dropped (doc/design.md §1.4)"
rm -f "$f"
suite_end
