#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Run guest suites in the daxlease test VM: build and install the project
# (prefix /opt/daxlease), build the initramfs, boot QEMU TCG with four
# emulated NVDIMMs (ext4-dax, xfs-dax, devdax, and a spare fsdax namespace
# the attacks suite formats itself), a 512 MiB virtio disk and rxe, and
# decide from the JSON-lines results the guest writes to its second serial port
# (OUT/results.jsonl; partial results survive a hang).  A guest that does
# not power off within --timeout is killed and the run fails.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 --kernel stock|BZIMAGE|deb:PACKAGE --suites A[,B...] [options]
  --kernel stock     Debian's linux-image of --line with modules
                     (tests/vm/get-stock-kernel.sh)
  --line 6.1|6.12    kernel line of --kernel stock (default 6.1):
                     linux-image-6.1.0-N-amd64 or 6.12.N+deb12-amd64
  --kernel BZIMAGE   a kernel with everything built in (the patched kernel
                     of kernel-headers/build-kernel.sh); DAXLEASE_KERNEL=patched
  --kernel deb:PACKAGE  a patched linux-image .deb with modules
                     (kernel-headers/build-deb.sh with Debian's configuration),
                     booted as the stock kernel is; DAXLEASE_KERNEL=patched
  --suites A,B       tests/vm/suites/A.sh, B.sh, run in this order
  --build-dir DIR    CMake build dir (default build/vm-build in the tree)
  --out DIR          console.log, results.jsonl, initramfs (default build/vm-out)
  --timeout SEC      whole boot, killed after it (default 1800)
  --suite-timeout S  per suite inside the guest (default: --timeout less 60)
  --append "ARGS"    extra kernel command line (e.g. daxlease.shell=1;
                     daxlease.attacks_only=i3,i10_pmd runs those attack
                     groups only: dl-attacks-test --only)
  --no-build         use --build-dir as it is
  --build-only       build and install into --build-dir, boot nothing
  --smp N            guest CPUs (default 2)
  --link LPORT:RPORT:MAC
                     a virtio NIC whose frames travel as UDP datagrams
                     between 127.0.0.1:LPORT (this guest) and
                     127.0.0.1:RPORT (the peer guest's QEMU), with MAC
                     address MAC (tests/vm/run-pair.sh); without it the
                     guest has no NIC
  --keep             keep the NVDIMM images and the initramfs in OUT
  --nvdimm-dir DIR   the NVDIMM and disk images live in DIR and outlive
                     the boot: if they all exist they are used as they are
                     (daxlease.nvdimm=reuse: the guest finds its namespaces
                     and file systems again, replays and checks them),
                     else they are made; never removed (tests/vm/run-crash.sh)
Environment: DAXLEASE_VM_CMAKE_ARGS (extra cmake -D options, e.g.
-DCMAKE_BUILD_TYPE=RelWithDebInfo), DAXLEASE_STOCK_CACHE, DAXLEASE_VM_CACHE,
DAXLEASE_VM_NVDIMM_DIR (where the NVDIMM images live during the boot;
default a private directory in /dev/shm when it has room, else OUT).
Exit status 0 only if every requested suite started, ended, ran tests and
had no failure (see tests/vm/evaluate.py).
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kernel=
line=6.1
suites=
build=$top/build/vm-build
out=$top/build/vm-out
tmo=1800
suite_tmo=
append=
do_build=1
keep=0
smp=2
link=
nvdir_keep=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--line) line=$2; shift 2 ;;
	--suites) suites=$2; shift 2 ;;
	--build-dir) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--timeout) tmo=$2; shift 2 ;;
	--suite-timeout) suite_tmo=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--no-build) do_build=0; shift ;;
	--build-only) do_build=2; shift ;;
	--keep) keep=1; shift ;;
	--smp) smp=$2; shift 2 ;;
	--link) link=$2; shift 2 ;;
	--nvdimm-dir) nvdir_keep=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "$0: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
