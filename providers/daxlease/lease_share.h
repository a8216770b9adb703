/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The process's layout lease on one file, shared by all its lease-pin MRs
 * of that file: one lease per (process, inode) however many MRs, so that
 * registering the N-th MR of a file does not walk N leases in open() and
 * F_SETLEASE.  The lease sits on an open file of its own (a duplicate of
 * the first MR's descriptor), which is the DAX_FD of every registration.
 */
#ifndef DAXLEASE_LEASE_SHARE_H
#define DAXLEASE_LEASE_SHARE_H

#include <stdbool.h>
#include <sys/types.h>

struct dl_lease_share;

/* Take the lease or a reference to the one held; errno as dl_lease_take() */
struct dl_lease_share *dl_lease_share_get(int fd, const char *path,
					  dev_t dev, ino_t ino);
/*
 * Drop a reference; the last one releases the lease: 0, or -1/errno and
 * the reference stays when the kernel refuses F_UNLCK (with force the
 * reference goes anyway).
 */
int dl_lease_share_put(struct dl_lease_share *sh, const char *path,
		       bool force);
/* The open file that carries the lease. */
int dl_lease_share_fd(const struct dl_lease_share *sh);

/* fork(): a child never sees the parent's shares (fork.c) */
void dl_lease_share_fork_prepare(void);
void dl_lease_share_fork_parent(void);
void dl_lease_share_fork_child(void);

#endif /* DAXLEASE_LEASE_SHARE_H */
