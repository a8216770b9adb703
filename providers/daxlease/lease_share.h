/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The process's layout lease on one file, shared by all its lease-pin MRs
 * of that file: one lease per (process, inode) however many MRs, so that
 * registering the N-th MR of a file does not walk N leases in open() and
 * F_SETLEASE.  The lease sits on the open file of the MR that took it:
 * the share takes that MR's descriptor over, and it is the DAX_FD of
 * every registration of the file.
 */
#ifndef DAXLEASE_LEASE_SHARE_H
#define DAXLEASE_LEASE_SHARE_H

#include <stdbool.h>
#include <sys/types.h>

struct dl_lease_share;

/*
 * A reference to the lease held on the file, or a new share that takes
 * the lease on *fdp and owns that descriptor from then on (*fdp becomes
 * -1); NULL with errno as dl_lease_take(), *fdp still the caller's.
 */
struct dl_lease_share *dl_lease_share_get(int *fdp, const char *path,
					  dev_t dev, ino_t ino);
/*
 * Drop a reference; the last one releases the lease: 0, or -1/errno and
 * the reference stays when the kernel refuses F_UNLCK (with force the
 * reference goes anyway).  The share's descriptor then goes back to a
 * caller with none (*fdp < 0: the MR whose descriptor it took), else it
 * is closed.
 */
int dl_lease_share_put(struct dl_lease_share *sh, const char *path,
		       bool force, int *fdp);
/* The open file that carries the lease. */
int dl_lease_share_fd(const struct dl_lease_share *sh);

/* fork(): a child never sees the parent's shares (fork.c) */
void dl_lease_share_fork_prepare(void);
void dl_lease_share_fork_parent(void);
void dl_lease_share_fork_child(void);

#endif /* DAXLEASE_LEASE_SHARE_H */
