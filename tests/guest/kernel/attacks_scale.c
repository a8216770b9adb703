// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Attacks on the cost of the pin records: thousands of MRs on one file.
 *
 * Every layout change of a DAX file asks the records whether the range it
 * drops is pinned (doc/design.md §1a), under the lock that every other
 * registration and check takes too.  A user who may register memory can
 * put thousands of one-page MRs on one file; if the answer walks every
 * pin of the file, each truncate, punch or page fault check of that file
 * costs time in proportion to the user's MRs, with that lock held.
 *
 * i15_pins_scale: a punch refused over the newest of 16 pins of a file,
 * then over the newest of 8192 (lease released, as an unrelated process
 * would find the file): the second may cost at most twice the first.
 * i15_pins_tree: the same records answer right while they are created,
 * grown (one MR over two mappings of one file: its record is the hull of
 * both) and released in a scrambled order: a punch is refused exactly
 * over pinned pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/daxlease_fcntl.h>

#include "attacks.h"
#include "dtest.h"

#define SCALE_FEW 16
#define SCALE_MANY 8192
#define SCALE_ROUNDS 7
#define SCALE_PUNCHES 48
/* how much more a punch may cost with SCALE_MANY pins than with SCALE_FEW */
#define SCALE_MAX_RATIO 2.0
#define SCALE_FILE (4 * KT_MIB)
/* the pinned pages: PG_MANY by all MRs but one, PG_TARGET by the newest */
#define PG_MANY 1
#define PG_TARGET 2
#define PG_FREE 3
/* the hull: file pages HULL_HI then HULL_LO, mapped next to each other */
#define HULL_LO 30
#define HULL_HI 40

