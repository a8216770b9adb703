// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dl-bench: registration cost and data path of daxlease against what a
 * user would otherwise run, inside the test VM (tests/vm/suites/bench.sh).
 *
 * Every measurement is one JSON record on $DAXLEASE_RESULTS,
 *   {"suite":"bench","bench":{"group":...,"case":...,"median":...}}
 * which bench/run collects into one document checked against
 * bench/schema.json, plus dtest pass/fail records for the sanity of each
 * measurement (enough runs, ordered statistics, the expected strategy,
 * data landed in the MR).  Samples of the cases compared with each other
 * are interleaved run by run, starting at another case each run, so
 * machine noise and the place in the order hit them alike.
 *
 * The phases of ibv_reg_dax_mr() are timed from outside: the same system
 * calls done by hand (open + statx, mmap MAP_SYNC as the library maps, the
 * layout lease, the extended REG_MR ioctl), next to the whole public call.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <infiniband/verbs.h>
#include <infiniband/verbs_dax.h>
#include <librpma.h>
#include <linux/daxlease_fcntl.h>

#include "dtest.h"
#include "kt.h"
#include "rcloop.h"

#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

#define KIB (1UL << 10)
#define MIB (1UL << 20)
#define ALIGN_2M (2 * MIB)
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ)
#define MAX_SIZES 8

struct opts {
	bool quick;
	int runs;		/* registration samples per figure */
	int data_runs;		/* data path samples per figure */
	size_t sizes[MAX_SIZES];
	int nsizes;
	size_t largest;		/* requested largest size */
	int nmr[4];
	int nnmr;
	size_t profile;		/* --profile: registration size to profile */
};

static struct opts o;
static const char *fsdir, *devdax;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct rpma_peer *peer;
static char bigfile[512];
static size_t bigsize;
/*
 * Registrations smaller than 2 MiB use the area past bigsize: a 4 KiB
 * mapping leaves a PTE entry in the file's DAX mapping, and every later
 * mapping of that 2 MiB block then falls back to 4 KiB faults (fs/dax.c
 * refuses a PMD over a PTE entry), which would charge one case's layout
 * to the next.  2 MiB for the size sweep, then the per-MR pages.
 */
#define SMALL_AREA(maxn) (2 * MIB + (((size_t)(maxn) * 4 * KIB + 2 * MIB - 1) & \
					~(size_t)(2 * MIB - 1)))
static uint64_t small_off;

static uint64_t fs_off(size_t len)
{
	return len < 2 * MIB ? small_off : 0;
}
static int bench_fail;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* ---- statistics and records ---- */

struct series {
	double *v;
	int n, cap;
	char err[200];
};

static void s_init(struct series *s, int cap)
{
	memset(s, 0, sizeof(*s));
	s->v = calloc(cap, sizeof(double));
	s->cap = cap;
	if (!s->v)
		abort();
}

static void s_add(struct series *s, double x)
{
	if (s->n < s->cap)
		s->v[s->n++] = x;
}

static void s_err(struct series *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void s_err(struct series *s, const char *fmt, ...)
{
	va_list ap;

	if (s->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double s_median(struct series *s)
{
	qsort(s->v, s->n, sizeof(double), cmp_d);
	if (!s->n)
		return NAN;
	return s->n % 2 ? s->v[s->n / 2] :
			  (s->v[s->n / 2 - 1] + s->v[s->n / 2]) / 2;
}

static void s_free(struct series *s)
{
	free(s->v);
	s->v = NULL;
}

struct rec {
	const char *group;	/* reg, dereg, align, nmr, data, pair */
	const char *unit;	/* NULL: us; pair: ratio */
	const char *cas;
	const char *phase;	/* reg/dereg: total or a phase */
	const char *op;		/* data: write, read */
	size_t size;
	int n_mrs;		/* nmr */
	double mbps;		/* data: bytes / summed sample time */
};

static void json_num(FILE *f, const char *key, double v)
{
	if (isfinite(v))
		fprintf(f, ",\"%s\":%.3f", key, v);
	else
		fprintf(f, ",\"%s\":null", key);
}

/*
 * Emit one measurement and its sanity check.  needed: samples expected
 * (0: an error is an expected outcome, e.g. a peer that cannot register).
 */
static void emit(const struct rec *r, struct series *s, int needed)
{
	double med = s_median(s);
	double mn = s->n ? s->v[0] : NAN, mx = s->n ? s->v[s->n - 1] : NAN;
	char name[160];
	FILE *f = dtest.out;
	bool ok;

	snprintf(name, sizeof(name), "%s_%s%s%s%s%s_%zu%s%.0d", r->group,
		 r->cas, r->phase ? "_" : "", r->phase ? r->phase : "",
		 r->op ? "_" : "", r->op ? r->op : "", r->size,
		 r->n_mrs ? "_n" : "", r->n_mrs);
	if (f) {
		fprintf(f, "{\"suite\":\"bench\",\"bench\":{\"group\":\"%s\",\"case\":\"%s\"",
			r->group, r->cas);
		if (r->phase)
			fprintf(f, ",\"phase\":\"%s\"", r->phase);
		if (r->op)
			fprintf(f, ",\"op\":\"%s\"", r->op);
		fprintf(f, ",\"size\":%zu", r->size);
		if (r->n_mrs)
			fprintf(f, ",\"n_mrs\":%d", r->n_mrs);
		fprintf(f, ",\"unit\":\"%s\",\"runs\":%d",
			r->unit ? r->unit : "us", s->n);
		json_num(f, "median", med);
		json_num(f, "min", mn);
		json_num(f, "max", mx);
		if (r->op && !r->unit)
			json_num(f, "mbps", r->mbps);
		if (s->err[0]) {
			fprintf(f, ",\"error\":");
			dt_json_write_string(f, s->err);
		}
		fprintf(f, "}}\n");
		fflush(f);
	}
	printf("bench %-44s n=%-3d median %10.3f %s  min %10.3f  max %10.3f%s%s\n",
	       name, s->n, med, r->unit ? r->unit : "us", mn, mx,
	       s->err[0] ? "  error: " : "", s->err);

	if (!needed) {
		/* an expected failure must say why; a success must be sane */
		ok = s->err[0] || (s->n > 0 && mn > 0 && mn <= med && med <= mx);
		dtest_check(name, ok, "%d runs%s%s", s->n,
			    s->err[0] ? ", reported error: " : "", s->err);
	} else {
		ok = !s->err[0] && s->n >= needed && mn > 0 && mn <= med &&
		     med <= mx && isfinite(mx);
		dtest_check(name, ok, "%d of %d runs, median %.1f us%s%s",
			    s->n, needed, med, s->err[0] ? "; error: " : "",
			    s->err);
	}
	if (!ok)
		bench_fail++;
}

/* ---- mappings done by hand ---- */

/*
 * mmap len bytes of fd at off (a multiple of 2 MiB) at a 2 MiB-aligned
 * address, like the library: where the kernel put the mapping when that
 * is aligned (it aligns DAX mappings itself), else over a reservation.
 */
static void *map_at_2m(int fd, off_t off, size_t len, int flags)
{
	size_t rlen = len + ALIGN_2M;
	uintptr_t a;
	void *r, *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, off);
	if (p == MAP_FAILED || !((uintptr_t)p & (ALIGN_2M - 1)))
		return p;
	munmap(p, len);
	r = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return MAP_FAILED;
	a = ((uintptr_t)r + ALIGN_2M - 1) & ~(uintptr_t)(ALIGN_2M - 1);
	p = mmap((void *)a, len, PROT_READ | PROT_WRITE, flags | MAP_FIXED,
		 fd, off);
	if (p == MAP_FAILED) {
		int err = errno;

		munmap(r, rlen);
		errno = err;
		return MAP_FAILED;
	}
	if (a > (uintptr_t)r)
		munmap(r, a - (uintptr_t)r);
	munmap((void *)(a + len), (uintptr_t)r + rlen - (a + len));
	return p;
}

static size_t round_page(size_t len)
{
	return (len + 4 * KIB - 1) & ~(4 * KIB - 1);
}

static size_t round_2m(size_t len)
{
	return (len + ALIGN_2M - 1) & ~(ALIGN_2M - 1);
}

static struct ibv_mr *reg_dax(const char *path, uint64_t off, size_t len)
{
	struct ibv_dax_mr_init_attr a = {
		.path = path,
		.fd = -1,
		.offset = off,
		.length = len,
		.access = ACCESS,
	};

	return ibv_reg_dax_mr(pd, &a);
}

/*
 * The order of n cases in run r: a permutation of its own for every run
 * (Fisher-Yates on a fixed-seed generator, the same in every boot), so
 * that no case has a place in the order or a predecessor of its own: a
 * case that leaves the file in some state (written, faulted) must not
 * always hand it to the same next case.
 */
static void run_order(int *ord, int n, int r)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 8);	/* odd: never 0 */
	int i, j, tmp;

	for (i = 0; i < n; i++)
		ord[i] = i;
	for (i = n - 1; i > 0; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (int)(x % (uint64_t)(i + 1));
		tmp = ord[i];
		ord[i] = ord[j];
		ord[j] = tmp;
	}
}

