#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the test VM's initramfs from the host's Debian packages and this
# project's build.  The image is three concatenated gzip'd cpio archives
# (the kernel unpacks them in order):
#   base     busybox, kmod, ndctl/daxctl, mkfs.ext2/ext4/xfs, e2fsck,
#            xfs_repair, xfs_io, iproute2, rdma,
#            ibverbs-utils, rdmacm-utils, strace, python3 + pyverbs, the rxe
#            provider, with their shared libraries; valgrind memcheck with
#            the debug symbols of ld.so (libc6-dbg); cached, keyed by this
#            script and the versions of the packages it copies from
#   modules  the stock kernel's modules for rxe, nvdimm, dax, ext4, xfs,
#            dummy (only with --kernel-tree); cached, keyed by kernel version
#   project  `cmake --install BUILD --prefix /opt/daxlease`, tests/vm/init,
#            lib.sh, setup-guest.sh and suites/, and a copy of tests/ and
#            tools/ at /opt/daxlease/src; rebuilt every time (small)
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 --build-dir DIR --out FILE [--kernel-tree DIR] [--cache DIR]
       $0 --print-lsmod --kernel-tree DIR
  --build-dir DIR    configured and built project (CMAKE_INSTALL_PREFIX
                     /opt/daxlease); installed into the image
  --out FILE         initramfs to write (gzip'd cpio, concatenated)
  --kernel-tree DIR  unpacked linux-image package (tests/vm/get-stock-kernel.sh);
                     without it no modules are added (built-in kernel)
  --cache DIR        cache for the base and module layers (default
                     \$DAXLEASE_VM_CACHE or /var/cache/daxlease/initramfs)
  --print-lsmod      print the modules the guest loads from the kernel tree
                     (the list below and their dependencies) in the format
                     of lsmod, for 'make LSMOD=FILE localmodconfig'
                     (kernel-headers/build-deb.sh --localmodconfig)
Environment: DAXLEASE_VM_EXTRA_BINS="path ..." adds host programs (with
their libraries) to the project layer; DAXLEASE_VM_EXTRA_TREE=DIR copies
the tree DIR into it as it is.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=
out=
ktree=
cache=${DAXLEASE_VM_CACHE:-/var/cache/daxlease/initramfs}
print_lsmod=0
while [ $# -gt 0 ]; do
	case "$1" in
	--build-dir) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--kernel-tree) ktree=$2; shift 2 ;;
	--cache) cache=$2; shift 2 ;;
	--print-lsmod) print_lsmod=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
if [ "$print_lsmod" = 0 ]; then
	[ -n "$build" ] && [ -n "$out" ] || { usage >&2; exit 2; }
else
	[ -n "$ktree" ] || { usage >&2; exit 2; }
fi
export LC_ALL=C

MULTI=/usr/lib/x86_64-linux-gnu
BASE_PKGS="busybox-static kmod ndctl daxctl libndctl6 libdaxctl1 e2fsprogs
 xfsprogs iproute2 rdma-core ibverbs-utils ibverbs-providers libibverbs1
 librdmacm1 rdmacm-utils strace util-linux libc6 libgcc-s1 python3.11
 python3.11-minimal libpython3.11-stdlib libpython3.11-minimal
 python3-pyverbs libpmem2-1 libpmem1 valgrind libc6-dbg perftest fio"
BASE_BINS="/usr/bin/bash /usr/bin/kmod /usr/bin/ndctl /usr/bin/daxctl /sbin/mke2fs
 /sbin/mkfs.ext4 /sbin/mkfs.ext2 /sbin/tune2fs /sbin/dumpe2fs /sbin/debugfs /sbin/e2fsck
 /sbin/mkfs.xfs /usr/sbin/xfs_io /usr/sbin/xfs_db /sbin/xfs_repair
 /bin/ip /usr/bin/rdma /usr/bin/strace /bin/findmnt /usr/bin/fallocate
 /usr/sbin/filefrag /bin/mount /bin/umount /usr/bin/ibv_devices
 /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong /usr/bin/ibv_ud_pingpong
 /usr/bin/rping /usr/bin/udaddy /usr/bin/rdma_server /usr/bin/rdma_client
 /usr/bin/ucmatose /usr/bin/ib_write_bw /usr/bin/ib_read_bw
 /usr/bin/ib_write_lat /usr/bin/fio
 /usr/bin/python3.11"
