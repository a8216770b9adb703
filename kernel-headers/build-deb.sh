#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build Debian packages of the daxlease-patched kernel, to install with
# dpkg -i beside Debian's own kernel.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: kernel-headers/build-deb.sh --line 6.1|6.12 [--config SPEC]
                                   [--out DIR] [--jobs N] [--debug-info]
                                   [--keep DIR] [--timeout SEC]
                                   [--localmodconfig LSMOD]

Unpacks /usr/src/linux-source-LINE.tar.xz (package linux-source-LINE),
applies kernel-headers/patches/linux-LINE/series with patch -p1 --fuzz=0,
takes a configuration, sets the local version -daxleaseV (V: the series
version), checks that every option the series needs survives
'make olddefconfig', and runs 'make bindeb-pkg'.  The packages land in
OUT (default build/kernel-deb/LINE):

  linux-image-RELEASE_*.deb    the kernel and its modules
  linux-headers-RELEASE_*.deb  for out-of-tree modules (a configuration
                               with modules only); holds the series' uapi
                               headers (linux/daxlease_fcntl.h,
                               rdma/daxlease_user_ioctl_cmds.h)
  linux-libc-dev_*.deb         built by bindeb-pkg too; do not install it
                               over Debian's (rdma-core's headers suffice)

  --config SPEC    debian (default): Debian's own amd64 configuration of
                   the line, /usr/src/linux-config-LINE/config.FLAVOUR.xz
                   (package linux-config-LINE), FLAVOUR amd64_none_amd64;
                   debian:FLAVOUR for another flavour; test or test:plain:
                   the test VM's (tinyconfig + kernel-headers/kconfig/,
                   debug or plain options, as build-kernel.sh, and the
                   test hooks of patches/linux-LINE/test/series after the
                   series: never in packages for users); or a
                   configuration file, e.g. /boot/config-$(uname -r)
  --out DIR        where the packages go
  --jobs N         make -jN (default: the number of CPUs)
  --debug-info     keep the configuration's debug information (Debian's
                   makes the build several times longer and needs pahole);
                   by default it is turned off
  --keep DIR       build in DIR and keep it (default: a temporary
                   directory, removed after success)
  --timeout SEC    bound for the whole build (default 43200)
  --localmodconfig LSMOD
                   after taking the configuration, turn off every module
                   that the list LSMOD (the output of lsmod, e.g. from the
                   machine the kernel is for) does not name, as 'make
                   localmodconfig' does: a build of Debian's configuration
                   in a fraction of the time.  Built-in options stay.
                   tests/vm/mkinitramfs.sh --print-lsmod writes the list
                   of the test VM

Then, as root: dpkg -i OUT/linux-image-*.deb [OUT/linux-headers-*.deb],
reboot into the kernel named RELEASE, and 'daxlease probe' says the
kernel has the series.  Environment: LINUX_SOURCE_TARBALL, TMPDIR.
USAGE
}

line=
spec=debian
out=
jobs=$(nproc)
debug_info=0
keep=
limit=43200
lsmod_file=
while [ $# -gt 0 ]; do
	case "$1" in
	--line) line=${2:?--line needs 6.1 or 6.12}; shift ;;
	--config) spec=${2:?--config needs a value}; shift ;;
	--out) out=${2:?--out needs a directory}; shift ;;
	--jobs) jobs=${2:?--jobs needs a number}; shift ;;
	--debug-info) debug_info=1 ;;
	--keep) keep=${2:?--keep needs a directory}; shift ;;
	--timeout) limit=${2:?--timeout needs seconds}; shift ;;
	--localmodconfig) lsmod_file=${2:?--localmodconfig needs a file}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "build-deb: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

log() { echo "build-deb: $*" >&2; }
die() { log "error: $*"; exit 1; }

case "$line" in 6.1|6.12) ;; *) die "--line is 6.1 or 6.12" ;; esac
case "$jobs" in ''|*[!0-9]*|0) die "bad --jobs '$jobs'" ;; esac
case "$limit" in ''|*[!0-9]*|0) die "bad --timeout '$limit'" ;; esac
if [ -n "$lsmod_file" ]; then
	[ -s "$lsmod_file" ] || die "no module list '$lsmod_file'"
	lsmod_file=$(cd "$(dirname "$lsmod_file")" && pwd)/$(basename "$lsmod_file")
