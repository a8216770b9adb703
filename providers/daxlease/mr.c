// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The DAX MR object: source + mapping + (lease) + registration, and the
 * registry of live MRs.
 *
 * Every public call on an MR first finds the pointer in the registry, so a
 * foreign pointer or a second ibv_dereg_dax_mr() fails with EINVAL instead
 * of touching freed memory.  The registry is a read-write lock over a hash
 * of pointers: query and persist hold it shared for their whole duration,
 * deregistration takes it exclusively only to unlink, so a persist racing
 * a dereg either completes before the unmap or fails with EINVAL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daxlease.h"

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

	for (m = reg_hash[reg_bucket(mr)]; m; m = m->hnext)
		if (&m->ibv == mr)
			return m->magic == DL_MR_MAGIC ? m : NULL;
	return NULL;
}

static void reg_insert(struct dl_mr *m)
{
	unsigned int b = reg_bucket(&m->ibv);

	pthread_rwlock_wrlock(&reg_lock);
	m->hnext = reg_hash[b];
	reg_hash[b] = m;
	reg_count++;
	pthread_rwlock_unlock(&reg_lock);
}

/* Caller holds reg_lock for writing. */
static void reg_unlink(struct dl_mr *m)
{
	struct dl_mr **pp;

	for (pp = &reg_hash[reg_bucket(&m->ibv)]; *pp; pp = &(*pp)->hnext)
		if (*pp == m) {
			*pp = m->hnext;
			reg_count--;
			return;
		}
}

/*
 * fork(): the child drops its copies of the lease-pin MRs' mappings and
 * file descriptors, which both reference the open file carrying the
 * lease (MADV_DONTFORK alone is not enough: kernels built without
 * CONFIG_ADVISE_SYSCALLS have no madvise).  Nothing else can be mapped
 * there yet when the child handler runs.  The registry lock is held
 * across fork() so that the child's copy is consistent; the child,
 * single-threaded, re-creates it instead of unlocking a lock owned by a
 * thread it does not have.
 */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static atomic_bool no_madvise;

static void atfork_prepare(void)
{
	pthread_rwlock_wrlock(&reg_lock);
	dl_lease_atfork_prepare();
}

static void atfork_parent(void)
{
	dl_lease_atfork_parent();
	pthread_rwlock_unlock(&reg_lock);
}

static void atfork_child(void)
{
	struct dl_mr *m;
	unsigned int b;

	for (b = 0; b < DL_REG_BUCKETS; b++)
		for (m = reg_hash[b]; m; m = m->hnext)
			if (m->strategy == IBV_DAX_MR_STRATEGY_LEASE_PIN) {
				if (m->map.base)
					munmap(m->map.base, m->map.map_len);
				m->map.base = NULL;
				if (m->src.fd >= 0)
					close(m->src.fd);
				m->src.fd = -1;
				m->lease = NULL;
			}
	dl_lease_atfork_child();
	pthread_rwlock_init(&reg_lock, NULL);
}

static void atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

size_t dl_mr_live_count(void)
{
	size_t n;

	pthread_rwlock_rdlock(&reg_lock);
	n = reg_count;
	pthread_rwlock_unlock(&reg_lock);
	return n;
}

/*
 * sysconf() is cheap and thread-safe; a lazily filled static here was a
 * data race between threads registering at once (TSan, FINDINGS F3).
 */
static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static int not_ours(const struct ibv_mr *mr)
{
	if (!mr)
		return dl_err(EINVAL, "mr is NULL");
	return dl_err(EINVAL,
		      "mr %p is not a live DAX MR: already deregistered, or not from ibv_reg_dax_mr() (use ibv_dereg_mr() for those)",
		      (const void *)mr);
}

static int reg_plain(struct dl_mr *m, struct ibv_pd *pd, uint64_t iova,
		     unsigned int access)
{
	struct ibv_mr *p;

	errno = 0;
	p = ibv_reg_mr_iova2(pd, m->map.addr, m->length, iova, access);
	if (!p) {
		int err = errno ? errno : EIO;

		if (m->strategy == IBV_DAX_MR_STRATEGY_ODP)
			return dl_err(err,
				      "ODP registration of %s failed: %s",
				      m->src.path, strerror(err));
		/*
		 * Linux 6.1 ib_umem_get() pins with FOLL_WRITE (FOLL_FORCE
		 * for read-only MRs), which a read-only shared mapping
		 * refuses with EFAULT; 6.2 pins read-only MRs for reading.
		 */
		if (err == EFAULT && !m->src.writable)
			return dl_err(EFAULT,
				      "the kernel pins MR pages for writing (Linux < 6.2 ib_umem_get), so the read-only mapping of %s cannot be registered: pass an O_RDWR fd or write access, or use Linux 6.2 or later",
				      m->src.path);
		if (err == EOPNOTSUPP && m->src.kind == IBV_DAX_FILE_FSDAX)
			return dl_err(err,
				      "kernel refuses a long-term pin of FS-DAX %s (stock kernel): boot a kernel built with the daxlease series (" DL_KERNEL_REMEDY ")",
				      m->src.path);
		return dl_err(err, "ibv_reg_mr of %s (%s) failed: %s",
			      m->src.path, dl_kind_name(m->src.kind),
			      strerror(err));
	}
	m->provider_mr = p;
	m->ibv.context = p->context;
	m->ibv.pd = p->pd;
	m->ibv.addr = p->addr;
	m->ibv.length = p->length;
	m->ibv.handle = p->handle;
	m->ibv.lkey = p->lkey;
	m->ibv.rkey = p->rkey;
	return 0;
}