# memcheck only, amd64 only: the tool, its two preloads, the default
# suppressions and the gdbserver target descriptions (a few KiB)
VG_LIBEXEC=/usr/libexec/valgrind
VG_FILES="memcheck-amd64-linux vgpreload_core-amd64-linux.so
 vgpreload_memcheck-amd64-linux.so default.supp"
VG_LDSO=/lib64/ld-linux-x86-64.so.2
MODLIST="crc32_generic crc32c_generic libnvdimm nfit nd_pmem nd_btt dax_pmem
 device_dax ext4 xfs ib_core ib_uverbs rdma_rxe rdma_ucm rdma_cm ib_umad
 dummy loop virtio_pci virtio_net"

# copy_elf ROOT FILE: the file and every library ldd names for it
copy_elf()
{
	local root=$1 f=$2

	mkdir -p "$root$(dirname "$f")"
	rm -f "$root$f"
	cp -L "$f" "$root$f"
	copy_libs "$root" "$f"
}

# copy_libs ROOT FILE: the libraries ldd names for FILE, if not yet in ROOT
copy_libs()
{
	local root=$1 f=$2 l

	ldd "$f" 2>/dev/null |
		awk '/=> \// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r l; do
			[ -e "$root$l" ] && continue
			mkdir -p "$root$(dirname "$l")"
			cp -L "$l" "$root$l"
		done
}

# debug_file LIB: the libc6-dbg file for LIB, by the build id of LIB
debug_file()
{
	local id

	id=$(readelf -n "$1" | awk '/Build ID:/ { print $3; exit }')
	[ -n "$id" ] && echo "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
}

# valgrind is part of the image, not optional: the guest memcheck run of
# badinput.sh must not turn into a skip because a package is missing.
# memcheck aborts at start without the symbols of ld.so ("a function
# redirection which is mandatory for this platform-tool combination cannot
# be set up", for strlen), and a libc6-dbg of another version than libc6
# has other build ids.
check_valgrind()
{
	local f missing=

	for f in /usr/bin/valgrind /usr/bin/valgrind.bin; do
		[ -e "$f" ] || missing+=" $f"
	done
	for f in $VG_FILES; do
		[ -e "$VG_LIBEXEC/$f" ] || missing+=" $VG_LIBEXEC/$f"
	done
	f=$(debug_file "$VG_LDSO")
	if [ -z "$f" ]; then
		missing+=" (no build id in $VG_LDSO)"
	elif [ ! -e "$f" ]; then
		missing+=" $f (symbols of $VG_LDSO)"
	fi
	[ -z "$missing" ] && return 0
	echo "mkinitramfs: the guest image needs valgrind and libc6-dbg (the version of libc6: $(dpkg-query -W -f '${Version}' libc6 2>/dev/null)); missing:$missing" >&2
	echo "mkinitramfs: install them with tests/install-deps.sh (.ci/packages/vm.txt)" >&2
	exit 1
}

# The guest is merged-/usr like Debian 12: /bin, /sbin, /lib, /lib64 are
# symlinks into /usr, so library paths printed by ldd work unchanged.
mkroot() # DIR
{
	mkdir -p "$1"/usr/{bin,sbin,lib,lib64}
	ln -sfn usr/bin "$1/bin"
	ln -sfn usr/sbin "$1/sbin"
	ln -sfn usr/lib "$1/lib"
	ln -sfn usr/lib64 "$1/lib64"
}

