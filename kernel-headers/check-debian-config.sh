#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Compile every C file the kernel series touches with Debian's own amd64
# kernel configuration, warnings as errors.  The test kernels are built
# from tinyconfig with everything built in; Debian's kernel has modules,
# more file systems and more drivers, so code that only compiles (or only
# compiles cleanly) in one configuration shows here.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--line 6.1|6.12] [--config NAME] [--jobs N] [--keep DIR]
          [--timeout SEC]

Unpacks /usr/src/linux-source-LINE.tar.xz (LINE 6.1 by default), applies
kernel-headers/patches/linux-LINE/series with patch -p1 --fuzz=0, takes
/usr/src/linux-config-LINE/config.NAME.xz (default amd64_none_amd64, the
linux-image-amd64 flavour; package linux-config-LINE), runs olddefconfig
and compiles the object of every .c file the series changes with
KCFLAGS=-Werror.  Exit 0 when all compile without a warning.

  --config NAME  configuration flavour (amd64_none_amd64,
                 amd64_none_cloud-amd64, amd64_rt_amd64)
  --jobs N       make -jN (default 2)
  --keep DIR     build in DIR and keep it (default: a temporary directory)
  --timeout SEC  bound for each make step (default 1800)

Environment: LINUX_SOURCE_TARBALL, TMPDIR.
USAGE
}

flavour=amd64_none_amd64
jobs=2
keep=
limit=1800
line=6.1
while [ $# -gt 0 ]; do
	case "$1" in
	--line) line=${2:?--line needs 6.1 or 6.12}; shift ;;
	--config) flavour=${2:?--config needs a name}; shift ;;
	--jobs) jobs=${2:?--jobs needs a number}; shift ;;
	--keep) keep=${2:?--keep needs a directory}; shift ;;
	--timeout) limit=${2:?--timeout needs seconds}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "$0: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

case "$line" in 6.1|6.12) ;; *) echo "$0: --line is 6.1 or 6.12" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=kernel-lib.sh
. "$here/kernel-lib.sh"
pdir=$here/patches/linux-$line
tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-$line.tar.xz}
config=/usr/src/linux-config-$line/config.$flavour.xz

die() { echo "check-debian-config: error: $*" >&2; exit 1; }
log() { echo "check-debian-config: $*" >&2; }

[ -f "$tarball" ] || die "$tarball missing (apt-get install linux-source-$line)"
[ -f "$config" ] || die "$config missing (apt-get install linux-config-$line)"

if [ -n "$keep" ]; then
	work=$keep
	rm -rf "$work"
	mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/daxlease-debcfg.XXXXXX")
	trap 'rm -rf "$work"' EXIT
fi

log "unpacking $(basename "$tarball") and applying the series"
kl_source "$tarball" "$pdir" "$work" "$work.log" || {
	cat "$work.log" >&2
	rm -f "$work.log"
	die "$KL_ERR"
}
rm -f "$work.log"
patches=("${KL_PATCHES[@]}")

# every C file the series adds or changes, as an object to build
mapfile -t objs < <(cat "${patches[@]/#/$pdir/}" |
	sed -n 's|^+++ b/\(.*\)\.c$|\1.o|p' | sort -u)
[ ${#objs[@]} -gt 0 ] || die "the series changes no C file"

cd "$work"
xz -dc "$config" > .config
export ARCH=x86_64
# Debian signs modules with its own key, which a build tree does not have
scripts/config --set-str SYSTEM_TRUSTED_KEYS "" \
	--set-str SYSTEM_REVOCATION_KEYS "" --disable MODULE_SIG_ALL
timeout "$limit" make -s olddefconfig
log "Debian config $flavour: compiling ${#objs[@]} objects: ${objs[*]}"
timeout "$limit" make -s -j"$jobs" prepare
out=$work/objects.log
if ! timeout "$limit" make -j"$jobs" KCFLAGS=-Werror "${objs[@]}" \
	>"$out" 2>&1; then
	cat "$out" >&2
	die "the series does not compile warning-free with $flavour"
fi
if grep -q 'warning:' "$out"; then
	grep 'warning:' "$out" >&2
	die "warnings with $flavour"
fi
log "all ${#objs[@]} objects compile warning-free with $flavour"