static int reg_lease_pin(struct dl_mr *m, struct ibv_pd *pd, uint64_t iova,
			 unsigned int access)
{
	struct dl_reg_mr_args args = {
		.pd_handle = pd->handle,
		.addr = (uintptr_t)m->map.addr,
		.length = m->length,
		.iova = iova,
		/* optional bits (relaxed ordering) may be dropped by spec */
		.access = access & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE,
		.dax_offset = m->offset,
	};
	struct dl_reg_mr_resp resp;
	int ret;

	/* a fork() from now on must see the atfork handlers (shares) */
	pthread_once(&atfork_once, atfork_register);

	/*
	 * The lease comes before the pin (doc/design.md §1.2).  The kernel
	 * checks the lease on DAX_FD, the open file that carries it.
	 */
	m->lease = dl_lease_get(m->src.fd, m->src.path, m->src.dev,
				m->src.ino);
	if (!m->lease)
		return -1;
	m->lease_held = true;
	dl_test_stop("reg_leased");
	args.dax_fd = dl_lease_share_fd(m->lease);

	dl_test_stop("reg_ioctl");
	ret = dl_ioctl_reg_mr(pd->context->cmd_fd, m->ctx->driver_id, &args,
			      &resp);
	if (ret) {
		struct dl_err_save s;

		switch (ret) {
		case EPERM:
			dl_err(EPERM,
			       "kernel refused the pin of %s: the layout lease is not held by this process",
			       m->src.path);
			break;
		case EFAULT:
			if (!m->src.writable) {
				dl_err(EFAULT,
				       "the kernel pins MR pages for writing, so the read-only mapping of %s cannot be registered: pass an O_RDWR fd or write access",
				       m->src.path);
				break;
			}
			dl_err(EFAULT, "extended REG_MR of %s: bad address",
			       m->src.path);
			break;
		case EPROTONOSUPPORT:
			dl_err(EOPNOTSUPP,
			       "kernel does not know the extended REG_MR attributes: kernel and kernel-headers/ of different versions");
			break;
		case EOPNOTSUPP:
			dl_err(EOPNOTSUPP,
			       "the file system refuses a long-term pin of %s: an xfs file with shared extents (reflinked) cannot be pinned; unshare it (fallocate FALLOC_FL_UNSHARE_RANGE) or copy it",
			       m->src.path);
			break;
		default:
			dl_err(ret, "extended REG_MR of %s failed: %s",
			       m->src.path, strerror(ret));
		}
		dl_err_save(&s);
		dl_lease_put(m->lease, m->src.path, true);
		m->lease = NULL;
		m->lease_held = false;
		dl_err_restore(&s);
		return -1;
	}
	m->ibv.context = pd->context;
	m->ibv.pd = pd;
	m->ibv.addr = m->map.addr;
	m->ibv.length = m->length;
	m->ibv.handle = resp.handle;
	m->ibv.lkey = resp.lkey;
	m->ibv.rkey = resp.rkey;
	dl_test_stop("reg_registered");

	/* doc/design.md §1.4: pins stay, further pins of the file will fail */
	if (m->flags & IBV_DAX_MR_RELEASE_LEASE) {
		if (dl_lease_put(m->lease, m->src.path, false) == 0) {
			m->lease = NULL;
			m->lease_held = false;
		}
	}
	return 0;
}

