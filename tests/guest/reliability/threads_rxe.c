// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Threads registering and deregistering DAX MRs on rxe, first
 * all on one file, then each on its own files, for --seconds in total.
 *
 * MRs travel between threads through a slot table: a thread finding a slot
 * empty registers into it, finding it full takes the MR, writes and
 * persists through it and deregisters it, so registration and
 * deregistration of one MR happen on different threads.  Threads also
 * persist MRs they merely peek at, racing their deregistration by another
 * thread: the live-MR registry (providers/daxlease/registry.h) promises
 * that such a call either completes or fails with EINVAL, never touches
 * freed memory.
 *
 * Backing files: page-cache files (always), FS-DAX files on DAXLEASE_EXT4
 * when the kernel lets them be registered, DAXLEASE_DEVDAX when present.
 * Afterwards the process must have the fds, mappings, leases and file_pins
 * it started with.  The -tsan and -asan builds of this program are the
 * sanitizer runs.  The device is the one the harness set up
 * (DAXLEASE_RDMA_DEV, else the first one): when it cannot be opened the
 * program fails ("rdma_device") instead of skipping what it is for.
 *
 * usage: threads_rxe [--seconds N] [--threads N]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/verbs_dax.h>

#include "dtest.h"
#include "dl_snapshot.h"

#define MiB (1UL << 20)
#define SLOTS 16
#define MR_LEN (64 * 1024)
#define FILE_LEN (4 * MiB)

enum { K_PAGECACHE, K_FSDAX, K_DEVDAX, K_MAX };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_dax_caps caps;
static double seconds = 60;
static int nthreads = 8;
static char dir[256];
static bool kind_ok[K_MAX];
static char shared_file[K_MAX][320];
static const char *devdax;
static bool many_files;
static atomic_bool stop;
static _Atomic(struct ibv_mr *) slot[SLOTS];

struct worker {
	pthread_t tid;
	int id;
	unsigned int seed;
	char file[K_MAX][320];
	unsigned long regs, deregs, persists, raced, conflicts;
	unsigned long errors;
	char first_error[512];
};

static void worker_err(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void worker_err(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->errors++) {
		va_start(ap, fmt);
		vsnprintf(w->first_error, sizeof(w->first_error), fmt, ap);
		va_end(ap);
	}
}

static struct ibv_mr *reg_one(struct worker *w, int k)
{
	struct ibv_dax_mr_init_attr a = {
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_mr *mr;

	if (k == K_DEVDAX) {
		/* devdax offsets must keep the device's 2 MiB alignment */
		a.path = devdax;
		a.offset = (uint64_t)(rand_r(&w->seed) % 4) * 2 * MiB;
		a.length = 2 * MiB;
	} else {
		a.path = many_files ? w->file[k] : shared_file[k];
		a.offset = (uint64_t)(rand_r(&w->seed) %
				      (FILE_LEN / MR_LEN)) * MR_LEN;
		a.length = MR_LEN;
	}
	mr = ibv_reg_dax_mr(pd, &a);
	if (!mr) {
		/*
		 * Exclusive layout leases of one FS-DAX file conflict with
		 * each other even within a process: a documented EAGAIN.
		 */
		if (k == K_FSDAX && errno == EAGAIN)
			w->conflicts++;
		else
			worker_err(w, "register %s [%llu, +%zu): %s \"%s\"",
				   a.path, (unsigned long long)a.offset,
				   a.length, strerror(errno), ibv_dax_errmsg());
		return NULL;
	}
	w->regs++;
	return mr;
}

static void use_and_dereg(struct worker *w, struct ibv_mr *mr)
{
	struct ibv_dax_mr_attr q = {};
	int ret;

	if (ibv_query_dax_mr(mr, &q, sizeof(q))) {
		worker_err(w, "query: %s \"%s\"", strerror(errno),
			   ibv_dax_errmsg());
	} else {
		memset(mr->addr, w->id, 256);
		if (ibv_dax_mr_persist(mr, 0, 256))
			worker_err(w, "persist %s: %s \"%s\"", q.path,
				   strerror(errno), ibv_dax_errmsg());
		else
			w->persists++;
	}
	ret = ibv_dereg_dax_mr(mr);
	if (ret)
		worker_err(w, "dereg: %s \"%s\"", strerror(ret),
			   ibv_dax_errmsg());
	else
		w->deregs++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stop)) {
		int s = rand_r(&w->seed) % SLOTS;
		int k = rand_r(&w->seed) % K_MAX;
		struct ibv_mr *mr;

		if (!kind_ok[k])
			k = K_PAGECACHE;
		if (rand_r(&w->seed) % 4 == 0) {
			/* race someone else's deregistration */
			mr = atomic_load(&slot[s]);
			if (mr) {
				if (!ibv_dax_mr_persist(mr, 0, 64))
					w->persists++;
				else if (errno == EINVAL)
					w->raced++;
				else
					worker_err(w, "racing persist: %s \"%s\"",
						   strerror(errno),
						   ibv_dax_errmsg());
			}
			continue;
		}
		mr = atomic_exchange(&slot[s], NULL);
		if (mr) {
			use_and_dereg(w, mr);
			continue;
		}
		mr = reg_one(w, k);
		if (mr) {
			mr = atomic_exchange(&slot[s], mr);
			if (mr)	/* someone filled it meanwhile */
				use_and_dereg(w, mr);
		}
	}
	return NULL;
}

