/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * For the guest kernel suites that drive the library (leasepath, faults):
 * kt.h stays free of it, so that kernel and attacks link no library.
 */
#ifndef DAXLEASE_KT_LIB_H
#define DAXLEASE_KT_LIB_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs_dax.h>

/* ibv_reg_dax_mr() of [off, off + len) of path on pd, by path */
static inline struct ibv_mr *kt_reg_dax_mr(struct ibv_pd *pd,
					   const char *path, uint64_t off,
					   size_t len, uint32_t flags,
					   unsigned int access)
{
	struct ibv_dax_mr_init_attr attr = {
		.comp_mask = flags ? IBV_DAX_MR_INIT_FLAGS : 0,
		.path = path,
		.fd = -1,
		.offset = off,
		.length = len,
		.access = access,
		.flags = flags,
	};

	return ibv_reg_dax_mr(pd, &attr);
}

#endif /* DAXLEASE_KT_LIB_H */
