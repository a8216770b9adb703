// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The exclusive layout lease of doc/design.md §1.1: fcntl(fd, F_SETLEASE,
 * F_LAYOUT | F_EXCLUSIVE).  It is an F_RDLCK-level lease, so several
 * processes (or MRs, each with its own open file) may hold it at once;
 * while any is held, truncate and hole punch of the file fail (§1.3).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "errmsg.h"
#include "lease.h"

pid_t dl_lease_holder(dev_t dev, ino_t inode)
{
	unsigned int maj, min;
	unsigned long long ino;
	char line[256], type[16];
	pid_t found = 0;
	FILE *f;
	int pid;

	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		/* "1: LEASE  ACTIVE    READ  1234 fd:00:1234 0 EOF" */
		if (!strstr(line, "LEASE") && !strstr(line, "DELEG"))
			continue;
		if (sscanf(line, "%*d: %*s %*s %15s %d %x:%x:%llu", type, &pid,
			   &maj, &min, &ino) != 5)
			continue;
		if (makedev(maj, min) == dev && ino == inode &&
		    pid != getpid()) {
			found = pid;
			break;
		}
	}
	fclose(f);
	return found;
}

static pid_t lease_holder(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return 0;
	return dl_lease_holder(st.st_dev, st.st_ino);
}

int dl_lease_take(int fd, const char *path)
{
	pid_t holder;

	if (fcntl(fd, F_SETLEASE, DL_LAYOUT_EXCL) == 0)
		return 0;

	switch (errno) {
	case EAGAIN:
	case EBUSY:
		holder = lease_holder(fd);
		if (holder)
			return dl_err(EAGAIN,
				      "cannot take the layout lease on %s: process %d holds a conflicting lease; wait for it to release it",
				      path, (int)holder);
		return dl_err(EAGAIN,
			      "cannot take the layout lease on %s: a conflicting lease or open by another process exists; close it and retry",
			      path);
	case EACCES:
	case EPERM:
		return dl_err(EACCES,
			      "cannot take the layout lease on %s: not the file's owner and no CAP_LEASE; chown the file or grant CAP_LEASE",
			      path);
	case EINVAL:
		return dl_err(EINVAL,
			      "kernel refuses F_SETLEASE(F_LAYOUT|F_EXCLUSIVE) on %s: no layout-lease support (boot a kernel built with the daxlease series: " DL_KERNEL_REMEDY ") or leases disabled (sysctl fs.leases-enable)",
			      path);
	case EOPNOTSUPP:
		return dl_err(EOPNOTSUPP,
			      "the file system of %s does not support long-term pins of its blocks: the exclusive layout lease is granted only on DAX files of ext4 and xfs; see daxlease(7)",
			      path);
	default:
		return dl_err(errno, "F_SETLEASE(F_LAYOUT|F_EXCLUSIVE) on %s: %s",
			      path, strerror(errno));
	}
}

int dl_lease_release(int fd, const char *path)
{
	/* F_UNLCK without a lease is EAGAIN: nothing to release */
	if (fcntl(fd, F_SETLEASE, F_UNLCK) == 0 || errno == EAGAIN)
		return 0;
	return dl_err(errno, "cannot release the layout lease on %s: %s", path,
		      strerror(errno));
}

bool dl_lease_held(int fd)
{
	int l = fcntl(fd, F_GETLEASE);

	return l >= 0 && (l & DL_LAYOUT_EXCL) == DL_LAYOUT_EXCL;
}
