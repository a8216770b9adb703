/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Which registration strategy a file gets (doc/design.md §3.1).
 */
#ifndef DAXLEASE_STRATEGY_H
#define DAXLEASE_STRATEGY_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs_dax.h>

/*
 * Pure: the strategy of a file of kind with flags on a device with caps.
 * Returns 0 and *out, or EOPNOTSUPP with a reason naming the missing
 * kernel support (or IBV_DAX_MR_NO_FALLBACK refusing page cache).
 */
int dl_strategy_choose(enum ibv_dax_file_kind kind, uint32_t flags,
		       const struct ibv_dax_caps *caps,
		       enum ibv_dax_mr_strategy *out, char *msg,
		       size_t msglen);
const char *dl_strategy_name(enum ibv_dax_mr_strategy s);

#endif /* DAXLEASE_STRATEGY_H */
