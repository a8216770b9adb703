#!/bin/bash
# Fail if the uapi files that patch 0001 of a kernel line adds differ from
# the copies in kernel-headers/ (the single source of the numbers).
set -euo pipefail

usage() {
	cat <<USAGE
usage: $0 [--help]

Extracts include/uapi/linux/daxlease_fcntl.h and
include/uapi/rdma/daxlease_user_ioctl_cmds.h from
kernel-headers/patches/linux-{6.1,6.12}/0001-*.patch and compares them byte for
byte with kernel-headers/linux/ and kernel-headers/rdma/.  Exit 0 when
identical, 1 with a diff otherwise.  Fix with update-uapi-patch.sh.
USAGE
}
case "${1:-}" in
-h|--help) usage; exit 0 ;;
"") ;;
*) usage >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
top_work=$(mktemp -d)
trap 'rm -rf "$top_work"' EXIT
rc=0
for line in 6.1 6.12; do
	patches=("$here"/patches/linux-$line/0001-*.patch)
	[ -f "${patches[0]}" ] || { echo "$0: no linux-$line 0001 patch" >&2; exit 1; }
	work=$top_work/$line
	mkdir -p "$work"

	# Write the body of every new file in the patch below $work/<path>.
	awk -v dir="$work" '
	/^diff --git / { out = ""; next }
	/^\+\+\+ b\// { if (newfile) { out = dir "/" substr($0, 7);
			  system("mkdir -p \"$(dirname " out ")\"") } ; next }
	/^--- \/dev\/null/ { newfile = 1; next }
	/^--- / { newfile = 0; next }
	/^@@ / { next }
	/^-- $/ { out = ""; next }
	out != "" && /^\+/ { print substr($0, 2) > out; next }
	' "${patches[0]}"

	for f in linux/daxlease_fcntl.h rdma/daxlease_user_ioctl_cmds.h; do
		got=$work/include/uapi/$f
		if [ ! -f "$got" ]; then
			echo "check-uapi: linux-$line ${patches[0]##*/} does not add include/uapi/$f"
			rc=1
		elif ! diff -u "$here/$f" "$got"; then
			echo "check-uapi: include/uapi/$f in linux-$line 0001 differs from kernel-headers/$f"
			rc=1
		fi
	done
done
[ $rc = 0 ] && echo "check-uapi: 0001 of linux-6.1 and linux-6.12 match kernel-headers/ (2 files)"
[ $rc = 0 ] || echo "check-uapi: run kernel-headers/update-uapi-patch.sh"
exit $rc
