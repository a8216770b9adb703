#!/bin/bash
# Regenerate kernel-headers/patches/linux-*/0001-*.patch from the uapi
# files in kernel-headers/ so that the numbers live in one place.
set -euo pipefail

usage() {
	cat <<USAGE
usage: $0 [--help]

Rewrites kernel-headers/patches/linux-{6.1,6.12}/0001-uapi-add-daxlease-layout-lease-and-uverbs-ids.patch:
the patch adds kernel-headers/linux/daxlease_fcntl.h and
kernel-headers/rdma/daxlease_user_ioctl_cmds.h verbatim as
include/uapi/{linux,rdma}/ and includes the former from
include/uapi/linux/fcntl.h.  Needs /usr/src/linux-source-6.1.tar.xz and
linux-source-6.12.tar.xz (only include/uapi/linux/fcntl.h is read from
them).  Idempotent.
USAGE
}
case "${1:-}" in
-h|--help) usage; exit 0 ;;
"") ;;
*) usage >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# one kernel line: its 0001 from its source's include/uapi/linux/fcntl.h
update_line()
{
	local line=$1 src out work=$work/$1

	src=/usr/src/linux-source-$line.tar.xz
	out=$here/patches/linux-$line/0001-uapi-add-daxlease-layout-lease-and-uverbs-ids.patch
	mkdir -p "$work"

	mkdir -p "$work/a/include/uapi/linux" "$work/b/include/uapi/linux" \
		 "$work/b/include/uapi/rdma"
	timeout 300 tar -xJf "$src" -C "$work" --strip-components=1 \
		"linux-source-$line/include/uapi/linux/fcntl.h"
	cp "$work/include/uapi/linux/fcntl.h" "$work/a/include/uapi/linux/fcntl.h"
	# include the daxlease lease types right after the other uapi includes
	awk '{ print } /^#include <linux\/openat2.h>$/ {
		print "#include <linux/daxlease_fcntl.h>" }' \
		"$work/include/uapi/linux/fcntl.h" > "$work/b/include/uapi/linux/fcntl.h"
	grep -q daxlease_fcntl.h "$work/b/include/uapi/linux/fcntl.h" || {
		echo "$0: include/uapi/linux/fcntl.h changed shape" >&2; exit 1; }
	cp "$here/linux/daxlease_fcntl.h" "$work/b/include/uapi/linux/"
	cp "$here/rdma/daxlease_user_ioctl_cmds.h" "$work/b/include/uapi/rdma/"

	{
		cat <<HDR
From: daxlease developers <dev@daxlease.invalid>
Subject: [PATCH] uapi: add daxlease layout lease types and uverbs ids

User space needs the lease types F_LAYOUT and F_EXCLUSIVE for
F_SETLEASE/F_GETLEASE and the ids of the extended uverbs REG_MR method
that the rest of this series implements.  Upstream $line has neither:
F_SETLEASE accepts only F_RDLCK, F_WRLCK and F_UNLCK, and
UVERBS_OBJECT_MR has no REG_MR method.

Install the two daxlease uapi headers verbatim (they are generated from
kernel-headers/ in the daxlease tree, the single source of the numbers)
and include <linux/daxlease_fcntl.h> from <linux/fcntl.h> so that every
user of F_SETLEASE sees the new lease types.  No behaviour changes in
this patch.

Signed-off-by: daxlease developers <dev@daxlease.invalid>
---
HDR
		(cd "$work" && diff -uNr a b | sed -e 's|^--- a/\([^\t]*\).*|--- a/\1|' \
			-e 's|^+++ b/\([^\t]*\).*|+++ b/\1|' \
			-e 's|^diff -uNr a/\([^ ]*\) b/.*|diff --git a/\1 b/\1|') || true
		echo "-- "
		echo "daxlease"
	} > "$work/patch"

	# new files: diff -N gives "--- a/x" for /dev/null; make them git style
	sed -i -e '/^diff --git/{N;N;s|\n--- a/\(include/uapi/[a-z]*/daxlease_[a-z_]*\.h\)\n|\nnew file mode 100644\n--- /dev/null\n|}' "$work/patch"
	mkdir -p "$(dirname "$out")"
	if [ -f "$out" ] && cmp -s "$work/patch" "$out"; then
		echo "$out: up to date"
	else
		cp "$work/patch" "$out"
		echo "$out: written"
	fi
}

for line in 6.1 6.12; do
	update_line "$line"
done
