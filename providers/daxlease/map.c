// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Mapping the registered range with mmap(2) as libpmem2 would:
 * MAP_SHARED_VALIDATE|MAP_SYNC on FS-DAX and device DAX, a shared
 * page-cache mapping otherwise, with the store granularity
 * pmem2_map_new() would choose and libpmem2's persist function for it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "errmsg.h"
#include "map.h"

/*
 * libpmem2's pmem2_map_new() decides eADR (pmem2_auto_flush()) on every
 * call by walking /sys/bus/nd/devices: hundreds of stat calls per
 * registration on a machine with NVDIMM namespaces (11 ms of a 16 ms
 * registration in the TCG guest).  The answer is a property of the
 * platform, so it is found once here, the same way: eADR when every
 * region reports persistence_domain "cpu_cache".
 *
 * libpmem2's flush functions do not depend on the mapping (CPU cache
 * flush + fence, or a fence alone with eADR), but they are only handed
 * out for a struct pmem2_map, and libpmem2 1.12 leaks 144 bytes for
 * every map made by pmem2_map_from_existing().  So the library makes one
 * such map per granularity, once, over two pages of its own .bss (no new
 * mapping, nothing in the way of other libpmem2 users), and uses their
 * persist functions for every MR.
 */
static pthread_once_t map_once = PTHREAD_ONCE_INIT;
static bool eadr;
static struct pmem2_map *persist_fn_map[2];	/* BYTE, CACHE_LINE */
static pmem2_persist_fn persist_fn[2];
static char persist_fn_pages[2][4096] __attribute__((aligned(4096)));

static void eadr_probe(void)
{
	const char *base = "/sys/bus/nd/devices";
	char path[512], buf[32];
	struct dirent *d;
	int regions = 0, cpu_cache = 0;
	ssize_t n;
	DIR *dir;
	int fd;

	dir = opendir(base);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "region", 6))
			continue;
		regions++;
		snprintf(path, sizeof(path), "%s/%s/persistence_domain", base,
			 d->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			cpu_cache += !strncmp(buf, "cpu_cache", 9);
		}
	}
	closedir(dir);
	eadr = regions && regions == cpu_cache;
}

static void map_init(void)
{
	static const enum pmem2_granularity g[2] = {
		PMEM2_GRANULARITY_BYTE, PMEM2_GRANULARITY_CACHE_LINE,
	};
	struct pmem2_source *src;
	int i;

	eadr_probe();
	if (pmem2_source_from_anon(&src, sizeof(persist_fn_pages)))
		return;
	for (i = 0; i < 2; i++)
		if (!pmem2_map_from_existing(&persist_fn_map[i], src,
					     persist_fn_pages[i],
					     sizeof(persist_fn_pages[i]), g[i]))
			persist_fn[i] =
				pmem2_get_persist_fn(persist_fn_map[i]);
	pmem2_source_delete(&src);
}

/*
 * mmap MAP_SYNC first (with *sync true), as libpmem2 does: it succeeds on
 * FS-DAX and device DAX and makes CPU cache flushes enough; else a plain
 * shared mapping, *sync false.
 */
static void *map_sync(void *a, int fd, uint64_t off, size_t len, int prot,
		      int fixed, bool *sync)
{
	void *p;

	if (*sync) {
		p = mmap(a, len, prot, MAP_SHARED_VALIDATE | MAP_SYNC | fixed,
			 fd, (off_t)off);
		if (p != MAP_FAILED ||
		    (errno != EOPNOTSUPP && errno != EINVAL))
			return p;
	}
	*sync = false;
	return mmap(a, len, prot, MAP_SHARED | fixed, fd, (off_t)off);
}

/*
 * mmap at an address congruent to the file offset modulo align (device
 * DAX faults in align-sized pages; for FS-DAX, 2 MiB congruence lets the
 * file's 2 MiB-aligned blocks be mapped by PMDs even when the range starts
 * inside one).  The kernel places DAX mappings so itself
 * (thp_get_unmapped_area() for FS-DAX, dax_get_unmapped_area() for device
 * DAX): take its address when it is congruent, which is one system call;
 * otherwise reserve twice the alignment more, map over the reservation and
 * trim it.
 */
