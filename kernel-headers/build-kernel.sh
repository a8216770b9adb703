#!/bin/bash
# Build the daxlease-patched Linux kernel (bzImage, everything built in)
# from Debian's linux-source-6.1 or linux-source-6.12, reproducibly and
# with a result cache.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: kernel-headers/build-kernel.sh [--line 6.1|6.12] [--debug|--plain]
                                      [--out DIR] [--jobs N] [--print-path]
                                      [--keep-tree] [--timeout SEC]

Unpacks /usr/src/linux-source-LINE.tar.xz, applies
kernel-headers/patches/linux-LINE/series with patch -p1, configures
'make ARCH=x86_64 tinyconfig' + kernel-headers/kconfig/base.config +
debug.config (--debug, the default: KASAN, lockdep, DEBUG_VM, ...) or
plain.config (--plain, for benchmarks) + line-LINE.config where there is
one, checks that every fragment option
survived olddefconfig, and runs 'make bzImage'.

The result is cached in $DAXLEASE_CACHE/kernel/<hash>/ (default
DAXLEASE_CACHE=/var/cache/daxlease) with bzImage, config, build.log and
info; <hash> covers the series, the patches, the fragments, this script,
the source tarball and the compiler, so a rerun with nothing changed
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
  --timeout SEC    bound for each make step (default 4800: a debug build
                   took 50 min on the shared 2-core machine under load)

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
[ -f "$pdir/series" ] || die "$pdir/series missing"
for f in "${fragments[@]}"; do [ -f "$f" ] || die "$f missing"; done

# Patches in series order; '#' starts a comment, blank lines are ignored.
mapfile -t patches < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$pdir/series" |
		       grep -v '^$' || true)
[ ${#patches[@]} -gt 0 ] || die "series lists no patch"
for p in "${patches[@]}"; do
	[ -f "$pdir/$p" ] || die "series names $p, which is not in $pdir"
done

# Cache key: everything that goes into the image.
key=$(
	echo "line $line"
	echo "mode $mode"
	echo "source $(sha256sum < "$tarball" | cut -d' ' -f1)"
	echo "cc $(gcc --version | head -n1)"
	echo "script $(sha256sum < "$0" | cut -d' ' -f1)"
	for f in "${fragments[@]}"; do
		echo "fragment ${f##*/} $(sha256sum < "$f" | cut -d' ' -f1)"
	done
	for p in "${patches[@]}"; do
		echo "patch $p $(sha256sum < "$pdir/$p" | cut -d' ' -f1)"
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
blog=$work.log
: > "$blog"
failed() {
	log "FAILED: $1; last lines of $blog:"
	tail -n 40 "$blog" >&2
	exit 1
}

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
# bounded SEC CMD...: run CMD with a time limit, output to the build log
bounded() {
	local sec=$1 rc=0

	shift
	timeout "$sec" "$@" >> "$blog" 2>&1 &
	child=$!
	wait "$child" || rc=$?
	child=
	return $rc
}
kmake() { bounded "$make_timeout" make -C "$work" ARCH=x86_64 "$@"; }

start=$(date +%s)
log "$line $mode kernel $hash: unpacking ${tarball##*/} into $work"
bounded 600 tar -xJf "$tarball" -C "$work" --strip-components=1 ||
	failed "unpacking"

for p in "${patches[@]}"; do
	log "applying $p"
	echo "=== patch -p1 < $p" >> "$blog"
	# zero fuzz: a hunk that only applies with fuzz may have landed in
	# the wrong place; offsets are fine, rejects and leftovers are not
	bounded 120 patch -p1 --forward --batch --fuzz=0 -d "$work" \
		-i "$pdir/$p" >> "$blog" 2>&1 ||
		failed "$p does not apply without fuzz"
	if find "$work" -name '*.rej' -o -name '*.orig' | grep -q .; then
		failed "$p left .rej/.orig files"
	fi
done

export ARCH=x86_64
export KBUILD_BUILD_TIMESTAMP="2024-01-01 00:00:00 UTC"
export KBUILD_BUILD_USER=daxlease
export KBUILD_BUILD_HOST=daxlease
export KBUILD_BUILD_VERSION=1
export LC_ALL=C
log "configuring: tinyconfig + ${fragments[*]##*/}"
kmake tinyconfig || failed "make tinyconfig"
(cd "$work" && bounded 120 scripts/kconfig/merge_config.sh -m .config \
	"${fragments[@]}") || failed "merge_config.sh"
kmake olddefconfig || failed "make olddefconfig"

# Every option a fragment sets must still be set after olddefconfig.
dropped=0
for f in "${fragments[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF -- "$line" "$work/.config" && continue
			opt=${line%%=*}
			got=$(grep -E "^($opt=|# $opt is not set)" "$work/.config" || true)
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			grep -q "^$opt=" "$work/.config" || continue
			got=$(grep "^$opt=" "$work/.config")
			;;
		*) continue ;;
		esac
		log "option dropped: ${f##*/}: '$line', .config has '${got:-nothing}'"
		dropped=1
	done < "$f"
done
[ $dropped = 0 ] || die "kconfig fragments do not survive olddefconfig (see above)"

log "make -j$jobs bzImage (log: $blog)"
kmake -j"$jobs" bzImage || failed "make bzImage"
end=$(date +%s)

mkdir -p "$cdir.tmp"
cp "$work/arch/x86/boot/bzImage" "$cdir.tmp/bzImage"
cp "$work/.config" "$cdir.tmp/config"
cp "$blog" "$cdir.tmp/build.log"
{
	echo "kernel $(make -s -C "$work" kernelrelease 2>/dev/null)"
	echo "built $(date -u +%FT%TZ) in $((end - start)) s with -j$jobs"
	printf '%s\n' "$key"
} > "$cdir.tmp/info"
rm -rf "$cdir"
mv "$cdir.tmp" "$cdir"
log "built in $((end - start)) s: $image"
if [ $keep_tree = 0 ]; then
	rm -rf "$work" "$blog"
else
	log "build tree kept in $work"
fi
copy_out
echo "$image"
