#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest setup of the daxlease test VM, run by /init before the suites:
# modules (stock kernel), four NVDIMM namespaces (pmem0 fsdax + ext4 -o dax
# on /mnt/ext4, pmem1 fsdax + xfs dax=always on /mnt/xfs, the third devdax,
# the fourth fsdax and not mounted: the spare the attacks suite formats),
# rxe0 over a dummy netdev, the RoCE v2 GID index; writes the suite
# environment to /run/daxlease.env.  Each step is a result of suite
# "setup"; a failed step fails the run but the suites still run.
# No -e/-u: a failing step is recorded and the next one still runs.
set -o pipefail

usage()
{
	echo "usage: $0   (inside the test VM; see tests/vm/run.sh)"
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

. /opt/daxlease/vm/lib.sh
env_file=/run/daxlease.env
ext4_mnt=/mnt/ext4
xfs_mnt=/mnt/xfs
ext4_dev=
xfs_dev=
devdax=
spare_dev=
gid_index=
log=/run/setup.log

# step NAME CMD...: run CMD, its output to the console; fail records it.
# A step that bash aborts before it records a result is caught at the end.
started=()
recorded=()
step()
{
	local name=$1 out rc

	started+=("$name")
	shift
	# not in a subshell: steps set the variables of the environment file
	"$@" > "$log" 2>&1
	rc=$?
	out=$(cat "$log")
	[ -n "$out" ] && printf '%s\n' "$out" | sed "s/^/  setup $name| /"
	recorded+=("$name")
	if [ $rc = 0 ]; then
		result "$name" pass "$*"
	else
		result "$name" fail "$* exited $rc: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
	fi
	return $rc
}

load_modules()
{
	local m failed=

	[ -d "/lib/modules/$(uname -r)" ] || {
		echo "no /lib/modules/$(uname -r): built-in kernel"
		return 0
	}
	# crc32_generic before rdma_rxe, or rxe fails "failed to init crc32"
	for m in crc32_generic crc32c_generic libnvdimm nfit nd_pmem dax_pmem \
		 device_dax ext4 xfs ib_core ib_uverbs rdma_rxe rdma_ucm dummy \
		 loop virtio_pci virtio_net; do
		modprobe "$m" || failed="$failed $m"
	done
	[ -z "$failed" ] || { echo "modprobe failed:$failed"; return 1; }
}

# The NVDIMMs have no label area: one namespace per region, reconfigured
# in place.  Prints the block or character device name.
make_namespace() # NAMESPACE MODE
{
	local json

	json=$(ndctl create-namespace -f -e "$1" -m "$2" --map=mem) || return 1
	echo "$json" | sed -n 's/.*"\(blockdev\|chardev\)":"\([^"]*\)".*/\2/p' |
		head -1
}

# daxlease.nvdimm=reuse (tests/vm/run.sh --nvdimm-dir): the images hold
# what an earlier boot left, info blocks included: the kernel brings the
# namespaces up as they were (pmem0, pmem1, dax2.0, pmem3) and nothing
# is reconfigured or formatted.
reuse_nvdimm()
{
	local _

	for _ in $(seq 100); do
		[ -b /dev/pmem0 ] && [ -b /dev/pmem1 ] && [ -c /dev/dax2.0 ] &&
			[ -b /dev/pmem3 ] && break
		sleep 0.1
	done
	ext4_dev=/dev/pmem0
	xfs_dev=/dev/pmem1
	devdax=/dev/dax2.0
	spare_dev=/dev/pmem3
	echo "reused: ext4 on $ext4_dev, xfs on $xfs_dev, devdax $devdax, spare $spare_dev"
	ndctl list -N | grep -E '"(dev|mode|blockdev|chardev)"' | tr -d ' \n'; echo
	[ -b "$ext4_dev" ] && [ -b "$xfs_dev" ] && [ -c "$devdax" ] &&
		[ -b "$spare_dev" ]
}

# remount_checked DEV MNT TYPE DAXOPT CHECK...: mount (the journal or log
# replays), unmount, check read-only (must be clean), mount with DAX
remount_checked()
{
	local dev=$1 mnt=$2 type=$3 opt=$4

	shift 4
	if ! { mkdir -p "$mnt" && mount -t "$type" "$dev" "$mnt" &&
	       umount "$mnt"; }; then
		echo "mounting $dev (replay) failed"
		return 1
	fi
	if ! "$@" > "/run/fsck.$type" 2>&1; then
		echo "$* found problems:"
		tail -n 20 "/run/fsck.$type"
		return 1
	fi
	echo "$type on $dev: replayed, $* clean"
	mount -t "$type" -o "$opt" "$dev" "$mnt" &&
	grep " $mnt $type .*dax" /proc/mounts
}

setup_nvdimm()
{
	local n _ ns

	[ "${DAXLEASE_NVDIMM:-}" = reuse ] && { reuse_nvdimm; return; }

	for _ in $(seq 50); do
		n=$(ls -d /sys/bus/nd/devices/namespace*.0 2>/dev/null | wc -l)
		[ "$n" -ge 4 ] && break
		sleep 0.1
	done
	# shellcheck disable=SC2207 # namespace names have no blanks
	ns=($(ls -d /sys/bus/nd/devices/namespace*.0 2>/dev/null | sort -V |
	      sed 's,.*/,,'))
	if [ "${#ns[@]}" -lt 3 ]; then
		echo "found ${#ns[@]} NVDIMM namespaces, need 3: ${ns[*]}"
		ndctl list -RN
		return 1
	fi
	ext4_dev=/dev/$(make_namespace "${ns[0]}" fsdax) || return 1
	xfs_dev=/dev/$(make_namespace "${ns[1]}" fsdax) || return 1
	devdax=/dev/$(make_namespace "${ns[2]}" devdax) || return 1
	for _ in $(seq 50); do
		[ -b "$ext4_dev" ] && [ -b "$xfs_dev" ] && [ -c "$devdax" ] && break
		sleep 0.1
	done
	echo "ext4 on $ext4_dev, xfs on $xfs_dev, devdax $devdax"
	[ -b "$ext4_dev" ] && [ -b "$xfs_dev" ] && [ -c "$devdax" ]
}

# The fourth namespace: fsdax, no file system (the attacks suite makes
# ext2, xfs with reflink and ext4 on it in turn).  After the first three,
# so that they keep their names (pmem0, pmem1, dax2.0).
setup_spare()
{
	local ns _

	[ "${DAXLEASE_NVDIMM:-}" = reuse ] && { [ -b "$spare_dev" ]; return; }
	ns=$(ls -d /sys/bus/nd/devices/namespace*.0 2>/dev/null | sort -V |
	     sed -n '4s,.*/,,p')
	[ -n "$ns" ] || { echo "no fourth NVDIMM namespace"; return 1; }
	spare_dev=/dev/$(make_namespace "$ns" fsdax) || return 1
	for _ in $(seq 50); do
		[ -b "$spare_dev" ] && break
		sleep 0.1
	done
	echo "spare fsdax namespace $ns: $spare_dev (not mounted)"
	[ -b "$spare_dev" ]
}

# ext4 as made for pmem (PMDK's and the kernel's DAX advice): a 2 MiB
# stripe makes mballoc hand out 2 MiB-aligned extents for large
# allocations, so DAX maps them with PMDs; with the default layout every
# 4 KiB page of a file is its own DAX fault (bench/README: registration
# of 64 MiB 13x slower).
mount_ext4()
{
	[ "${DAXLEASE_NVDIMM:-}" = reuse ] &&
		{ remount_checked "$ext4_dev" "$ext4_mnt" ext4 dax e2fsck -fn "$ext4_dev"; return; }
	mkfs.ext4 -q -F -b 4096 -E stride=512,stripe_width=512 "$ext4_dev" &&
	mkdir -p "$ext4_mnt" &&
	mount -t ext4 -o dax "$ext4_dev" "$ext4_mnt" &&
	grep " $ext4_mnt ext4 .*dax" /proc/mounts
}

mount_xfs()
{
	[ "${DAXLEASE_NVDIMM:-}" = reuse ] &&
		{ remount_checked "$xfs_dev" "$xfs_mnt" xfs dax=always xfs_repair -n "$xfs_dev"; return; }
	mkfs.xfs -q -f -m reflink=0 "$xfs_dev" &&
	mkdir -p "$xfs_mnt" &&
	mount -t xfs -o dax=always "$xfs_dev" "$xfs_mnt" &&
	grep " $xfs_mnt xfs .*dax" /proc/mounts
}

# The NIC of a two-guest run: the first interface with a device behind it.
nic_name()
{
	local d

	for d in /sys/class/net/*; do
		[ -e "$d/device" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

# rxe0 over a dummy netdev (one guest, loopback), or over the NIC with
# daxlease.ip (two guests, tests/vm/run-pair.sh).
setup_rxe()
{
	local nic _

	if [ -n "${DAXLEASE_IP:-}" ]; then
		for _ in $(seq 50); do
			nic=$(nic_name) && break
			sleep 0.1
		done
		[ -n "$nic" ] || { echo "daxlease.ip=$DAXLEASE_IP but no NIC"; ls /sys/class/net; return 1; }
		ip link set "$nic" up &&
		ip addr add "$DAXLEASE_IP" dev "$nic" &&
		rdma link add rxe0 type rxe netdev "$nic" &&
		rdma link show &&
		ip -br addr show "$nic"
		return
	fi
	ip link add dum0 type dummy &&
	ip link set dum0 up &&
	rdma link add rxe0 type rxe netdev dum0 &&
	rdma link show
}

# The first RoCE v2 GID with an address (the IPv6 link-local one of dum0
# appears once the address is configured); with daxlease.ip the one of
# that IPv4 address, which the peer can reach.
find_gid()
{
	local p=/sys/class/infiniband/rxe0/ports/1 t g _ want=

	[ -n "${DAXLEASE_IP:-}" ] && want=0000:0000:0000:0000:0000:ffff:
	for _ in $(seq 100); do
		for t in "$p"/gid_attrs/types/*; do
			[ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
			g=$(cat "$p/gids/${t##*/}" 2>/dev/null)
			[ -n "$g" ] && [ "$g" != "0000:0000:0000:0000:0000:0000:0000:0000" ] || continue
			[ -z "$want" ] || [ "${g#"$want"}" != "$g" ] || continue
			gid_index=${t##*/}
			echo "RoCE v2 GID index $gid_index: $g"
			return 0
		done
		sleep 0.1
	done
	echo "no RoCE v2 GID on rxe0"
	ls -l "$p/gid_attrs/types/" 2>&1 | head
	return 1
}

suite_begin setup
step modules load_modules
step nvdimm setup_nvdimm && {
	step ext4-dax mount_ext4
	step xfs-dax mount_xfs
	step spare setup_spare
}
step rxe setup_rxe && step roce-gid find_gid

for s in "${started[@]}"; do
	case " ${recorded[*]} " in
	*" $s "*) ;;
	*) result "$s" fail "step aborted without a result (shell error; see the console)" ;;
	esac
