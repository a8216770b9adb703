// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Many threads through every part of daxlease that runs without a
 * protection domain, for a fixed time (60 s under TSan in
 * tests/reliability/run-tsan.sh): the process-wide lease probe
 * (pthread_once) and the uncached one, source open/classify/range checks
 * on per-thread files, the attribute validator, the strategy table, the
 * file_pins parser, the MR registry's rejection of foreign pointers, and
 * the thread-local message.
 *
 * Every call's result is checked against what it must be, and each
 * failure's message must name the calling thread's own file: a message
 * shared between threads shows up as another thread's path.  At the end
 * the process must have the fds and mappings it started with.
 *
 * Built normally it is a ctest; run-tsan.sh builds it with -DENABLE_TSAN=ON
 * and runs it for 60 s.
 *
 * usage: threads_host [--seconds N] [--threads N]
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

#include "caps.h"
#include "errmsg.h"
#include "pins.h"
#include "registry.h"
#include "request.h"
#include "source.h"
#include "strategy.h"
#include "dtest.h"
#include "dl_snapshot.h"

#define MiB (1UL << 20)

static double seconds = 5;
static int nthreads = 8;
static char dir[256];
static atomic_bool stop;

struct worker {
	pthread_t tid;
	int id;
	char file[320];
	unsigned long ops;
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

static const char pins_text[] =
	"4: /dev/infiniband/uverbs0\n"
	"\t/mnt/pmem/foo\n"
	"\t/mnt/pmem/bar\n"
	"/mnt/pmem/foo\n"
	"\n"
	"7: /dev/infiniband/uverbs1\n"
	"\t/mnt/pmem/baz";

static void one_round(struct worker *w)
{
	struct ibv_dax_mr_init_attr a = {
		.path = w->file, .length = MiB,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_dax_caps caps = { .strategy_fsdax = IBV_DAX_MR_STRATEGY_NONE };
	enum ibv_dax_mr_strategy strat;
	struct dl_request req;
	struct dl_source src;
	struct dt_pins pins;
	struct ibv_mr fake = {};
	char msg[DL_ERRMSG_MAX];
	int err, ret, fd;

	/* probes: the cached one must agree with itself */
	{
		bool a1 = dl_lease_supported(&err);
		int e2;
		bool a2 = dl_lease_supported(&e2);

		if (a1 != a2 || err != e2)
			worker_err(w, "dl_lease_supported changed: %d/%d %d/%d",
				   a1, a2, err, e2);
		ret = dl_lease_probe_now(&e2);
		if (ret < 0 || ret > 1)
			worker_err(w, "dl_lease_probe_now returned %d", ret);
	}

	/* a good source: open, classify, close */
	if (dl_request_init(&req, &a, NULL, 0) ||
	    dl_source_open(&req, &src)) {
		worker_err(w, "dl_source_open(%s): %s \"%s\"", w->file,
			   strerror(errno), ibv_dax_errmsg());
	} else {
		if (src.kind != IBV_DAX_FILE_PAGECACHE)
			worker_err(w, "%s classified %s", w->file,
				   dl_kind_name(src.kind));
		if (!src.path || strcmp(src.path, w->file))
			worker_err(w, "src.path %s", src.path);
		dl_source_close(&src);
	}

	/* past EOF: the thread's own message, naming its own file */
	a.offset = 8 * MiB;
	if (!dl_request_init(&req, &a, NULL, 0) &&
	    !dl_source_open(&req, &src)) {
		worker_err(w, "past-EOF open of %s succeeded", w->file);
		dl_source_close(&src);
	} else if (errno != ERANGE) {
		worker_err(w, "past EOF: %s", strerror(errno));
	} else if (!strstr(ibv_dax_errmsg(), w->file)) {
		worker_err(w, "past-EOF message is another thread's: \"%s\"",
			   ibv_dax_errmsg());
	}
	a.offset = 0;

	/* classify a directory and /dev/null through fds */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	memset(&src, 0, sizeof(src));
	if (fd < 0 || !dl_source_classify(fd, dir, &src) || errno != EISDIR)
		worker_err(w, "classify dir: fd %d %s", fd, strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0 || !dl_source_classify(fd, "/dev/null", &src) ||
	    errno != ENODEV || !strstr(ibv_dax_errmsg(), "/dev/null"))
		worker_err(w, "classify /dev/null: %s \"%s\"", strerror(errno),
			   ibv_dax_errmsg());
	if (fd >= 0)
		close(fd);

	/* the validator, on good and bad attrs */
	if (dl_request_init(&req, &a, msg, sizeof(msg)))
		worker_err(w, "valid attr rejected: %s", msg);
	a.comp_mask = 1ULL << (8 + w->id % 50);
	if (dl_request_init(&req, &a, msg, sizeof(msg)) != EOPNOTSUPP)
		worker_err(w, "comp_mask bit %d accepted", 8 + w->id % 50);
	a.comp_mask = 0;
	a.offset = UINT64_MAX - w->id;
	if (dl_request_init(&req, &a, msg, sizeof(msg)) != EOVERFLOW)
		worker_err(w, "wrapping offset accepted");
	a.offset = 0;

	/* strategy table: fsdax without support must be refused */
	if (dl_strategy_choose(IBV_DAX_FILE_FSDAX, 0, DL_PIN_WRITE, &caps,
			       &strat, msg, sizeof(msg)) != EOPNOTSUPP)
		worker_err(w, "fsdax without support: strategy %d", strat);
	/* read-only page cache is plain on every kernel */
	if (dl_strategy_choose(IBV_DAX_FILE_PAGECACHE, 0, 0, &caps, &strat,
			       msg, sizeof(msg)) ||
	    strat != IBV_DAX_MR_STRATEGY_PLAIN)
		worker_err(w, "pagecache strategy %d: %s", strat, msg);

	/* the pins parser */
	ret = dt_pins_parse(pins_text, sizeof(pins_text) - 1, &pins);
	if (ret || pins.nowners != 2 || pins.nmm != 1 ||
	    dt_pins_count(&pins, "/mnt/pmem/foo") != 2 ||
	    dt_pins_total(&pins) != 4)
		worker_err(w, "pins parse: ret %d owners %zu mm %zu", ret,
			   pins.nowners, pins.nmm);
	dt_pins_free(&pins);

	/* the public entry points without a pd, and the MR registry */
	errno = 0;
	if (ibv_reg_dax_mr(NULL, &a) || errno != EINVAL ||
	    !strstr(ibv_dax_errmsg(), "pd"))
		worker_err(w, "reg with NULL pd: %s \"%s\"", strerror(errno),
			   ibv_dax_errmsg());
	ret = ibv_dereg_dax_mr(&fake);
	if (ret != EINVAL)
		worker_err(w, "dereg of a foreign mr: returned %d", ret);
	if (ibv_dax_mr_persist(&fake, 0, 1) != -1 || errno != EINVAL)
		worker_err(w, "persist of a foreign mr: %s", strerror(errno));
	if (dl_registry_count() != 0)
		worker_err(w, "%zu live MRs", dl_registry_count());
	w->ops++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stop))
		one_round(w);
	return NULL;
}

