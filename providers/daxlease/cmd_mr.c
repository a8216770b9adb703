// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The MR commands the library issues itself (cmd_mr.h): attributes filled
 * in id order, one execute, the kernel's answer written into the MR.
 */
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/daxlease_user_ioctl_cmds.h>

#include "cmd_mr.h"
#include "ioctl.h"

int dl_cmd_reg_dax_mr(struct ibv_pd *pd, uint32_t driver_id, void *addr,
		      size_t length, uint64_t iova, unsigned int access,
		      int dax_fd, uint64_t dax_offset, struct ibv_mr *mr)
{
	struct ib_uverbs_attr *handle;
	struct dl_ioctl cmd;
	int ret;

	dl_ioctl_init(&cmd, UVERBS_OBJECT_MR, DAXLEASE_UVERBS_METHOD_REG_MR,
		      driver_id);
	handle = dl_ioctl_new_obj(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_HANDLE);
	dl_ioctl_in_obj(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_PD_HANDLE,
			pd->handle);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_IOVA, iova);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_ADDR,
			(uintptr_t)addr);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_LENGTH, length);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_ACCESS_FLAGS,
			access);
	dl_ioctl_out(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_RESP_LKEY, &mr->lkey,
		     sizeof(mr->lkey));
	dl_ioctl_out(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_RESP_RKEY, &mr->rkey,
		     sizeof(mr->rkey));
	if (dax_fd >= 0) {
		dl_ioctl_in_fd(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD, dax_fd);
		dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD_OFFSET,
				dax_offset);
	}

	ret = dl_ioctl_exec(pd->context->cmd_fd, &cmd);
	if (ret)
		return ret;
	mr->handle = (uint32_t)handle->data;
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	return 0;
}

int dl_cmd_destroy_mr(int cmd_fd, uint32_t driver_id, uint32_t handle)
{
	struct dl_ioctl cmd;

	dl_ioctl_init(&cmd, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY,
		      driver_id);
	dl_ioctl_in_obj(&cmd, UVERBS_ATTR_DESTROY_MR_HANDLE, handle);
	return dl_ioctl_exec(cmd_fd, &cmd);
}
