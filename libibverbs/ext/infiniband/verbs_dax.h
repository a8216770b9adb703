/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * daxlease: register persistent-memory (DAX) files for RDMA safely.
 *
 * ibv_reg_dax_mr() opens (or takes) a pmem file, maps the requested range
 * with mmap(2), takes an exclusive layout lease on FS-DAX files, and
 * registers the mapping on a protection domain.  The returned struct ibv_mr
 * is usable in any work request; it must be released with
 * ibv_dereg_dax_mr(), never with ibv_dereg_mr().
 *
 * Error convention: functions returning a pointer return NULL, functions
 * returning int return -1; both set errno and a thread-local one-line
 * reason readable with ibv_dax_errmsg().  ibv_dereg_dax_mr() returns 0 or
 * an errno value, as ibv_dereg_mr() does (and sets errno and the reason
 * too).
 *
 * The query functions take the size of the caller's struct (inlen, as
 * rdma-core's efadv_query_mr()): they fill what fits and zero the rest of
 * a larger struct, and fail with EINVAL if inlen is smaller than the first
 * version of the struct.  comp_mask is an output: the optional fields
 * filled (none yet).
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
	/*
	 * addr is valid: register [addr, addr + length) of a MAP_SHARED
	 * mapping the caller made of a DAX file or device (or a page-cache
	 * file) instead of mapping the file.  path NULL and fd -1: the
	 * library finds the mapped file itself and offset must be 0; else
	 * path or fd names the file, which must be the one mapped there,
	 * at file offset offset.  The mapping is the caller's: it is never
	 * unmapped by the library, and must stay until ibv_dereg_dax_mr().
	 */
	IBV_DAX_MR_INIT_ADDR = 1 << 2,
};