done

cat > "$env_file" <<ENV
export DAXLEASE_RESULTS='$DAXLEASE_RESULTS'
export DAXLEASE_KERNEL='${DAXLEASE_KERNEL:-stock}'
export DAXLEASE_EXT4='$ext4_mnt'
export DAXLEASE_XFS='$xfs_mnt'
export DAXLEASE_EXT4_DEV='$ext4_dev'
export DAXLEASE_XFS_DEV='$xfs_dev'
export DAXLEASE_DEVDAX='$devdax'
export DAXLEASE_SPARE_DEV='$spare_dev'
export DAXLEASE_RDMA_DEV=rxe0
export DAXLEASE_GID_INDEX='${gid_index:-0}'
export DAXLEASE_ROLE='${DAXLEASE_ROLE:-}'
export DAXLEASE_IP='${DAXLEASE_IP:-}'
export DAXLEASE_PEER='${DAXLEASE_PEER:-}'
export DAXLEASE_NVDIMM='${DAXLEASE_NVDIMM:-}'
export DAXLEASE_CRASH='${DAXLEASE_CRASH:-}'
export DAXLEASE_PERSIST='${DAXLEASE_PERSIST:-}'
export DAXLEASE_PREFIX=/opt/daxlease
export DAXLEASE_SRC=/opt/daxlease/src
export PATH='/opt/daxlease/bin:/opt/daxlease/libexec/daxlease/tests:/usr/sbin:/usr/bin:/sbin:/bin'
export LD_LIBRARY_PATH='/opt/daxlease/lib:/opt/daxlease/lib/x86_64-linux-gnu'
ENV
sed 's/^/  /' "$env_file"
suite_end
