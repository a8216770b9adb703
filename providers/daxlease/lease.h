/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The exclusive layout lease on one open file (doc/design.md §1.1).
 */
#ifndef DAXLEASE_LEASE_H
#define DAXLEASE_LEASE_H

#include <stdbool.h>
#include <sys/types.h>

#include <linux/daxlease_fcntl.h>

#define DL_LAYOUT_EXCL (F_LAYOUT | F_EXCLUSIVE)

/*
 * Take the lease on fd.  errno:
 *   EAGAIN      another open file or lease conflicts (message names the
 *               pid from /proc/locks when it can)
 *   EACCES      not the file's owner and no CAP_LEASE (EPERM mapped to
 *               EACCES)
 *   EINVAL      kernel without F_LAYOUT (stock), leases disabled
 *               (fs.leases-enable = 0) or not a regular file
 *   EOPNOTSUPP  a file system that does not grant it
 */
int dl_lease_take(int fd, const char *path);
/* Release it; 0 also when none is held. */
int dl_lease_release(int fd, const char *path);
/* F_GETLEASE == F_LAYOUT | F_EXCLUSIVE on fd */
bool dl_lease_held(int fd);
/* pid of another process holding a lease on the file (/proc/locks), or 0 */
pid_t dl_lease_holder(dev_t dev, ino_t ino);

#endif /* DAXLEASE_LEASE_H */
