#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Two test VMs on one host, linked by a virtual Ethernet that exists only
# between their two QEMU processes (UDP datagrams on 127.0.0.1): the
# server boots the patched kernel with its NVDIMMs, the client Debian's
# stock kernel of the same line.  Each guest puts rxe0 on its NIC
# (10.0.0.1 and 10.0.0.2), so RDMA and rdma_cm address resolution cross
# the link.  Both are booted by tests/vm/run.sh (one build shared) and
# judged by tests/vm/evaluate.py like any run; the pair passes only if
# both guests pass.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 --line 6.1|6.12 [options]
  --line L           kernel line of both guests
  --server-kernel BZIMAGE
                     the server's kernel (default: the patched kernel of
                     kernel-headers/build-kernel.sh --line L, built if needed)
  --server-suites S  suites of the server (default remote-server)
  --client-suites S  suites of the client (default remote-client)
  --out DIR          OUT/server and OUT/client, one run.sh output each
                     (default build/vm-pair-L)
  --timeout SEC      per guest (default 1500); when one guest has ended,
                     the other gets at most 300 s more
  --append "ARGS"    extra kernel command line of both guests
  --client-persist M send (default): daxlease-remote-client makes its
                     records durable with PERSIST; flush: with RDMA FLUSH,
                     built against a newer rdma-core (tests/vm/get-rdma-core.sh)
                     and run with --persist flush in the client guest
  --no-build         use build/vm-build as it is
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/vm/pair-lib.sh
. "$here/pair-lib.sh"
line=
server_kernel=
server_suites=remote-server
client_suites=remote-client
out=
tmo=1500
do_build=1
build=$top/build/vm-build
append=
persist=send
while [ $# -gt 0 ]; do
	case "$1" in
	--line) line=$2; shift 2 ;;
	--server-kernel) server_kernel=$2; shift 2 ;;
	--server-suites) server_suites=$2; shift 2 ;;
	--client-suites) client_suites=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--timeout) tmo=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--client-persist) persist=$2; shift 2 ;;
	--no-build) do_build=0; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "$0: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
done
case "$line" in 6.1|6.12) ;; *) usage >&2; exit 2 ;; esac
[[ "$tmo" =~ ^[0-9]+$ ]] || { echo "$0: --timeout needs seconds" >&2; exit 2; }
: "${out:=$top/build/vm-pair-$line}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
t_start=$SECONDS
phase() { echo "run-pair.sh: [$((SECONDS - t_start))s] $*"; }
pair_persist "$persist" "$out" "$line" || exit 1
append="$append $PAIR_PERSIST_ARGS"

if [ -z "$server_kernel" ]; then
	bash "$top/kernel-headers/build-kernel.sh" --line "$line"
	server_kernel=$(bash "$top/kernel-headers/build-kernel.sh" --line "$line" --print-path)
fi
[ -f "$server_kernel" ] || { echo "$0: no kernel image $server_kernel" >&2; exit 1; }
if [ "$do_build" = 1 ]; then
	bash "$here/run.sh" --build-only --build-dir "$build" --out "$out"
fi
# the stock kernel before the boots, so that neither waits on the other
timeout 900 bash "$here/get-stock-kernel.sh" --line "$line" > /dev/null

pair_ports
phase "link: server 127.0.0.1:$ps <-> client 127.0.0.1:$pc"

srv_ip=$PAIR_SERVER_IP
cli_ip=$PAIR_CLIENT_IP
common=(--no-build --build-dir "$build" --timeout "$tmo")
bash "$here/run.sh" "${common[@]}" --kernel "$server_kernel" --smp 2 \
	--suites "$server_suites" --out "$out/server" \
	--link "$ps:$pc:$PAIR_SERVER_MAC" \
	--append "daxlease.role=server daxlease.ip=$srv_ip/24 daxlease.peer=$cli_ip $append" \
	> "$out/server.log" 2>&1 &
spid=$!
bash "$here/run.sh" "${common[@]}" --kernel stock --line "$line" --smp 1 \
	--suites "$client_suites" --out "$out/client" \
	--link "$pc:$ps:$PAIR_CLIENT_MAC" \
	--append "daxlease.role=client daxlease.ip=$cli_ip/24 daxlease.peer=$srv_ip $append" \
	> "$out/client.log" 2>&1 &
cpid=$!
phase "server (pid $spid, log $out/server.log) and client (pid $cpid, log $out/client.log) booting"

# run.sh kills its guest after --timeout; a guest whose peer has gone
# can only wait for it, so it gets 300 s more, then its run.sh is stopped.
first_done=
while :; do
	s_alive=0 c_alive=0
	kill -0 "$spid" 2>/dev/null && s_alive=1
	kill -0 "$cpid" 2>/dev/null && c_alive=1
	[ $s_alive = 0 ] && [ $c_alive = 0 ] && break
	if [ $((s_alive + c_alive)) = 1 ]; then
		: "${first_done:=$SECONDS}"
		if [ $((SECONDS - first_done)) -gt 300 ]; then
			phase "the peer ended $((SECONDS - first_done)) s ago: stopping the other guest"
			[ $s_alive = 1 ] && pkill -TERM -P "$spid" 2>/dev/null
			[ $c_alive = 1 ] && pkill -TERM -P "$cpid" 2>/dev/null
			sleep 15
			[ $s_alive = 1 ] && pkill -KILL -P "$spid" 2>/dev/null
			[ $c_alive = 1 ] && pkill -KILL -P "$cpid" 2>/dev/null
			first_done=$((SECONDS + 100000))
		fi
	fi
	sleep 2
done
src=0 crc=0
wait "$spid" || src=$?
wait "$cpid" || crc=$?
for r in server client; do
	echo "---- $r: $out/$r.log (console $out/$r/console.log)"
	grep -v '^  *[|]' "$out/$r.log" | sed -n '/^run.sh: \[.*guest finished/,$p' | tail -n 60
done
phase "server run.sh exit $src, client run.sh exit $crc"
if [ "$src" = 0 ] && [ "$crc" = 0 ]; then
	phase "done: PASS"
	exit 0
fi
phase "done: FAIL"
exit 1
