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
