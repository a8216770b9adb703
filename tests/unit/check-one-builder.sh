#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host unit test (no device): each program carries the uverbs command
# builder (providers/daxlease/ioctl.c, cmd_mr.c) once.  A program that
# loads libdaxlease.so takes it from the library's private node and
# defines none of it; any other program links it in (daxlease_cmd,
# daxlease_static or daxlease_teststop).
set -euo pipefail

usage()
{
	echo "usage: $0 PROGRAM..."
}
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
	usage
	exit 0
fi
[ $# -ge 1 ] || { usage >&2; exit 2; }

builder='^(dl_ioctl_[a-z0-9_]+|dl_cmd_[a-z0-9_]+)$'
failed=0
for prog in "$@"; do
	name=$(basename "$prog")
	defined=$(timeout 60 nm --defined-only "$prog" |
		awk '{ print $3 }' | grep -E "$builder" | sort | tr '\n' ' ' || true)
	if timeout 60 readelf -d "$prog" | grep -q 'NEEDED.*\[libdaxlease\.so'; then
		if [ -n "$defined" ]; then
			echo "fail one-builder/$name: loads libdaxlease.so and defines a second copy: $defined"
			failed=1
		else
			echo "pass one-builder/$name: the builder of libdaxlease.so"
		fi
	elif [[ " $defined" != *" dl_cmd_reg_dax_mr "* ]]; then
		echo "fail one-builder/$name: neither loads libdaxlease.so nor links the builder"
		failed=1
	else
		echo "pass one-builder/$name: linked in once"
	fi
done
exit $failed
