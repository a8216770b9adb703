/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * A small uverbs ioctl command: one header, attributes in id order, one
 * execute (ioctl.c says what the kernel checks).
 */
#ifndef DAXLEASE_IOCTL_H
#define DAXLEASE_IOCTL_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#define DL_IOCTL_MAX_ATTRS 16

struct dl_ioctl {
	/* struct ib_uverbs_ioctl_hdr + DL_IOCTL_MAX_ATTRS attributes */
	uint64_t buf[(sizeof(struct ib_uverbs_ioctl_hdr) +
		      DL_IOCTL_MAX_ATTRS * sizeof(struct ib_uverbs_attr)) /
		     sizeof(uint64_t)];
	struct ib_uverbs_attr scratch;	/* target of attrs past the end */
	bool overflow;
};

static inline struct ib_uverbs_ioctl_hdr *dl_ioctl_hdr(struct dl_ioctl *cmd)
{
	return (struct ib_uverbs_ioctl_hdr *)cmd->buf;
}

void dl_ioctl_init(struct dl_ioctl *cmd, uint16_t object_id,
		   uint16_t method_id, uint32_t driver_id);
/* IDR object in: its handle */
void dl_ioctl_in_obj(struct dl_ioctl *cmd, uint16_t attr_id, uint32_t handle);
/* IDR object created: the kernel writes the handle into the attr's data */
struct ib_uverbs_attr *dl_ioctl_new_obj(struct dl_ioctl *cmd,
					uint16_t attr_id);
void dl_ioctl_in_u64(struct dl_ioctl *cmd, uint16_t attr_id, uint64_t val);
void dl_ioctl_in_fd(struct dl_ioctl *cmd, uint16_t attr_id, int fd);
void dl_ioctl_out(struct dl_ioctl *cmd, uint16_t attr_id, void *ptr,
		  uint16_t len);
/* Issue on cmd_fd; returns 0 or the positive errno. */
int dl_ioctl_exec(int cmd_fd, struct dl_ioctl *cmd);

#endif /* DAXLEASE_IOCTL_H */