# pack DIR FILE [all]: cpio of DIR; the merged-/usr symlinks only with "all"
# (later layers must not replace them).
pack()
{
	(cd "$1" &&
	 if [ "${3:-}" = all ]; then
		find . -mindepth 1
	 else
		find . -mindepth 1 \( -path ./bin -o -path ./sbin -o -path ./lib \
			-o -path ./lib64 \) -prune -o -print
	 fi | sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$2.tmp.$$"
	mv "$2.tmp.$$" "$2"
}

build_base()
{
	local root=$1 a b f so

	mkroot "$root"
	mkdir -p "$root"/{etc,proc,sys,dev,tmp,mnt,run,root,var/tmp} "$root$MULTI"
	cp /bin/busybox "$root/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ -e "$root/usr/bin/$a" ] || ln -s busybox "$root/usr/bin/$a"
	done
	for b in $BASE_BINS; do
		[ -e "$b" ] || continue
		rm -f "$root/usr/bin/${b##*/}" "$root/usr/sbin/${b##*/}"
		copy_elf "$root" "$b"
	done
	for a in modprobe insmod lsmod depmod rmmod modinfo; do
		rm -f "$root/usr/bin/$a" "$root/usr/sbin/$a"
		ln -s /usr/bin/kmod "$root/usr/sbin/$a"
	done
	ln -sf python3.11 "$root/usr/bin/python3"
	# libibverbs providers are dlopen()ed; glibc dlopen()s libgcc_s at
	# pthread_exit/cancel (rping, python threads).
	mkdir -p "$root$MULTI/libibverbs" "$root/etc/libibverbs.d"
	for so in "$MULTI"/libibverbs/librxe-rdmav*.so; do
		copy_elf "$root" "$so"
	done
	cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
	cp -L "$MULTI/libgcc_s.so.1" "$root$MULTI/"
	mkdir -p "$root/etc/ndctl" "$root/etc/ndctl.conf.d" "$root/run/ndctl"
	# python3.11 stdlib without tests, tk, idle, and pyverbs; with the
	# byte code Debian compiled (every import would compile it under TCG)
	(cd /usr/lib && tar cf - --exclude=test --exclude=tests \
		--exclude=idlelib --exclude=tkinter --exclude=ensurepip \
		--exclude=lib2to3 --exclude=turtledemo \
		--exclude='config-3.11-*' --exclude=pydoc_data python3.11) |
		tar xf - -C "$root/usr/lib"
	mkdir -p "$root/usr/lib/python3/dist-packages"
	cp -a /usr/lib/python3/dist-packages/pyverbs \
		"$root/usr/lib/python3/dist-packages/"
	for so in /usr/lib/python3.11/lib-dynload/*.so \
		  $(find /usr/lib/python3/dist-packages/pyverbs -name '*.so'); do
		copy_elf "$root" "$so"
	done
	cp -L "$MULTI"/libffi.so.8 "$root$MULTI/" 2>/dev/null || true
	# valgrind: Debian's wrapper script (adds /usr/lib/debug to the library
	# path) and the launcher; memcheck finds ld.so's symbols by build id
	# under /usr/lib/debug/.build-id.  libc's (+3.9 MB gzip'd) only name
	# libc's internal functions in stacks: left out.
	cp /usr/bin/valgrind "$root/usr/bin/valgrind"
	copy_elf "$root" /usr/bin/valgrind.bin
	mkdir -p "$root$VG_LIBEXEC"
	for f in $VG_FILES; do
		cp "$VG_LIBEXEC/$f" "$root$VG_LIBEXEC/"
	done
	cp "$VG_LIBEXEC"/amd64-*.xml "$VG_LIBEXEC"/64bit-*.xml "$root$VG_LIBEXEC/"
	f=$(debug_file "$VG_LDSO")
	mkdir -p "$root$(dirname "$f")"
	cp "$f" "$root$f"
	echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
	echo "root:x:0:" > "$root/etc/group"
	echo "127.0.0.1 localhost" > "$root/etc/hosts"
	mknod -m 600 "$root/dev/console" c 5 1
	mknod -m 666 "$root/dev/null" c 1 3
}

# module_files KVER: the .ko files of MODLIST and their dependencies
module_files()
{
	local m

	[ -f "$ktree/lib/modules/$1/modules.dep" ] || depmod -b "$ktree" "$1"
	# -C /dev/null: ndctl's modprobe.d rule hides libnvdimm's deps.
	for m in $MODLIST; do
		modprobe -C /dev/null -d "$ktree" -S "$1" --show-depends "$m" \
			2>/dev/null || true
	done | awk '/^insmod/ { print $2 }' | sort -u
}

build_modules()
{
	local root=$1 kver=$2 f rel md=lib/modules/$2

	mkroot "$root"
	mkdir -p "$root/$md"
	module_files "$kver" | while read -r f; do
		rel=${f#"$ktree"/}
		mkdir -p "$root/$(dirname "$rel")"
		cp "$f" "$root/$rel"
	done
	cp "$ktree/$md"/modules.{order,builtin,builtin.modinfo} "$root/$md/" \
		2>/dev/null || true
	depmod -b "$root" "$kver"
}

build_project()
{
	local root=$1 f b

	mkroot "$root"
	DESTDIR='' cmake --install "$build" --prefix "$root/opt/daxlease" \
		> "$root.install.log"
	# Every ELF file installed gets its libraries (libpmem2, libndctl...).
	find "$root/opt/daxlease" -type f | while read -r f; do
		head -c 4 "$f" | grep -q ELF || continue
		copy_libs "$root" "$f"
	done
	for b in ${DAXLEASE_VM_EXTRA_BINS:-}; do
		copy_elf "$root" "$b"
	done
	# a tree of its own, copied as it is: tests/vm/get-rdma-core.sh's
	# rdma-core under /opt/daxlease/rdma-core (its libraries need only
	# what the base layer's rdma-core needs: libnl and libc)
	if [ -n "${DAXLEASE_VM_EXTRA_TREE:-}" ]; then
		cp -a "$DAXLEASE_VM_EXTRA_TREE"/. "$root"/
	fi
	mkdir -p "$root/opt/daxlease/vm/suites" "$root/opt/daxlease/src"
	cp "$here/init" "$root/init"
	chmod 755 "$root/init"
	cp "$here/lib.sh" "$here/remote-lib.sh" "$here/setup-guest.sh" "$root/opt/daxlease/vm/"
	cp "$here"/suites/*.sh "$root/opt/daxlease/vm/suites/" 2>/dev/null || true
	chmod 755 "$root/opt/daxlease/vm/"*.sh "$root/opt/daxlease/vm/suites/"* \
		2>/dev/null || true
	# scripts and sources of tests/ and tools/, not build products
	(cd "$top" && git ls-files -co --exclude-standard tests tools 2>/dev/null ||
		find tests tools -type f) |
		(cd "$top" && tar cf - --files-from=- --ignore-failed-read 2>/dev/null) |
		tar xf - -C "$root/opt/daxlease/src"
}

tree_version() { cat "$ktree/version" 2>/dev/null || ls "$ktree/lib/modules" | head -1; }

if [ "$print_lsmod" = 1 ]; then
	kver=$(tree_version)
	echo "Module                  Size  Used by"
	module_files "$kver" | sed 's,.*/,,; s/\.ko\(\.[gx]z\|\.zst\)\?$//; s/-/_/g' |
		awk '{ printf "%-24s 0 0\n", $1 }'
	exit 0
fi

[ -f "$build/CMakeCache.txt" ] || { echo "$0: $build is not a CMake build dir" >&2; exit 1; }
mkdir -p "$cache"
work=$(mktemp -d "${TMPDIR:-/tmp}/daxlease-initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT

check_valgrind
self=$(sha256sum "$0" | cut -c1-16)
pkgs=$(dpkg-query -W -f '${Package} ${Version}\n' $BASE_PKGS 2>/dev/null | sort || true)
base_key=$(printf '%s\n%s\n' "$self" "$pkgs" | sha256sum | cut -c1-16)
base=$cache/base-$base_key.cpio.gz
if [ ! -s "$base" ]; then
	echo "mkinitramfs: building base layer $base_key" >&2
	build_base "$work/base"
	pack "$work/base" "$base" all
fi
layers=("$base")

if [ -n "$ktree" ]; then
	kver=$(tree_version)
	# the kernel image too: a rebuilt package has the same version
	kimg=$(sha256sum "$ktree/boot/vmlinuz-$kver" 2>/dev/null | cut -c1-16 || true)
	mod_key=$(printf '%s %s %s %s\n' "$self" "$kver" "$kimg" "$MODLIST" | sha256sum | cut -c1-16)
	mods=$cache/modules-$kver-$mod_key.cpio.gz
	if [ ! -s "$mods" ]; then
		echo "mkinitramfs: building module layer for $kver" >&2
		build_modules "$work/mods" "$kver"
		pack "$work/mods" "$mods"
	fi
	layers+=("$mods")
fi

# Old layers (other keys) beyond the newest four of each kind go.
# (No layer of a kind yet, as on a fresh machine: ls fails, nothing to do.)
for kind in base modules; do
	{ ls -t "$cache/$kind"-*.cpio.gz 2>/dev/null || true; } |
		tail -n +5 | xargs -r rm -f
done

build_project "$work/project"
pack "$work/project" "$work/project.cpio.gz"
layers+=("$work/project.cpio.gz")

mkdir -p "$(dirname "$out")"
cat "${layers[@]}" > "$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: $out ($(du -h "$out" | cut -f1); layers: ${layers[*]##*/})" >&2