DL_EXPORT struct ibv_mr *ibv_reg_dax_mr(struct ibv_pd *pd,
					const struct ibv_dax_mr_init_attr *attr)
{
	char msg[DL_ERRMSG_MAX];
	struct dl_err_save s;
	unsigned int access;
	struct dl_mr *m;
	uint64_t iova;
	int ret;

	if (!pd)
		return dl_err_null(EINVAL, "pd is NULL: allocate one with ibv_alloc_pd()");
	ret = dl_validate_init_attr(attr, msg, sizeof(msg));
	if (ret)
		return dl_err_null(ret, "%s", msg);

	m = calloc(1, sizeof(*m));
	if (!m)
		return dl_err_null(ENOMEM, "out of memory");
	m->owner_pid = getpid();
	m->offset = attr->offset;
	m->length = attr->length;
	m->access = attr->access;
	m->flags = dl_init_attr_flags(attr);

	/*
	 * File first, device second: what is wrong with the file is
	 * reported the same with or without a device, and every step below
	 * is unwound in reverse on failure.
	 */
	if (dl_source_open(attr, &m->src))
		goto err_free;
	dl_test_stop("reg_opened");

	if (dl_map_range(&m->src, m->offset, m->length, &m->map))
		goto err_source;
	dl_test_stop("reg_mapped");

	m->ctx = dl_ctx_get(pd->context);
	if (!m->ctx)
		goto err_unmap;

	ret = dl_strategy_choose(m->src.kind, m->flags, &m->ctx->caps,
				 &m->strategy, msg, sizeof(msg));
	if (ret) {
		dl_err(ret, "%s: %s", m->src.path, msg);
		goto err_unmap;
	}

	if (dl_ctx_ref(m->ctx))
		goto err_unmap;

	iova = (attr->comp_mask & IBV_DAX_MR_INIT_IOVA) ?
		       attr->iova : (uintptr_t)m->map.addr;
	/* the kernel maps iova and addr page by page */
	if ((iova ^ (uintptr_t)m->map.addr) & (page_size() - 1)) {
		dl_err(EINVAL,
		       "iova 0x%llx and file offset 0x%llx differ in their offset within a page: choose an iova with the same low %d bits",
		       (unsigned long long)iova,
		       (unsigned long long)m->offset,
		       __builtin_ctzl(page_size()));
		goto err_unref;
	}
	access = m->access;
	switch (m->strategy) {
	case IBV_DAX_MR_STRATEGY_LEASE_PIN:
		ret = reg_lease_pin(m, pd, iova, access);
		break;
	case IBV_DAX_MR_STRATEGY_ODP:
		ret = reg_plain(m, pd, iova, access | IBV_ACCESS_ON_DEMAND);
		break;
	default:
		ret = reg_plain(m, pd, iova, access);
		break;
	}
	if (ret)
		goto err_unref;

	/*
	 * The lease lives on this MR's open file, which the mapping (vm_file)
	 * and the fd both reference: keep both out of children, so that a
	 * forked child neither keeps the lease alive after this process dies
	 * nor sees the pinned pages.
	 */
	if (m->strategy == IBV_DAX_MR_STRATEGY_LEASE_PIN) {
		pthread_once(&atfork_once, atfork_register);
		/* ENOSYS (no CONFIG_ADVISE_SYSCALLS) stays so: stop asking */
		if (!atomic_load_explicit(&no_madvise, memory_order_relaxed) &&
		    madvise(m->map.base, m->map.map_len, MADV_DONTFORK) &&
		    errno == ENOSYS)
			atomic_store_explicit(&no_madvise, true,
					      memory_order_relaxed);
	}

	m->magic = DL_MR_MAGIC;
	reg_insert(m);
	return &m->ibv;

err_unref:
	dl_err_save(&s);
	dl_ctx_unref(m->ctx);
	dl_err_restore(&s);
err_unmap:
	dl_err_save(&s);
	dl_map_unmap(&m->map);
	dl_err_restore(&s);
err_source:
	dl_err_save(&s);
	dl_source_undo(&m->src);
	dl_source_close(&m->src);
	dl_err_restore(&s);
err_free:
	dl_err_save(&s);
	free(m);
	dl_err_restore(&s);
	return NULL;
}

/* Kernel side of a deregistration; 0 or -1/errno (then the MR stays). */
/* 0 or an errno value, with the reason for ibv_dax_errmsg() */
static int dereg_kernel(struct dl_mr *m)
{
	int ret;

	/*
	 * After ibv_close_device() the provider's MR memory is gone and the
	 * kernel destroyed the MR with the uverbs file: nothing to do here.
	 * (The provider's small MR struct cannot be freed safely and is
	 * left alone.)
	 */
	if (!dl_ctx_alive(m->ctx))
		return 0;

	if (m->strategy != IBV_DAX_MR_STRATEGY_LEASE_PIN) {
		/* an errno value, like ibv_cmd_dereg_mr()'s */
		errno = 0;
		ret = ibv_dereg_mr(m->provider_mr);
		if (ret < 0)
			ret = errno ? errno : EIO;
		if (ret)
			dl_err(ret, "ibv_dereg_mr failed: %s (memory windows still bound?)",
			       strerror(ret));
		return ret;
	}
	ret = dl_ioctl_destroy_mr(m->ctx->cmd_fd, m->ctx->driver_id,
				  m->ibv.handle);
	if (ret)
		dl_err(ret, "MR_DESTROY failed: %s (memory windows still bound?)",
		       strerror(ret));
	return ret;
}

