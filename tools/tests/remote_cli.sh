#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test of the daxlease-remote-client command line: --help, usage
# errors (exit 2) for bad sizes, counts, wrapping, offsets past 2^64 and
# --persist modes,
# and exit 1 when there is no server to reach.  Needs no RDMA device (the
# protocol runs in the test VM's two guests, tests/vm/run-pair.sh).
set -euo pipefail

if [ "${1:-}" = --help ] || [ $# -ne 1 ]; then
	echo "usage: $0 PATH-TO-daxlease-remote-client"
	[ "${1:-}" = --help ] && exit 0
	exit 64
fi
prog=$1
passed=0
failed=0

# run NAME STATUS ARGS...: PROG ARGS must exit STATUS
run()
{
	local name=$1 want=$2 rc=0 err

	shift 2
	err=$(timeout 60 "$prog" "$@" 2>&1 >/dev/null) || rc=$?
	if [ "$rc" = "$want" ]; then
		passed=$((passed + 1))
		echo "ok   $name (exit $rc)"
	else
		failed=$((failed + 1))
		echo "FAIL $name: exit $rc, wanted $want: $(echo "$err" | head -c 300)"
	fi
}

run help 0 --help
run no-address 2 put --id 1 --count 1 --size 64
run no-command 2 -a 127.0.0.1
run bad-command 2 -a 127.0.0.1 frobnicate
run size-not-multiple-of-8 2 -a 127.0.0.1 put --count 1 --size 100
run size-too-small 2 -a 127.0.0.1 put --count 1 --size 32
run size-too-large 2 -a 127.0.0.1 put --count 1 --size 2M
run count-zero 2 -a 127.0.0.1 put --count 0 --size 64
run batch-too-large 2 -a 127.0.0.1 put --count 1 --size 1M --batch 2
run count-beyond-slots 2 -a 127.0.0.1 put --count 9 --size 64 --slots 8
run past-2-64 2 -a 127.0.0.1 put --count 1 --size 4096 --start 18446744073709551000
run base-past-2-64 2 -a 127.0.0.1 check --count 1 --size 64 --base 18446744073709551600
run suffix-overflow 2 -a 127.0.0.1 put --count 1 --size 64 --base 99999999999999G
run negative 2 -a 127.0.0.1 put --count -1 --size 64
run bad-timeout 2 -a 127.0.0.1 -t 0 put --count 1 --size 64
run lat-size-zero 2 -a 127.0.0.1 lat --size 0
run bad-persist 2 -a 127.0.0.1 --persist fast put --count 1 --size 64
run persist-no-arg 2 -a 127.0.0.1 put --count 1 --size 64 --persist
# a well-formed command with no server to reach: a failure, not a hang
run no-server 1 -a 127.0.0.1 -t 2000 put --id 1 --count 1 --size 64
run no-server-flush 1 -a 127.0.0.1 -t 2000 --persist flush lat --size 64
run no-server-send 1 -a 127.0.0.1 -t 2000 check --persist send --count 1 --size 64
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
