# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# What the host scripts that boot two linked guests share
# (tests/vm/run-pair.sh, tests/vm/run-crash.sh): the guests' addresses
# and MACs, and a free pair of UDP ports for their link.  Source it.
# shellcheck disable=SC2034 # used by the scripts that source it
PAIR_SERVER_IP=10.0.0.1
PAIR_CLIENT_IP=10.0.0.2
PAIR_SERVER_MAC=52:54:00:da:00:01
PAIR_CLIENT_MAC=52:54:00:da:00:02

# pair_ports: sets ps and pc, two UDP ports next to each other that
# nothing listens on, one per QEMU (from $RANDOM: seed it for a
# reproducible pair)
pair_ports()
{
	local _

	for _ in $(seq 50); do
		ps=$((20000 + RANDOM % 20000))
		pc=$((ps + 1))
		_pair_port_used "$ps" || _pair_port_used "$pc" || return 0
	done
	echo "pair_ports: no free pair of UDP ports found" >&2
	return 1
}

_pair_port_used() { ss -Hln -u "sport = :$1" 2>/dev/null | grep -q .; }

# pair_persist MODE OUT LINE: for --client-persist MODE (send or flush),
# sets PAIR_PERSIST_ARGS, the kernel command line both guests get; flush
# needs LINE 6.12 (rxe has RDMA FLUSH from Linux 6.2 on); with flush,
# the client's RDMA FLUSH build (tests/vm/get-rdma-core.sh) is made in
# OUT/flush-tree and exported as DAXLEASE_VM_EXTRA_TREE for the guest
# images.  Fails with a message otherwise.  (Not in a subshell: it exports.)
pair_persist()
{
	local mode=$1 out=$2 line=$3 lib

	PAIR_PERSIST_ARGS=
	lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	case "$mode" in
	send) return 0 ;;
	flush) ;;
	*) echo "--client-persist is send or flush, not '$mode'" >&2; return 1 ;;
	esac
	if [ "$line" != 6.12 ]; then
		echo "--client-persist flush needs --line 6.12: Linux $line's rxe has no RDMA FLUSH (6.2 and later)" >&2
		return 1
	fi
	timeout 5400 bash "$lib/get-rdma-core.sh" \
		--client "$out/flush-client-build" "$out/flush-tree" \
		> /dev/null || return 1
	export DAXLEASE_VM_EXTRA_TREE=$out/flush-tree
	PAIR_PERSIST_ARGS=daxlease.persist=flush
}
