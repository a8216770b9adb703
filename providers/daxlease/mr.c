// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The DAX MR object (mr.h): registration from a request, source, mapping,
 * lease and pin; the calls on a live MR; deregistration.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd_mr.h"
#include "context.h"
#include "daxlease.h"
#include "errmsg.h"
#include "fork.h"
#include "lease_share.h"
#include "mr.h"
#include "registry.h"
#include "strategy.h"

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
	p = ibv_reg_mr_iova2(pd, m->map.addr, m->req.length, iova, access);
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
		/*
		 * A kernel that refuses writable page-cache pins although
		 * its release predates 6.5 (a backport): the same reason
		 * as when the caps say so (strategy.c).
		 */
		if (err == EFAULT && m->src.kind == IBV_DAX_FILE_PAGECACHE &&
		    (access & DL_PIN_ACCESS) && !m->src.no_writeback) {
			bool odp = m->ctx->caps.cap_flags & IBV_DAX_CAP_ODP;
			char msg[DL_ERRMSG_MAX];

			if (odp && (m->req.flags & IBV_DAX_MR_ALLOW_ODP)) {
				m->strategy = IBV_DAX_MR_STRATEGY_ODP;
				return reg_plain(m, pd, iova,
						 access | IBV_ACCESS_ON_DEMAND);
			}
			dl_strategy_pagecache_refused(m->req.flags, odp, msg,
						      sizeof(msg));
			return dl_err(EOPNOTSUPP, "%s: %s", m->src.path, msg);
		}
		if (err == EOPNOTSUPP && m->src.kind == IBV_DAX_FILE_FSDAX)
			return dl_err(err,
				      "kernel refuses a long-term pin of FS-DAX %s (stock kernel): boot a kernel built with the daxlease series (" DL_KERNEL_REMEDY ")",
				      m->src.path);
		if (err == EINVAL && (access & IBV_DAX_ACCESS_FLUSH_PERSISTENT))
			return dl_err(err,
				      "ibv_reg_mr of %s (%s) failed: %s: with IBV_DAX_ACCESS_FLUSH_PERSISTENT the kernel takes only persistent memory (an FS-DAX file or device DAX on an NVDIMM)",
				      m->src.path, dl_kind_name(m->src.kind),
				      strerror(err));
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

static unsigned int pin_of(const struct dl_mr *m)
{
	return (m->req.access & DL_PIN_ACCESS ? DL_PIN_WRITE : 0) |
	       (m->src.no_writeback ? DL_PIN_NO_WRITEBACK : 0);
}

static void lease_pin_err(const struct dl_mr *m, int err)
{
	switch (err) {
	case EPERM:
		dl_err(EPERM,
		       "kernel refused the pin of %s: the layout lease is not held by this process",
		       m->src.path);
		break;
	case EFAULT:
		dl_err(EFAULT,
		       "extended REG_MR of %s: bad address (the range is no longer a shared mapping of the file)",
		       m->src.path);
		break;
	case ENODATA:
		/* read-only MRs are pinned as they are: no block, no pin */
		dl_err(ENODATA,
		       "read-only registration of %s covers a hole or an unwritten extent, which has no block to pin: write the range first, or register with write access",
		       m->src.path);
		break;
	case EACCES:
		dl_err(EACCES,
		       "read-only registration of %s needs permission to write the file (the kernel pins read-only MRs of DAX files as they are): not immutable or append-only, on a writable mount",
		       m->src.path);
		break;
	case EPROTONOSUPPORT:
		dl_err(EOPNOTSUPP,
		       "kernel does not know the extended REG_MR attributes: the kernel and libdaxlease come from different versions of the daxlease series");
		break;
	case EOPNOTSUPP:
		dl_err(EOPNOTSUPP,
		       "the file system refuses a long-term pin of %s: an xfs file with shared extents (reflinked) cannot be pinned; unshare it (fallocate FALLOC_FL_UNSHARE_RANGE) or copy it",
		       m->src.path);
		break;
	default:
		dl_err(err, "extended REG_MR of %s failed: %s", m->src.path,
		       strerror(err));
	}
}

