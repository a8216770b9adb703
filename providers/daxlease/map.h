/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The mapping of a registered range and how stores to it are persisted.
 */
#ifndef DAXLEASE_MAP_H
#define DAXLEASE_MAP_H

#include <stddef.h>

#include <libpmem2.h>
#include <infiniband/verbs_dax.h>

#include "request.h"
#include "source.h"

struct dl_map {
	void *base;			/* mapping of req->map_start; NULL if
					 * the mapping is the caller's */
	size_t map_len;
	void *addr;			/* mapping of req->offset */
	size_t length;
	pmem2_persist_fn persist;
	enum pmem2_granularity granularity;
};

/*
 * Map [req->map_start, req->map_end) of src shared, read-only unless the
 * source is writable; addr points at req->offset.
 */
int dl_map_range(const struct dl_source *src, const struct dl_request *req,
		 struct dl_map *map);
/*
 * IBV_DAX_MR_INIT_ADDR: the caller's mapping of the range, which is never
 * unmapped here; persisted by CPU cache flushes if it is mapped MAP_SYNC
 * (or is device DAX), else by msync(2).
 */
int dl_map_adopt(const struct dl_source *src, const struct dl_request *req,
		 struct dl_map *map);
void dl_map_unmap(struct dl_map *map);
/* Make [addr, addr + len) inside the map persistent; 0 or -1/errno. */
int dl_map_persist(struct dl_map *map, void *addr, size_t len);
enum ibv_dax_persist_granularity dl_map_granularity(const struct dl_map *map);

#endif /* DAXLEASE_MAP_H */
