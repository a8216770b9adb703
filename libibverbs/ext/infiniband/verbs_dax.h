/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * daxlease: register persistent-memory (DAX) files for RDMA safely.
 *
 * ibv_reg_dax_mr() opens (or takes) a pmem file, maps the requested range
 * with libpmem2, takes an exclusive layout lease on FS-DAX files, and
 * registers the mapping on a protection domain.  The returned struct ibv_mr
 * is usable in any work request; it must be released with
 * ibv_dereg_dax_mr(), never with ibv_dereg_mr().
 *
 * Error convention: functions returning a pointer return NULL, functions
 * returning int return -1; both set errno and a thread-local one-line
 * reason readable with ibv_dax_errmsg().  ibv_dereg_dax_mr() returns 0 or
 * an errno value, as ibv_dereg_mr() does (and sets errno and the reason
 * too).
 */
#ifndef INFINIBAND_VERBS_DAX_H
#define INFINIBAND_VERBS_DAX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Optional fields of struct ibv_dax_mr_init_attr, set in comp_mask */
enum ibv_dax_mr_init_attr_mask {
	IBV_DAX_MR_INIT_IOVA = 1 << 0,	/* iova is valid */
	IBV_DAX_MR_INIT_FLAGS = 1 << 1,	/* flags is valid */
};

/* Policy flags of struct ibv_dax_mr_init_attr */
enum ibv_dax_mr_flags {
	/* Drop the layout lease once the pages are pinned; the pins stay. */
	IBV_DAX_MR_RELEASE_LEASE = 1 << 0,
	/*
	 * On a kernel without the layout-lease series, let an FS-DAX file
	 * use an on-demand-paging MR when the device supports ODP.
	 */
	IBV_DAX_MR_ALLOW_ODP = 1 << 1,
	/*
	 * Refuse every strategy but a long-term pin of DAX memory: fail on
	 * page-cache files and never use ODP.
	 */
	IBV_DAX_MR_NO_FALLBACK = 1 << 2,
	/*
	 * Create the file if missing (path only; mode 0600) and extend it
	 * to offset + length, rounded up to the mapping alignment, with
	 * blocks allocated, if shorter.  If the registration then fails, a
	 * file the call created is removed and an extended one shrunk back.
	 */
	IBV_DAX_MR_CREATE = 1 << 3,
};

struct ibv_dax_mr_init_attr {
	uint64_t comp_mask;	/* IBV_DAX_MR_INIT_* bits */
	const char *path;	/* pmem file or /dev/daxX.Y; or NULL and fd */
	int fd;			/* used when path is NULL; not closed */
	uint64_t offset;	/* of the range in the file */
	size_t length;		/* of the range; non-zero */
	unsigned int access;	/* IBV_ACCESS_* */
	uint32_t flags;		/* IBV_DAX_MR_*, with IBV_DAX_MR_INIT_FLAGS */
	uint64_t iova;		/* with IBV_DAX_MR_INIT_IOVA; else mr->addr;
				 * same offset within a page as offset */
};

enum ibv_dax_file_kind {
	IBV_DAX_FILE_UNKNOWN = 0,
	IBV_DAX_FILE_FSDAX = 1,		/* regular file on a dax mount */
	IBV_DAX_FILE_DEVDAX = 2,	/* /dev/daxX.Y character device */
	IBV_DAX_FILE_PAGECACHE = 3,	/* regular file, no DAX */
};

enum ibv_dax_mr_strategy {
	IBV_DAX_MR_STRATEGY_NONE = 0,
	/* exclusive layout lease + extended REG_MR, long-term pin */
	IBV_DAX_MR_STRATEGY_LEASE_PIN = 1,
	/* plain ibv_reg_mr long-term pin (devdax, page cache) */
	IBV_DAX_MR_STRATEGY_PLAIN = 2,
	/* ibv_reg_mr with IBV_ACCESS_ON_DEMAND */
	IBV_DAX_MR_STRATEGY_ODP = 3,
};

/* How stores to the mapping are made persistent (libpmem2 granularity) */
enum ibv_dax_persist_granularity {
	IBV_DAX_GRAN_BYTE = 1,		/* eADR: visible is persistent */
	IBV_DAX_GRAN_CACHE_LINE = 2,	/* cache flush needed */
	IBV_DAX_GRAN_PAGE = 3,		/* msync needed (page cache) */
};

