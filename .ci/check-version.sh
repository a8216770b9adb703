#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The version lives in the top-level CMakeLists.txt, project(VERSION);
# debian/changelog (native: the same version, or VERSION-N) and
# redhat/daxlease.spec (Version:) must follow it.  Exits 1 if they differ.
set -euo pipefail

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
	echo "usage: $0      compare the CMake, Debian and RPM versions"
	exit 0
fi
top=$(cd "$(dirname "$0")/.." && pwd)

cmake_v=$(sed -n 's/^project(daxlease VERSION \([0-9.]*\).*/\1/p' \
	"$top/CMakeLists.txt")
deb_v=$(sed -n '1s/^daxlease (\([^)]*\)).*/\1/p' "$top/debian/changelog")
rpm_v=$(sed -n 's/^Version:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
	"$top/redhat/daxlease.spec")
rpm_cl=$(sed -n '/^%changelog/,${s/^\*.* - \([0-9.]*\)-[0-9]*$/\1/p}' \
	"$top/redhat/daxlease.spec" | head -n1)

echo "CMakeLists.txt project(VERSION): ${cmake_v:-?}"
echo "debian/changelog:                ${deb_v:-?}"
echo "redhat/daxlease.spec Version:    ${rpm_v:-?} (changelog ${rpm_cl:-?})"
bad=0
[ -n "$cmake_v" ] || { echo "FAIL no project(daxlease VERSION ...)"; bad=1; }
if [ "${deb_v%-*}" != "$cmake_v" ]; then
	echo "FAIL debian/changelog has $deb_v, CMake has $cmake_v"
	bad=1
fi
if [ "$rpm_v" != "$cmake_v" ]; then
	echo "FAIL redhat/daxlease.spec has $rpm_v, CMake has $cmake_v"
	bad=1
fi
if [ "$rpm_cl" != "$cmake_v" ]; then
	echo "FAIL the spec's %changelog tops at $rpm_cl, not $cmake_v"
	bad=1
fi
[ "$bad" -eq 0 ] && echo "versions agree: $cmake_v"
exit "$bad"