static int reg_lease_pin(struct dl_mr *m, struct ibv_pd *pd, uint64_t iova,
			 unsigned int access)
{
	struct dl_err_save s;
	int ret;

	/* a fork() from now on must see the handlers (shares) */
	dl_fork_init();

	/*
	 * The lease comes before the pin (doc/design.md §1.2).  The kernel
	 * checks the lease on DAX_FD, the open file that carries it.
	 */
	m->lease = dl_lease_share_get(&m->src.fd, m->src.path, m->src.dev,
				      m->src.ino);
	if (!m->lease)
		return -1;
	dl_test_stop("reg_leased");

	dl_test_stop("reg_ioctl");
	/* optional bits (relaxed ordering) may be dropped by spec */
	ret = dl_cmd_reg_dax_mr(pd, m->ctx->driver_id, m->map.addr,
				m->req.length, iova,
				access & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE,
				dl_lease_share_fd(m->lease), m->req.offset,
				&m->ibv);
	if (ret) {
		lease_pin_err(m, ret);
		dl_err_save(&s);
		dl_lease_share_put(m->lease, m->src.path, true, &m->src.fd);
		m->lease = NULL;
		dl_err_restore(&s);
		return -1;
	}
	dl_test_stop("reg_registered");

	/* doc/design.md §1.4: pins stay, further pins of the file will fail */
	if ((m->req.flags & IBV_DAX_MR_RELEASE_LEASE) &&
	    !dl_lease_share_put(m->lease, m->src.path, false, &m->src.fd))
		m->lease = NULL;
	return 0;
}

DL_EXPORT struct ibv_mr *ibv_reg_dax_mr(struct ibv_pd *pd,
					const struct ibv_dax_mr_init_attr *attr)
{
	char msg[DL_ERRMSG_MAX];
	struct dl_request req;
	struct dl_err_save s;
	struct dl_mr *m;
	uint64_t iova;
	int ret;

	if (!pd)
		return dl_err_null(EINVAL, "pd is NULL: allocate one with ibv_alloc_pd()");
	ret = dl_request_init(&req, attr, msg, sizeof(msg));
	if (ret)
		return dl_err_null(ret, "%s", msg);

	m = calloc(1, sizeof(*m));
	if (!m)
		return dl_err_null(ENOMEM, "out of memory");
	m->owner_pid = getpid();
	m->req = req;

	/*
	 * File first, device second: what is wrong with the file is
	 * reported the same with or without a device, and every step below
	 * is unwound in reverse on failure.
	 */
	if (dl_source_open(&m->req, &m->src))
		goto err_free;
	dl_test_stop("reg_opened");

	if (m->req.addr ? dl_map_adopt(&m->src, &m->req, &m->map) :
			  dl_map_range(&m->src, &m->req, &m->map))
		goto err_source;
	dl_test_stop("reg_mapped");

	m->ctx = dl_context_get(pd->context);
	if (!m->ctx)
		goto err_unmap;

	if ((m->req.access & (IBV_DAX_ACCESS_FLUSH_GLOBAL |
			      IBV_DAX_ACCESS_FLUSH_PERSISTENT)) &&
	    !(m->ctx->caps.cap_flags & IBV_DAX_CAP_FLUSH)) {
		dl_err(EOPNOTSUPP,
		       "%s: IBV_DAX_ACCESS_FLUSH_* in access, but %s takes no RDMA FLUSH (the device lacks it, or the kernel predates Linux 6.2): see IBV_DAX_CAP_FLUSH of ibv_dax_query_caps()",
		       m->src.path, ibv_get_device_name(pd->context->device));
		goto err_unmap;
	}
	ret = dl_strategy_choose(m->src.kind, m->req.flags, pin_of(m),
				 &m->ctx->caps, &m->strategy, msg,
				 sizeof(msg));
	if (ret) {
		dl_err(ret, "%s: %s", m->src.path, msg);
		goto err_unmap;
	}

	if (dl_context_ref(m->ctx))
		goto err_unmap;

	iova = m->req.has_iova ? m->req.iova : (uintptr_t)m->map.addr;
	switch (m->strategy) {
	case IBV_DAX_MR_STRATEGY_LEASE_PIN:
		ret = reg_lease_pin(m, pd, iova, m->req.access);
		break;
	case IBV_DAX_MR_STRATEGY_ODP:
		ret = reg_plain(m, pd, iova,
				m->req.access | IBV_ACCESS_ON_DEMAND);
		break;
	default:
		ret = reg_plain(m, pd, iova, m->req.access);
		break;
	}
	if (ret)
		goto err_unref;

	m->req.path = NULL;		/* the caller's, not kept */
	m->magic = DL_MR_MAGIC;
	dl_registry_insert(m);
	return &m->ibv;

err_unref:
	dl_err_save(&s);
	dl_context_unref(m->ctx);
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

/* What a failed deregistration most likely means; the MR stays */
static const char *dereg_hint(int err)
{
	if (err == EBUSY)
		return "the device still holds the MR, e.g. a memory window bound to it during the deregistration; the MR and its pins stay, try again once it is gone";
	return "memory windows still bound?";
}

/* Kernel side of a deregistration: 0 or an errno value, with the reason */
static int dereg_kernel(struct dl_mr *m)
{
	int ret;

	/*
	 * After ibv_close_device() the provider's MR memory is gone and the
	 * kernel destroyed the MR with the uverbs file: nothing to do here.
	 * (The provider's small MR struct cannot be freed safely and is
	 * left alone.)
	 */
	if (!dl_context_alive(m->ctx))
		return 0;

	if (m->strategy != IBV_DAX_MR_STRATEGY_LEASE_PIN) {
		/* an errno value, like ibv_cmd_dereg_mr()'s */
		errno = 0;
		ret = ibv_dereg_mr(m->provider_mr);
		if (ret < 0)
			ret = errno ? errno : EIO;
		if (ret)
			dl_err(ret, "ibv_dereg_mr failed: %s (%s)", strerror(ret),
			       dereg_hint(ret));
		return ret;
	}
	ret = dl_cmd_destroy_mr(m->ctx->cmd_fd, m->ctx->driver_id,
				m->ibv.handle);
	if (ret)
		dl_err(ret, "MR_DESTROY failed: %s (%s)", strerror(ret),
		       dereg_hint(ret));
	return ret;
}

void dl_mr_fork_child(struct dl_mr *m)
{
	if (m->strategy != IBV_DAX_MR_STRATEGY_LEASE_PIN)
		return;
	if (m->map.base)
		munmap(m->map.base, m->map.map_len);
	m->map.base = NULL;
	if (m->src.fd >= 0)
		close(m->src.fd);
	m->src.fd = -1;
	/* the parent's share: the child never drops it */
	m->lease = NULL;
}

/* child: called in a forked child of the MR's owner */
static void mr_free(struct dl_mr *m, bool child)
{
	struct dl_err_save s;

	dl_err_save(&s);
	if (m->lease && !child)
		dl_lease_share_put(m->lease, m->src.path, true, &m->src.fd);
	/*
	 * A lease-pin mapping: the child's copy went in the fork handler,
	 * and the range may hold something else of the child's by now.
	 */
	if (child && m->strategy == IBV_DAX_MR_STRATEGY_LEASE_PIN)
		m->map.base = NULL;
	dl_map_unmap(&m->map);
	dl_source_close(&m->src);
	/* in a child this closes only the child's copy of the held fd */
	dl_context_unref(m->ctx);
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
	struct dl_err_save s;
	struct dl_mr *m;
	int ret;

	m = dl_registry_take(mr);
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
		mr_free(m, true);
		return 0;
	}

	ret = dereg_kernel(m);
	if (ret) {
		dl_err_save(&s);
		dl_registry_insert(m);
		dl_err_restore(&s);
		return ret;
	}
	dl_test_stop("dereg_destroyed");
	mr_free(m, false);
	return 0;
}

