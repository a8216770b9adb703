/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The first two steps of ibv_reg_dax_mr() for the host unit tests of the
 * source and the MR: validate the attributes, open the source.
 */
#ifndef DAXLEASE_UNIT_SOURCE_H
#define DAXLEASE_UNIT_SOURCE_H

#include <errno.h>

#include "errmsg.h"
#include "request.h"
#include "source.h"

/* Validate attr and open its source, as ibv_reg_dax_mr() does */
static inline int unit_open_source(const struct ibv_dax_mr_init_attr *attr,
				   struct dl_request *req,
				   struct dl_source *src)
{
	char msg[DL_ERRMSG_MAX];
	int ret;

	ret = dl_request_init(req, attr, msg, sizeof(msg));
	if (ret) {
		errno = ret;
		return -1;
	}
	return dl_source_open(req, src);
}

#endif /* DAXLEASE_UNIT_SOURCE_H */
