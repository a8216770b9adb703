#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build and run a tiny consumer against an installed libdaxlease, once
# with `pkg-config --cflags --libs daxlease` and once with
# find_package(daxlease).  The installed tree is either a scratch prefix
# filled by `cmake --install` of a build directory, or a root into which
# the .debs were unpacked (dpkg -x).  Needs no RDMA device.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 --build-dir DIR [--prefix SCRATCH] [--cflags FLAGS]
       $0 --root ROOT [--cflags FLAGS]
  --build-dir DIR  cmake --install DIR into a scratch prefix and test it
  --prefix DIR     the scratch prefix (default: a new temporary directory,
                   removed at the end)
  --root ROOT      test an unpacked tree ROOT/usr/... (e.g. from dpkg -x)
  --cflags FLAGS   compile and link the consumer with FLAGS too, e.g. the
                   -fsanitize= flags a sanitizer build of the library has
  The consumer is built with \$CC (default cc).
USAGE
}

build_dir=
prefix=
root=
cflags=
while [ $# -gt 0 ]; do
	case "$1" in
	--cflags) cflags=$2; shift 2 ;;
	--build-dir) build_dir=$2; shift 2 ;;
	--prefix) prefix=$2; shift 2 ;;
	--root) root=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 64 ;;
	esac
done
if { [ -z "$build_dir" ] && [ -z "$root" ]; } ||
   { [ -n "$build_dir" ] && [ -n "$root" ]; }; then
	usage >&2
	exit 64
fi

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cleanup=("$work")
trap 'rm -rf "${cleanup[@]}"' EXIT

if [ -n "$build_dir" ]; then
	if [ -z "$prefix" ]; then
		prefix=$work/prefix
	fi
	timeout 300 cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
	tree=$prefix
else
	tree=$root/usr
fi

pc=$(find "$tree" -name daxlease.pc -path '*/pkgconfig/*' | head -n1)
cfg=$(find "$tree" -name daxleaseConfig.cmake | head -n1)
if [ -z "$pc" ] || [ -z "$cfg" ]; then
	echo "FAIL no daxlease.pc or daxleaseConfig.cmake under $tree" >&2
	exit 1
fi
libdir=$(dirname "$(dirname "$pc")")
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
passed=0
failed=0

step()
{
	local name=$1
	shift
	if "$@" >"$work/$name.log" 2>&1; then
		passed=$((passed + 1))
		echo "ok   $name"
	else
		failed=$((failed + 1))
		echo "FAIL $name:"
		sed 's/^/    /' "$work/$name.log" | tail -n 30
	fi
}

pkgconfig_build()
{
	local flags

	flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs daxlease)
	echo "pkg-config: $flags"
	[ "$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --modversion daxlease)" != "" ]
	# shellcheck disable=SC2086
	timeout 120 "${CC:-cc}" -Wall -Wextra -Werror $cflags \
		-o "$work/consumer_pc" "$here/consumer.c" $flags
	timeout 60 "$work/consumer_pc"
}

cmake_build()
{
	local hint=()

	# CMake searches lib64/cmake only where FIND_LIBRARY_USE_LIB64_PATHS
	# is on, which Debian's CMake does not do: an RPM-style tree needs
	# the directory spelled out.
	case "$cfg" in
	*/lib64/cmake/*) hint=(-Ddaxlease_DIR="$(dirname "$cfg")") ;;
	esac
	timeout 300 cmake -S "$here" -B "$work/cmake" "${hint[@]}" \
		-DCMAKE_PREFIX_PATH="$tree" -DCMAKE_C_FLAGS="-Wall -Werror $cflags"
	timeout 300 cmake --build "$work/cmake"
	timeout 60 "$work/cmake/consumer_cmake"
}

linked_to_tree()
{
	# the consumer must run against the tested tree, not a system copy
	ldd "$work/consumer_pc" | grep "libdaxlease.so.1 => $libdir/"
}

step pkg-config pkgconfig_build
step pkg-config-links-tree linked_to_tree
step find-package cmake_build
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
