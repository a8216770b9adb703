#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the Debian and RPM packages from the tracked files of this tree and
# check them:
#   1. .ci/check-version.sh (CMake, debian/changelog and the spec agree)
#   2. dpkg-buildpackage -b -uc -us on a copy of the tree
#   3. lintian: no errors (warnings are listed)
#   4. dpkg -c of each .deb; dpkg -x of all into a scratch root, where
#      tests/consumer/run.sh builds the consumer with pkg-config and with
#      find_package(daxlease)
#   5. rpmbuild -bb --nodeps redhat/daxlease.spec with a tarball of the same
#      files; rpm -qlp of each rpm; the consumer again on the unpacked
#      rpms (rpm2cpio); rpmlint if it is installed
# Exits non-zero if any step fails.  Packages, lists and logs go to OUT.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--out DIR] [--no-deb] [--no-rpm] [--timeout SEC]
  --out DIR      packages, file lists and logs (default: build/packages)
  --no-deb       skip the Debian build (and the consumer test on it)
  --no-rpm       skip the RPM build
  --timeout SEC  bound for each package build (default 2400)
USAGE
}

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/packages
do_deb=1
do_rpm=1
tmo=2400
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift 2 ;;
	--no-deb) do_deb=0; shift ;;
	--no-rpm) do_rpm=0; shift ;;
	--timeout) tmo=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 64 ;;
	esac
done

version=$(sed -n 's/^project(daxlease VERSION \([0-9.]*\).*/\1/p' \
	"$top/CMakeLists.txt")
pkgname=daxlease-$version
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/daxlease-pkg.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib/steps.sh
. "$top/tests/lib/steps.sh"
# steps_run -q: each step's output in its log, the tail shown on failure
note() { steps_note "$1"; echo "== $1"; }

steps_run -q check-version "$out/check-version.log" \
	bash "$top/.ci/check-version.sh" || true

# The tracked files as they are in the work tree (a fresh clone: HEAD).
src=$work/src/$pkgname
mkdir -p "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" ls-files -z |
		(cd "$top" && tar --null -T - --ignore-failed-read -cf -) |
		tar -C "$src" -xf -
else
	tar -C "$top" --exclude=./build --exclude=./.git -cf - . |
		tar -C "$src" -xf -
fi
tar -C "$work/src" -czf "$out/$pkgname.tar.gz" "$pkgname"

if [ "$do_deb" = 1 ]; then
	rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
	build_deb()
	{
		cp -a "$src" "$work/deb" || return 1
		(cd "$work/deb" &&
			DEB_BUILD_OPTIONS="parallel=2 ${DEB_BUILD_OPTIONS:-}" \
			timeout "$tmo" dpkg-buildpackage -b -uc -us) || return 1
		cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out/"
	}
	if steps_run -q dpkg-buildpackage "$out/dpkg-buildpackage.log" build_deb; then
		steps_run -q lintian "$out/lintian.log" timeout 900 \
			lintian --fail-on error --info "$out"/*.changes || true
		for t in E W I; do
			n=$(grep -c "^$t: " "$out/lintian.log" || true)
			note "  lintian $t: $n"
		done
		: >"$out/deb-contents.txt"
		for d in "$out"/*.deb; do
			{
				echo "### $(basename "$d")"
				dpkg -c "$d" | awk '{print $6 ($7 ? " " $7 " " $8 : "")}'
			} >>"$out/deb-contents.txt"
		done
		root=$work/root
		mkdir -p "$root"
		for d in "$out"/*.deb; do
			dpkg -x "$d" "$root"
		done
		steps_run -q consumer-on-debs "$out/consumer-debs.log" \
			bash "$top/tests/consumer/run.sh" --root "$root" || true
		steps_run -q tool-from-debs "$out/tool-debs.log" \
			env LD_LIBRARY_PATH="$(dirname "$(find "$root" -name libdaxlease.so.1 | head -n1)")" \
			"$root/usr/bin/daxlease" --version || true
	fi
fi

if [ "$do_rpm" = 1 ]; then
	rm -f "$out"/*.rpm
	build_rpm()
	{
		mkdir -p "$work/rpm/SOURCES" || return 1
		cp "$out/$pkgname.tar.gz" "$work/rpm/SOURCES/" || return 1
		timeout "$tmo" rpmbuild -bb --nodeps \
			--define "_topdir $work/rpm" \
			--define "debug_package %{nil}" \
			--define "_build_id_links none" \
			--define "_smp_mflags -j2" \
			"$src/redhat/daxlease.spec" || return 1
		ls "$work"/rpm/RPMS/*/*.rpm >/dev/null || return 1
		find "$work/rpm/RPMS" -name '*.rpm' -exec cp {} "$out/" \;
	}
	if steps_run -q rpmbuild "$out/rpmbuild.log" build_rpm; then
		: >"$out/rpm-contents.txt"
		for r in "$out"/*.rpm; do
			{
				echo "### $(basename "$r")"
				rpm -qlp "$r" 2>/dev/null
			} >>"$out/rpm-contents.txt"
		done
		rroot=$work/rpmroot
		mkdir -p "$rroot"
		for r in "$out"/*.rpm; do
			(cd "$rroot" && rpm2cpio "$r" | cpio -idm --quiet)
		done
		steps_run -q consumer-on-rpms "$out/consumer-rpms.log" \
			bash "$top/tests/consumer/run.sh" --root "$rroot" || true
		if command -v rpmlint >/dev/null; then
			steps_run -q rpmlint "$out/rpmlint.log" timeout 600 \
				rpmlint "$out"/*.rpm || true
		else
			note "  rpmlint: not installed (Debian 12 has no rpmlint package)"
		fi
	fi
fi

echo
echo "packages in $out:"
for p in "$out"/*.deb "$out"/*.rpm; do
	[ -e "$p" ] && echo "  $(basename "$p")"
done
echo
steps_summary packages "$out/summary.txt"
