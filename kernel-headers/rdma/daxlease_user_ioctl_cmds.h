/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * uverbs ioctl ids added by the daxlease kernel series.
 *
 * UVERBS_METHOD_REG_MR and its attribute ids 0-10 carry the numbers
 * upstream Linux later gave them (method after UVERBS_METHOD_REG_DMABUF_MR
 * on UVERBS_OBJECT_MR, with the same meaning for every attribute).  The
 * daxlease attributes are the only ids this series invents, and they sit
 * at the top of the driver namespace (UVERBS_ID_NS_SHIFT): the core never
 * assigns ids there, so a later upstream attribute cannot take their
 * numbers, and drivers number theirs from the bottom (UVERBS_ATTR_UHW
 * takes the first two).
 * User space sends them with UVERBS_ATTR_F_MANDATORY, so a kernel that
 * does not know them (stock, or upstream's own REG_MR) refuses the call
 * with EPROTONOSUPPORT instead of registering without the file pin.
 *
 * The names carry a DAXLEASE_ prefix so that this header can sit next to
 * a newer <rdma/ib_user_ioctl_cmds.h> that already declares the upstream
 * enumerators.
 *
 * This file is the single source of these numbers: the kernel series
 * installs it verbatim as include/uapi/rdma/daxlease_user_ioctl_cmds.h.
 */
#ifndef DAXLEASE_USER_IOCTL_CMDS_H
#define DAXLEASE_USER_IOCTL_CMDS_H

#include <rdma/ib_user_ioctl_cmds.h>

/* Method on UVERBS_OBJECT_MR; upstream: UVERBS_METHOD_REG_MR */
#define DAXLEASE_UVERBS_METHOD_REG_MR	(UVERBS_METHOD_REG_DMABUF_MR + 1)

/* Attributes of DAXLEASE_UVERBS_METHOD_REG_MR */
enum daxlease_uverbs_attrs_reg_mr_cmd_attr_ids {
	/* upstream ids, same order and values */
	DAXLEASE_UVERBS_ATTR_REG_MR_HANDLE,		/* IDR, new MR */
	DAXLEASE_UVERBS_ATTR_REG_MR_PD_HANDLE,		/* IDR, PD */
	DAXLEASE_UVERBS_ATTR_REG_MR_DMA_HANDLE,		/* IDR, DMAH; unused */
	DAXLEASE_UVERBS_ATTR_REG_MR_IOVA,		/* u64 */
	DAXLEASE_UVERBS_ATTR_REG_MR_ADDR,		/* u64 user VA */
	DAXLEASE_UVERBS_ATTR_REG_MR_LENGTH,		/* u64 */
	DAXLEASE_UVERBS_ATTR_REG_MR_ACCESS_FLAGS,	/* flags, IB_ACCESS_* */
	DAXLEASE_UVERBS_ATTR_REG_MR_FD,			/* dma-buf fd; unused */
	DAXLEASE_UVERBS_ATTR_REG_MR_FD_OFFSET,		/* u64; unused */
	DAXLEASE_UVERBS_ATTR_REG_MR_RESP_LKEY,		/* u32 out */
	DAXLEASE_UVERBS_ATTR_REG_MR_RESP_RKEY,		/* u32 out */
	/*
	 * daxlease additions: the two highest ids of the driver namespace
	 * (the uverbs key space takes ids 0-30 after the namespace bit)
	 */
	/*
	 * s32 fd of the FS-DAX file that backs [ADDR, ADDR + LENGTH); the
	 * caller must hold an F_LAYOUT | F_EXCLUSIVE lease set through this
	 * open file.
	 */
	DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD = (1U << UVERBS_ID_NS_SHIFT) | 29,
	/* u64 file offset that ADDR maps */
	DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD_OFFSET,
};

#endif /* DAXLEASE_USER_IOCTL_CMDS_H */
