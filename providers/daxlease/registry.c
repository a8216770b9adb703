// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The live-MR registry (registry.h): a read-write lock over a hash of
 * pointers.  Query and persist hold it shared for their whole duration,
 * deregistration takes it exclusively only to unlink, so a persist racing
 * a dereg either completes before the unmap or fails with EINVAL.
 */
#include <pthread.h>
#include <stdint.h>

#include "mr.h"
#include "registry.h"

#define DL_REG_BUCKETS 256

static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct dl_mr *reg_hash[DL_REG_BUCKETS];
static size_t reg_count;

static unsigned int reg_bucket(const void *p)
{
	uintptr_t v = (uintptr_t)p;

	return (unsigned int)((v >> 4) ^ (v >> 12) ^ (v >> 20)) %
	       DL_REG_BUCKETS;
}

/* Caller holds reg_lock (either way). */
static struct dl_mr *reg_find(const struct ibv_mr *mr)
{
	struct dl_mr *m;

	if (!mr)
		return NULL;
	for (m = reg_hash[reg_bucket(mr)]; m; m = m->hnext)
		if (&m->ibv == mr)
			return m->magic == DL_MR_MAGIC ? m : NULL;
	return NULL;
}

void dl_registry_insert(struct dl_mr *m)
{
	unsigned int b = reg_bucket(&m->ibv);

	pthread_rwlock_wrlock(&reg_lock);
	m->hnext = reg_hash[b];
	reg_hash[b] = m;
	reg_count++;
	pthread_rwlock_unlock(&reg_lock);
}

struct dl_mr *dl_registry_take(const struct ibv_mr *mr)
{
	struct dl_mr *m, **pp;

	pthread_rwlock_wrlock(&reg_lock);
	m = reg_find(mr);
	if (m)
		for (pp = &reg_hash[reg_bucket(mr)]; *pp; pp = &(*pp)->hnext)
			if (*pp == m) {
				*pp = m->hnext;
				reg_count--;
				break;
			}
	pthread_rwlock_unlock(&reg_lock);
	return m;
}

struct dl_mr *dl_registry_lock(const struct ibv_mr *mr, bool write)
{
	struct dl_mr *m;

	if (write)
		pthread_rwlock_wrlock(&reg_lock);
	else
		pthread_rwlock_rdlock(&reg_lock);
	m = reg_find(mr);
	if (!m)
		pthread_rwlock_unlock(&reg_lock);
	return m;
}

void dl_registry_unlock(void)
{
	pthread_rwlock_unlock(&reg_lock);
}

size_t dl_registry_count(void)
{
	size_t n;

	pthread_rwlock_rdlock(&reg_lock);
	n = reg_count;
	pthread_rwlock_unlock(&reg_lock);
	return n;
}

void dl_registry_fork_prepare(void)
{
	pthread_rwlock_wrlock(&reg_lock);
}

void dl_registry_fork_parent(void)
{
	pthread_rwlock_unlock(&reg_lock);
}

/*
 * The child, single-threaded, re-creates the lock instead of unlocking a
 * lock owned by a thread it does not have.
 */
void dl_registry_fork_child(void (*drop)(struct dl_mr *m))
{
	struct dl_mr *m;
	unsigned int b;

	for (b = 0; b < DL_REG_BUCKETS; b++)
		for (m = reg_hash[b]; m; m = m->hnext)
			drop(m);
	pthread_rwlock_init(&reg_lock, NULL);
}
