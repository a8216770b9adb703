// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Pure validation of struct ibv_dax_mr_init_attr: everything that can be
 * decided without touching a file or a device.  No global state, so the
 * fuzz target may call it on any bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "daxlease.h"

#define DL_ACCESS_KNOWN                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                   \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                  \
	 IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |                         \
	 IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING)

static int reason(char *msg, size_t msglen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int reason(char *msg, size_t msglen, int err, const char *fmt, ...)
{
	va_list ap;

	if (msg && msglen) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}

uint32_t dl_init_attr_flags(const struct ibv_dax_mr_init_attr *attr)
{
	return (attr->comp_mask & IBV_DAX_MR_INIT_FLAGS) ? attr->flags : 0;
}

int dl_validate_init_attr(const struct ibv_dax_mr_init_attr *attr, char *msg,
			  size_t msglen)
{
	uint32_t flags;

	if (msg && msglen)
		msg[0] = 0;
	if (!attr)
		return reason(msg, msglen, EINVAL,
			      "attr is NULL: pass a struct ibv_dax_mr_init_attr");
	if (attr->comp_mask & ~(uint64_t)DL_INIT_ATTR_COMP_MASK)
		return reason(msg, msglen, EOPNOTSUPP,
			      "unknown comp_mask bits 0x%llx: this libdaxlease knows only IBV_DAX_MR_INIT_IOVA and IBV_DAX_MR_INIT_FLAGS",
			      (unsigned long long)(attr->comp_mask &
						   ~(uint64_t)DL_INIT_ATTR_COMP_MASK));
	/*
	 * A policy flag the library would silently ignore (say NO_FALLBACK)
	 * is worse than an error: insist on the comp_mask bit.
	 */
	if (!(attr->comp_mask & IBV_DAX_MR_INIT_FLAGS) && attr->flags)
		return reason(msg, msglen, EINVAL,
			      "flags 0x%x set without IBV_DAX_MR_INIT_FLAGS in comp_mask",
			      attr->flags);
	if (!(attr->comp_mask & IBV_DAX_MR_INIT_IOVA) && attr->iova)
		return reason(msg, msglen, EINVAL,
			      "iova set without IBV_DAX_MR_INIT_IOVA in comp_mask");
	flags = dl_init_attr_flags(attr);
	if (flags & ~(uint32_t)DL_MR_FLAGS_ALL)
		return reason(msg, msglen, EOPNOTSUPP,
			      "unknown IBV_DAX_MR_* flag bits 0x%x",
			      flags & ~(uint32_t)DL_MR_FLAGS_ALL);
	if ((flags & IBV_DAX_MR_ALLOW_ODP) && (flags & IBV_DAX_MR_NO_FALLBACK))
		return reason(msg, msglen, EINVAL,
			      "IBV_DAX_MR_ALLOW_ODP and IBV_DAX_MR_NO_FALLBACK contradict each other: pick one");
	if (!attr->path && attr->fd < 0)
		return reason(msg, msglen, EBADF,
			      "neither path nor a valid fd (fd %d): set one of them",
			      attr->fd);
	if (attr->access & ~(unsigned int)DL_ACCESS_KNOWN) {
		if (attr->access & IBV_ACCESS_ON_DEMAND)
			return reason(msg, msglen, EINVAL,
				      "IBV_ACCESS_ON_DEMAND in access: the library picks ODP itself, set IBV_DAX_MR_ALLOW_ODP instead");
		return reason(msg, msglen, EINVAL,
			      "unknown IBV_ACCESS_* bits 0x%x in access",
			      attr->access & ~(unsigned int)DL_ACCESS_KNOWN);
	}
	/* IB spec o10-2.2: remote write/atomic need local write */
	if ((attr->access &
	     (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(attr->access & IBV_ACCESS_LOCAL_WRITE))
		return reason(msg, msglen, EINVAL,
			      "IBV_ACCESS_REMOTE_WRITE/REMOTE_ATOMIC need IBV_ACCESS_LOCAL_WRITE too");
	if (attr->length == 0)
		return reason(msg, msglen, EINVAL,
			      "length is 0: a memory region needs at least one byte");
	if (attr->offset > (uint64_t)INT64_MAX ||
	    attr->length > (uint64_t)INT64_MAX - attr->offset)
		return reason(msg, msglen, EOVERFLOW,
			      "offset 0x%llx + length 0x%llx overflows a file offset",
			      (unsigned long long)attr->offset,
			      (unsigned long long)attr->length);
	return 0;
}