struct ibv_dax_mr_attr {
	uint64_t comp_mask;		/* in: 0; reserved */
	enum ibv_dax_file_kind kind;
	enum ibv_dax_mr_strategy strategy;
	enum ibv_dax_persist_granularity granularity;
	int lease_held;			/* exclusive layout lease still held */
	/* as given, or /proc/self/fd's link for an fd; valid until dereg */
	const char *path;
	uint64_t offset;		/* in the file */
	size_t length;
};

/* Capabilities found by probing a context; see ibv_dax_query_caps() */
struct ibv_dax_caps {
	uint64_t comp_mask;		/* in: 0; reserved */
	int layout_lease;		/* kernel takes F_LAYOUT | F_EXCLUSIVE */
	int ext_reg_mr;			/* kernel has the extended REG_MR */
	int odp;			/* device: ODP with RC read and write */
	int flush;			/* RDMA FLUSH: always 0, rdma-core 44
					 * has no FLUSH verbs */
	/* strategy each kind gets with flags == 0 (NONE: would fail) */
	enum ibv_dax_mr_strategy strategy_fsdax;
	enum ibv_dax_mr_strategy strategy_devdax;
	enum ibv_dax_mr_strategy strategy_pagecache;
};

/*
 * ibv_reg_dax_mr - map a range of a pmem file or device-DAX device and
 * register it on @pd.
 *
 * The source is attr->path (opened O_RDWR when access has
 * IBV_ACCESS_LOCAL_WRITE, REMOTE_WRITE or REMOTE_ATOMIC or with
 * IBV_DAX_MR_CREATE, else O_RDONLY; O_CLOEXEC|O_NONBLOCK, so an open that
 * would break another process's lease fails at once with EAGAIN) or, when
 * path is NULL, attr->fd (reopened through /proc/self/fd with its access
 * mode so that every MR has its own open file description; the caller's
 * fd is never closed).  The mapping is shared, read-write if the file was
 * opened read-write, else read-only.
 * The lease-pin MRs of one file in a process share one exclusive layout
 * lease, taken by the first and released with the last reference (MR
 * deregistered or its lease released): one lease line in /proc/locks
 * however many MRs, and the N-th registration costs what the first does.
 * mr->addr is the mapping of attr->offset (the mapping itself starts at the
 * offset rounded down to the source alignment); mr->length = attr->length.
 * Strategy (query with ibv_query_dax_mr()):
 *   FS-DAX file: exclusive layout lease + extended REG_MR when the kernel
 *     has both; else ODP with IBV_DAX_MR_ALLOW_ODP on a device with ODP;
 *     else EOPNOTSUPP.
 *   device DAX, page-cache file: plain ibv_reg_mr (page cache is refused
 *     with IBV_DAX_MR_NO_FALLBACK).
 * Returns the MR, or NULL with errno:
 *   EINVAL      pd or attr NULL; length 0; flags/iova set without their
 *               comp_mask bit; IBV_DAX_MR_ALLOW_ODP with NO_FALLBACK;
 *               unknown IBV_ACCESS_* bits or IBV_ACCESS_ON_DEMAND (the
 *               library chooses ODP); REMOTE_WRITE/ATOMIC without
 *               LOCAL_WRITE; devdax offset not aligned to the device
 *               alignment (message names it); kernel without F_LAYOUT
 *               while the probe said otherwise
 *   EOPNOTSUPP  unknown comp_mask or IBV_DAX_MR_* bits; FS-DAX on a kernel
 *               without the layout-lease series and no usable ODP (the
 *               message names the missing support); page cache with
 *               IBV_DAX_MR_NO_FALLBACK
 *   EOVERFLOW   offset + length wraps or passes the largest file offset
 *   EBADF       path NULL and fd negative, not open or O_PATH
 *   EACCES      write access on a read-only fd, or an fd opened O_WRONLY;
 *               open(2) permission denied; layout lease refused because
 *               the caller neither owns the file nor has CAP_LEASE; a
 *               read-only FS-DAX registration by a caller who may not
 *               write the file
 *   EROFS       write access to a file on a read-only mount
 *   ENOENT, ELOOP, ENAMETOOLONG, ENOTDIR  from open(2)
 *   EISDIR      path is a directory
 *   ENODEV      fifo, socket, block device or a character device that is
 *               not device DAX (e.g. /dev/null)
 *   ERANGE      [offset, offset + length), rounded up to the mapping
 *               alignment, passes the end of the file (without
 *               IBV_DAX_MR_CREATE) or of the device
 *   EAGAIN      the layout lease conflicts with another process's lease
 *               or open (the message names the pid when /proc/locks does)
 *   EPERM       the kernel refused the pin: lease not held
 *   ENODATA     read-only registration of an FS-DAX hole or unwritten
 *               extent (the daxlease kernel pins read-only MRs as they are)
 *   EFAULT      read-only registration of a device-DAX or page-cache file
 *               opened read-only on a kernel that pins MRs for writing
 *               (Linux < 6.2: ib_umem_get uses FOLL_WRITE|FOLL_FORCE,
 *               refused on a read-only shared mapping); an O_RDWR fd
 *               (mapped read-write) avoids it
 *   ENOMEM, ENOSPC, EIO, ...  from libpmem2, fallocate or the driver
 * On failure nothing is left behind: no fd, mapping, lease or MR.
 */
