// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Mapping the registered range with libpmem2: MAP_SHARED_VALIDATE|MAP_SYNC
 * on FS-DAX (libpmem2 tries it first), the device mapping on device DAX,
 * a shared page-cache mapping otherwise, plus the matching persist
 * function.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daxlease.h"

int dl_map_range(struct dl_source *src, uint64_t offset, size_t length,
		 struct dl_map *map)
{
	size_t a = src->align ? src->align : 1;
	uint64_t start = offset / a * a;
	uint64_t end = (offset + length + a - 1) / a * a;
	struct pmem2_config *cfg;
	int ret;

	memset(map, 0, sizeof(*map));
	ret = pmem2_config_new(&cfg);
	if (ret)
		return dl_err(ENOMEM, "pmem2_config_new: %s", pmem2_errormsg());
	/* PAGE is the weakest: accept whatever the source offers */
	pmem2_config_set_required_store_granularity(cfg,
						    PMEM2_GRANULARITY_PAGE);
	pmem2_config_set_offset(cfg, start);
	pmem2_config_set_length(cfg, end - start);
	pmem2_config_set_sharing(cfg, PMEM2_SHARED);
	pmem2_config_set_protection(cfg, src->writable ?
				    PMEM2_PROT_READ | PMEM2_PROT_WRITE :
				    PMEM2_PROT_READ);
	ret = pmem2_map_new(&map->map, cfg, src->psrc);
	pmem2_config_delete(&cfg);
	if (ret) {
		int err = ret > PMEM2_E_UNKNOWN && ret < 0 ? -ret : EINVAL;

		if (ret == PMEM2_E_MAP_RANGE || ret == PMEM2_E_LENGTH_OUT_OF_RANGE)
			err = ERANGE;
		return dl_err(err, "cannot map [0x%llx, 0x%llx) of %s: %s",
			      (unsigned long long)start,
			      (unsigned long long)end, src->path,
			      pmem2_errormsg());
	}
	map->base = pmem2_map_get_address(map->map);
	map->map_len = pmem2_map_get_size(map->map);
	map->addr = (char *)map->base + (offset - start);
	map->length = length;
	map->persist = pmem2_get_persist_fn(map->map);
	map->granularity = pmem2_map_get_store_granularity(map->map);
	return 0;
}

void dl_map_unmap(struct dl_map *map)
{
	if (map->map)
		pmem2_map_delete(&map->map);
	map->base = map->addr = NULL;
}

int dl_map_persist(struct dl_map *map, void *addr, size_t len)
{
	uintptr_t pg, s, e;

	if (!len)
		return 0;
	if (map->granularity != PMEM2_GRANULARITY_PAGE) {
		/* CPU cache flush (or nothing with eADR) + fence */
		map->persist(addr, len);
		return 0;
	}
	/* page cache: msync ourselves to see write-back errors */
	pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	s = (uintptr_t)addr & ~(pg - 1);
	e = ((uintptr_t)addr + len + pg - 1) & ~(pg - 1);
	if (msync((void *)s, e - s, MS_SYNC))
		return dl_err(errno, "msync of the MR range failed: %s",
			      strerror(errno));
	return 0;
}

enum ibv_dax_persist_granularity dl_map_granularity(const struct dl_map *map)
{
	switch (map->granularity) {
	case PMEM2_GRANULARITY_BYTE:
		return IBV_DAX_GRAN_BYTE;
	case PMEM2_GRANULARITY_CACHE_LINE:
		return IBV_DAX_GRAN_CACHE_LINE;
	default:
		return IBV_DAX_GRAN_PAGE;
	}
}
