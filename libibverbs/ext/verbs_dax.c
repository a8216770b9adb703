// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Public entry points of libdaxlease (see <infiniband/verbs_dax.h>); the
 * work is done in providers/daxlease.
 */
#include <infiniband/verbs_dax.h>

#include "daxlease.h"

DL_EXPORT struct ibv_mr *ibv_reg_dax_mr(struct ibv_pd *pd,
					const struct ibv_dax_mr_init_attr *attr)
{
	return dl_reg_dax_mr(pd, attr);
}

DL_EXPORT int ibv_dereg_dax_mr(struct ibv_mr *mr)
{
	return dl_dereg_dax_mr(mr);
}

DL_EXPORT int ibv_query_dax_mr(struct ibv_mr *mr, struct ibv_dax_mr_attr *attr)
{
	return dl_query_dax_mr(mr, attr);
}

DL_EXPORT int ibv_dax_mr_release_lease(struct ibv_mr *mr)
{
	return dl_mr_release_lease(mr);
}

DL_EXPORT int ibv_dax_mr_persist(struct ibv_mr *mr, uint64_t offset,
				 size_t len)
{
	return dl_mr_persist(mr, offset, len);
}

DL_EXPORT int ibv_dax_query_caps(struct ibv_context *context,
				 struct ibv_dax_caps *caps)
{
	return dl_query_caps(context, caps);
}

DL_EXPORT const char *ibv_dax_errmsg(void)
{
	return dl_errmsg();
}
