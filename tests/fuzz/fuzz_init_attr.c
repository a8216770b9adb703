// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libFuzzer target for dl_request_init() and dl_strategy_choose():
 * the bytes fill a struct ibv_dax_mr_init_attr, a message buffer size and
 * a capability set.  Checks the documented contract: only the documented
 * errno values, a NUL-terminated non-empty reason on failure that fits
 * the buffer, and on success an attr that really is valid (no unknown
 * bits, non-zero length, offset + length within off_t, a path or fd).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "request.h"
#include "strategy.h"

/* not assert(): release builds define NDEBUG */
#define FUZZ_CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #c);		\
			abort();					\
		}							\
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	uint64_t comp_mask;
	uint64_t offset;
	uint64_t length;
	uint64_t iova;
	int32_t fd;
	uint32_t access;
	uint32_t flags;
	uint16_t msglen;
	uint8_t has_path;
	uint8_t kind;
	uint8_t caps;
	uint64_t addr;		/* IBV_DAX_MR_INIT_ADDR; 0 in older seeds */
} __attribute__((packed));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibv_dax_mr_init_attr a = {};
	enum ibv_dax_mr_strategy strat;
	struct ibv_dax_caps caps = {};
	struct dl_request req;
	char msg[DL_ERRMSG_MAX + 8];
	struct input in = {};
	size_t msglen;
	uint32_t flags;
	int ret;

	memcpy(&in, data, size < sizeof(in) ? size : sizeof(in));
	a.comp_mask = in.comp_mask;
	a.offset = in.offset;
	a.length = in.length;
	a.iova = in.iova;
	a.fd = in.fd;
	a.access = in.access;
	a.flags = in.flags;
	a.addr = (void *)(uintptr_t)in.addr;
	a.path = (in.has_path & 1) ? "/mnt/pmem/fuzz" : NULL;
	msglen = in.msglen % (DL_ERRMSG_MAX + 1);

	memset(msg, 0x7f, sizeof(msg));
	ret = dl_request_init(&req, (in.has_path & 2) ? NULL : &a,
			      (in.has_path & 4) ? NULL : msg, msglen);
	FUZZ_CHECK(ret == 0 || ret == EINVAL || ret == EOPNOTSUPP ||
	       ret == EOVERFLOW || ret == EBADF);
	/* never past the buffer; terminated and non-empty when it fits */
	FUZZ_CHECK((unsigned char)msg[msglen] == 0x7f || msglen == 0);
	if (!(in.has_path & 4) && msglen) {
		FUZZ_CHECK(memchr(msg, 0, msglen));
		if (ret && msglen > 1)
			FUZZ_CHECK(msg[0]);
		if (!ret)
			FUZZ_CHECK(!msg[0]);
	}
	if (in.has_path & 2) {
		FUZZ_CHECK(ret == EINVAL);
		return 0;
	}
	if (!ret) {
		flags = req.flags;
		FUZZ_CHECK(flags == ((a.comp_mask & IBV_DAX_MR_INIT_FLAGS) ?
				     a.flags : 0));
		FUZZ_CHECK(req.map_start <= a.offset &&
			   req.map_end >= a.offset + a.length);
		FUZZ_CHECK(!req.has_iova ||
			   !((req.iova ^ ((a.comp_mask & IBV_DAX_MR_INIT_ADDR) ?
					  (uintptr_t)a.addr : a.offset)) &
			     ((uint64_t)sysconf(_SC_PAGESIZE) - 1)));
		FUZZ_CHECK(!(a.comp_mask & ~(uint64_t)DL_INIT_ATTR_COMP_MASK));
		FUZZ_CHECK(!(flags & ~(uint32_t)DL_MR_FLAGS_ALL));
		FUZZ_CHECK(a.length != 0);
		FUZZ_CHECK(a.offset <= (uint64_t)INT64_MAX);
		FUZZ_CHECK(a.length <= (uint64_t)INT64_MAX - a.offset);
		FUZZ_CHECK(a.path || a.fd >= 0 ||
			   ((a.comp_mask & IBV_DAX_MR_INIT_ADDR) &&
			    a.fd == -1 && !a.offset && req.find_file));
		if (a.comp_mask & IBV_DAX_MR_INIT_ADDR)
			FUZZ_CHECK(req.addr == a.addr && a.addr &&
				   !(flags & IBV_DAX_MR_CREATE) &&
				   (uintptr_t)a.addr + a.length >
					   (uintptr_t)a.addr);
		else
			FUZZ_CHECK(!req.addr);
		FUZZ_CHECK(!(a.access & IBV_ACCESS_ON_DEMAND));
		FUZZ_CHECK(!(flags & IBV_DAX_MR_ALLOW_ODP) ||
		       !(flags & IBV_DAX_MR_NO_FALLBACK));
		if (!(a.comp_mask & IBV_DAX_MR_INIT_FLAGS))
			FUZZ_CHECK(!a.flags);
		if (!(a.comp_mask & IBV_DAX_MR_INIT_IOVA))
			FUZZ_CHECK(!a.iova);
	}

	/* the strategy table on whatever kind and caps the bytes say */
	/* every bit, known or not: unknown ones must not matter */
	caps.cap_flags = in.caps;
	flags = (a.comp_mask & IBV_DAX_MR_INIT_FLAGS) ? a.flags : 0;
	ret = dl_strategy_choose((enum ibv_dax_file_kind)(in.kind % 6), flags,
				 in.kind / 6 % 4, &caps, &strat, msg, msglen);
	if (ret) {
		FUZZ_CHECK(ret == EOPNOTSUPP || ret == ENODEV || ret == EINVAL);
		FUZZ_CHECK(strat == IBV_DAX_MR_STRATEGY_NONE);
		return 0;
	}
	FUZZ_CHECK(strat == IBV_DAX_MR_STRATEGY_LEASE_PIN ||
	       strat == IBV_DAX_MR_STRATEGY_PLAIN ||
	       strat == IBV_DAX_MR_STRATEGY_ODP);
	if (strat == IBV_DAX_MR_STRATEGY_LEASE_PIN)
		FUZZ_CHECK((caps.cap_flags & IBV_DAX_CAP_LAYOUT_LEASE) &&
			   (caps.cap_flags & IBV_DAX_CAP_EXT_REG_MR) &&
		       in.kind % 6 == IBV_DAX_FILE_FSDAX);
	if (strat == IBV_DAX_MR_STRATEGY_ODP)
		FUZZ_CHECK((caps.cap_flags & IBV_DAX_CAP_ODP) &&
			   !(flags & IBV_DAX_MR_NO_FALLBACK));
	if (in.kind % 6 == IBV_DAX_FILE_FSDAX)
		FUZZ_CHECK(strat != IBV_DAX_MR_STRATEGY_PLAIN);
	/* a writable pin of page cache that needs writeback: kernel's call */
	if (in.kind % 6 == IBV_DAX_FILE_PAGECACHE && strat ==
	    IBV_DAX_MR_STRATEGY_PLAIN && (in.kind / 6 % 4) == DL_PIN_WRITE)
		FUZZ_CHECK(caps.cap_flags & IBV_DAX_CAP_PAGECACHE_WRITE_PIN);
	return 0;
}