/* ---- registration: one sample of each case ---- */

/*
 * Baseline B is anonymous memory as THP maps it (2 MiB folios: GUP-fast
 * takes a PMD at a time); baseline C the same with MADV_NOHUGEPAGE, a
 * folio per 4 KiB page, as FS-DAX pages are on these kernels: what
 * upstream pays per page of small-page DRAM.
 */
enum { C_DAX_FSDAX, C_DAX_DEVDAX, C_RAW_FSDAX, C_BASE_A, C_BASE_B,
       C_RPMA_DEVDAX, C_RPMA_FSDAX, C_RAW_FSDAX_PREFAULTED, C_BASE_C, C_NUM };
static const char *const cname[C_NUM] = {
	"daxlease_fsdax", "daxlease_devdax", "raw_fsdax", "baseline_a_devdax",
	"baseline_b_anon", "rpma_devdax", "rpma_fsdax", "raw_fsdax_prefaulted",
	"baseline_c_anon_4k",
};
/*
 * Phases of the hand-made lease path and of baseline A; prefault only of
 * raw_fsdax_prefaulted, whose ioctl then pins pages that are mapped
 * already: the difference of the two ioctl phases is the file system's
 * DAX faults inside the pin.  dontfork, in no total: an
 * madvise(MADV_DONTFORK) of the mapping, what keeping it out of forked
 * children costs; raw_fsdax before the ioctl (no page mapped yet),
 * raw_fsdax_prefaulted after it (every page mapped and pinned).
 */
enum { P_TOTAL, P_OPEN, P_MAP, P_LEASE, P_IOCTL, P_PREFAULT, P_DONTFORK,
       P_NUM };
static const char *const pname[P_NUM] = {
	"total", "open_classify", "map", "lease", "ioctl", "prefault",
	"dontfork",
};

struct regset {
	struct series reg[C_NUM][P_NUM];
	struct series dereg[C_NUM];
};

static void sample_dax(struct regset *rs, int c, const char *path,
		       uint64_t off, size_t len)
{
	struct ibv_dax_mr_attr qa = { 0 };
	struct ibv_mr *mr;
	double t0, t1;

	t0 = now_us();
	mr = reg_dax(path, off, len);
	t1 = now_us();
	if (!mr) {
		s_err(&rs->reg[c][P_TOTAL], "ibv_reg_dax_mr: %s",
		      ibv_dax_errmsg());
		return;
	}
	if (c == C_DAX_FSDAX && (ibv_query_dax_mr(mr, &qa, sizeof(qa)) ||
				 qa.strategy != IBV_DAX_MR_STRATEGY_LEASE_PIN))
		s_err(&rs->reg[c][P_TOTAL],
		      "fsdax MR strategy %d, not LEASE_PIN", qa.strategy);
	s_add(&rs->reg[c][P_TOTAL], t1 - t0);
	t0 = now_us();
	if (ibv_dereg_dax_mr(mr)) {
		s_err(&rs->dereg[c], "ibv_dereg_dax_mr: %s", ibv_dax_errmsg());
		return;
	}
	s_add(&rs->dereg[c], now_us() - t0);
}

static void time_dontfork(struct series *s, void *p, size_t len)
{
	double t0 = now_us();

	if (madvise(p, len, MADV_DONTFORK))
		s_err(s, "madvise(MADV_DONTFORK): %s", strerror(errno));
	else
		s_add(s, now_us() - t0);
}

/*
 * The lease path by hand: what ibv_reg_dax_mr() does, step by step.  With
 * prefault (case raw_fsdax_prefaulted), every page of the range is written
 * with its own value between the lease and the ioctl, so that the ioctl
 * finds the pages mapped; the total includes that write.
 */