/* child: called in a forked child of the MR's owner */
static void dl_mr_free(struct dl_mr *m, bool child)
{
	struct dl_err_save s;

	dl_err_save(&s);
	if (m->lease_held && !child)
		dl_lease_put(m->lease, m->src.path, true);
	/*
	 * A lease-pin mapping is MADV_DONTFORK: a child never had it, and
	 * the range may hold something else of the child's by now.
	 */
	if (child && m->strategy == IBV_DAX_MR_STRATEGY_LEASE_PIN)
		m->map.base = NULL;
	dl_map_unmap(&m->map);
	dl_source_close(&m->src);
	/* in a child this closes only the child's copy of the held fd */
	dl_ctx_unref(m->ctx);
	m->magic = 0;
	free(m);
	dl_err_restore(&s);
}

/*
 * 0 or an errno value, as ibv_dereg_mr() returns; errno is set to the
 * same value, and ibv_dax_errmsg() gives the reason.
 */
DL_EXPORT int ibv_dereg_dax_mr(struct ibv_mr *mr)
{
	struct dl_mr *m;
	int ret;

	pthread_rwlock_wrlock(&reg_lock);
	m = mr ? reg_find(mr) : NULL;
	if (m)
		reg_unlink(m);
	pthread_rwlock_unlock(&reg_lock);
	if (!m) {
		not_ours(mr);
		return EINVAL;
	}

	/*
	 * A child of fork() shares the parent's uverbs file and lease:
	 * destroying the MR or dropping the lease would break the parent.
	 * Only the child's copies of the mapping and fd go.
	 */
	if (m->owner_pid != getpid()) {
		dl_mr_free(m, true);
		return 0;
	}

	ret = dereg_kernel(m);
	if (ret) {
		struct dl_err_save s;

		dl_err_save(&s);
		reg_insert(m);
		dl_err_restore(&s);
		return ret;
	}
	dl_test_stop("dereg_destroyed");
	dl_mr_free(m, false);
	return 0;
}

DL_EXPORT int ibv_query_dax_mr(struct ibv_mr *mr,
				 struct ibv_dax_mr_attr *attr)
{
	struct dl_mr *m;

	if (!attr)
		return dl_err(EINVAL, "attr is NULL");
	if (attr->comp_mask)
		return dl_err(EOPNOTSUPP,
			      "unknown comp_mask 0x%llx in struct ibv_dax_mr_attr: pass 0",
			      (unsigned long long)attr->comp_mask);
	pthread_rwlock_rdlock(&reg_lock);
	m = mr ? reg_find(mr) : NULL;
	if (!m) {
		pthread_rwlock_unlock(&reg_lock);
		return not_ours(mr);
	}
	attr->kind = m->src.kind;
	attr->strategy = m->strategy;
	attr->granularity = dl_map_granularity(&m->map);
	attr->lease_held = m->lease_held;
	attr->path = m->src.path;
	attr->offset = m->offset;
	attr->length = m->length;
	pthread_rwlock_unlock(&reg_lock);
	return 0;
}

DL_EXPORT int ibv_dax_mr_release_lease(struct ibv_mr *mr)
{
	struct dl_mr *m;
	int ret = 0;

	pthread_rwlock_wrlock(&reg_lock);
	m = mr ? reg_find(mr) : NULL;
	if (!m) {
		pthread_rwlock_unlock(&reg_lock);
		return not_ours(mr);
	}
	if (m->owner_pid != getpid())
		ret = dl_err(EPERM,
			     "MR belongs to process %d: a forked child cannot release its lease",
			     (int)m->owner_pid);
	else if (m->lease_held && !dl_lease_put(m->lease, m->src.path, false)) {
		m->lease = NULL;
		m->lease_held = false;
	}
	else if (m->lease_held)
		ret = -1;
	pthread_rwlock_unlock(&reg_lock);
	return ret;
}

DL_EXPORT int ibv_dax_mr_persist(struct ibv_mr *mr, uint64_t offset,
				 size_t len)
{
	struct dl_mr *m;
	int ret;

	pthread_rwlock_rdlock(&reg_lock);
	m = mr ? reg_find(mr) : NULL;
	if (!m) {
		pthread_rwlock_unlock(&reg_lock);
		return not_ours(mr);
	}
	if (offset > m->length || len > m->length - offset) {
		ret = dl_err(ERANGE,
			     "persist range [0x%llx, +0x%zx) is outside the MR (0x%zx bytes; offsets are relative to mr->addr)",
			     (unsigned long long)offset, len, m->length);
	} else {
		ret = dl_map_persist(&m->map, (char *)m->map.addr + offset,
				     len);
	}
	pthread_rwlock_unlock(&reg_lock);
	return ret;
}
