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
 * reason readable with ibv_dax_errmsg().
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
	/* Drop the layout lease once the pages are pinned (seed point 4). */
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
	 * With a path: create the file if missing and extend it to
	 * offset + length (blocks allocated) if shorter.
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
	uint64_t iova;		/* with IBV_DAX_MR_INIT_IOVA; else mr->addr */
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
	const char *path;		/* valid until ibv_dereg_dax_mr() */
	uint64_t offset;		/* in the file */
	size_t length;
};

/* Capabilities found by probing a context; see ibv_dax_query_caps() */
struct ibv_dax_caps {
	uint64_t comp_mask;		/* in: 0; reserved */
	int layout_lease;		/* kernel takes F_LAYOUT | F_EXCLUSIVE */
	int ext_reg_mr;			/* kernel has the extended REG_MR */
	int odp;			/* device: ODP RC send/read/write */
	int flush;			/* device and verbs: RDMA FLUSH */
	/* strategy each kind gets with flags == 0 (NONE: would fail) */
	enum ibv_dax_mr_strategy strategy_fsdax;
	enum ibv_dax_mr_strategy strategy_devdax;
	enum ibv_dax_mr_strategy strategy_pagecache;
};

struct ibv_mr *ibv_reg_dax_mr(struct ibv_pd *pd,
			      const struct ibv_dax_mr_init_attr *attr);
int ibv_dereg_dax_mr(struct ibv_mr *mr);
int ibv_query_dax_mr(struct ibv_mr *mr, struct ibv_dax_mr_attr *attr);
int ibv_dax_mr_release_lease(struct ibv_mr *mr);
int ibv_dax_mr_persist(struct ibv_mr *mr, uint64_t offset, size_t len);
int ibv_dax_query_caps(struct ibv_context *context,
		       struct ibv_dax_caps *caps);
const char *ibv_dax_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif /* INFINIBAND_VERBS_DAX_H */