static void sample_raw_fsdax(struct regset *rs, size_t len, bool prefault)
{
	int c = prefault ? C_RAW_FSDAX_PREFAULTED : C_RAW_FSDAX;
	struct series *s = rs->reg[c];
	struct kt_dev d = { .ctx = ctx, .pd = pd };
	double t[P_IOCTL + 1], tioc;
	struct ibv_mr raw;
	struct statx stx;
	size_t mlen = round_page(len);
	void *p;
	int fd, err, i;

	t[0] = now_us();
	fd = open(bigfile, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) ||
	    !S_ISREG(stx.stx_mode) || !(stx.stx_attributes & STATX_ATTR_DAX) ||
	    fcntl(fd, F_SETFL, 0)) {
		s_err(&s[P_TOTAL], "open/classify %s: %s", bigfile,
		      strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	t[1] = now_us();
	/* the library's mapping: 2 MiB-congruent only when it can hold a PMD */
	if (mlen >= ALIGN_2M)
		p = map_at_2m(fd, (off_t)fs_off(len), mlen,
			      MAP_SHARED_VALIDATE | MAP_SYNC);
	else
		p = mmap(NULL, mlen, PROT_READ | PROT_WRITE,
			 MAP_SHARED_VALIDATE | MAP_SYNC, fd, (off_t)fs_off(len));
	t[2] = now_us();
	if (p == MAP_FAILED) {
		s_err(&s[P_TOTAL], "mmap MAP_SYNC: %s", strerror(errno));
		close(fd);
		return;
	}
	if (fcntl(fd, F_SETLEASE, F_LAYOUT | F_EXCLUSIVE)) {
		s_err(&s[P_TOTAL], "F_SETLEASE(F_LAYOUT|F_EXCLUSIVE): %s",
		      strerror(errno));
		goto out_unmap;
	}
	t[3] = now_us();
	if (!prefault)
		time_dontfork(&s[P_DONTFORK], p, mlen);
	tioc = now_us();
	if (prefault) {
		volatile char *q = p;
		size_t off;

		for (off = 0; off < mlen; off += 4 * KIB)
			q[off] = q[off];
		tioc = now_us();
	}
	err = kt_reg_mr_ioctl(&d, p, len, ACCESS, fd, fs_off(len), &raw);
	t[4] = now_us();
	if (err) {
		s_err(&s[P_TOTAL], "extended REG_MR ioctl: %s", strerror(err));
		goto out_unlease;
	}
	/* the phases: lease ends at t[3], the ioctl starts at tioc */
	s_add(&s[P_TOTAL], t[4] - t[0]);
	for (i = 1; i < P_IOCTL; i++)
		s_add(&s[i], t[i] - t[i - 1]);
	s_add(&s[P_IOCTL], t[4] - tioc);
	if (prefault) {
		s_add(&s[P_PREFAULT], tioc - t[3]);
		time_dontfork(&s[P_DONTFORK], p, mlen);
	}
	t[0] = now_us();
	err = kt_destroy_mr(&d, raw.handle);
	fcntl(fd, F_SETLEASE, F_UNLCK);
	munmap(p, mlen);
	close(fd);
	if (err)
		s_err(&rs->dereg[c], "MR_DESTROY: %s", strerror(err));
	else
		s_add(&rs->dereg[c], now_us() - t[0]);
	return;

out_unlease:
	fcntl(fd, F_SETLEASE, F_UNLCK);
out_unmap:
	munmap(p, mlen);
	close(fd);
}

/* Baseline A: open + mmap + ibv_reg_mr of the devdax device. */
static void sample_base_a(struct regset *rs, size_t len)
{
	struct series *s = rs->reg[C_BASE_A];
	size_t mlen = round_2m(len);
	struct ibv_mr *mr;
	double t0, t1, t2, t3;
	void *p;
	int fd;

	t0 = now_us();
	fd = open(devdax, O_RDWR | O_CLOEXEC);
	t1 = now_us();
	if (fd < 0) {
		s_err(&s[P_TOTAL], "open %s: %s", devdax, strerror(errno));
		return;
	}
	p = map_at_2m(fd, 0, mlen, MAP_SHARED);
	t2 = now_us();
	if (p == MAP_FAILED) {
		s_err(&s[P_TOTAL], "mmap %s: %s", devdax, strerror(errno));
		close(fd);
		return;
	}
	mr = ibv_reg_mr(pd, p, len, ACCESS);
	t3 = now_us();
	if (!mr) {
		s_err(&s[P_TOTAL], "ibv_reg_mr: %s", strerror(errno));
		munmap(p, mlen);
		close(fd);
		return;
	}
	s_add(&s[P_TOTAL], t3 - t0);
	s_add(&s[P_OPEN], t1 - t0);
	s_add(&s[P_MAP], t2 - t1);
	s_add(&s[P_IOCTL], t3 - t2);
	t0 = now_us();
	if (ibv_dereg_mr(mr))
		s_err(&rs->dereg[C_BASE_A], "ibv_dereg_mr: %s", strerror(errno));
	munmap(p, mlen);
	close(fd);
	if (!rs->dereg[C_BASE_A].err[0])
		s_add(&rs->dereg[C_BASE_A], now_us() - t0);
}

/*
 * Baselines B and C (case c): ibv_reg_mr of touched anonymous memory (the
 * map untimed).
 */
static void sample_base_b(struct regset *rs, int c, void *anon, size_t len)
{
	struct ibv_mr *mr;
	double t0, t1;

	t0 = now_us();
	mr = ibv_reg_mr(pd, anon, len, ACCESS);
	t1 = now_us();
	if (!mr) {
		s_err(&rs->reg[c][P_TOTAL], "ibv_reg_mr: %s", strerror(errno));
		return;
	}
	s_add(&rs->reg[c][P_TOTAL], t1 - t0);
	t0 = now_us();
	if (ibv_dereg_mr(mr)) {
		s_err(&rs->dereg[c], "ibv_dereg_mr: %s", strerror(errno));
		return;
	}
	s_add(&rs->dereg[c], now_us() - t0);
}

/* librpma's rpma_mr_reg on an existing mapping (mapped untimed). */
static void sample_rpma(struct regset *rs, int c, void *p, size_t len)
{
	struct rpma_mr_local *mr = NULL;
	double t0, t1;
	int ret;

	if (!peer) {
		s_err(&rs->reg[c][P_TOTAL], "no rpma peer");
		return;
	}
	errno = 0;
	t0 = now_us();
	ret = rpma_mr_reg(peer, p, len, RPMA_MR_USAGE_WRITE_DST |
			  RPMA_MR_USAGE_READ_SRC, &mr);
	t1 = now_us();
	if (ret) {
		s_err(&rs->reg[c][P_TOTAL], "rpma_mr_reg: %s (errno %d %s)",
		      rpma_err_2str(ret), errno, strerror(errno));
		return;
	}
	s_add(&rs->reg[c][P_TOTAL], t1 - t0);
	t0 = now_us();
	ret = rpma_mr_dereg(&mr);
	if (ret) {
		s_err(&rs->dereg[c], "rpma_mr_dereg: %s", rpma_err_2str(ret));
		return;
	}
	s_add(&rs->dereg[c], now_us() - t0);
}

/*
 * One sample of case c (bench_registration() owns anon, anon4k, mdev and
 * fd_fs)
 */
static void sample_case(struct regset *t, int c, size_t len, void *anon,
			void *anon4k, void *mdev, int fd_fs)
{
	size_t mlen = round_2m(len);
	void *mfs;

	switch (c) {
	case C_DAX_FSDAX:
		sample_dax(t, C_DAX_FSDAX, bigfile, fs_off(len), len);
		break;
	case C_DAX_DEVDAX:
		sample_dax(t, C_DAX_DEVDAX, devdax, 0, len);
		break;
	case C_RAW_FSDAX:
	case C_RAW_FSDAX_PREFAULTED:
		sample_raw_fsdax(t, len, c == C_RAW_FSDAX_PREFAULTED);
		break;
	case C_BASE_A:
		sample_base_a(t, len);
		break;
	case C_BASE_B:
		if (anon != MAP_FAILED)
			sample_base_b(t, C_BASE_B, anon, len);
		break;
	case C_BASE_C:
		if (anon4k != MAP_FAILED)
			sample_base_b(t, C_BASE_C, anon4k, len);
		break;
	case C_RPMA_DEVDAX:
		if (mdev != MAP_FAILED)
			sample_rpma(t, C_RPMA_DEVDAX, mdev, len);
		break;
	case C_RPMA_FSDAX:
		/*
		 * The peer's fsdax mapping lives only for its own sample: a
		 * second mapping of the file faulted by nobody would otherwise
		 * sit under every other case.
		 */
		mfs = fd_fs < 0 ? MAP_FAILED :
		      map_at_2m(fd_fs, 0, mlen, MAP_SHARED_VALIDATE | MAP_SYNC);
		if (mfs == MAP_FAILED) {
			s_err(&t->reg[C_RPMA_FSDAX][P_TOTAL], "mmap %s: %s",
			      bigfile, strerror(errno));
		} else {
			sample_rpma(t, C_RPMA_FSDAX, mfs, len);
			munmap(mfs, mlen);
		}
		break;
	}
}

/*
 * Case c over case base, run by run: both samples of a run were taken
 * within one pass over the cases, so a slow spell of the host, which
 * moves the medians of whole blocks of samples, cancels out of the
 * run's ratio.  Only when both cases have a sample for every run (the
 * series are still in run order here; emit() sorts them).
 */
/* each run's registration (dereg: deregistration) of c over base's */
static void pair_ratio_of(struct regset *rs, int c, int base, size_t len,
			  bool dereg)
{
	struct series *x = dereg ? &rs->dereg[c] : &rs->reg[c][P_TOTAL];
	struct series *a = dereg ? &rs->dereg[base] : &rs->reg[base][P_TOTAL];
	char phase[64];
	struct series q;
	int r;

	if (x->n != o.runs || a->n != o.runs || x->err[0] || a->err[0])
		return;
	snprintf(phase, sizeof(phase), "%svs_%s", dereg ? "dereg_" : "",
		 cname[base]);
	s_init(&q, o.runs);
	for (r = 0; r < o.runs; r++)
		s_add(&q, x->v[r] / a->v[r]);
	emit(&(struct rec){ .group = "pair", .cas = cname[c],
			    .phase = phase, .unit = "ratio",
			    .size = len }, &q, o.runs);
	s_free(&q);
}

static void pair_ratio(struct regset *rs, int c, int base, size_t len)
{
	pair_ratio_of(rs, c, base, len, false);
}

static void bench_registration(void)
{
	int fd_dev = -1, fd_fs = -1, i, c, k, p, r;

	fd_dev = open(devdax, O_RDWR | O_CLOEXEC);
	fd_fs = open(bigfile, O_RDWR | O_CLOEXEC);
	for (i = 0; i < o.nsizes; i++) {
		size_t len = o.sizes[i], mlen = round_2m(len);
		struct regset rs;
		void *anon, *anon4k, *mdev = MAP_FAILED;

		for (c = 0; c < C_NUM; c++) {
			for (p = 0; p < P_NUM; p++)
				s_init(&rs.reg[c][p], o.runs);
			s_init(&rs.dereg[c], o.runs);
		}
		anon = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (anon != MAP_FAILED)
			memset(anon, 0x5a, len);
		else
			s_err(&rs.reg[C_BASE_B][P_TOTAL], "mmap anon: %s",
			      strerror(errno));
		anon4k = mmap(NULL, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (anon4k != MAP_FAILED &&
		    madvise(anon4k, len, MADV_NOHUGEPAGE)) {
			s_err(&rs.reg[C_BASE_C][P_TOTAL],
			      "madvise(MADV_NOHUGEPAGE): %s", strerror(errno));
			munmap(anon4k, len);
			anon4k = MAP_FAILED;
		} else if (anon4k != MAP_FAILED) {
			memset(anon4k, 0x5a, len);
		} else {
			s_err(&rs.reg[C_BASE_C][P_TOTAL], "mmap anon: %s",
			      strerror(errno));
		}
		if (fd_dev >= 0)
			mdev = map_at_2m(fd_dev, 0, mlen, MAP_SHARED);
		if (mdev == MAP_FAILED)
			s_err(&rs.reg[C_RPMA_DEVDAX][P_TOTAL], "mmap %s: %s",
			      devdax, strerror(errno));

		/* one warm-up round (capability probe, page tables), then runs */
		for (r = -1; r < o.runs; r++) {
			struct regset *t = &rs;
			int ord[C_NUM];

			run_order(ord, C_NUM, r);
			for (k = 0; k < C_NUM; k++)
				sample_case(t, ord[k], len, anon, anon4k,
					    mdev, fd_fs);
			if (r < 0) {
				/* drop the warm-up samples, keep errors */
				for (c = 0; c < C_NUM; c++) {
					for (p = 0; p < P_NUM; p++)
						rs.reg[c][p].n = 0;
					rs.dereg[c].n = 0;
				}
			}
		}
		pair_ratio(&rs, C_DAX_FSDAX, C_BASE_A, len);
		pair_ratio(&rs, C_RAW_FSDAX, C_BASE_A, len);
		pair_ratio(&rs, C_DAX_FSDAX, C_RAW_FSDAX, len);
		/* pmem pinned as fast as DRAM: anonymous (THP) memory */
		pair_ratio(&rs, C_DAX_FSDAX, C_BASE_B, len);
		pair_ratio(&rs, C_BASE_A, C_BASE_B, len);
		pair_ratio_of(&rs, C_DAX_FSDAX, C_DAX_DEVDAX, len, true);
		/* and against small-page DRAM: the per-page floor */
		pair_ratio(&rs, C_DAX_FSDAX, C_BASE_C, len);
		pair_ratio_of(&rs, C_DAX_FSDAX, C_BASE_C, len, true);
		for (c = 0; c < C_NUM; c++) {
			const char *why = rs.reg[c][P_TOTAL].err;

			/* phases and dereg of a failed registration: its error */
			for (p = 1; p < P_NUM && *why; p++)
				if (!rs.reg[c][p].n)
					s_err(&rs.reg[c][p], "no registration: %s", why);
			if (*why && !rs.dereg[c].n)
				s_err(&rs.dereg[c], "no registration: %s", why);
		}
		for (c = 0; c < C_NUM; c++) {
			/* rpma on fsdax may fail: that is the finding */
			int need = c == C_RPMA_FSDAX ? 0 : o.runs;
			int np = c == C_RAW_FSDAX_PREFAULTED ||
				 c == C_RAW_FSDAX ? P_NUM :
				 c == C_BASE_A ? P_IOCTL + 1 : 1;

			for (p = 0; p < np; p++) {
				struct rec rr = { .group = "reg", .cas = cname[c],
						  .phase = pname[p], .size = len };

				if ((c == C_BASE_A && p == P_LEASE) ||
				    (c == C_RAW_FSDAX && p == P_PREFAULT))
					continue;
				emit(&rr, &rs.reg[c][p], p ? (need ? o.runs : 0) : need);
			}
			if (rs.reg[c][P_TOTAL].n || need) {
				struct rec rr = { .group = "dereg", .cas = cname[c],
						  .phase = "total", .size = len };

				emit(&rr, &rs.dereg[c], need);
			}
			for (p = 0; p < P_NUM; p++)
				s_free(&rs.reg[c][p]);
			s_free(&rs.dereg[c]);
		}
		if (anon != MAP_FAILED)
			munmap(anon, len);
		if (anon4k != MAP_FAILED)
			munmap(anon4k, len);
		if (mdev != MAP_FAILED)
			munmap(mdev, mlen);
	}
	if (fd_dev >= 0)
		close(fd_dev);
	if (fd_fs >= 0)
		close(fd_fs);
}

/* 2 MiB-aligned (PMD) versus 4 KiB-aligned (PTE) fsdax ranges */
static void bench_alignment(void)
{
	size_t len = o.quick ? 4 * MIB : 64 * MIB;
	struct series a2, a4;
	int r;

	if (len + 4 * KIB > bigsize)
		len = (bigsize - 4 * KIB) & ~(ALIGN_2M - 1);
	s_init(&a2, o.runs);
	s_init(&a4, o.runs);
	for (r = -1; r < o.runs; r++) {
		struct ibv_mr *m;
		double t0;

		t0 = now_us();
		m = reg_dax(bigfile, 0, len);
		if (m) {
			if (r >= 0)
				s_add(&a2, now_us() - t0);
			ibv_dereg_dax_mr(m);
		} else {
			s_err(&a2, "%s", ibv_dax_errmsg());
		}
		t0 = now_us();
		m = reg_dax(bigfile, 4 * KIB, len);
		if (m) {
			if (r >= 0)
				s_add(&a4, now_us() - t0);
			ibv_dereg_dax_mr(m);
		} else {
			s_err(&a4, "%s", ibv_dax_errmsg());
		}
	}
	emit(&(struct rec){ .group = "align", .cas = "fsdax_2m_aligned",
			    .phase = "total", .size = len }, &a2, o.runs);
	emit(&(struct rec){ .group = "align", .cas = "fsdax_4k_aligned",
			    .phase = "total", .size = len }, &a4, o.runs);
	s_free(&a2);
	s_free(&a4);
}

/*
 * One 4 KiB registration (and its deregistration) with N - 1 MRs live, for
 * each N of --nmr.  The N are interleaved in rounds, as the cases of the
 * registration table are run by run: each round walks the live set through
 * every N, takes a few samples at each, and drops it again, so a slow spell
 * of the machine hits every N alike instead of one block.  Even rounds go
 * up from N = 1, odd rounds down from the largest N: otherwise the smallest
 * N would always be sampled first after the pause between rounds, and the
 * largest last.
 * One file (4 KiB ranges of the big file) or many files (one each).
 */
#define NMR_PER_ROUND 3
#define NMR_WARMUP 100

static struct ibv_mr *nmr_reg(bool many, int idx, char *path, size_t plen)
{
	if (!many)
		return reg_dax(bigfile, small_off + 2 * MIB +
					(uint64_t)idx * 4 * KIB, 4 * KIB);
	snprintf(path, plen, "%s/bench-nmr-%d.dat", fsdir, idx);
	return reg_dax(path, 0, 4 * KIB);
}

static void bench_nmr_case(bool many)
{
	int maxn = o.nmr[o.nnmr - 1], live = 0, round, rounds, i, j, k;
	struct ibv_mr **mrs = calloc(maxn, sizeof(*mrs));
	struct series *reg = calloc(o.nnmr, sizeof(*reg));
	struct series *dereg = calloc(o.nnmr, sizeof(*dereg));
	bool failed = false;
	/*
	 * A 100 us operation whose median moves between blocks of samples on
	 * this machine: three times the samples of the other figures.
	 */
	int nruns = o.quick ? o.runs : 3 * o.runs;
	char path[600];

	if (!mrs || !reg || !dereg)
		abort();
	for (i = 0; i < o.nnmr; i++) {
		s_init(&reg[i], nruns);
		s_init(&dereg[i], nruns);
	}
	rounds = (nruns + NMR_PER_ROUND - 1) / NMR_PER_ROUND;
	for (round = 0; round < rounds && !failed; round++) {
		for (j = 0; j < o.nnmr && !failed; j++) {
			int ni = round % 2 ? o.nnmr - 1 - j : j;
			int n = o.nmr[ni];

			/* bring the live set to n - 1 */
			while (live > n - 1)
				ibv_dereg_dax_mr(mrs[--live]);
			while (live < n - 1) {
				mrs[live] = nmr_reg(many, live, path,
						    sizeof(path));
				if (!mrs[live]) {
					s_err(&reg[ni], "live MR %d: %s", live,
					      ibv_dax_errmsg());
					failed = true;
					break;
				}
				live++;
			}
			/* one warm-up sample at each N of each round */
			for (k = -NMR_WARMUP;
			     k < NMR_PER_ROUND && reg[ni].n < nruns && !failed;
			     k++) {
				struct ibv_mr *m;
				double t0, t1;

				t0 = now_us();
				m = nmr_reg(many, n - 1, path, sizeof(path));
				t1 = now_us();
				if (!m) {
					s_err(&reg[ni], "MR %d: %s", n,
					      ibv_dax_errmsg());
					failed = true;
					break;
				}
				t0 = t1 - t0;
				t1 = now_us();
				if (ibv_dereg_dax_mr(m)) {
					s_err(&dereg[ni], "%s", ibv_dax_errmsg());
					failed = true;
					break;
				}
				if (k >= 0) {
					s_add(&reg[ni], t0);
					s_add(&dereg[ni], now_us() - t1);
				}
			}
		}
		while (live > 0)
			ibv_dereg_dax_mr(mrs[--live]);
		/* the kernel's deferred frees of the dropped set (fput, RCU) */
		usleep(300 * 1000);
	}
	for (i = 0; i < o.nnmr; i++) {
		if (reg[i].err[0] && !dereg[i].n)
			s_err(&dereg[i], "no registration: %s", reg[i].err);
		emit(&(struct rec){ .group = "nmr",
				    .cas = many ? "many_files" : "one_file",
				    .phase = "reg", .size = 4 * KIB,
				    .n_mrs = o.nmr[i] },
		     &reg[i], nruns);
		emit(&(struct rec){ .group = "nmr",
				    .cas = many ? "many_files" : "one_file",
				    .phase = "dereg", .size = 4 * KIB,
				    .n_mrs = o.nmr[i] },
		     &dereg[i], nruns);
		s_free(&reg[i]);
		s_free(&dereg[i]);
	}
	free(dereg);
	free(reg);
	free(mrs);
}

static int make_file(const char *path, size_t size)
{
	static char zero[MIB];
	size_t done;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	/*
	 * One allocation of the whole size first, so that a file system
	 * made for pmem (ext4 -E stride=512, see tests/vm/setup-guest.sh)
	 * hands out 2 MiB-aligned extents and DAX can fault PMDs; then
	 * written blocks: no unwritten-extent conversion in the timings.
	 */
	if (fallocate(fd, 0, 0, (off_t)size) && errno != EOPNOTSUPP) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	for (done = 0; done < size; done += sizeof(zero) < size - done ?
						sizeof(zero) : size - done)
		if (pwrite(fd, zero, sizeof(zero) < size - done ?
			   sizeof(zero) : size - done, (off_t)done) < 0) {
			close(fd);
			return -1;
		}
	fsync(fd);
	close(fd);
	return 0;
}

/*
 * How much of the file lies in extents whose physical start, logical start
 * and length are 2 MiB multiples, i.e. may be mapped by PMDs: the first
 * touch of the rest costs one DAX fault per 4 KiB page, which is what a
 * registration of FS-DAX pages pays on a file system not made for pmem.
 */
static void report_layout(const char *path, size_t size)
{
	enum { N = 64 };
	struct {
		struct fiemap fm;
		struct fiemap_extent ext[N];
	} q;
	uint64_t pmd = 0, start = 0;
	unsigned int i, n = 0;
	bool last = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		dtest_fail("layout", "%s: %s", path, strerror(errno));
		return;
	}
	while (!last) {
		memset(&q, 0, sizeof(q));
		q.fm.fm_start = start;
		q.fm.fm_length = FIEMAP_MAX_OFFSET;
		q.fm.fm_extent_count = N;
		if (ioctl(fd, FS_IOC_FIEMAP, &q.fm)) {
			dtest_skip("layout", "FIEMAP of %s: %s", path,
				   strerror(errno));
			close(fd);
			return;
		}
		if (!q.fm.fm_mapped_extents)
			break;
		for (i = 0; i < q.fm.fm_mapped_extents; i++) {
			struct fiemap_extent *e = &q.ext[i];
			uint64_t l = e->fe_logical, p = e->fe_physical;
			uint64_t skip = (2 * MIB - l % (2 * MIB)) % (2 * MIB);

			n++;
			/* the 2 MiB blocks of the extent that a PMD maps */
			if ((l - p) % (2 * MIB) == 0 && e->fe_length > skip)
				pmd += (e->fe_length - skip) / (2 * MIB) *
				       (2 * MIB);
			start = l + e->fe_length;
			last = e->fe_flags & FIEMAP_EXTENT_LAST;
		}
	}
	close(fd);
	printf("bench: %s: %u extent(s), %" PRIu64 " of %zu MiB PMD-mappable\n",
	       path, n, pmd / MIB, size / MIB);
	dtest_pass("layout", "%s: %u extent(s), %" PRIu64 " of %zu MiB in 2 MiB-aligned extents (PMD faults)",
		   path, n, pmd / MIB, size / MIB);
}

static void bench_nmr(void)
{
	int maxn = o.nmr[o.nnmr - 1], i;
	char path[600];

	if ((size_t)maxn * 4 * KIB > bigsize) {
		dtest_fail("nmr_setup", "file of %zu bytes too small for %d MRs",
			   bigsize, maxn);
		return;
	}
	for (i = 0; i < maxn; i++) {
		snprintf(path, sizeof(path), "%s/bench-nmr-%d.dat", fsdir, i);
		if (make_file(path, 4 * KIB)) {
			dtest_fail("nmr_setup", "%s: %s", path, strerror(errno));
			return;
		}
	}
	bench_nmr_case(false);
	bench_nmr_case(true);
	for (i = 0; i < maxn; i++) {
		snprintf(path, sizeof(path), "%s/bench-nmr-%d.dat", fsdir, i);
		unlink(path);
	}
}

/* ---- data path over the rxe loopback RC pair ---- */

/*
 * Bandwidth of target x over DRAM, run by run: the DRAM latency over x's
 * of the same run (one operation in flight: bandwidth is the inverse
 * latency).  A latency with two modes, which moves the median of a
 * whole series from one mode to the other, gives ratios around 1 here.
 * Only when both have every run (still in run order here).
 */
static void data_pair(const struct series *x, const struct series *dram,
		      const char *name, int op, size_t len)
{
	struct series q;
	int r;

	if (x->n != o.data_runs || dram->n != o.data_runs || x->err[0] ||
	    dram->err[0])
		return;
	s_init(&q, o.data_runs);
	for (r = 0; r < o.data_runs; r++)
		s_add(&q, dram->v[r] / x->v[r]);
	emit(&(struct rec){ .group = "pair", .cas = name, .phase = "vs_dram",
			    .op = op ? "read" : "write", .unit = "ratio",
			    .size = len }, &q, o.data_runs);
	s_free(&q);
}

static void bench_data(void)
{
	static const size_t dsz_full[] = { 64, 256, 1 * KIB, 4 * KIB, 16 * KIB,
					   64 * KIB, 256 * KIB, 1 * MIB };
	static const size_t dsz_quick[] = { 64, 64 * KIB };
	const size_t *dsz = o.quick ? dsz_quick : dsz_full;
	int nd = o.quick ? 2 : 8, i, t, k, op, r, fd = -1;
	const size_t region = MIB;
	struct rcloop *loop;
	struct ibv_mr *local_mr, *tmr[3] = { NULL };
	const char *tname[3] = { "fsdax", "devdax", "dram" };
	void *local, *dram, *ddev = MAP_FAILED;
	struct series s[3][2];
	double sum[3][2];
	bool landed;

	loop = rcloop_create(ctx, pd, rcloop_env_gid_index());
	if (!loop) {
		dtest_fail("data_setup", "rcloop_create: %s", rcloop_errmsg());
		bench_fail++;
		return;
	}
	local = aligned_alloc(4096, region);
	dram = aligned_alloc(4096, region);
	if (!local || !dram)
		abort();
	memset(local, 0xa5, region);
	memset(dram, 0, region);
	local_mr = ibv_reg_mr(pd, local, region, ACCESS);
	tmr[0] = reg_dax(bigfile, 0, region);
	fd = open(devdax, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		ddev = map_at_2m(fd, 0, ALIGN_2M, MAP_SHARED);
	if (ddev != MAP_FAILED)
		tmr[1] = ibv_reg_mr(pd, ddev, region, ACCESS);
	tmr[2] = ibv_reg_mr(pd, dram, region, ACCESS);
	if (!local_mr || !tmr[0] || !tmr[1] || !tmr[2]) {
		dtest_fail("data_setup", "MRs: local %p fsdax %p (%s) devdax %p dram %p",
			   (void *)local_mr, (void *)tmr[0],
			   tmr[0] ? "ok" : ibv_dax_errmsg(), (void *)tmr[1],
			   (void *)tmr[2]);
		bench_fail++;
		goto out;
	}

	/* the data lands where it should: a 64 KiB WRITE into each target */
	for (t = 0; t < 3; t++) {
		landed = rcloop_write(loop, local, local_mr->lkey,
				      (uintptr_t)tmr[t]->addr, tmr[t]->rkey,
				      64 * KIB) == 0 &&
			 memcmp(tmr[t]->addr, local, 64 * KIB) == 0;
		if (!dtest_check(t == 0 ? "data_landed_fsdax" :
				 t == 1 ? "data_landed_devdax" :
					  "data_landed_dram",
				 landed, "64 KiB RDMA WRITE into the %s MR %s",
				 tname[t], landed ? "read back" : rcloop_errmsg()))
			bench_fail++;
	}

	for (i = 0; i < nd; i++) {
		size_t len = dsz[i];

		for (t = 0; t < 3; t++)
			for (op = 0; op < 2; op++) {
				s_init(&s[t][op], o.data_runs);
				sum[t][op] = 0;
			}
		/* each run in an order of its own (run_order()) */
		for (r = -1; r < o.data_runs; r++)
			for (op = 0; op < 2; op++) {
				int ord[3];

				run_order(ord, 3, r * 2 + op);
				for (k = 0; k < 3; k++) {
					double t0, dt;
					int ret;

					t = ord[k];
					t0 = now_us();

					ret = op == 0 ?
					      rcloop_write(loop, local, local_mr->lkey,
							   (uintptr_t)tmr[t]->addr,
							   tmr[t]->rkey, len) :
					      rcloop_read(loop, local, local_mr->lkey,
							  (uintptr_t)tmr[t]->addr,
							  tmr[t]->rkey, len);
					dt = now_us() - t0;
					if (ret) {
						s_err(&s[t][op], "%s", rcloop_errmsg());
						continue;
					}
					if (r >= 0) {
						s_add(&s[t][op], dt);
						sum[t][op] += dt;
					}
				}
			}
		for (t = 0; t < 2; t++)
			for (op = 0; op < 2; op++)
				data_pair(&s[t][op], &s[2][op], tname[t], op, len);
		for (t = 0; t < 3; t++)
			for (op = 0; op < 2; op++) {
				struct rec rr = {
					.group = "data", .cas = tname[t],
					.op = op ? "read" : "write", .size = len,
					.mbps = sum[t][op] > 0 ?
						(double)len * s[t][op].n / sum[t][op] :
						NAN,
				};

				emit(&rr, &s[t][op], o.data_runs);
				s_free(&s[t][op]);
			}
	}
out:
	for (t = 0; t < 3; t++)
		if (tmr[t])
			t == 0 ? ibv_dereg_dax_mr(tmr[t]) : ibv_dereg_mr(tmr[t]);
	if (local_mr)
		ibv_dereg_mr(local_mr);
	if (ddev != MAP_FAILED)
		munmap(ddev, ALIGN_2M);
	if (fd >= 0)
		close(fd);
	free(local);
	free(dram);
	rcloop_destroy(loop);
}

/* ---- setup ---- */

/* ---- --profile: where the kernel spends a registration ---- */

#define TRACING "/sys/kernel/tracing"
#define PROF_ITER 5
#define PROF_TOP 30

static int tr_write(const char *file, const char *val, bool append)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), TRACING "/%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

struct prof_ent {
	char fn[96];
	unsigned long hits;
	double us;
};

static int prof_cmp(const void *a, const void *b)
{
	const struct prof_ent *x = a, *y = b;

	return x->us < y->us ? 1 : x->us > y->us ? -1 : 0;
}

/*
 * Merge trace_stat/function<cpu> (lines "fn hits time us avg us s^2 us")
 * and print the PROF_TOP functions by total time.  With the function
 * graph tracer the time of a function includes its callees.
 */
static int prof_dump(const char *what, size_t len)
{
	static struct prof_ent ent[4096];
	int n = 0, cpu, i;

	for (cpu = 0; cpu < 64; cpu++) {
		char path[128], line[512];
		FILE *f;

		snprintf(path, sizeof(path), TRACING "/trace_stat/function%d",
			 cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f)) {
			char fn[96];
			unsigned long hits;
			double us;

			if (sscanf(line, " %95s %lu %lf us", fn, &hits, &us) != 3)
				continue;
			for (i = 0; i < n && strcmp(ent[i].fn, fn); i++)
				;
			if (i == n) {
				if (n == (int)(sizeof(ent) / sizeof(ent[0])))
					continue;
				snprintf(ent[n].fn, sizeof(ent[n].fn), "%s", fn);
				ent[n].hits = 0;
				ent[n].us = 0;
				n++;
			}
			ent[i].hits += hits;
			ent[i].us += us;
		}
		fclose(f);
	}
	if (!n)
		return -1;
	qsort(ent, (size_t)n, sizeof(ent[0]), prof_cmp);
	printf("profile: %s of %zu MiB, %d times; function, calls per time, us per time (with callees)\n",
	       what, len / MIB, PROF_ITER);
	for (i = 0; i < n && i < PROF_TOP; i++)
		printf("profile: %-12s %-40s %10.1f %10.1f\n", what, ent[i].fn,
		       (double)ent[i].hits / PROF_ITER, ent[i].us / PROF_ITER);
	return 0;
}