static int make_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ret;

	if (fd < 0)
		return -1;
	/* allocate the blocks: FS-DAX faults must not allocate later */
	ret = posix_fallocate(fd, 0, size);
	close(fd);
	return ret ? -1 : 0;
}

/* ctx and pd on DAXLEASE_RDMA_DEV (or the first device); else why */
static void open_rdma(char *why, size_t len)
{
	const char *want = getenv("DAXLEASE_RDMA_DEV");
	struct ibv_device **list;
	int i, n = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(why, len, "ibv_get_device_list: %s", strerror(errno));
		return;
	}
	snprintf(why, len, "no RDMA device %s among the %d listed",
		 want ? want : "(the first device)", n);
	for (i = 0; i < n; i++) {
		if (want && strcmp(ibv_get_device_name(list[i]), want))
			continue;
		errno = 0;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			snprintf(why, len, "ibv_open_device(%s): %s",
				 ibv_get_device_name(list[i]),
				 strerror(errno ? errno : ENODEV));
		break;
	}
	ibv_free_device_list(list);
	if (!ctx)
		return;
	errno = 0;
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		snprintf(why, len, "ibv_alloc_pd on %s: %s",
			 ibv_get_device_name(ctx->device),
			 strerror(errno ? errno : ENOMEM));
}

static void run_phase(const char *name, struct worker *w, double secs)
{
	unsigned long regs = 0, deregs = 0, persists = 0, raced = 0,
		      conflicts = 0, errors = 0;
	struct ibv_mr *mr;
	int i, bad = 0;

	dtest_clock();
	atomic_store(&stop, false);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i])) {
			dtest_fail(name, "pthread_create failed");
			nthreads = i;
			break;
		}
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, true);
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].tid, NULL);
		regs += w[i].regs;
		deregs += w[i].deregs;
		persists += w[i].persists;
		raced += w[i].raced;
		conflicts += w[i].conflicts;
		errors += w[i].errors;
		if (w[i].errors && !bad++)
			dtest_fail(name, "thread %d: %lu errors; first: %s", i,
				   w[i].errors, w[i].first_error);
		w[i].regs = w[i].deregs = w[i].persists = 0;
		w[i].raced = w[i].conflicts = w[i].errors = 0;
	}
	/* drain the slots on this thread */
	for (i = 0; i < SLOTS; i++) {
		mr = atomic_exchange(&slot[i], NULL);
		if (mr && !ibv_dereg_dax_mr(mr))
			deregs++;
		else if (mr)
			errors++;
	}
	if (!bad)
		dtest_check(name, errors == 0 && regs > 0 && regs == deregs,
			    "%d threads %.0f s: %lu reg, %lu dereg, %lu persist, %lu raced dereg (EINVAL), %lu fsdax lease conflicts (EAGAIN), %lu errors",
			    nthreads, secs, regs, deregs, persists, raced,
			    conflicts, errors);
}

