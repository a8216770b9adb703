// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Which registration strategy a file gets (doc/design.md §3.1).  Pure:
 * the caller passes the probed capabilities, so tests can walk the whole
 * table.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "errmsg.h"
#include "strategy.h"

const char *dl_strategy_name(enum ibv_dax_mr_strategy s)
{
	switch (s) {
	case IBV_DAX_MR_STRATEGY_LEASE_PIN:
		return "lease-pin";
	case IBV_DAX_MR_STRATEGY_PLAIN:
		return "plain";
	case IBV_DAX_MR_STRATEGY_ODP:
		return "odp";
	default:
		return "none";
	}
}

int dl_strategy_pagecache_refused(uint32_t flags, bool odp, char *msg,
				  size_t msglen)
{
	if (msg)
		snprintf(msg, msglen,
			 "this kernel refuses writable long-term pins of page-cache files (Linux 6.5 and later: their pages need writeback): mount the file system with -o dax, register read-only (no IBV_ACCESS_LOCAL_WRITE/REMOTE_WRITE/REMOTE_ATOMIC/MW_BIND), or set IBV_DAX_MR_ALLOW_ODP on a device with ODP%s",
			 odp ? (flags & IBV_DAX_MR_ALLOW_ODP ?
					"" : " (this device has ODP)") :
			       " (this device has none)");
	return EOPNOTSUPP;
}

static int choose_pagecache(uint32_t flags, unsigned int pin,
			    const struct ibv_dax_caps *caps,
			    enum ibv_dax_mr_strategy *out, char *msg,
			    size_t msglen)
{
	bool odp = caps->cap_flags & IBV_DAX_CAP_ODP;

	if (flags & IBV_DAX_MR_NO_FALLBACK) {
		if (msg)
			snprintf(msg, msglen,
				 "file is not on a DAX mount (page cache) and IBV_DAX_MR_NO_FALLBACK refuses a page-cache pin: mount the file system with -o dax");
		return EOPNOTSUPP;
	}
	/*
	 * Linux 6.5+ GUP refuses writable long-term pins of file mappings
	 * that need dirty tracking (mm/gup.c writable_file_mapping_allowed)
	 * with EFAULT; read-only pins and shmem are fine.
	 */
	if ((pin & DL_PIN_WRITE) && !(pin & DL_PIN_NO_WRITEBACK) &&
	    !(caps->cap_flags & IBV_DAX_CAP_PAGECACHE_WRITE_PIN)) {
		if ((flags & IBV_DAX_MR_ALLOW_ODP) && odp) {
			*out = IBV_DAX_MR_STRATEGY_ODP;
			return 0;
		}
		return dl_strategy_pagecache_refused(flags, odp, msg, msglen);
	}
	*out = IBV_DAX_MR_STRATEGY_PLAIN;
	return 0;
}

int dl_strategy_choose(enum ibv_dax_file_kind kind, uint32_t flags,
		       unsigned int pin, const struct ibv_dax_caps *caps,
		       enum ibv_dax_mr_strategy *out, char *msg, size_t msglen)
{
	bool lease = caps->cap_flags & IBV_DAX_CAP_LAYOUT_LEASE;
	bool ext = caps->cap_flags & IBV_DAX_CAP_EXT_REG_MR;
	bool odp = caps->cap_flags & IBV_DAX_CAP_ODP;
	const char *missing;

	*out = IBV_DAX_MR_STRATEGY_NONE;
	if (msg && msglen)
		msg[0] = 0;

	switch (kind) {
	case IBV_DAX_FILE_DEVDAX:
		/* device DAX pins without a lease (doc/design.md §1.0) */
		*out = IBV_DAX_MR_STRATEGY_PLAIN;
		return 0;
	case IBV_DAX_FILE_PAGECACHE:
		return choose_pagecache(flags, pin, caps, out, msg, msglen);
	case IBV_DAX_FILE_FSDAX:
		break;
	default:
		if (msg)
			snprintf(msg, msglen, "unknown file kind");
		return ENODEV;
	}

	if (lease && ext) {
		*out = IBV_DAX_MR_STRATEGY_LEASE_PIN;
		return 0;
	}
	if ((flags & IBV_DAX_MR_ALLOW_ODP) && odp &&
	    !(flags & IBV_DAX_MR_NO_FALLBACK)) {
		*out = IBV_DAX_MR_STRATEGY_ODP;
		return 0;
	}

	if (!lease && !ext)
		missing = "the F_LAYOUT|F_EXCLUSIVE layout lease and the extended uverbs REG_MR";
	else if (!lease)
		missing = "the F_LAYOUT|F_EXCLUSIVE layout lease";
	else
		missing = "the extended uverbs REG_MR method";
	if (msg)
		snprintf(msg, msglen,
			 "FS-DAX long-term pin needs kernel support for %s (boot a kernel built with the daxlease series: " DL_KERNEL_REMEDY ")%s",
			 missing,
			 odp && !(flags & IBV_DAX_MR_NO_FALLBACK) ?
				 "; or set IBV_DAX_MR_ALLOW_ODP, the device has ODP" :
				 odp ? "" : "; the device has no ODP to fall back to");
	return EOPNOTSUPP;
}