/* the functions a registration may spend its time in */
static const char *const prof_filter[] = {
	"*gup*", "*get_user_pages*", "*pin_user_pages*", "unpin_user_*",
	"follow_*", "try_grab_*", "*dev_pagemap*", "gup_put_folio",
	"check_and_migrate_movable_*", "collect_longterm_*", "handle_mm_fault",
	"dax_iomap_*", "*dax_fault*", "ib_umem_*", "sg_alloc_*",
	"__sg_alloc_*", "rxe_mr_*", "rxe_reg_user_mr", "rxe_dereg_mr",
	"file_pin*", "uverbs_*mr*", "ib_uverbs_*mr*", "ib_dereg_mr_user",
	"folio_mark_dirty", "*put_devmap_managed*", "xas_store", "xa_store",
	"folio_lock", "mmap_read_lock*", "lru_add_drain*",
};

static bool prof_on(void)
{
	return tr_write("function_profile_enabled", "1", false) == 0;
}

static void prof_off(void)
{
	tr_write("function_profile_enabled", "0", false);
}

static struct ibv_mr *prof_reg(int c, void *p, size_t len)
{
	return c == 0 ? reg_dax(bigfile, 0, len) : ibv_reg_mr(pd, p, len, ACCESS);
}

static void bench_profile(void)
{
	static const char *const name[] = { "fsdax", "devdax", "anon" };
	size_t len = o.profile, mlen = round_2m(len);
	struct ibv_mr *mr[PROF_ITER];
	void *buf[3] = { NULL, MAP_FAILED, MAP_FAILED };
	int fd_dev, c, i, err = 0;
	size_t k;

	if (access(TRACING "/function_profile_enabled", W_OK) &&
	    mount("nodev", TRACING, "tracefs", 0, NULL)) {
		dtest_fail("profile", "mount tracefs on " TRACING ": %s",
			   strerror(errno));
		return;
	}
	if (access(TRACING "/function_profile_enabled", W_OK)) {
		dtest_fail("profile", "%s: %s (a kernel without CONFIG_FUNCTION_PROFILER)",
			   TRACING "/function_profile_enabled", strerror(errno));
		return;
	}
	tr_write("set_ftrace_filter", "", false);
	for (k = 0; k < sizeof(prof_filter) / sizeof(prof_filter[0]); k++)
		tr_write("set_ftrace_filter", prof_filter[k], true);
	fd_dev = open(devdax, O_RDWR | O_CLOEXEC);
	if (fd_dev >= 0)
		buf[1] = map_at_2m(fd_dev, 0, mlen, MAP_SHARED);
	buf[2] = map_at_2m(-1, 0, mlen, MAP_PRIVATE | MAP_ANONYMOUS);
	if (buf[1] == MAP_FAILED || buf[2] == MAP_FAILED) {
		dtest_fail("profile", "mapping %s or anonymous memory: %s",
			   devdax, strerror(errno));
		goto out;
	}
	madvise(buf[2], mlen, MADV_HUGEPAGE);
	memset(buf[2], 0x5a, mlen);
	for (c = 0; c < 3; c++) {
		int cerr = 0;

		/* warm-up: faults, capability probe */
		mr[0] = prof_reg(c, buf[c], len);
		if (!mr[0] || ibv_dereg_mr(mr[0])) {
			dtest_fail("profile", "%s: registration: %s", name[c],
				   strerror(errno));
			err = 1;
			continue;
		}
		if (!prof_on()) {
			dtest_fail("profile", "enabling the profiler: %s",
				   strerror(errno));
			err = 1;
			break;
		}
		for (i = 0; i < PROF_ITER; i++)
			mr[i] = prof_reg(c, buf[c], len);
		prof_off();
		prof_dump(name[c], len);
		for (i = 0; i < PROF_ITER; i++)
			if (!mr[i])
				cerr = 1;
		prof_on();
		for (i = 0; i < PROF_ITER; i++)
			if (mr[i] && ibv_dereg_mr(mr[i]))
				cerr = 1;
		prof_off();
		if (cerr) {
			dtest_fail("profile", "%s: a registration or deregistration failed",
				   name[c]);
			err = 1;
			continue;
		}
		prof_dump(c == 0 ? "fsdax-dereg" : c == 1 ? "devdax-dereg" :
			  "anon-dereg", len);
	}
	if (!err)
		dtest_pass("profile", "%zu MiB: fsdax, devdax, anon profiled", len / MIB);
out:
	tr_write("set_ftrace_filter", "", false);
	if (buf[1] != MAP_FAILED)
		munmap(buf[1], mlen);
	if (buf[2] != MAP_FAILED)
		munmap(buf[2], mlen);
	if (fd_dev >= 0)
		close(fd_dev);
}

