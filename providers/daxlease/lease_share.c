// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The per-inode shared layout lease of this process (lease_share.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "lease.h"
#include "lease_share.h"

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
 * next one.  A child empties its copy (dl_lease_share_fork_child).
 */
#define DL_SHARE_BUCKETS 256

static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dl_lease_share *shares[DL_SHARE_BUCKETS];

static unsigned int share_bucket(dev_t dev, ino_t ino)
{
	uint64_t v = (uint64_t)ino ^ ((uint64_t)dev << 7);

	return (unsigned int)((v ^ (v >> 8) ^ (v >> 16)) % DL_SHARE_BUCKETS);
}

struct dl_lease_share *dl_lease_share_get(int *fdp, const char *path,
					  dev_t dev, ino_t ino)
{
	struct dl_lease_share **head = &shares[share_bucket(dev, ino)];
	struct dl_lease_share *sh;

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
	if (dl_lease_take(*fdp, path)) {
		struct dl_err_save s;

		dl_err_save(&s);
		free(sh);
		sh = NULL;
		dl_err_restore(&s);
		goto out;
	}
	sh->fd = *fdp;
	*fdp = -1;
	sh->dev = dev;
	sh->ino = ino;
	sh->refs = 1;
	sh->next = *head;
	*head = sh;
out:
	pthread_mutex_unlock(&share_lock);
	return sh;
}

int dl_lease_share_put(struct dl_lease_share *sh, const char *path,
		       bool force, int *fdp)
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
	if (*fdp < 0)
		*fdp = sh->fd;
	else
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

void dl_lease_share_fork_prepare(void)
{
	pthread_mutex_lock(&share_lock);
}

void dl_lease_share_fork_parent(void)
{
	pthread_mutex_unlock(&share_lock);
}

/*
 * The child's copies of the lease descriptors would keep the parent's
 * leases alive after the parent dies: close them.  The parent's MRs in
 * the child never touch their share again (they are not the child's).
 */
void dl_lease_share_fork_child(void)
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