/* Policy flags of struct ibv_dax_mr_init_attr */
enum ibv_dax_mr_flags {
	/* Drop the layout lease once the pages are pinned; the pins stay. */
	IBV_DAX_MR_RELEASE_LEASE = 1 << 0,
	/*
	 * Let a registration the kernel cannot pin use an on-demand-paging
	 * MR when the device supports ODP: an FS-DAX file on a kernel
	 * without the layout-lease series, a page-cache file with write
	 * access on a kernel that refuses writable page-cache pins.
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
	void *addr;		/* with IBV_DAX_MR_INIT_ADDR: the range in
				 * the caller's own mapping */
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

/* How stores to the mapping are made persistent */
enum ibv_dax_persist_granularity {
	IBV_DAX_GRAN_BYTE = 1,		/* eADR: visible is persistent */
	IBV_DAX_GRAN_CACHE_LINE = 2,	/* cache flush needed */
	IBV_DAX_GRAN_PAGE = 3,		/* msync needed (page cache) */
};

struct ibv_dax_mr_attr {
	uint64_t comp_mask;		/* out: 0; no optional fields yet */
	enum ibv_dax_file_kind kind;
	enum ibv_dax_mr_strategy strategy;
	enum ibv_dax_persist_granularity granularity;
	int lease_held;			/* exclusive layout lease still held */
	/* as given, or /proc/self/fd's link for an fd; valid until dereg */
	const char *path;
	uint64_t offset;		/* in the file */
	size_t length;
};

/* Bits of struct ibv_dax_caps.cap_flags */
enum ibv_dax_cap_flags {
	IBV_DAX_CAP_LAYOUT_LEASE = 1 << 0, /* kernel takes F_LAYOUT|F_EXCLUSIVE */
	IBV_DAX_CAP_EXT_REG_MR = 1 << 1,   /* kernel has the extended REG_MR */
	IBV_DAX_CAP_ODP = 1 << 2,	   /* device: ODP with RC read, write */
	/*
	 * kernel: writable long-term pins of page-cache files work (Linux
	 * before 6.5); without it a page-cache registration with write
	 * access needs IBV_DAX_MR_ALLOW_ODP and ODP (tmpfs is exempt)
	 */
	IBV_DAX_CAP_PAGECACHE_WRITE_PIN = 1 << 3,
	/* device: RDMA ATOMIC WRITE (ibv_wr_atomic_write) */
	IBV_DAX_CAP_ATOMIC_WRITE = 1 << 4,
	/*
	 * device and kernel (Linux 6.2+): RDMA FLUSH targets, MRs with
	 * IBV_DAX_ACCESS_FLUSH_GLOBAL and IBV_DAX_ACCESS_FLUSH_PERSISTENT
	 */
	IBV_DAX_CAP_FLUSH = 1 << 5,
	/*
	 * the libibverbs this library was built against can post RDMA
	 * FLUSH (ibv_wr_flush, rdma-core 45+); with IBV_DAX_CAP_FLUSH a
	 * peer of this build can flush remotely, without it a protocol
	 * must ask the target to persist (ibv_dax_mr_persist) instead
	 */
	IBV_DAX_CAP_FLUSH_POST = 1 << 6,
};

/*
 * RDMA FLUSH access bits for ibv_dax_mr_init_attr.access: the values of
 * rdma-core 45's IBV_ACCESS_FLUSH_GLOBAL and IBV_ACCESS_FLUSH_PERSISTENT,
 * usable with an older libibverbs.  A peer may then FLUSH the MR for
 * global visibility, or for persistence: the kernel refuses
 * FLUSH_PERSISTENT unless every page of the MR is persistent memory.
 */
enum ibv_dax_access_flags {
	IBV_DAX_ACCESS_FLUSH_GLOBAL = 1 << 8,
	IBV_DAX_ACCESS_FLUSH_PERSISTENT = 1 << 9,
};

/* Capabilities found by probing a context; see ibv_dax_query_caps() */
struct ibv_dax_caps {
	uint64_t comp_mask;		/* out: 0; no optional fields yet */
	uint64_t cap_flags;		/* IBV_DAX_CAP_* */
	/*
	 * strategy each kind gets with flags == 0 and write access (NONE:
	 * would fail); pagecache: a file on a disk file system (read-only
	 * registrations and tmpfs files get PLAIN on every kernel)
	 */
	enum ibv_dax_mr_strategy strategy_fsdax;
	enum ibv_dax_mr_strategy strategy_devdax;
	enum ibv_dax_mr_strategy strategy_pagecache;
};

/*
 * One line a function; the man page of each (ibv_reg_dax_mr(3), ...) says
 * what it does in full and lists its errno values.
 */

/* ibv_reg_dax_mr - map a range of a DAX file or device, register it */
struct ibv_mr *ibv_reg_dax_mr(struct ibv_pd *pd,
			      const struct ibv_dax_mr_init_attr *attr);

/* ibv_dereg_dax_mr - deregister, drop the lease, unmap; 0 or an errno */
int ibv_dereg_dax_mr(struct ibv_mr *mr);

/* ibv_query_dax_mr - kind, strategy, lease state and range of a DAX MR */
int ibv_query_dax_mr(struct ibv_mr *mr, struct ibv_dax_mr_attr *attr,
		     uint32_t inlen);

/* ibv_dax_mr_release_lease - drop the layout lease of a DAX MR, keep the pin */
int ibv_dax_mr_release_lease(struct ibv_mr *mr);

/* ibv_dax_mr_persist - make a range of a DAX MR durable */
int ibv_dax_mr_persist(struct ibv_mr *mr, uint64_t offset, size_t len);

/* ibv_dax_query_caps - what the kernel and a device offer for DAX MRs */
int ibv_dax_query_caps(struct ibv_context *context, struct ibv_dax_caps *caps,
		       uint32_t inlen);

/* ibv_dax_errmsg - one-line reason of the calling thread's last failed call */
const char *ibv_dax_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif /* INFINIBAND_VERBS_DAX_H */