fi

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=kernel-lib.sh
. "$here/kernel-lib.sh"
pdir=$here/patches/linux-$line
kdir=$here/kconfig
tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-$line.tar.xz}
: "${out:=$top/build/kernel-deb/$line}"
# the series version: the first line of NOTES.md names it
series_version=$(sed -n '1s/.*, version \([0-9][0-9]*\)$/\1/p' \
		 "$pdir/NOTES.md")
[ -n "$series_version" ] || die "$pdir/NOTES.md names no series version"
localversion=-daxlease$series_version

[ -f "$tarball" ] || die "$tarball missing (apt-get install linux-source-$line)"
missing=
for tool in make gcc bc flex bison perl xz dpkg-deb dpkg-buildpackage \
	    rsync cpio kmod openssl; do
	command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
for hdr in openssl/opensslv.h libelf.h; do
	[ -f "/usr/include/$hdr" ] || missing="$missing $hdr"
done
[ -z "$missing" ] ||
	die "missing:$missing (apt-get install build-essential bc flex bison dpkg-dev rsync cpio kmod libssl-dev libelf-dev)"

fragments=()
config_file=
test_hooks=
case "$spec" in
debian|debian:*)
	flavour=${spec#debian}
	flavour=${flavour#:}
	: "${flavour:=amd64_none_amd64}"
	config_file=/usr/src/linux-config-$line/config.$flavour.xz
	[ -f "$config_file" ] ||
		die "$config_file missing (apt-get install linux-config-$line)"
	;;
test|test:debug|test:plain)
	mode=${spec#test}
	mode=${mode#:}
	: "${mode:=debug}"
	fragments=("$kdir/base.config" "$kdir/$mode.config")
	[ ! -f "$kdir/line-$line.config" ] ||
		fragments+=("$kdir/line-$line.config")
	test_hooks=$pdir/test
	;;
*)
	[ -f "$spec" ] || die "no configuration file '$spec'"
	config_file=$(cd "$(dirname "$spec")" && pwd)/$(basename "$spec")
	;;
esac

if [ -n "$keep" ]; then
	work=$keep
	rm -rf "$work"
	mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/daxlease-deb-$line.XXXXXX")
fi
# bindeb-pkg writes the packages next to the source tree
src=$work/linux-$line
mkdir -p "$src"
blog=$work/build.log
: > "$blog"
deadline=$((SECONDS + limit))
left() { echo $((deadline > SECONDS ? deadline - SECONDS : 1)); }
failed() {
	log "FAILED: $1; last lines of $blog:"
	tail -n 40 "$blog" >&2
	log "build tree left in $work"
	exit 1
}
kmake() { timeout "$(left)" make -C "$src" ARCH=x86_64 "$@" >> "$blog" 2>&1; }

log "unpacking ${tarball##*/} into $src and applying the series"
kl_source "$tarball" "$pdir" "$src" "$blog" || failed "$KL_ERR"
log "applied ${#KL_PATCHES[@]} patches of series version $series_version"
if [ -n "$test_hooks" ]; then
	kl_apply "$test_hooks" "$src" "$blog" || failed "$KL_ERR"
	log "applied ${#KL_PATCHES[@]} test hook(s) of $test_hooks"
fi

export ARCH=x86_64
if [ ${#fragments[@]} -gt 0 ]; then
	log "configuring: tinyconfig + ${fragments[*]##*/}"
	kmake tinyconfig || failed "make tinyconfig"
	(cd "$src" && timeout 120 scripts/kconfig/merge_config.sh -m .config \
		"${fragments[@]}" >> "$blog" 2>&1) || failed "merge_config.sh"
else
	log "configuring: $config_file"
	case "$config_file" in
	*.xz) xz -dc "$config_file" > "$src/.config" ;;
	*) cp "$config_file" "$src/.config" ;;
	esac
	# Debian's build signs with keys that are not in a source tree; the
	# modules are signed with a key made for this build instead
	"$src/scripts/config" --file "$src/.config" \
		--set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS ""
	if [ $debug_info = 0 ]; then
		"$src/scripts/config" --file "$src/.config" \
			--disable DEBUG_INFO --disable DEBUG_INFO_DWARF4 \
			--disable DEBUG_INFO_DWARF5 \
			--disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
			--disable DEBUG_INFO_BTF --enable DEBUG_INFO_NONE
	fi
fi
if [ -n "$lsmod_file" ]; then
	log "localmodconfig: modules named in $lsmod_file ($(($(wc -l < "$lsmod_file") - 1)) lines) and what they need"
	kmake olddefconfig || failed "make olddefconfig"
	# new questions (none expected after olddefconfig) take their defaults
	# (yes dies of SIGPIPE: the status is make's)
	(set +o pipefail; yes '' | kmake LSMOD="$lsmod_file" localmodconfig) ||
		failed "make localmodconfig"
fi
"$src/scripts/config" --file "$src/.config" \
	--set-str LOCALVERSION "$localversion" --disable LOCALVERSION_AUTO
kmake olddefconfig || failed "make olddefconfig"

# Every option a test fragment sets must still be set (the local version
# is this script's).
if ! dropped=$(kl_fragments_kept "$src/.config" ${fragments[@]+"${fragments[@]}"}); then
	printf '%s\n' "$dropped" | sed 's/^/build-deb: option dropped: /' >&2
	die "kconfig fragments do not survive olddefconfig"
fi

# What the series needs of any configuration: OPTION=values it may have.
need=(
	"FS_DAX=y" "ZONE_DEVICE=y" "DAX=y m" "LIBNVDIMM=y m"
	"BLK_DEV_PMEM=y m" "DEV_DAX=y m" "FILE_LOCKING=y"
	"INFINIBAND=y m" "INFINIBAND_USER_ACCESS=y m"
)
bad=0
for n in "${need[@]}"; do
	o=${n%%=*}
	got=$(sed -n "s/^CONFIG_$o=//p" "$src/.config")
	case " ${n#*=} " in
	*" ${got:-none} "*) ;;
	*) log "option CONFIG_$o is '${got:-not set}', the series needs ${n#*=}"
	   bad=1 ;;
	esac
