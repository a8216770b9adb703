// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no RDMA device): MR handle checks and leak checks.
 * - query/persist/release_lease/dereg of NULL, of a foreign struct
 *   ibv_mr and of freed memory fail with EINVAL and a message, without
 *   touching the pointer (the live-MR registry is consulted first);
 * - registration failures, at every stage the host can reach (bad
 *   argument, bad file, range, mapping done then no device), repeated
 *   from several threads, leave the process with the same fds, mappings
 *   and leases as before (/proc/self/fd, /proc/self/maps, /proc/locks)
 *   and no entry in the live-MR registry (the test links the one copy
 *   of the library that ibv_reg_dax_mr() fills, daxlease_static);
 * - mapping and unmapping through the internal API does the same and
 *   maps the requested offset of an unaligned range.
 * Registrations that succeed need a pd: the guest suites cover them.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>

#include <infiniband/verbs_dax.h>

#include "errmsg.h"
#include "map.h"
#include "registry.h"
#include "request.h"
#include "source.h"
#include "unit.h"
#include "unit_source.h"

static struct ibv_pd fake_pd;

static char *file_ok;
static int thread_bad;

static int fail_round(void)
{
	struct ibv_dax_mr_init_attr a = { .path = file_ok, .length = 8192 };
	int bad = 0;

	/* good file: opened, mapped, then no context */
	a.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	bad += ibv_reg_dax_mr(&fake_pd, &a) != NULL || errno != EINVAL;
	/* range past EOF: opened, classified, refused */
	a.offset = 1 << 20;
	bad += ibv_reg_dax_mr(&fake_pd, &a) != NULL || errno != ERANGE;
	a.offset = 0;
	/* not a dax source */
	a.path = "/dev/null";
	bad += ibv_reg_dax_mr(&fake_pd, &a) != NULL || errno != ENODEV;
	a.path = "/";
	a.access = 0;
	bad += ibv_reg_dax_mr(&fake_pd, &a) != NULL || errno != EISDIR;
	/* arguments */
	a.path = file_ok;
	a.length = 0;
	bad += ibv_reg_dax_mr(&fake_pd, &a) != NULL || errno != EINVAL;
	return bad;
}

static void *fail_thread(void *arg)
{
	int i, bad = 0;

	(void)arg;
	for (i = 0; i < 200; i++)
		bad += fail_round();
	__atomic_add_fetch(&thread_bad, bad, __ATOMIC_RELAXED);
	return NULL;
}

