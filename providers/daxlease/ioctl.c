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

#include "ioctl.h"

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

static struct ib_uverbs_attr *add_attr(struct dl_ioctl *cmd,
				       uint16_t attr_id)
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
	add_attr(cmd, attr_id)->data = handle;
}

struct ib_uverbs_attr *dl_ioctl_new_obj(struct dl_ioctl *cmd,
					uint16_t attr_id)
{
	return add_attr(cmd, attr_id);
}

void dl_ioctl_in_u64(struct dl_ioctl *cmd, uint16_t attr_id, uint64_t val)
{
	struct ib_uverbs_attr *attr = add_attr(cmd, attr_id);

	attr->len = sizeof(val);
	attr->data = val;
}

void dl_ioctl_in_fd(struct dl_ioctl *cmd, uint16_t attr_id, int fd)
{
	struct ib_uverbs_attr *attr = add_attr(cmd, attr_id);

	/* UVERBS_ATTR_TYPE_RAW_FD: len 0, the fd sign-extended in data */
	attr->data_s64 = fd;
}

void dl_ioctl_out(struct dl_ioctl *cmd, uint16_t attr_id, void *ptr,
		  uint16_t len)
{
	struct ib_uverbs_attr *attr = add_attr(cmd, attr_id);

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