struct scale {
	struct kt_dev *dev;
	const char *path;
	int fd;
	uint8_t *map;
	uint32_t *handles;	/* PG_MANY MRs */
	int n;
	uint32_t target;
	bool has_target;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int lease(struct scale *s, bool on)
{
	return fcntl(s->fd, F_SETLEASE, on ? ATK_LAYOUT_EXCL : F_UNLCK) ?
		       errno : 0;
}

/* one page of the file at page pg, through the mapping; 0 or errno */
static int reg_page(struct scale *s, unsigned long pg, uint32_t *handle)
{
	struct ibv_mr mr;
	int ret;

	ret = kt_reg_mr_ioctl(s->dev, s->map + pg * ATK_PAGE, ATK_PAGE,
			      KT_ACCESS, s->fd, pg * ATK_PAGE, &mr);
	if (!ret)
		*handle = mr.handle;
	return ret;
}

/* PG_MANY MRs until there are n, then a new target MR; 0 or errno */
static int grow_to(struct scale *s, int n, char *why, size_t len)
{
	int ret;

	ret = lease(s, true);
	if (ret) {
		snprintf(why, len, "F_SETLEASE(F_LAYOUT|F_EXCLUSIVE): %s",
			 strerror(ret));
		return ret;
	}
	if (s->has_target) {
		ret = kt_destroy_mr(s->dev, s->target);
		s->has_target = false;
		if (ret) {
			snprintf(why, len, "dereg of the target MR: %s",
				 strerror(ret));
			return ret;
		}
	}
	for (; s->n < n - 1; s->n++) {
		ret = reg_page(s, PG_MANY, &s->handles[s->n]);
		if (ret) {
			snprintf(why, len, "MR %d of page %d: %s", s->n + 1,
				 PG_MANY, strerror(ret));
			return ret;
		}
	}
	ret = reg_page(s, PG_TARGET, &s->target);
	if (ret) {
		snprintf(why, len, "target MR of page %d: %s", PG_TARGET,
			 strerror(ret));
		return ret;
	}
	s->has_target = true;
	ret = lease(s, false);
	if (ret)
		snprintf(why, len, "F_SETLEASE(F_UNLCK): %s", strerror(ret));
	return ret;
}

static int punch(struct scale *s, unsigned long pg)
{
	return fallocate(s->fd, ATK_PUNCH, pg * ATK_PAGE, ATK_PAGE) ? errno :
								       0;
}

/*
 * The cheapest of SCALE_ROUNDS rounds of SCALE_PUNCHES punches of the
 * target page, in microseconds per punch; every one must fail with
 * ETXTBSY (else *bad is its result and the time is 0).
 */
static double punch_cost(struct scale *s, int *bad)
{
	double best = 0, t;
	int r, i, ret;

	*bad = 0;
	for (r = 0; r < SCALE_ROUNDS; r++) {
		t = now_us();
		for (i = 0; i < SCALE_PUNCHES; i++) {
			ret = punch(s, PG_TARGET);
			if (ret != ETXTBSY) {
				*bad = ret ? ret : -1;
				return 0;
			}
		}
		t = (now_us() - t) / SCALE_PUNCHES;
		if (!r || t < best)
			best = t;
	}
	return best;
}

static const char *res(int r)
{
	return r == -1 ? "success" : kt_res_name(r);
}

/* grows to n pins and measures: the cost, or 0 after failing name */
static double scale_phase(struct scale *s, int n, const char *name)
{
	char why[256];
	double t;
	int bad;

	if (grow_to(s, n, why, sizeof(why))) {
		dtest_fail(name, "not reached: %s", why);
		return 0;
	}
	t = punch_cost(s, &bad);
	if (bad)
		dtest_fail(name, "punch of the pinned page %d with %d pins: %s (want ETXTBSY)",
			   PG_TARGET, n, res(bad));
	return t;
}

static void t_scale(struct scale *s, const struct kt_fs *fs)
{
	const char *name = kt_name("i15_pins_scale", fs);
	double few, many;

	few = scale_phase(s, SCALE_FEW, name);
	if (!few)
		return;
	many = scale_phase(s, SCALE_MANY, name);
	if (!many)
		return;
	printf("  %s: refused punch over the newest pin: %.1f us with %d pins of the file, %.1f us with %d (%.2fx)\n",
	       name, few, SCALE_FEW, many, SCALE_MANY, many / few);
	dtest_check(name, many <= SCALE_MAX_RATIO * few,
		    "a punch refused over the newest pin of a file costs %.1f us with %d pins and %.1f us with %d: %.2fx (want at most %.1fx: the check must not walk every pin of the file)",
		    few, SCALE_FEW, many, SCALE_MANY, many / few,
		    SCALE_MAX_RATIO);
}

/* punches page pg of the file, expecting want; why gets the first miss */
static void expect_punch(struct scale *s, unsigned long pg, int want,
			 const char *when, char *why, size_t len)
{
	int ret = punch(s, pg);

	if (ret == want || *why)
		return;
	snprintf(why, len, "%s: punch of page %lu: %s (want %s)", when, pg,
		 kt_res_name(ret), kt_res_name(want));
}

/*
 * One MR over file page HULL_HI mapped at X and HULL_LO at X + 4 KiB:
 * the record grows from [HULL_HI] to [HULL_LO, HULL_HI] while it is made.
 */
static void hull_check(struct scale *s, char *why, size_t len)
{
	uint8_t *x;
	struct ibv_mr mr;
	int ret;

	x = mmap(NULL, 2 * ATK_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, HULL_HI * ATK_PAGE);
	if (x == MAP_FAILED) {
		snprintf(why, len, "mmap: %s", strerror(errno));
		return;
	}
	if (mmap(x + ATK_PAGE, ATK_PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, s->fd, HULL_LO * ATK_PAGE) ==
	    MAP_FAILED) {
		snprintf(why, len, "mmap MAP_FIXED: %s", strerror(errno));
		goto out;
	}
	/* a plain REG_MR: GUP records each vma, the second grows the first */
	ret = lease(s, true);
	if (!ret)
		ret = kt_reg_mr_ioctl(s->dev, x, 2 * ATK_PAGE, KT_ACCESS, -1,
				      0, &mr);
	lease(s, false);
	if (ret) {
		snprintf(why, len, "MR over two mappings of pages %d and %d: %s",
			 HULL_HI, HULL_LO, strerror(ret));
		goto out;
	}
	expect_punch(s, (HULL_LO + HULL_HI) / 2, ETXTBSY,
		     "inside the hull of one MR", why, len);
	expect_punch(s, HULL_LO, ETXTBSY, "first page of the hull", why, len);
	expect_punch(s, HULL_HI, ETXTBSY, "last page of the hull", why, len);
	expect_punch(s, HULL_LO - 1, 0, "below the hull", why, len);
	expect_punch(s, HULL_HI + 1, 0, "above the hull", why, len);
	ret = kt_destroy_mr(s->dev, mr.handle);
	if (ret && !*why)
		snprintf(why, len, "dereg of the hull MR: %s", strerror(ret));
	expect_punch(s, (HULL_LO + HULL_HI) / 2, 0, "hull MR deregistered",
		     why, len);
out:
	munmap(x, 2 * ATK_PAGE);
}

static void t_tree(struct scale *s, const struct kt_fs *fs)
{
	const char *name = kt_name("i15_pins_tree", fs);
	char why[512] = "";
	unsigned int seed = 15;
	int i, j, ret;
	uint32_t h;

	expect_punch(s, PG_TARGET, ETXTBSY, "target pinned", why, sizeof(why));
	expect_punch(s, PG_MANY, ETXTBSY, "many pins", why, sizeof(why));
	expect_punch(s, PG_FREE, 0, "unpinned page", why, sizeof(why));
	hull_check(s, why, sizeof(why));
	ret = kt_destroy_mr(s->dev, s->target);
	s->has_target = false;
	if (ret && !*why)
		snprintf(why, sizeof(why), "dereg of the target: %s",
			 strerror(ret));
	expect_punch(s, PG_TARGET, 0, "target deregistered", why, sizeof(why));
	/* scrambled order: every record but the last one leaves */
	for (i = s->n - 1; i > 0; i--) {
		j = rand_r(&seed) % (i + 1);
		h = s->handles[i];
		s->handles[i] = s->handles[j];
		s->handles[j] = h;
	}
	while (s->n > 1) {
		ret = kt_destroy_mr(s->dev, s->handles[--s->n]);
		if (ret && !*why)
			snprintf(why, sizeof(why), "dereg of MR %d: %s", s->n,
				 strerror(ret));
		if (s->n % 1024 == 1)
			expect_punch(s, PG_MANY, ETXTBSY, "while MRs leave",
				     why, sizeof(why));
	}
	expect_punch(s, PG_MANY, ETXTBSY, "one MR left", why, sizeof(why));
	ret = kt_destroy_mr(s->dev, s->handles[--s->n]);
	if (ret && !*why)
		snprintf(why, sizeof(why), "dereg of the last MR: %s",
			 strerror(ret));
	expect_punch(s, PG_MANY, 0, "every MR deregistered", why, sizeof(why));
	dtest_check(name, !*why,
		    "%d MRs of page %d, one of page %d, one over pages %d..%d through two mappings, deregistered in a scrambled order: %s",
		    SCALE_MANY - 1, PG_MANY, PG_TARGET, HULL_LO, HULL_HI,
		    *why ? why : "every punch refused exactly over pinned pages");
}

void atk_pins_scale(struct kt_dev *dev, const struct kt_fs *fs)
{
	struct scale s = { .dev = dev, .fd = -1, .map = MAP_FAILED };
	char *why = NULL;
	int ret;

	s.path = kt_path(fs, "i15");
	s.handles = calloc(SCALE_MANY, sizeof(*s.handles));
	ret = s.handles ? kt_make_file(s.path, SCALE_FILE, 0x15) : ENOMEM;
	if (!ret) {
		s.fd = open(s.path, O_RDWR | O_CLOEXEC);
		if (s.fd < 0)
			ret = errno;
	}
	if (!ret) {
		s.map = mmap(NULL, SCALE_FILE, PROT_READ | PROT_WRITE,
			     MAP_SHARED, s.fd, 0);
		if (s.map == MAP_FAILED)
			ret = errno;
	}
	if (ret) {
		if (asprintf(&why, "test file %s: %s", s.path,
			     strerror(ret)) < 0)
			why = NULL;
		dtest_fail(kt_name("i15_pins_scale", fs), "not reached: %s",
			   why ? why : strerror(ret));
		dtest_fail(kt_name("i15_pins_tree", fs), "not reached: %s",
			   why ? why : strerror(ret));
		free(why);
		goto out;
	}
	t_scale(&s, fs);
	if (s.n == SCALE_MANY - 1 && s.has_target)
		t_tree(&s, fs);
	else
		dtest_fail(kt_name("i15_pins_tree", fs),
			   "not reached: %d of %d MRs registered", s.n +
			   s.has_target, SCALE_MANY);
out:
	if (s.has_target)
		kt_destroy_mr(dev, s.target);
	while (s.n > 0)
		kt_destroy_mr(dev, s.handles[--s.n]);
	if (s.map != MAP_FAILED)
		munmap(s.map, SCALE_FILE);
	if (s.fd >= 0)
		close(s.fd);
	unlink(s.path);
	free(s.handles);
}
