#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Fetch and unpack the newest Debian linux-image-6.1.0-*-amd64 or
# linux-image-6.12.*+deb12-amd64 (the "stock" guest kernels of the test VM,
# rxe/nvdimm/dax as modules).  Idempotent: a
# version already unpacked in the cache is reused.  Prints the unpacked
# tree's directory on stdout; the kernel is BOOT/vmlinuz-VERSION, modules
# under lib/modules/VERSION, and VERSION is in the file "version" there.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--line 6.1|6.12] [--cache DIR] [--version VERSION]
  --line L     6.1 (default: linux-image-6.1.0-N-amd64) or 6.12
               (linux-image-6.12.N+deb12-amd64-unsigned)
  --cache DIR  download/unpack directory (default \$DAXLEASE_STOCK_CACHE or
               /var/cache/daxlease/stock-kernel)
  --version V  a specific kernel version instead of the newest
Prints the directory of the unpacked package.
USAGE
}

cache=${DAXLEASE_STOCK_CACHE:-/var/cache/daxlease/stock-kernel}
want=
line=6.1
while [ $# -gt 0 ]; do
	case "$1" in
	--line) line=$2; shift 2 ;;
	--cache) cache=$2; shift 2 ;;
	--version) want=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

case "$line" in
6.1)	pattern='^linux-image-6\.1\.0-[0-9]+-amd64(-unsigned)?$'
	version='s/^linux-image-\(6\.1\.0-[0-9]*-amd64\).*/\1/p'
	glob='6.1.0-*-amd64' ;;
6.12)	pattern='^linux-image-6\.12\.[0-9]+\+deb12-amd64(-unsigned)?$'
	version='s/^linux-image-\(6\.12\.[0-9]*+deb12-amd64\).*/\1/p'
	glob='6.12.*+deb12-amd64' ;;
*)	echo "$0: --line is 6.1 or 6.12" >&2; exit 2 ;;
esac

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

if [ -z "$want" ]; then
	want=$(apt-cache search --names-only "$pattern" |
	       sed -n "$version" | sort -uV | tail -1)
	if [ -z "$want" ]; then
		# An older cache still works offline.
		# shellcheck disable=SC2231 # the glob is the pattern
		want=$(for d in "$cache"/$glob; do
			       [ -f "$d/version" ] && basename "$d"
		       done | sort -V | tail -1)
	fi
	[ -n "$want" ] || {
		echo "$0: no linux-image-$glob known to apt (apt-get update?)" >&2
		exit 1
	}
fi

tree=$cache/$want
if [ -f "$tree/version" ] && [ -f "$tree/boot/vmlinuz-$want" ]; then
	echo "$tree"
	exit 0
fi

dl=$cache/deb
mkdir -p "$dl"
deb=$(ls "$dl"/linux-image-"$want"{,-unsigned}_*.deb 2>/dev/null | head -1 || true)
if [ -z "$deb" ]; then
	for pkg in "linux-image-$want" "linux-image-$want-unsigned"; do
		if (cd "$dl" && timeout 600 apt-get download "$pkg" >&2); then
			break
		fi
	done
	deb=$(ls "$dl"/linux-image-"$want"{,-unsigned}_*.deb 2>/dev/null | head -1 || true)
	[ -n "$deb" ] || { echo "$0: apt-get download of linux-image-$want failed" >&2; exit 1; }
fi

rm -rf "$tree.tmp"
mkdir -p "$tree.tmp"
dpkg-deb -x "$deb" "$tree.tmp"
[ -f "$tree.tmp/boot/vmlinuz-$want" ] || {
	echo "$0: $deb has no boot/vmlinuz-$want" >&2
	exit 1
}
echo "$want" > "$tree.tmp/version"
rm -rf "$tree"
mv "$tree.tmp" "$tree"
echo "$tree"
