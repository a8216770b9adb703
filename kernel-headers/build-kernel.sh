#!/bin/bash
# Build the daxlease-patched Linux kernel of the test VM (everything built
# in) from Debian's linux-source-6.1 or linux-source-6.12 as Debian
# packages (build-deb.sh), reproducibly and with a result cache.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: kernel-headers/build-kernel.sh [--line 6.1|6.12] [--debug|--plain]
                                      [--out DIR] [--jobs N] [--print-path]
                                      [--keep-tree] [--timeout SEC]

Builds the kernel the test VM boots as Debian packages, through
kernel-headers/build-deb.sh with the test configuration ('make ARCH=x86_64
tinyconfig' + kernel-headers/kconfig/base.config + debug.config (--debug,
the default: KASAN, lockdep, DEBUG_VM, ...) or plain.config (--plain, for
benchmarks) + line-LINE.config where there is one): the series applied
with zero fuzz to Debian's linux-source-LINE, every fragment option
checked after olddefconfig, 'make bindeb-pkg'.  After the series come
the test hooks of patches/linux-LINE/test/series, which only the test
VM's kernels carry (packages of Debian's configuration never do).  The
bzImage is the /boot/vmlinuz of the linux-image package it produced.

The result is cached in $DAXLEASE_CACHE/kernel/<hash>/ (default
DAXLEASE_CACHE=/var/cache/daxlease) with bzImage, the linux-image
package, config, build.log and info; <hash> covers the series, the
patches, the fragments, this script and the ones it runs, the source
tarball and the compiler, so a rerun with nothing changed
returns at once.  The bzImage path is the only thing printed on stdout;
progress goes to stderr.

  --line L         kernel line: 6.1 (default) or 6.12
  --debug          debug kernel (default); the guest tests use it
  --plain          no debug options
  --out DIR        also copy bzImage and config to DIR
  --jobs N         make -jN (default 2: the machine is shared)
  --print-path     print the cached bzImage path and exit: 0 if it is
                   built, 1 if not (nothing is built)
  --keep-tree      keep the build tree (default: removed after success)
  --timeout SEC    bound for the build (default 4800: a debug build took
                   50 min on the shared 2-core machine under load)

Environment: DAXLEASE_CACHE, LINUX_SOURCE_TARBALL, TMPDIR.
USAGE
}

line=6.1
mode=debug
out=
jobs=2
print_path=0
keep_tree=0
make_timeout=4800
while [ $# -gt 0 ]; do
	case "$1" in
	--line) line=${2:?--line needs 6.1 or 6.12}; shift ;;
	--debug) mode=debug ;;
	--plain) mode=plain ;;
	--out) out=${2:?--out needs a directory}; shift ;;
	--jobs) jobs=${2:?--jobs needs a number}; shift ;;
	--print-path) print_path=1 ;;
	--keep-tree) keep_tree=1 ;;
	--timeout) make_timeout=${2:?--timeout needs seconds}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "build-kernel.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
case "$jobs" in ''|*[!0-9]*) echo "build-kernel.sh: bad --jobs" >&2; exit 2 ;; esac
case "$line" in 6.1|6.12) ;; *) echo "build-kernel.sh: --line is 6.1 or 6.12" >&2; exit 2 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
pdir=$here/patches/linux-$line
kdir=$here/kconfig
tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-$line.tar.xz}
cache_root=${DAXLEASE_CACHE:-/var/cache/daxlease}/kernel
fragments=("$kdir/base.config" "$kdir/$mode.config")
# options of one line only, if it has any
[ ! -f "$kdir/line-$line.config" ] || fragments+=("$kdir/line-$line.config")