int main(int argc, char **argv)
{
	const char *t = getenv("TMPDIR"), *ext4 = getenv("DAXLEASE_EXT4");
	struct dl_snap before, after;
	struct worker *w;
	char why[512];
	struct stat st;
	int i, k;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			nthreads = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--seconds N] [--threads N]\n",
				argv[0]);
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	if (nthreads < 1 || nthreads > 64 || seconds <= 0) {
		fprintf(stderr, "bad --threads or --seconds\n");
		return 2;
	}

	dtest_begin("threads_rxe");
	open_rdma(why, sizeof(why));
	if (!pd) {
		dtest_fail("rdma_device", "%s: nothing to run the threads on",
			   why);
		return dtest_end();
	}
	if (ibv_dax_query_caps(ctx, &caps, sizeof(caps))) {
		dtest_fail("caps", "%s \"%s\"", strerror(errno),
			   ibv_dax_errmsg());
		return dtest_end();
	}

	snprintf(dir, sizeof(dir), "%.200s/dl-threads.%d", t ? t : "/tmp",
		 (int)getpid());
	mkdir(dir, 0700);
	w = calloc(nthreads, sizeof(*w));
	kind_ok[K_PAGECACHE] = true;
	kind_ok[K_FSDAX] = ext4 && caps.strategy_fsdax != IBV_DAX_MR_STRATEGY_NONE;
	devdax = getenv("DAXLEASE_DEVDAX");
	kind_ok[K_DEVDAX] = devdax && !stat(devdax, &st) && S_ISCHR(st.st_mode);
	for (k = 0; k < K_DEVDAX; k++) {
		const char *base = k == K_FSDAX ? ext4 : dir;

		if (!kind_ok[k])
			continue;
		snprintf(shared_file[k], sizeof(shared_file[k]),
			 "%.200s/dl-threads.%d.shared", base, (int)getpid());
		kind_ok[k] = !make_file(shared_file[k], FILE_LEN);
		for (i = 0; i < nthreads && kind_ok[k]; i++) {
			snprintf(w[i].file[k], sizeof(w[i].file[k]),
				 "%.200s/dl-threads.%d.%d", base, (int)getpid(),
				 i);
			kind_ok[k] = !make_file(w[i].file[k], FILE_LEN);
		}
	}
	for (i = 0; i < nthreads; i++) {
		w[i].id = i;
		w[i].seed = 0x5eed + i;
	}
	printf("# %d threads, %.0f s; kinds: pagecache%s%s\n", nthreads,
	       seconds, kind_ok[K_FSDAX] ? " fsdax" : "",
	       kind_ok[K_DEVDAX] ? " devdax" : "");
	if (!kind_ok[K_FSDAX])
		dtest_skip("fsdax", "FS-DAX files cannot be registered here (%s)",
			   ext4 ? "caps.strategy_fsdax is NONE: stock kernel, no ODP" :
				  "no DAXLEASE_EXT4");
	if (!kind_ok[K_DEVDAX])
		dtest_skip("devdax", "no DAXLEASE_DEVDAX device");

	dl_snap_take(&before);
	many_files = false;
	run_phase("one_file", w, seconds / 2);
	many_files = true;
	run_phase("many_files", w, seconds / 2);
	dl_snap_take(&after);
	/*
	 * Threads leave per-thread malloc arenas and cached stacks behind;
	 * a leaked file mapping is named and still compared.
	 */
	after.anon = before.anon;
	dtest_check("no_leak", dl_snap_same(&before, &after, why, sizeof(why)),
		    "%s", why[0] ? why : "fds, mappings, leases, file_pins as before");
	dl_snap_free(&before);
	dl_snap_free(&after);

	for (k = 0; k < K_DEVDAX; k++) {
		if (!shared_file[k][0])
			continue;
		unlink(shared_file[k]);
		for (i = 0; i < nthreads; i++)
			if (w[i].file[k][0])
				unlink(w[i].file[k]);
	}
	rmdir(dir);
	free(w);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return dtest_end();
}