done
if ! grep -qE '^CONFIG_(EXT4|XFS)_FS=[ym]' "$src/.config"; then
	log "neither CONFIG_EXT4_FS nor CONFIG_XFS_FS: no file system to pin"
	bad=1
fi
[ $bad = 0 ] || die "the configuration cannot carry the series (see above)"
if grep -q '^CONFIG_XFS_ONLINE_REPAIR=y' "$src/.config"; then
	log "note: CONFIG_XFS_ONLINE_REPAIR is set: xfs grants no exclusive layout lease (ext4 does)"
fi

log "make -j$jobs bindeb-pkg (log: $blog)"
start=$SECONDS
kmake -j"$jobs" bindeb-pkg || failed "make bindeb-pkg"
# known once the build has written include/config/auto.conf
release=$(make -s -C "$src" ARCH=x86_64 kernelrelease)
case "$release" in
*"$localversion") ;;
*) failed "kernel release '$release' does not end in $localversion" ;;
esac
log "built $release in $((SECONDS - start)) s"

mkdir -p "$out"
debs=()
for d in "$work"/*.deb; do
	[ -f "$d" ] || continue
	mv -f "$d" "$out/"
	debs+=("$out/${d##*/}")
done
image=
headers=
for d in "${debs[@]}"; do
	case "${d##*/}" in
	linux-image-"$release"-dbg_*) ;;
	linux-image-"$release"_*) image=$d ;;
	linux-headers-"$release"_*) headers=$d ;;
	esac
done
[ -n "$image" ] || failed "no linux-image-$release package"
# bindeb-pkg makes linux-headers only for a kernel with modules
if grep -q '^CONFIG_MODULES=y' "$src/.config"; then
	[ -n "$headers" ] || failed "no linux-headers-$release package"
	# the listing first: grep -q would stop reading it (SIGPIPE, pipefail)
	dpkg-deb -c "$headers" > "$work/headers.list" ||
		failed "cannot list ${headers##*/}"
	for h in linux/daxlease_fcntl.h rdma/daxlease_user_ioctl_cmds.h; do
		grep -q "include/uapi/$h\$" "$work/headers.list" ||
			failed "${headers##*/} lacks include/uapi/$h"
	done
else
	log "CONFIG_MODULES is off: no linux-headers package"
fi
cp "$src/.config" "$out/config-$release"
for d in "${debs[@]}"; do
	log "$(du -h "$d" | cut -f1)	$d"
done
[ -n "$keep" ] || rm -rf "$work"
echo "$image"
