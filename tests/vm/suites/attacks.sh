#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "attacks": attacks on the soundness rules of the layout-lease
# series (doc/design.md §2) on ext4-dax and xfs-dax, with raw syscalls and
# raw verbs (tests/guest/kernel/attacks*.c): other long-term pinners
# (AF_XDP as an unprivileged user, io_uring), REG_MR racing
# mmap(MAP_FIXED), recycled pids, file systems that must not grant the
# lease (tmpfs, ext2 -o dax, non-DAX ext4), extent swaps, moves, reflink,
# dedupe and copy-on-write over pinned files, layout changes racing pins,
# 10,000-VMA registrations, shifts and punches beside pinned or spliced
# pages (the range a change drops), swapon, the devdax namespace unbound
# under a pin (and bound again), thousands of MRs on one file (a check
# must not walk them all), the dereg of an MR still referenced (the test
# kernel's hook holds it: the dereg must fail and keep the pins, also when
# the process exits).
# Formats the spare NVDIMM namespace
# (DAXLEASE_SPARE_DEV, not mounted by setup) itself, checks every file
# system after its refused layout changes (e2fsck -fn, xfs_repair -n) and
# ends with a scan of the kernel log since boot.
#
# Usage and environment: program-suite.sh --help; also DAXLEASE_SPARE_DEV,
# DAXLEASE_DISK_DEV (default /dev/vd?) and DAXLEASE_ATTACKS_ONLY (--only).
set -euo pipefail

only=()
[ -z "${DAXLEASE_ATTACKS_ONLY:-}" ] || only=(--only "$DAXLEASE_ATTACKS_ONLY")
exec bash "$(dirname "$0")/program-suite.sh" attacks dl-attacks-test 1200 \
	"${only[@]}" "$@"
