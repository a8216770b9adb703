#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build a newer rdma-core than Debian 12's (44) for the test VM's client
# guest: rdma-core 45 added the verb that posts IBTA RDMA FLUSH
# (ibv_wr_flush) and its rxe provider.  Takes the source Debian 13 ships
# (rdma-core 56.1, from Debian's mirror, its SHA-256 checked), builds it
# for prefix /opt/daxlease/rdma-core (libraries and providers under it,
# their configuration under /etc/opt/daxlease/rdma-core: nothing of the
# guest's own rdma-core 44 is touched) and installs it into CACHE/rdma-core-VERSION/root.  Idempotent:
# a finished build in the cache is reused.  Prints the root on stdout.
#
# Then, with --client BUILD OUT, configures this project against it in
# BUILD, builds daxlease-remote-client there (it must be able to post
# FLUSH: the configure check of the library says so) and makes OUT a tree
# for the guest image: OUT/opt/daxlease/rdma-core with the client in its
# bin/ (tests/vm/mkinitramfs.sh takes it from DAXLEASE_VM_EXTRA_TREE).
set -euo pipefail

VERSION=56.1
SHA256=63ce7f2baa7242c2dbc76375dac957c420187dd27f8c5e148efc07971ee522a8
URL=http://deb.debian.org/debian/pool/main/r/rdma-core/rdma-core_$VERSION.orig.tar.gz
PREFIX=/opt/daxlease/rdma-core
# how it is built; a build of other options is another cache entry
CMAKE_ARGS=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$PREFIX
	    -DCMAKE_INSTALL_LIBDIR=lib -DNO_PYVERBS=1 -DNO_MAN_PAGES=1)

usage()
{
	cat <<USAGE
usage: $0 [--cache DIR] [--client BUILD OUT]
  --cache DIR         download and build directory (default
                      \$DAXLEASE_RDMA_CORE_CACHE or /var/cache/daxlease/rdma-core)
  --client BUILD OUT  also build daxlease-remote-client against it in BUILD
                      and make OUT the tree the guest image takes
Prints the install root of rdma-core $VERSION (prefix $PREFIX in it).
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${DAXLEASE_RDMA_CORE_CACHE:-/var/cache/daxlease/rdma-core}
cbuild=
ctree=
while [ $# -gt 0 ]; do
	case "$1" in
	--cache) cache=$2; shift 2 ;;
	--client) cbuild=$2; ctree=$3; shift 3 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
log() { echo "get-rdma-core: $*" >&2; }

for tool in curl cmake ninja pkg-config; do
	command -v "$tool" > /dev/null ||
		{ log "no $tool: run tests/install-deps.sh"; exit 1; }
done
pkg-config --exists libnl-3.0 libnl-route-3.0 ||
	{ log "no libnl-3-dev / libnl-route-3-dev: run tests/install-deps.sh"; exit 1; }

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
key=$(printf '%s\n' "$VERSION" "${CMAKE_ARGS[@]}" | sha256sum | cut -c1-12)
dir=$cache/rdma-core-$VERSION-$key
root=$dir/root
if [ ! -f "$dir/done" ]; then
	tarball=$cache/rdma-core_$VERSION.orig.tar.gz
	if ! echo "$SHA256  $tarball" | sha256sum -c --status 2>/dev/null; then
		log "downloading $URL"
		timeout 600 curl -fsS --retry 3 -o "$tarball.tmp" "$URL" ||
			{ log "download of $URL failed"; exit 1; }
		echo "$SHA256  $tarball.tmp" | sha256sum -c --status ||
			{ log "$URL: SHA-256 is not $SHA256"; rm -f "$tarball.tmp"; exit 1; }
		mv "$tarball.tmp" "$tarball"
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	tar xzf "$tarball" -C "$dir"
	log "building rdma-core $VERSION in $dir/build (log: $dir/build.log)"
	t0=$SECONDS
	{
		cmake -S "$dir/rdma-core-$VERSION" -B "$dir/build" \
			"${CMAKE_ARGS[@]}" &&
		timeout 3600 ninja -C "$dir/build" -j2 &&
		DESTDIR="$root" ninja -C "$dir/build" install
	} > "$dir/build.log" 2>&1 || {
		tail -n 30 "$dir/build.log" >&2
		log "rdma-core $VERSION: build failed (log: $dir/build.log)"
		exit 1
	}
	lib=$root$PREFIX/lib
	if ! [ -f "$lib/libibverbs.so.1" ] || ! [ -f "$lib/librdmacm.so.1" ] ||
	   ! ls "$lib"/libibverbs/librxe-rdmav*.so > /dev/null 2>&1; then
		log "rdma-core $VERSION: no libibverbs, librdmacm or rxe provider in $lib"
		exit 1
	fi
	echo "built in $((SECONDS - t0)) s" > "$dir/done"
	log "rdma-core $VERSION built in $((SECONDS - t0)) s"
fi
# pkg-config files that name the install root, for building against it
# (made once, with the build)
if [ ! -d "$dir/pkgconfig" ]; then
	rm -rf "$dir/pkgconfig.tmp"
	mkdir -p "$dir/pkgconfig.tmp"
	for pc in "$root$PREFIX"/lib/pkgconfig/*.pc; do
		sed "s,$PREFIX,$root$PREFIX,g" "$pc" > "$dir/pkgconfig.tmp/${pc##*/}"
	done
	mv "$dir/pkgconfig.tmp" "$dir/pkgconfig"
fi

if [ -n "$cbuild" ]; then
	rm -f "$cbuild/CMakeCache.txt"
	# the whole project is configured (the library's FLUSH check), only
	# the client is built; it finds its libraries under the prefix
	PKG_CONFIG_PATH=$dir/pkgconfig cmake -S "$top" -B "$cbuild" \
		-DENABLE_WERROR=ON -DBUILD_TESTING=OFF \
		-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON \
		-DCMAKE_INSTALL_RPATH="$PREFIX/lib" > "$cbuild.cmake.log" 2>&1 ||
		{ tail -n 20 "$cbuild.cmake.log" >&2; log "configure of $cbuild failed"; exit 1; }
	grep -q '^DAXLEASE_HAVE_IBV_FLUSH:INTERNAL=1$' "$cbuild/CMakeCache.txt" ||
		{ log "built against rdma-core $VERSION, the client still cannot post FLUSH"; exit 1; }
	cmake --build "$cbuild" --target daxlease_remote_client -j2 \
		> "$cbuild.build.log" 2>&1 ||
		{ tail -n 20 "$cbuild.build.log" >&2; log "build of the client failed"; exit 1; }
	rm -rf "$ctree"
	mkdir -p "$ctree/opt/daxlease" "$ctree/etc/opt/daxlease"
	cp -a "$root$PREFIX" "$ctree/opt/daxlease/"
	# the providers' configuration: /etc/opt/daxlease/rdma-core/libibverbs.d
	cp -a "$root/etc$PREFIX" "$ctree/etc/opt/daxlease/"
	rm -rf "$ctree$PREFIX/include" "$ctree$PREFIX/share" \
		"$ctree$PREFIX"/lib/*.a "$ctree$PREFIX/lib/pkgconfig"
	mkdir -p "$ctree$PREFIX/bin"
	cp "$cbuild/tools/daxlease-remote-client" "$ctree$PREFIX/bin/"
	log "client tree $ctree: $PREFIX/bin/daxlease-remote-client posts RDMA FLUSH"
fi
echo "$root"