static int make_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ret;

	if (fd < 0)
		return -1;
	ret = ftruncate(fd, size);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	struct dl_snap before, after;
	struct worker *w;
	unsigned long ops = 0, errors = 0;
	const char *t = getenv("TMPDIR");
	char why[512];
	int i, fails = 0;

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
	if (nthreads < 1 || nthreads > 256 || seconds <= 0) {
		fprintf(stderr, "bad --threads or --seconds\n");
		return 2;
	}

	dtest_begin("threads_host");
	snprintf(dir, sizeof(dir), "%.200s/dl-threads.%d", t ? t : "/tmp",
		 (int)getpid());
	if (mkdir(dir, 0700)) {
		dtest_fail("setup", "mkdir %s: %s", dir, strerror(errno));
		return dtest_end();
	}
	w = calloc(nthreads, sizeof(*w));
	for (i = 0; i < nthreads; i++) {
		w[i].id = i;
		snprintf(w[i].file, sizeof(w[i].file), "%s/t%d.dat", dir, i);
		if (make_file(w[i].file, 4 * MiB)) {
			dtest_fail("setup", "create %s: %s", w[i].file,
				   strerror(errno));
			return dtest_end();
		}
	}

	dl_snap_take(&before);
	dtest_clock();
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i])) {
			dtest_fail("setup", "pthread_create failed");
			nthreads = i;
			break;
		}
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&stop, true);
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].tid, NULL);
		ops += w[i].ops;
		errors += w[i].errors;
		if (w[i].errors) {
			char name[32];

			snprintf(name, sizeof(name), "thread%d", i);
			dtest_fail(name, "%lu errors in %lu rounds; first: %s",
				   w[i].errors, w[i].ops, w[i].first_error);
			fails++;
		}
	}
	if (!fails)
		dtest_check("rounds", ops > 0 && errors == 0,
			    "%d threads, %.0f s: %lu rounds, %lu errors",
			    nthreads, seconds, ops, errors);

	dl_snap_take(&after);
	/*
	 * Threads leave per-thread malloc arenas and cached stacks behind;
	 * a leaked file mapping is named and still compared.
	 */
	after.anon = before.anon;
	dtest_check("no_leak", dl_snap_same(&before, &after, why, sizeof(why)),
		    "%s", why[0] ? why : "fds and mappings as before");
	dl_snap_free(&before);
	dl_snap_free(&after);

	for (i = 0; i < nthreads; i++)
		unlink(w[i].file);
	rmdir(dir);
	free(w);
	return dtest_end();
}
