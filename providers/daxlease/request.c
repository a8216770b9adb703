// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Validation of struct ibv_dax_mr_init_attr into a struct dl_request:
 * everything that can be decided without touching a file or a device.
 * No global state, so the fuzz target may call it on any bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "request.h"

#define DL_ACCESS_KNOWN                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                   \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                  \
	 IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |                         \
	 IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING |                   \
	 IBV_DAX_ACCESS_FLUSH_GLOBAL | IBV_DAX_ACCESS_FLUSH_PERSISTENT)
/* Access bits that need a writable file and mapping */
#define DL_ACCESS_WRITE                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                   \
	 IBV_ACCESS_REMOTE_ATOMIC)

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

static int check_attr(const struct ibv_dax_mr_init_attr *attr, char *msg,
		      size_t msglen)
{
	uint32_t flags;

	if (!attr)
		return reason(msg, msglen, EINVAL,
			      "attr is NULL: pass a struct ibv_dax_mr_init_attr");
	if (attr->comp_mask & ~(uint64_t)DL_INIT_ATTR_COMP_MASK)
		return reason(msg, msglen, EOPNOTSUPP,
			      "unknown comp_mask bits 0x%llx: this libdaxlease knows only IBV_DAX_MR_INIT_IOVA, IBV_DAX_MR_INIT_FLAGS and IBV_DAX_MR_INIT_ADDR",
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
	flags = attr->flags;
	if (flags & ~(uint32_t)DL_MR_FLAGS_ALL)
		return reason(msg, msglen, EOPNOTSUPP,
			      "unknown IBV_DAX_MR_* flag bits 0x%x",
			      flags & ~(uint32_t)DL_MR_FLAGS_ALL);
	if ((flags & IBV_DAX_MR_ALLOW_ODP) && (flags & IBV_DAX_MR_NO_FALLBACK))
		return reason(msg, msglen, EINVAL,
			      "IBV_DAX_MR_ALLOW_ODP and IBV_DAX_MR_NO_FALLBACK contradict each other: pick one");
	if (attr->comp_mask & IBV_DAX_MR_INIT_ADDR) {
		if (!attr->addr)
			return reason(msg, msglen, EINVAL,
				      "addr is NULL with IBV_DAX_MR_INIT_ADDR: pass the start of the range in your mapping");
		if (flags & IBV_DAX_MR_CREATE)
			return reason(msg, msglen, EINVAL,
				      "IBV_DAX_MR_CREATE with IBV_DAX_MR_INIT_ADDR: the range is mapped already, so the file exists");
		if (!attr->path && attr->fd < -1)
			return reason(msg, msglen, EBADF,
				      "fd %d is not a descriptor: pass -1 (and path NULL) to let the library find the file mapped at addr",
				      attr->fd);
		if (!attr->path && attr->fd == -1 && attr->offset)
			return reason(msg, msglen, EINVAL,
				      "offset 0x%llx without path or fd: with IBV_DAX_MR_INIT_ADDR the mapping gives the file offset, leave offset 0 or name the file",
				      (unsigned long long)attr->offset);
		if ((uintptr_t)attr->addr + attr->length < (uintptr_t)attr->addr)
			return reason(msg, msglen, EOVERFLOW,
				      "addr %p + length 0x%zx wraps around the address space",
				      attr->addr, attr->length);
	} else if (!attr->path && attr->fd < 0) {
		return reason(msg, msglen, EBADF,
			      "neither path nor a valid fd (fd %d): set one of them",
			      attr->fd);
	}
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

int dl_request_init(struct dl_request *req,
		    const struct ibv_dax_mr_init_attr *attr, char *msg,
		    size_t msglen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int ret;

	memset(req, 0, sizeof(*req));
	if (msg && msglen)
		msg[0] = 0;
	ret = check_attr(attr, msg, msglen);
	if (ret)
		return ret;

	req->path = attr->path;
	req->fd = attr->path ? -1 : attr->fd;
	req->offset = attr->offset;
	req->length = attr->length;
	req->access = attr->access;
	req->flags = (attr->comp_mask & IBV_DAX_MR_INIT_FLAGS) ?
			     attr->flags : 0;
	req->write = attr->access & DL_ACCESS_WRITE;
	req->has_iova = attr->comp_mask & IBV_DAX_MR_INIT_IOVA;
	req->iova = attr->iova;
	if (attr->comp_mask & IBV_DAX_MR_INIT_ADDR) {
		req->addr = attr->addr;
		req->find_file = !attr->path && attr->fd == -1;
		/*
		 * A file mapping starts at a page of the file: addr has the
		 * file offset's offset within a page.
		 */
		if (!req->find_file &&
		    ((uintptr_t)req->addr ^ req->offset) & (page - 1))
			return reason(msg, msglen, EINVAL,
				      "addr %p and file offset 0x%llx differ in their offset within a page: no mapping can map that offset there",
				      req->addr,
				      (unsigned long long)req->offset);
		if (req->has_iova &&
		    ((req->iova ^ (uintptr_t)req->addr) & (page - 1)))
			return reason(msg, msglen, EINVAL,
				      "iova 0x%llx and addr %p differ in their offset within a page: choose an iova with the same low %d bits",
				      (unsigned long long)req->iova, req->addr,
				      __builtin_ctzl(page));
	}
	/*
	 * The kernel maps iova and addr page by page, and addr has the
	 * file offset's offset within a page (every mapping alignment is a
	 * multiple of the page size).
	 */
	if (req->has_iova && !req->find_file &&
	    ((req->iova ^ req->offset) & (page - 1)))
		return reason(msg, msglen, EINVAL,
			      "iova 0x%llx and file offset 0x%llx differ in their offset within a page: choose an iova with the same low %d bits",
			      (unsigned long long)req->iova,
			      (unsigned long long)req->offset,
			      __builtin_ctzl(page));
	dl_request_align(req, page);
	return 0;
}

void dl_request_align(struct dl_request *req, size_t align)
{
	uint64_t a = align ? align : 1;

	/* offset + length <= INT64_MAX: no overflow for any alignment */
	req->map_start = req->offset / a * a;
	req->map_end = (req->offset + req->length + a - 1) / a * a;
}