log() { echo "build-kernel: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ -f "$tarball" ] || die "$tarball missing (apt-get install linux-source-$line)"
for f in "${fragments[@]}"; do [ -f "$f" ] || die "$f missing"; done

# shellcheck source=kernel-lib.sh
. "$here/kernel-lib.sh"
kl_series "$pdir" || die "$KL_ERR"
patches=("${KL_PATCHES[@]}")
# the test VM's kernel also carries the test hooks (build-deb.sh)
kl_series "$pdir/test" || die "$KL_ERR"
hooks=("${KL_PATCHES[@]}")

# Cache key: everything that goes into the image.
key=$(
	echo "line $line"
	echo "mode $mode"
	echo "source $(sha256sum < "$tarball" | cut -d' ' -f1)"
	echo "cc $(gcc --version | head -n1)"
	for f in "$0" "$here/build-deb.sh" "$here/kernel-lib.sh"; do
		echo "script ${f##*/} $(sha256sum < "$f" | cut -d' ' -f1)"
	done
	for f in "${fragments[@]}"; do
		echo "fragment ${f##*/} $(sha256sum < "$f" | cut -d' ' -f1)"
	done
	for p in "${patches[@]}"; do
		echo "patch $p $(sha256sum < "$pdir/$p" | cut -d' ' -f1)"
	done
	for p in "${hooks[@]}"; do
		echo "test hook $p $(sha256sum < "$pdir/test/$p" | cut -d' ' -f1)"
	done
)
hash=$(printf '%s\n' "$key" | sha256sum | cut -c1-16)
cdir=$cache_root/$line-$mode-$hash
image=$cdir/bzImage

copy_out() {
	[ -n "$out" ] || return 0
	mkdir -p "$out"
	cp "$image" "$out/bzImage"
	cp "$cdir/config" "$out/config"
	log "copied to $out/bzImage"
}

if [ $print_path = 1 ]; then
	echo "$image"
	[ -f "$image" ]
	exit
fi

if [ -f "$image" ]; then
	log "cached: $image"
	copy_out
	echo "$image"
	exit 0
fi

mkdir -p "$cache_root"
# One build per key at a time; a second caller waits and then finds it.
exec 9> "$cache_root/.lock-$line-$mode-$hash"
if ! flock -n 9; then
	log "another build of $line-$mode-$hash is running; waiting"
	timeout "$make_timeout" flock 9 || die "timed out waiting for the lock"
fi
if [ -f "$image" ]; then
	log "cached: $image"
	copy_out
	echo "$image"
	exit 0
fi

# a directory of our own: another cache root may build the same hash
work=$(mktemp -d "${TMPDIR:-/tmp}/daxlease-kernel-$line-$mode-$hash.XXXXXX")

# timeout(1) runs its command in a process group of its own: stop that
# group too if this script is interrupted, so no orphaned tar or make
# keeps the shared CPU busy.
child=
stop_child() {
	[ -n "$child" ] && kill -TERM -- "-$child" 2>/dev/null
	log "interrupted; build tree left in $work"
	exit 130
}
trap stop_child INT TERM HUP

export KBUILD_BUILD_TIMESTAMP="2024-01-01 00:00:00 UTC"
export KBUILD_BUILD_USER=daxlease
export KBUILD_BUILD_HOST=daxlease
export KBUILD_BUILD_VERSION=1
export LC_ALL=C
start=$(date +%s)
log "$line $mode kernel $hash: build-deb.sh --config test:$mode in $work"
rc=0
timeout "$make_timeout" bash "$here/build-deb.sh" --line "$line" \
	--config "test:$mode" --out "$work/deb" --jobs "$jobs" \
	--keep "$work/tree" --timeout "$make_timeout" > "$work/deb.path" &
child=$!
wait "$child" || rc=$?
child=
[ $rc = 0 ] || die "build-deb.sh failed (exit $rc); build tree left in $work"
deb=$(tail -n1 "$work/deb.path")
[ -f "$deb" ] || die "build-deb.sh named no package ('$deb')"
release=$(dpkg-deb -f "$deb" Package)
release=${release#linux-image-}
end=$(date +%s)

mkdir -p "$cdir.tmp"
# the bzImage is the package's /boot/vmlinuz-RELEASE
dpkg-deb --fsys-tarfile "$deb" |
	tar -xO "./boot/vmlinuz-$release" > "$cdir.tmp/bzImage" ||
	die "no /boot/vmlinuz-$release in ${deb##*/}"
[ -s "$cdir.tmp/bzImage" ] || die "empty /boot/vmlinuz-$release in ${deb##*/}"
cp "$deb" "$cdir.tmp/"
cp "$work/deb/config-$release" "$cdir.tmp/config"
cp "$work/tree/build.log" "$cdir.tmp/build.log"
{
	echo "kernel $release"
	echo "package ${deb##*/}"
	echo "built $(date -u +%FT%TZ) in $((end - start)) s with -j$jobs"
	printf '%s\n' "$key"
} > "$cdir.tmp/info"
rm -rf "$cdir"
mv "$cdir.tmp" "$cdir"
log "built in $((end - start)) s: $image (from ${deb##*/})"
if [ $keep_tree = 0 ]; then
	rm -rf "$work"
else
	log "build tree kept in $work"
fi
copy_out
echo "$image"
