/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Layout lease types for F_SETLEASE / F_GETLEASE added by the daxlease
 * kernel series (kernel-headers/patches/linux-6.1, linux-6.12).
 *
 * This file is the single source of these numbers: the kernel series
 * installs it verbatim as include/uapi/linux/daxlease_fcntl.h and the
 * user-space library includes it from here.
 */
#ifndef _UAPI_LINUX_DAXLEASE_FCNTL_H
#define _UAPI_LINUX_DAXLEASE_FCNTL_H

/*
 * F_LAYOUT: a layout lease, taken at F_RDLCK level, that allows long-term
 * pins (FOLL_LONGTERM, e.g. RDMA memory registration) of FS-DAX pages.
 */
#ifndef F_LAYOUT
#define F_LAYOUT	16
#endif

/*
 * F_EXCLUSIVE: together with F_LAYOUT, the lease cannot be broken; layout
 * changes (truncate, hole punch, ...) fail with ETXTBSY, or EDEADLOCK for
 * the lease holder itself.  F_GETLEASE reports F_LAYOUT | F_EXCLUSIVE.
 */
#ifndef F_EXCLUSIVE
#define F_EXCLUSIVE	32
#endif

#endif /* _UAPI_LINUX_DAXLEASE_FCNTL_H */