static size_t devdax_size(const char *dev)
{
	char p[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/sys/bus/dax/devices/%s/size",
		 strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev);
	f = fopen(p, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static void usage(const char *prog)
{
	printf("usage: %s [--quick] [--runs N] [--data-runs N] [--largest MIB]\n"
	       "       %s --profile MIB\n"
	       "  Registration, alignment, live-MR count and data-path benchmarks\n"
	       "  on $DAXLEASE_EXT4 (fsdax), $DAXLEASE_DEVDAX and $DAXLEASE_RDMA_DEV;\n"
	       "  JSON records to $DAXLEASE_RESULTS (suite \"bench\").\n"
	       "  --quick: 3 runs, sizes 4 KiB and 2 MiB, 1 and 10 MRs, 2 data sizes.\n"
	       "  --largest: largest registration size (default 512, capped by\n"
	       "  the devdax size and the file system's free space).\n"
	       "  --profile: instead, where the kernel spends registrations and\n"
	       "  deregistrations of MIB of fsdax, devdax and anonymous THP\n"
	       "  memory (needs the function profiler: the plain test kernel)\n",
	       prog, prog);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "runs", required_argument, NULL, 'r' },
		{ "data-runs", required_argument, NULL, 'd' },
		{ "largest", required_argument, NULL, 'l' },
		{ "profile", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rlimit rl = { 8192, 8192 };
	size_t cap, ddsz;
	struct statvfs vfs;
	int c, ret;

	o.runs = 41;
	o.data_runs = 31;
	o.largest = 512 * MIB;
	while ((c = getopt_long(argc, argv, "qr:d:l:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 'q':
			o.quick = true;
			break;
		case 'r':
			o.runs = atoi(optarg);
			break;
		case 'd':
			o.data_runs = atoi(optarg);
			break;
		case 'l':
			o.largest = strtoull(optarg, NULL, 0) * MIB;
			break;
		case 'p':
			o.profile = strtoull(optarg, NULL, 0) * MIB;
			if (!o.profile || o.profile > 1024 * MIB) {
				usage(argv[0]);
				return 2;
			}
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (o.quick) {
		o.runs = 3;
		o.data_runs = 3;
	}
	if (o.runs < 1 || o.data_runs < 1 || o.largest < 4 * MIB) {
		usage(argv[0]);
		return 2;
	}

	dtest_begin("bench");
	setrlimit(RLIMIT_NOFILE, &rl);
	fsdir = getenv("DAXLEASE_EXT4");
	devdax = getenv("DAXLEASE_DEVDAX");
	if (!fsdir || !devdax || access(devdax, R_OK | W_OK)) {
		dtest_fail("setup", "needs DAXLEASE_EXT4 and a usable DAXLEASE_DEVDAX (%s)",
			   devdax ? devdax : "unset");
		return dtest_end();
	}
	ctx = rcloop_open_device(NULL);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		dtest_fail("setup", "RDMA device: %s", strerror(errno));
		return dtest_end();
	}
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
	ret = rpma_peer_new(ctx, &peer);
	if (ret) {
		dtest_fail("setup_rpma_peer", "rpma_peer_new: %s",
			   rpma_err_2str(ret));
		peer = NULL;
		bench_fail++;
	}

	/* largest size: what the devdax device and the file system hold */
	ddsz = devdax_size(devdax);
	cap = o.largest;
	if (ddsz && ddsz < cap)
		cap = ddsz;
	if (statvfs(fsdir, &vfs) == 0) {
		size_t fsfree = (size_t)vfs.f_bavail * vfs.f_frsize;
		/* room for the 1000 small files and the alignment offset */
		size_t room = fsfree > 24 * MIB ? fsfree - 24 * MIB : 0;

		if (room < cap)
			cap = room;
	}
	cap &= ~(32 * MIB - 1);
	if (o.quick) {
		o.sizes[o.nsizes++] = 4 * KIB;
		o.sizes[o.nsizes++] = 2 * MIB;
		o.nmr[o.nnmr++] = 1;
		o.nmr[o.nnmr++] = 10;
		bigsize = 8 * MIB;
	} else {
		o.sizes[o.nsizes++] = 4 * KIB;
		o.sizes[o.nsizes++] = 2 * MIB;
		o.sizes[o.nsizes++] = 64 * MIB;
		if (cap > 64 * MIB)
			o.sizes[o.nsizes++] = cap;
		o.nmr[o.nnmr++] = 1;
		o.nmr[o.nnmr++] = 10;
		o.nmr[o.nnmr++] = 100;
		o.nmr[o.nnmr++] = 1000;
		bigsize = cap > 72 * MIB ? cap : 72 * MIB;
	}
	if (!o.quick && cap < o.largest)
		dtest_pass("largest_size", "largest size %zu MiB: %zu MiB asked, devdax %zu MiB, %s free space less 24 MiB",
			   cap / MIB, o.largest / MIB, ddsz / MIB, fsdir);
	snprintf(bigfile, sizeof(bigfile), "%s/bench-big.dat", fsdir);
	small_off = bigsize;
	if (make_file(bigfile, bigsize + SMALL_AREA(o.nmr[o.nnmr - 1]))) {
		dtest_fail("setup_file", "%s (%zu bytes): %s", bigfile, bigsize,
			   strerror(errno));
		return dtest_end();
	}
	report_layout(bigfile, bigsize + SMALL_AREA(o.nmr[o.nnmr - 1]));
	printf("bench: %s of %zu MiB, %s (%zu MiB), runs %d, data runs %d%s\n",
	       bigfile, bigsize / MIB, devdax, ddsz / MIB, o.runs, o.data_runs,
	       o.quick ? ", quick" : "");

	if (o.profile) {
		if (o.profile > bigsize || (ddsz && o.profile > ddsz))
			dtest_fail("profile", "--profile %zu MiB: more than the file (%zu MiB) or %s",
				   o.profile / MIB, bigsize / MIB, devdax);
		else
			bench_profile();
		goto done;
	}
	bench_registration();
	bench_alignment();
	bench_nmr();
	bench_data();
done:
	unlink(bigfile);
	if (peer)
		rpma_peer_delete(&peer);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("bench: %d measurement(s) failed their sanity check\n", bench_fail);
	return dtest_end();
}