done
[ -n "$kernel" ] && [ -n "$suites" ] || [ "$do_build" = 2 ] || { usage >&2; exit 2; }
[[ "$tmo" =~ ^[0-9]+$ ]] || { echo "$0: --timeout needs seconds" >&2; exit 2; }
[[ "$smp" =~ ^[1-9][0-9]*$ ]] || { echo "$0: --smp needs a CPU count" >&2; exit 2; }
net_args=(-nic none)
if [ -n "$link" ]; then
	[[ "$link" =~ ^([0-9]+):([0-9]+):([0-9a-f]{2}(:[0-9a-f]{2}){5})$ ]] ||
		{ echo "$0: --link needs LPORT:RPORT:MAC, e.g. 20001:20002:52:54:00:da:00:01" >&2; exit 2; }
	# shellcheck disable=SC2054 # commas are qemu option syntax
	net_args=(-netdev "dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=${BASH_REMATCH[1]},remote.type=inet,remote.host=127.0.0.1,remote.port=${BASH_REMATCH[2]}"
		  -device "virtio-net-pci,netdev=n0,mac=${BASH_REMATCH[3]}")
fi
[ -n "$suite_tmo" ] || suite_tmo=$((tmo > 120 ? tmo - 60 : tmo))
for s in ${suites//,/ }; do
	[ -f "$here/suites/$s.sh" ] || echo "$0: warning: no tests/vm/suites/$s.sh (the run will fail)" >&2
done

t_start=$SECONDS
phase() { echo "run.sh: [$((SECONDS - t_start))s] $*"; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/results.jsonl" "$out/console.log"

if [ "$do_build" != 0 ]; then
	phase "building $top in $build"
	# shellcheck disable=SC2086
	cmake -S "$top" -B "$build" -DENABLE_WERROR=ON \
		-DCMAKE_INSTALL_PREFIX=/opt/daxlease \
		-DCMAKE_INSTALL_RPATH=/opt/daxlease/lib \
		${DAXLEASE_VM_CMAKE_ARGS:-} > "$out/cmake.log"
	timeout 1800 cmake --build "$build" -j2 > "$out/build.log" 2>&1 || {
		tail -n 30 "$out/build.log"
		echo "run.sh: build failed (log: $out/build.log)" >&2
		exit 1
	}
	[ "$do_build" = 2 ] && { phase "built"; exit 0; }
fi

if [ "$kernel" = stock ]; then
	phase "stock kernel"
	ktree=$(timeout 900 bash "$here/get-stock-kernel.sh" --line "$line")
	kimage=$ktree/boot/vmlinuz-$(cat "$ktree/version")
	kind=stock
	initrd_args=(--kernel-tree "$ktree")
elif [ "${kernel#deb:}" != "$kernel" ]; then
	deb=${kernel#deb:}
	[ -f "$deb" ] || { echo "$0: no package $deb" >&2; exit 1; }
	phase "unpacking ${deb##*/}"
	ktree=$out/kernel-tree
	rm -rf "$ktree"
	mkdir -p "$ktree"
	dpkg-deb -x "$deb" "$ktree"
	kver=$(ls "$ktree/lib/modules")
	[ -n "$kver" ] && [ -f "$ktree/boot/vmlinuz-$kver" ] ||
		{ echo "$0: $deb holds no boot/vmlinuz and modules of one version" >&2; exit 1; }
	echo "$kver" > "$ktree/version"
	kimage=$ktree/boot/vmlinuz-$kver
	kind=patched
	initrd_args=(--kernel-tree "$ktree")
else
	[ -f "$kernel" ] || { echo "$0: no kernel image $kernel" >&2; exit 1; }
	kimage=$(cd "$(dirname "$kernel")" && pwd)/$(basename "$kernel")
	kind=patched
	initrd_args=()
fi

phase "initramfs"
timeout 900 bash "$here/mkinitramfs.sh" --build-dir "$build" \
	--out "$out/initramfs.img" "${initrd_args[@]}"

# The NVDIMMs are shared file mappings of their images.  On a disk file
# system the host writes the dirty pages back while the guest runs (the
# benchmark's 390 MiB file, ext4's journal), disk I/O that a test run
# does not need; tmpfs has no writeback.
nv_bytes=$((4 * 512 * 1024 * 1024))
nvdir=${nvdir_keep:-${DAXLEASE_VM_NVDIMM_DIR:-}}
reuse=0
if [ -n "$nvdir_keep" ]; then
	mkdir -p "$nvdir_keep"
	reuse=1
	for i in 0 1 2 3; do
		[ -s "$nvdir_keep/nvdimm$i.img" ] || reuse=0
	done
	[ -s "$nvdir_keep/disk.img" ] || reuse=0
fi
if [ -z "$nvdir" ] && [ -d /dev/shm ] && [ -w /dev/shm ] &&
   [ "$(df -P -B1 /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -gt $((nv_bytes * 2)) ] 2>/dev/null; then
	nvdir=$(mktemp -d /dev/shm/daxlease-nvdimm.XXXXXX)
	trap 'rm -rf "$nvdir"' EXIT
fi
: "${nvdir:=$out}"
mkdir -p "$nvdir"
phase "NVDIMM images in $nvdir ($(df -P "$nvdir" | awk 'NR == 2 { print $1 }'))"
nv_args=()
# pmem0 ext4, pmem1 xfs, dax2.0, pmem3 spare (setup-guest.sh)
for i in 0 1 2 3; do
	img=$nvdir/nvdimm$i.img
	if [ "$reuse" = 0 ]; then
		rm -f "$img"
		truncate -s 512M "$img"
	fi
	nv_args+=(-object "memory-backend-file,id=mem$i,share=on,mem-path=$img,size=512M"
		  -device "nvdimm,id=nv$i,memdev=mem$i")
done
# A disk (sparse): a block device that is not DAX and completes I/O in
# its interrupt (lockdep must see page cache writeback there), and the
# data device of the attacks suite's xfs with a realtime NVDIMM.
disk=$nvdir/disk.img
if [ "$reuse" = 0 ]; then
	rm -f "$disk"
	truncate -s 512M "$disk"
fi
# shellcheck disable=SC2054 # commas are qemu option syntax
nv_args+=(-drive "file=$disk,if=none,id=disk0,format=raw,cache=unsafe"
	  -device virtio-blk-pci,drive=disk0)

cmdline="console=ttyS0 panic=-1 loglevel=4 daxlease.kernel=$kind"
cmdline+=" daxlease.suites=$suites daxlease.suite_timeout=$suite_tmo $append"
[ "$reuse" = 1 ] && cmdline+=" daxlease.nvdimm=reuse"
# shellcheck disable=SC2054 # commas are qemu option syntax
qemu=(qemu-system-x86_64 -machine pc,nvdimm=on,accel=tcg -cpu max -smp "$smp"
      -m 2G,slots=4,maxmem=8G -nographic -no-reboot "${net_args[@]}"
      -serial stdio -serial "file:$out/results.jsonl" -monitor none
      -kernel "$kimage" -initrd "$out/initramfs.img" -append "$cmdline"
      "${nv_args[@]}")
phase "booting $kimage ($kind), suites $suites, timeout ${tmo}s"
echo "${qemu[*]}" > "$out/qemu.cmd"
t_boot=$SECONDS
set +e +o pipefail
timeout -k 10 "$tmo" "${qemu[@]}" < /dev/null 2>&1 | tee "$out/console.log"
rc=${PIPESTATUS[0]}
set -e -o pipefail
boot_secs=$((SECONDS - t_boot))
if [ -n "$nvdir_keep" ]; then
	rm -f "$out/initramfs.img"
elif [ "$keep" = 0 ]; then
	rm -f "$nvdir"/nvdimm?.img "$nvdir/disk.img" "$out/initramfs.img"
	[ "${kernel#deb:}" = "$kernel" ] || rm -rf "$out/kernel-tree"
elif [ "$nvdir" != "$out" ]; then
	mv "$nvdir"/nvdimm?.img "$nvdir/disk.img" "$out/"
fi
phase "guest finished after ${boot_secs}s, qemu exit $rc"

py=/usr/bin/python3
[ -x "$py" ] || py=python3
status=0
"$py" "$here/evaluate.py" "$out/results.jsonl" --suites "$suites" || status=1
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "run.sh: FAILED: the guest was killed after ${tmo}s (hang)"
	status=1
elif [ "$rc" != 0 ]; then
	echo "run.sh: FAILED: qemu exited $rc"
	status=1
fi
phase "done: $([ $status = 0 ] && echo PASS || echo FAIL), wall $((SECONDS - t_start))s (boot+suites ${boot_secs}s); results $out/results.jsonl, console $out/console.log"
exit $status
