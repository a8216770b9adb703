/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The MR commands the library issues itself, as rdma-core's cmd_mr.c
 * does: the extended REG_MR of the daxlease kernel and MR_DESTROY.  The
 * guest kernel tests issue them too (libdaxlease.map's private node, or
 * the daxlease_cmd archive for the tests that do not load the library).
 */
#ifndef DAXLEASE_CMD_MR_H
#define DAXLEASE_CMD_MR_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/*
 * Extended REG_MR (doc/design.md §4.1) of [addr, addr + length) on pd,
 * pinned through dax_fd, the open file that carries the layout lease, at
 * dax_offset.  dax_fd < 0 leaves the daxlease attributes out: the plain
 * REG_MR the guest tests compare with.  On success mr's context, pd,
 * addr, length, handle, lkey and rkey are set.  Returns 0 or the
 * positive errno.
 */
int dl_cmd_reg_dax_mr(struct ibv_pd *pd, uint32_t driver_id, void *addr,
		      size_t length, uint64_t iova, unsigned int access,
		      int dax_fd, uint64_t dax_offset, struct ibv_mr *mr);
/* UVERBS_METHOD_MR_DESTROY; 0 or positive errno. */
int dl_cmd_destroy_mr(int cmd_fd, uint32_t driver_id, uint32_t handle);

#endif /* DAXLEASE_CMD_MR_H */