static void *map_aligned(int fd, uint64_t off, size_t len, size_t align,
			 int prot, bool *sync)
{
	size_t rlen = len + 2 * align;
	uintptr_t a;
	void *r, *p;
	int err;

	*sync = true;
	p = map_sync(NULL, fd, off, len, prot, 0, sync);
	if (p == MAP_FAILED || align <= (size_t)sysconf(_SC_PAGESIZE) ||
	    !(((uintptr_t)p - (uintptr_t)off) & (align - 1)))
		return p;
	munmap(p, len);

	if (rlen < len) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	r = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return MAP_FAILED;
	a = (((uintptr_t)r + align - 1) & ~(uintptr_t)(align - 1)) +
	    (uintptr_t)(off & (align - 1));
	p = map_sync((void *)a, fd, off, len, prot, MAP_FIXED, sync);
	if (p == MAP_FAILED) {
		err = errno;
		munmap(r, rlen);
		errno = err;
		return MAP_FAILED;
	}
	/* trim the reservation around the mapping */
	if (a > (uintptr_t)r)
		munmap(r, a - (uintptr_t)r);
	if ((uintptr_t)r + rlen > a + len)
		munmap((void *)(a + len), (uintptr_t)r + rlen - (a + len));
	return p;
}

/* the granularity pmem2_map_new() would choose, and its persist function */
static int set_persist(const struct dl_source *src, struct dl_map *map,
		       bool sync)
{
	/* get_min_granularity() */
	map->granularity = !sync ? PMEM2_GRANULARITY_PAGE :
			   eadr ? PMEM2_GRANULARITY_BYTE :
				  PMEM2_GRANULARITY_CACHE_LINE;
	if (map->granularity == PMEM2_GRANULARITY_PAGE)
		return 0;
	map->persist = persist_fn[map->granularity ==
				  PMEM2_GRANULARITY_CACHE_LINE];
	if (!map->persist)
		return dl_err(ENOMEM,
			      "libpmem2 has no persist function for %s: %s",
			      src->path, pmem2_errormsg());
	return 0;
}

int dl_map_range(const struct dl_source *src, const struct dl_request *req,
		 struct dl_map *map)
{
	uint64_t start = req->map_start, end = req->map_end;
	size_t va_align = src->align;
	bool sync;

	memset(map, 0, sizeof(*map));
	pthread_once(&map_once, map_init);
	/* PMDs: DAX only; a page cache mapping gains nothing from congruence */
	if (src->kind != IBV_DAX_FILE_PAGECACHE && end - start >= (2u << 20) &&
	    va_align < (2u << 20))
		va_align = 2u << 20;

	map->base = map_aligned(src->fd, start, end - start, va_align,
				src->writable ? PROT_READ | PROT_WRITE :
						PROT_READ, &sync);
	if (map->base == MAP_FAILED) {
		int err = errno;

		map->base = NULL;
		return dl_err(err, "cannot map [0x%llx, 0x%llx) of %s: %s",
			      (unsigned long long)start,
			      (unsigned long long)end, src->path,
			      strerror(err));
	}
	map->map_len = end - start;
	if (set_persist(src, map, sync)) {
		munmap(map->base, map->map_len);
		map->base = NULL;
		return -1;
	}
	map->addr = (char *)map->base + (req->offset - start);
	map->length = req->length;
	return 0;
}

int dl_map_adopt(const struct dl_source *src, const struct dl_request *req,
		 struct dl_map *map)
{
	/* device DAX faults are synchronous: MAP_SYNC changes nothing */
	bool sync = src->kind == IBV_DAX_FILE_DEVDAX ||
		    (src->kind == IBV_DAX_FILE_FSDAX && src->mapped_sync);

	memset(map, 0, sizeof(*map));
	pthread_once(&map_once, map_init);
	if (set_persist(src, map, sync))
		return -1;
	map->addr = req->addr;
	map->length = req->length;
	return 0;
}

void dl_map_unmap(struct dl_map *map)
{
	if (map->base)
		munmap(map->base, map->map_len);
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
