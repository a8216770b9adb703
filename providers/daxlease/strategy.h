/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Which registration strategy a file gets (doc/design.md §3.1).
 */
#ifndef DAXLEASE_STRATEGY_H
#define DAXLEASE_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs_dax.h>

/* How the kernel would pin the pages of one registration */
enum dl_pin {
	/* the MR's access makes ib_umem_get() pin for writing (DL_PIN_ACCESS) */
	DL_PIN_WRITE = 1 << 0,
	/*
	 * page cache that needs no writeback (tmpfs, hugetlbfs): the kernel
	 * allows writable long-term pins of it on every version
	 */
	DL_PIN_NO_WRITEBACK = 1 << 1,
};

/* Access bits for which the kernel pins for writing (ib_access_writable) */
#define DL_PIN_ACCESS                                                         \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                   \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND)

/*
 * Pure: the strategy of a file of kind with flags, pinned as pin says
 * (DL_PIN_* bits), on a device with caps.  Returns 0 and *out, or
 * EOPNOTSUPP with a reason naming the missing kernel support (or
 * IBV_DAX_MR_NO_FALLBACK refusing page cache, or a kernel that refuses
 * writable long-term pins of page cache).
 */
int dl_strategy_choose(enum ibv_dax_file_kind kind, uint32_t flags,
		       unsigned int pin, const struct ibv_dax_caps *caps,
		       enum ibv_dax_mr_strategy *out, char *msg,
		       size_t msglen);
/*
 * The reason of a writable page-cache registration the kernel refuses,
 * with what the user can do (odp: the device has ODP); EOPNOTSUPP.
 */
int dl_strategy_pagecache_refused(uint32_t flags, bool odp, char *msg,
				  size_t msglen);
const char *dl_strategy_name(enum ibv_dax_mr_strategy s);

#endif /* DAXLEASE_STRATEGY_H */
