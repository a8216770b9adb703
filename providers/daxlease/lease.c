// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The exclusive layout lease of doc/design.md §1.1: fcntl(fd, F_SETLEASE,
 * F_LAYOUT | F_EXCLUSIVE).  It is an F_RDLCK-level lease, so several
 * processes (or MRs, each with its own open file) may hold it at once;
 * while any is held, truncate and hole punch of the file fail (§1.3).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/daxlease_fcntl.h>

#include "daxlease.h"

#define DL_LAYOUT_EXCL (F_LAYOUT | F_EXCLUSIVE)

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

struct dl_lease_share {
	struct dl_lease_share *next;
	dev_t dev;
	ino_t ino;
	int fd;			/* carries the lease; O_CLOEXEC */
	unsigned int refs;
};

/*
 * This process's shares, hashed by inode: with one share per file, a
 * process with MRs on a thousand files must not walk them all for the
 * next one.  A child empties its copy (dl_lease_atfork_child).
 */
#define DL_SHARE_BUCKETS 256

static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dl_lease_share *shares[DL_SHARE_BUCKETS];

static unsigned int share_bucket(dev_t dev, ino_t ino)
{
	uint64_t v = (uint64_t)ino ^ ((uint64_t)dev << 7);

	return (unsigned int)((v ^ (v >> 8) ^ (v >> 16)) % DL_SHARE_BUCKETS);
}

struct dl_lease_share *dl_lease_get(int fd, const char *path, dev_t dev,
				    ino_t ino)
{
	struct dl_lease_share **head = &shares[share_bucket(dev, ino)];
	struct dl_lease_share *sh;
	int err;

	pthread_mutex_lock(&share_lock);
	for (sh = *head; sh; sh = sh->next)
		if (sh->dev == dev && sh->ino == ino) {
			sh->refs++;
			goto out;
		}

	sh = calloc(1, sizeof(*sh));
	if (!sh) {
		dl_err(ENOMEM, "out of memory");
		goto out;
	}
	sh->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (sh->fd < 0) {
		err = errno;
		free(sh);
		sh = NULL;
		dl_err(err, "cannot duplicate the descriptor of %s: %s", path,
		       strerror(err));
		goto out;
	}
	if (dl_lease_take(sh->fd, path)) {
		struct dl_err_save s;

		dl_err_save(&s);
		close(sh->fd);
		free(sh);
		sh = NULL;
		dl_err_restore(&s);
		goto out;
	}
	sh->dev = dev;
	sh->ino = ino;
	sh->refs = 1;
	sh->next = *head;
	*head = sh;
out:
	pthread_mutex_unlock(&share_lock);
	return sh;
}

int dl_lease_put(struct dl_lease_share *sh, const char *path, bool force)
{
	struct dl_lease_share **pp;
	int ret = 0;

	pthread_mutex_lock(&share_lock);
	if (sh->refs > 1) {
		sh->refs--;
		goto out;
	}
	ret = dl_lease_release(sh->fd, path);
	if (ret && !force)
		goto out;
	for (pp = &shares[share_bucket(sh->dev, sh->ino)]; *pp;
	     pp = &(*pp)->next)
		if (*pp == sh) {
			*pp = sh->next;
			break;
		}
	close(sh->fd);
	free(sh);
out:
	pthread_mutex_unlock(&share_lock);
	return ret;
}

int dl_lease_share_fd(const struct dl_lease_share *sh)
{
	return sh->fd;
}

void dl_lease_atfork_prepare(void)
{
	pthread_mutex_lock(&share_lock);
}

void dl_lease_atfork_parent(void)
{
	pthread_mutex_unlock(&share_lock);
}

/*
 * The child's copies of the lease descriptors would keep the parent's
 * leases alive after the parent dies: close them.  The parent's MRs in
 * the child never touch their share again (they are not the child's).
 */
void dl_lease_atfork_child(void)
{
	struct dl_lease_share *sh, *next;
	unsigned int b;

	for (b = 0; b < DL_SHARE_BUCKETS; b++) {
		for (sh = shares[b]; sh; sh = next) {
			next = sh->next;
			close(sh->fd);
			free(sh);
		}
		shares[b] = NULL;
	}
	pthread_mutex_init(&share_lock, NULL);
}

bool dl_lease_held(int fd)
{
	int l = fcntl(fd, F_GETLEASE);

	return l >= 0 && (l & DL_LAYOUT_EXCL) == DL_LAYOUT_EXCL;
}

static int probe_file(void)
{
	char tmpl[] = "/tmp/daxlease-probe-XXXXXX";
	int fd;

	fd = memfd_create("daxlease-lease-probe", MFD_CLOEXEC);
	if (fd >= 0)
		return fd;
	fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd >= 0)
		unlink(tmpl);
	return fd;
}

int dl_lease_probe_now(int *err)
{
	int fd, ret;

	*err = 0;
	fd = probe_file();
	if (fd < 0) {
		*err = errno;
		return 0;
	}
	/*
	 * A file we created and own: EINVAL can only mean the kernel does
	 * not know the lease type (stock 6.1: F_LAYOUT is absent from
	 * fcntl's lease types) or leases are disabled.  The daxlease kernel
	 * grants the exclusive lease only on DAX files of file systems that
	 * honour long-term pins, and answers EOPNOTSUPP for this one: the
	 * type is known.
	 */
	if (fcntl(fd, F_SETLEASE, DL_LAYOUT_EXCL) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		ret = 1;
	} else {
		*err = errno;
		/* EAGAIN: the type was understood, a conflict got in */
		ret = errno == EAGAIN || errno == EOPNOTSUPP;
	}
	close(fd);
	return ret;
}

static pthread_once_t lease_once = PTHREAD_ONCE_INIT;
static bool lease_ok;
static int lease_errno;

static void lease_probe_once(void)
{
	int err;

	lease_ok = dl_lease_probe_now(&err) == 1;
	lease_errno = err;
}

bool dl_lease_supported(int *err)
{
	pthread_once(&lease_once, lease_probe_once);
	if (err)
		*err = lease_errno;
	return lease_ok;
}