int main(void)
{
	struct ibv_dax_mr_init_attr a = {};
	struct ibv_dax_mr_attr qa = {};
	struct ibv_mr foreign = {}, *heap;
	volatile uintptr_t stale;
	int fds, maps, leases, i, bad, ret;
	struct dl_request req;
	struct dl_source src;
	struct dl_map map;
	pthread_t th[4];
	char *dir, *big;

	dtest_begin("unit-mr");
	dir = unit_tmpdir("/dev/shm");
	file_ok = dir ? unit_file(dir, "data", 65536) : NULL;
	if (!file_ok) {
		dtest_fail("setup", "%s", strerror(errno));
		return dtest_end();
	}

	/* ibv_dereg_dax_mr() returns the errno value, as ibv_dereg_mr() */
	errno = 0;
	ret = ibv_dereg_dax_mr(NULL);
	dtest_check("dereg/null", ret == EINVAL && errno == EINVAL, "ret %d",
		    ret);
	ret = ibv_dereg_dax_mr(&foreign);
	dtest_check("dereg/foreign", ret == EINVAL && errno == EINVAL &&
		    strstr(ibv_dax_errmsg(), "not a live DAX MR"),
		    "ret %d: %s", ret, ibv_dax_errmsg());
	ret = ibv_dereg_dax_mr(&foreign);
	dtest_check("dereg/foreign-twice", ret == EINVAL && errno == EINVAL,
		    "ret %d", ret);
	/* freed memory: only the pointer value is looked at */
	heap = malloc(sizeof(*heap));
	stale = (uintptr_t)heap;
	free(heap);
	ret = ibv_dereg_dax_mr((struct ibv_mr *)stale);
	dtest_check("dereg/freed-pointer", ret == EINVAL && errno == EINVAL,
		    "ret %d", ret);
	ret = ibv_query_dax_mr(&foreign, &qa, sizeof(qa));
	dtest_check("query/foreign", ret == -1 && errno == EINVAL, "ret %d",
		    ret);
	ret = ibv_query_dax_mr(&foreign, NULL, sizeof(qa));
	dtest_check("query/null-attr", ret == -1 && errno == EINVAL, "ret %d",
		    ret);
	/* comp_mask is an output: an input value is not looked at */
	qa.comp_mask = 2;
	ret = ibv_query_dax_mr(&foreign, &qa, sizeof(qa));
	dtest_check("query/comp-mask-is-output",
		    ret == -1 && errno == EINVAL &&
			    strstr(ibv_dax_errmsg(), "not a live DAX MR"),
		    "ret %d: %s", ret, ibv_dax_errmsg());
	ret = ibv_query_dax_mr(&foreign, &qa,
			       offsetof(struct ibv_dax_mr_attr, length));
	dtest_check("query/inlen-short",
		    ret == -1 && errno == EINVAL &&
			    strstr(ibv_dax_errmsg(), "inlen"),
		    "ret %d: %s", ret, ibv_dax_errmsg());
	ret = ibv_dax_mr_persist(&foreign, 0, 1);
	dtest_check("persist/foreign", ret == -1 && errno == EINVAL, "ret %d",
		    ret);
	ret = ibv_dax_mr_release_lease(&foreign);
	dtest_check("release-lease/foreign", ret == -1 && errno == EINVAL,
		    "ret %d", ret);
	ret = ibv_dax_mr_release_lease(NULL);
	dtest_check("release-lease/null", ret == -1 && errno == EINVAL,
		    "ret %d", ret);

	/* warm up lazily allocated state (thread-local buffers, libpmem2) */
	fail_round();
	fds = unit_count_fds();
	maps = unit_count_maps();
	leases = unit_count_leases();
	for (i = 0, bad = 0; i < 500; i++)
		bad += fail_round();
	/*
	 * All mappings under valgrind (its heap grows by mmap): the file's
	 * own mappings, which are what the library makes, must be gone.
	 */
	dtest_check("leaks/failures-serial",
		    !bad && fds == unit_count_fds() &&
			    (getenv("DAXLEASE_UNDER_VALGRIND") ||
			     maps == unit_count_maps()) &&
			    unit_count_maps_of(dir) == 0 &&
			    leases == unit_count_leases() &&
			    dl_registry_count() == 0,
		    "%d wrong errno; fds %d->%d maps %d->%d (of the file %d) leases %d->%d live %zu",
		    bad, fds, unit_count_fds(), maps, unit_count_maps(),
		    unit_count_maps_of(dir), leases, unit_count_leases(),
		    dl_registry_count());

	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, fail_thread, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* thread stacks may be cached by glibc: compare fds and leases */
	dtest_check("leaks/failures-threads",
		    !thread_bad && fds == unit_count_fds() &&
			    unit_count_maps_of(dir) == 0 &&
			    leases == unit_count_leases() &&
			    dl_registry_count() == 0,
		    "%d wrong errno; fds %d->%d live %zu", thread_bad, fds,
		    unit_count_fds(), dl_registry_count());

	/* internal map of an unaligned range */
	a.path = file_ok;
	a.offset = 5000;
	a.length = 3000;
	a.access = IBV_ACCESS_LOCAL_WRITE;
	maps = unit_count_maps();
	fds = unit_count_fds();
	ret = unit_open_source(&a, &req, &src);
	if (ret) {
		dtest_fail("map/open", "%s", ibv_dax_errmsg());
	} else {
		ret = dl_map_range(&src, &req, &map);
		dtest_check("map/unaligned-offset",
			    !ret && ((unsigned char *)map.addr)[0] ==
					    (5000 & 0xff) &&
				    (size_t)((char *)map.addr - (char *)map.base) ==
					    5000 % src.align &&
				    map.granularity == PMEM2_GRANULARITY_PAGE &&
				    dl_map_granularity(&map) ==
					    IBV_DAX_GRAN_PAGE,
			    "ret %d: %s", ret, ret ? ibv_dax_errmsg() : "");
		if (!ret) {
			((unsigned char *)map.addr)[1] = 0xa5;
			ret = dl_map_persist(&map, map.addr, 2);
			dtest_check("map/persist-msync", ret == 0, "%s",
				    ibv_dax_errmsg());
			dl_map_unmap(&map);
		}
		dl_source_close(&src);
		dtest_check("map/no-leak",
			    maps == unit_count_maps() &&
				    fds == unit_count_fds(),
			    "maps %d->%d fds %d->%d", maps, unit_count_maps(),
			    fds, unit_count_fds());
	}
	/* read-only mapping refuses writes: PROT_READ only */
	a.access = 0;
	if (!unit_open_source(&a, &req, &src)) {
		ret = dl_map_range(&src, &req, &map);
		dtest_check("map/readonly-prot",
			    !ret && mprotect(map.base, 4096,
					     PROT_READ | PROT_WRITE) == -1 &&
				    errno == EACCES,
			    "ret %d errno %d", ret, errno);
		if (!ret)
			dl_map_unmap(&map);
		dl_source_close(&src);
	}

	/*
	 * 2 MiB congruence: a source classified FS-DAX (forced here; the
	 * file is on tmpfs, which may or may not place the mapping so)
	 * mapped from 4 KiB on gets an address equal to the offset modulo
	 * 2 MiB, through the kernel's address or the reservation, and the
	 * reservation leaves no mapping behind.
	 */
	big = unit_file(dir, "big", (4 << 20) + 8192);
	a.path = big;
	a.offset = 4096;
	a.length = 3 << 20;
	a.access = IBV_ACCESS_LOCAL_WRITE;
	maps = unit_count_maps();
	if (big && !unit_open_source(&a, &req, &src)) {
		src.kind = IBV_DAX_FILE_FSDAX;
		ret = dl_map_range(&src, &req, &map);
		dtest_check("map/congruent-2m",
			    !ret && !(((uintptr_t)map.addr - 4096) &
				      ((2u << 20) - 1)) &&
				    ((unsigned char *)map.addr)[0] ==
					    (4096 & 0xff),
			    "ret %d addr %p: %s", ret, ret ? NULL : map.addr,
			    ret ? ibv_dax_errmsg() : "");
		if (!ret)
			dl_map_unmap(&map);
		dl_source_close(&src);
		dtest_check("map/congruent-no-leak", maps == unit_count_maps(),
			    "maps %d->%d", maps, unit_count_maps());
	} else {
		dtest_fail("map/congruent-2m", "%s",
			   big ? ibv_dax_errmsg() : strerror(errno));
	}
	free(big);

	unit_rmtree(dir);
	free(file_ok);
	free(dir);
	return dtest_end();
}
