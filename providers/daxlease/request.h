/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * A registration request: the caller's struct ibv_dax_mr_init_attr,
 * checked and normalised once, before anything is opened or mapped.  The
 * source, the mapping, the lease and REG_MR read this, never the attr.
 */
#ifndef DAXLEASE_REQUEST_H
#define DAXLEASE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs_dax.h>

#define DL_INIT_ATTR_COMP_MASK                                                \
	(IBV_DAX_MR_INIT_IOVA | IBV_DAX_MR_INIT_FLAGS | IBV_DAX_MR_INIT_ADDR)
#define DL_MR_FLAGS_ALL                                                       \
	(IBV_DAX_MR_RELEASE_LEASE | IBV_DAX_MR_ALLOW_ODP |                    \
	 IBV_DAX_MR_NO_FALLBACK | IBV_DAX_MR_CREATE)

struct dl_request {
	const char *path;	/* the caller's, during registration only */
	int fd;			/* when path is NULL; never closed */
	uint64_t offset;
	size_t length;
	unsigned int access;	/* IBV_ACCESS_* */
	uint32_t flags;		/* IBV_DAX_MR_*, 0 without INIT_FLAGS */
	bool write;		/* access needs a writable file and mapping */
	bool has_iova;		/* else the iova is mr->addr */
	uint64_t iova;
	/*
	 * IBV_DAX_MR_INIT_ADDR: the caller's mapping of the range; offset
	 * is filled from the mapping (dl_source_open()) when find_file
	 */
	void *addr;
	bool find_file;		/* neither path nor fd: find the mapped file */
	/* [offset, offset + length) widened to the mapping alignment */
	uint64_t map_start;
	uint64_t map_end;
};

/*
 * Pure: check attr and fill req, mapped in page units (dl_request_align()
 * widens that for a device DAX).  Returns 0 or:
 *   EINVAL      attr NULL; length 0; flags or iova set without their
 *               comp_mask bit; with IBV_DAX_MR_INIT_ADDR: addr NULL,
 *               IBV_DAX_MR_CREATE, or an offset without path or fd; ALLOW_ODP with NO_FALLBACK; unknown or
 *               contradictory IBV_ACCESS_* bits (ON_DEMAND: use
 *               IBV_DAX_MR_ALLOW_ODP; REMOTE_WRITE/ATOMIC without
 *               LOCAL_WRITE); an iova whose offset within a page differs
 *               from the file offset's
 *   EBADF       neither path nor fd >= 0 (without IBV_DAX_MR_INIT_ADDR;
 *               with it, fd < 0 other than -1)
 *   EOPNOTSUPP  unknown comp_mask or IBV_DAX_MR_* flag bits
 *   EOVERFLOW   offset + length wraps or exceeds the off_t range
 * msg (may be NULL) receives a one-line reason.
 */
int dl_request_init(struct dl_request *req,
		    const struct ibv_dax_mr_init_attr *attr, char *msg,
		    size_t msglen);
/* Map in units of align (a power of two, the source's alignment). */
void dl_request_align(struct dl_request *req, size_t align);

#endif /* DAXLEASE_REQUEST_H */
