// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A small builder for uverbs ioctls (RDMA_VERBS_IOCTL on context->cmd_fd):
 * one struct ib_uverbs_ioctl_hdr followed by its attributes, filled in id
 * order, executed once.  The kernel side is ib_uverbs_ioctl() and
 * uverbs_process_attr() in drivers/infiniband/core/uverbs_ioctl.c:
 *  - hdr.length must equal the header plus num_attrs attributes, reserved
 *    fields 0, and driver_id the device's, or the call fails (EINVAL);
 *  - an unknown object/method fails with EPROTONOSUPPORT, as does an
 *    unknown attribute marked UVERBS_ATTR_F_MANDATORY;
 *  - IDR attributes: len 0, data = handle (for NEW the kernel writes the
 *    new handle back into data);
 *  - PTR_IN up to 8 bytes: inline in data, len = the value's size;
 *    FLAGS_IN (access flags) is a PTR_IN of 4 or 8 bytes, 8 preferred
 *    (uverbs_get_flags64/32);
 *  - PTR_OUT: data = user pointer, len = its size;
 *  - RAW_FD (DAX_FD, as dma-buf's FD upstream): len 0, data_s64 = fd.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/daxlease_user_ioctl_cmds.h>

#include "daxlease.h"

void dl_ioctl_init(struct dl_ioctl *cmd, uint16_t object_id,
		   uint16_t method_id, uint32_t driver_id)
{
	struct ib_uverbs_ioctl_hdr *hdr = dl_ioctl_hdr(cmd);

	memset(cmd, 0, sizeof(*cmd));
	hdr->object_id = object_id;
	hdr->method_id = method_id;
	hdr->driver_id = driver_id;
	hdr->length = sizeof(*hdr);
}

struct ib_uverbs_attr *dl_ioctl_attr(struct dl_ioctl *cmd, uint16_t attr_id)
{
	struct ib_uverbs_ioctl_hdr *hdr = dl_ioctl_hdr(cmd);
	struct ib_uverbs_attr *attr;

	if (hdr->num_attrs >= DL_IOCTL_MAX_ATTRS) {
		cmd->overflow = true;
		memset(&cmd->scratch, 0, sizeof(cmd->scratch));
		return &cmd->scratch;
	}
	attr = &hdr->attrs[hdr->num_attrs++];
	hdr->length += sizeof(*attr);
	memset(attr, 0, sizeof(*attr));
	attr->attr_id = attr_id;
	/* an attribute this kernel does not know must fail the call */
	attr->flags = UVERBS_ATTR_F_MANDATORY;
	return attr;
}

void dl_ioctl_in_obj(struct dl_ioctl *cmd, uint16_t attr_id, uint32_t handle)
{
	dl_ioctl_attr(cmd, attr_id)->data = handle;
}

struct ib_uverbs_attr *dl_ioctl_new_obj(struct dl_ioctl *cmd,
					uint16_t attr_id)
{
	return dl_ioctl_attr(cmd, attr_id);
}

void dl_ioctl_in_u64(struct dl_ioctl *cmd, uint16_t attr_id, uint64_t val)
{
	struct ib_uverbs_attr *attr = dl_ioctl_attr(cmd, attr_id);

	attr->len = sizeof(val);
	attr->data = val;
}

void dl_ioctl_in_s32(struct dl_ioctl *cmd, uint16_t attr_id, int32_t val)
{
	struct ib_uverbs_attr *attr = dl_ioctl_attr(cmd, attr_id);

	attr->len = sizeof(val);
	memcpy(&attr->data, &val, sizeof(val));
}

void dl_ioctl_in_fd(struct dl_ioctl *cmd, uint16_t attr_id, int fd)
{
	struct ib_uverbs_attr *attr = dl_ioctl_attr(cmd, attr_id);

	/* UVERBS_ATTR_TYPE_RAW_FD: len 0, the fd sign-extended in data */
	attr->data_s64 = fd;
}

void dl_ioctl_out(struct dl_ioctl *cmd, uint16_t attr_id, void *ptr,
		  uint16_t len)
{
	struct ib_uverbs_attr *attr = dl_ioctl_attr(cmd, attr_id);

	attr->len = len;
	attr->data = (uintptr_t)ptr;
}

int dl_ioctl_exec(int cmd_fd, struct dl_ioctl *cmd)
{
	if (cmd->overflow)
		return E2BIG;
	if (ioctl(cmd_fd, RDMA_VERBS_IOCTL, dl_ioctl_hdr(cmd)) == 0)
		return 0;
	return errno;
}

/* No method id >= UVERBS_API_METHOD_KEY_NUM_CORE (22) can exist. */
#define DL_IMPOSSIBLE_METHOD 0x0fff
/* enum rdma_driver_id has ~20 entries in 6.1; leave room for new ones */
#define DL_MAX_DRIVER_ID 64

int dl_ioctl_find_driver_id(int cmd_fd, uint32_t *driver_id)
{
	struct dl_ioctl cmd;
	uint32_t id;
	int ret;

	for (id = 0; id < DL_MAX_DRIVER_ID; id++) {
		dl_ioctl_init(&cmd, UVERBS_OBJECT_MR, DL_IMPOSSIBLE_METHOD, id);
		ret = dl_ioctl_exec(cmd_fd, &cmd);
		if (ret == EPROTONOSUPPORT) {
			*driver_id = id;
			return 0;
		}
		/* wrong driver_id: EINVAL; anything else is a real failure */
		if (ret != EINVAL)
			return ret ? ret : EIO;
	}
	return ENOENT;
}

int dl_ioctl_probe_reg_mr(int cmd_fd, uint32_t driver_id)
{
	struct dl_ioctl cmd;
	int ret;

	/*
	 * Only DAX_FD, mandatory: stock 6.1 does not know the method and a
	 * kernel with upstream's REG_MR (6.17+, same method id) does not
	 * know the attribute (a driver-namespace id that upstream's core
	 * never assigns), both answer EPROTONOSUPPORT; the daxlease kernel
	 * accepts DAX_FD and then fails the missing mandatory attributes
	 * with EINVAL.  Nothing is created either way.
	 */
	dl_ioctl_init(&cmd, UVERBS_OBJECT_MR, DAXLEASE_UVERBS_METHOD_REG_MR,
		      driver_id);
	dl_ioctl_in_fd(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD, -1);
	ret = dl_ioctl_exec(cmd_fd, &cmd);
	if (ret == EPROTONOSUPPORT || ret == EOPNOTSUPP)
		return 0;
	if (ret == 0 || ret == EBADF || ret == ENOTTY || ret == EFAULT)
		return -(ret ? ret : EIO);
	/* EINVAL (mandatory attributes missing) and the like: it exists */
	return 1;
}

int dl_ioctl_reg_mr(int cmd_fd, uint32_t driver_id,
		    const struct dl_reg_mr_args *args,
		    struct dl_reg_mr_resp *resp)
{
	struct ib_uverbs_attr *handle;
	uint32_t lkey = 0, rkey = 0;
	struct dl_ioctl cmd;
	int ret;

	dl_ioctl_init(&cmd, UVERBS_OBJECT_MR, DAXLEASE_UVERBS_METHOD_REG_MR,
		      driver_id);
	handle = dl_ioctl_new_obj(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_HANDLE);
	dl_ioctl_in_obj(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_PD_HANDLE,
			args->pd_handle);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_IOVA, args->iova);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_ADDR, args->addr);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_LENGTH, args->length);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_ACCESS_FLAGS,
			args->access);
	dl_ioctl_out(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_RESP_LKEY, &lkey,
		     sizeof(lkey));
	dl_ioctl_out(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_RESP_RKEY, &rkey,
		     sizeof(rkey));
	dl_ioctl_in_fd(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD, args->dax_fd);
	dl_ioctl_in_u64(&cmd, DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD_OFFSET,
			args->dax_offset);

	ret = dl_ioctl_exec(cmd_fd, &cmd);
	if (ret)
		return ret;
	resp->handle = (uint32_t)handle->data;
	resp->lkey = lkey;
	resp->rkey = rkey;
	return 0;
}

int dl_ioctl_destroy_mr(int cmd_fd, uint32_t driver_id, uint32_t handle)
{
	struct dl_ioctl cmd;

	dl_ioctl_init(&cmd, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY,
		      driver_id);
	dl_ioctl_in_obj(&cmd, UVERBS_ATTR_DESTROY_MR_HANDLE, handle);
	return dl_ioctl_exec(cmd_fd, &cmd);
}