struct ibv_mr *ibv_reg_dax_mr(struct ibv_pd *pd,
			      const struct ibv_dax_mr_init_attr *attr);

/*
 * ibv_dereg_dax_mr - deregister, drop the lease, unmap and close; returns
 * 0 or an errno value, as ibv_dereg_mr():
 *   EINVAL  mr NULL, not from ibv_reg_dax_mr(), or already deregistered
 *           (a live-MR registry is checked first, so a second call is
 *           safe and fails this way)
 *   EBUSY and other driver errors: the MR stays registered and usable
 * After ibv_close_device() of its context the call still succeeds (0):
 * the kernel destroyed the MR with the context, the library unmaps, drops
 * the lease and closes the file (the library tells a closed context by a
 * duplicate of its async fd, compared with kcmp(2)).  In a child of
 * fork() it releases only the child's copies and returns 0; the parent's
 * MR and lease are kept.  A child never inherits a lease-pin MR's
 * mapping or fd (MADV_DONTFORK and a pthread_atfork handler), so it
 * cannot keep the lease alive or touch the pinned pages.
 */
int ibv_dereg_dax_mr(struct ibv_mr *mr);

/*
 * ibv_query_dax_mr - kind, strategy, lease state, persistence granularity,
 * path and range of a DAX MR.  attr->comp_mask must be 0.
 * Returns 0, or -1 with errno EINVAL (mr not a live DAX MR, attr NULL) or
 * EOPNOTSUPP (attr->comp_mask not 0).
 */
int ibv_query_dax_mr(struct ibv_mr *mr, struct ibv_dax_mr_attr *attr);

/*
 * ibv_dax_mr_release_lease - drop the layout lease, keep the pin (the MR
 * stays valid, but further pins of the file fail and the
 * file's layout may change again once every MR is gone).  Idempotent:
 * returns 0 if no lease is held (already released, or a devdax/page-cache
 * /ODP MR).  -1 with errno EINVAL (not a live DAX MR), EPERM (called in a
 * forked child) or the fcntl(2) error.
 */
int ibv_dax_mr_release_lease(struct ibv_mr *mr);

/*
 * ibv_dax_mr_persist - make [mr->addr + offset, + len) durable after RDMA
 * or CPU writes: CPU cache flush + fence (FS-DAX, devdax) or msync (page
 * cache, which reports write-back errors).  offset is relative to mr->addr.
 * len 0 is a no-op.  Returns 0, or -1 with errno EINVAL (not a live DAX MR),
 * ERANGE (range outside the MR) or the msync(2) error (EIO).
 * Note: it persists what reached the CPU's memory domain; RDMA writes
 * must be complete (e.g. a later RDMA READ or SEND completion) first.
 */
int ibv_dax_mr_persist(struct ibv_mr *mr, uint64_t offset, size_t len);

/*
 * ibv_dax_query_caps - what the kernel and the device of @context offer
 * and the strategy each file kind gets with flags 0.  Probed once per
 * context, thread-safe.  caps->comp_mask must be 0.  Returns 0, or -1 with
 * errno EINVAL (context or caps NULL), EOPNOTSUPP (comp_mask not 0),
 * EBADF (context's command fd closed) or ENOMEM.
 */
int ibv_dax_query_caps(struct ibv_context *context,
		       struct ibv_dax_caps *caps);

/*
 * ibv_dax_errmsg - one-line reason (cause and remedy) of the calling
 * thread's last failed daxlease call; "" before any failure.  Not reset
 * by successful calls.  Valid until the thread's next daxlease call.
 */
const char *ibv_dax_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif /* INFINIBAND_VERBS_DAX_H */