DL_EXPORT int ibv_query_dax_mr(struct ibv_mr *mr,
			       struct ibv_dax_mr_attr *attr, uint32_t inlen)
{
	struct dl_mr *m;

	if (!attr)
		return dl_err(EINVAL, "attr is NULL");
	if (dl_check_inlen(inlen, DL_FIELD_END(struct ibv_dax_mr_attr, length),
			   "struct ibv_dax_mr_attr"))
		return -1;
	m = dl_registry_lock(mr, false);
	if (!m)
		return not_ours(mr);
	memset(attr, 0, inlen);
	attr->kind = m->src.kind;
	attr->strategy = m->strategy;
	attr->granularity = dl_map_granularity(&m->map);
	attr->lease_held = m->lease != NULL;
	attr->path = m->src.path;
	attr->offset = m->req.offset;
	attr->length = m->req.length;
	dl_registry_unlock();
	return 0;
}

DL_EXPORT int ibv_dax_mr_release_lease(struct ibv_mr *mr)
{
	struct dl_mr *m;
	int ret = 0;

	m = dl_registry_lock(mr, true);
	if (!m)
		return not_ours(mr);
	if (m->owner_pid != getpid())
		ret = dl_err(EPERM,
			     "MR belongs to process %d: a forked child cannot release its lease",
			     (int)m->owner_pid);
	else if (m->lease &&
		 dl_lease_share_put(m->lease, m->src.path, false, &m->src.fd))
		ret = -1;
	else
		m->lease = NULL;
	dl_registry_unlock();
	return ret;
}

DL_EXPORT int ibv_dax_mr_persist(struct ibv_mr *mr, uint64_t offset,
				 size_t len)
{
	struct dl_mr *m;
	int ret;

	m = dl_registry_lock(mr, false);
	if (!m)
		return not_ours(mr);
	if (offset > m->req.length || len > m->req.length - offset)
		ret = dl_err(ERANGE,
			     "persist range [0x%llx, +0x%zx) is outside the MR (0x%zx bytes; offsets are relative to mr->addr)",
			     (unsigned long long)offset, len, m->req.length);
	else
		ret = dl_map_persist(&m->map, (char *)m->map.addr + offset,
				     len);
	dl_registry_unlock();
	return ret;
}
