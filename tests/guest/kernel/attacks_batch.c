// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A registration that GUP pins a PMD at a time (one page-table walk and
 * one reference step per 2 MiB PMD of DAX memory instead of one per
 * 4 KiB page) must pin exactly the pages it names, hand each one to the
 * device at its place, and give back exactly what it took: where the
 * first and the last PMD of the range are partial, where the PMDs are
 * split while pinned (4 KiB punched right next to the range), and for
 * FS-DAX pages (a folio per page) as for device DAX (one compound folio
 * per PMD).
 *
 * The counts are the kernel's own: nr_foll_pin_acquired and
 * nr_foll_pin_released of /proc/vmstat, folded by /proc/sys/vm/stat_refresh
 * first; nothing else in the guest pins pages while a test runs, but the
 * RDMA WRITEs of the test register (pin and unpin) their source buffer,
 * so from the registration to the dereg the pins released less the pins
 * taken are the MR's.  A reference left behind shows as a truncate that
 * waits for the page (DAX truncate waits for busy pages, as it must).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/daxlease_fcntl.h>

#include "attacks.h"
#include "dtest.h"

/* [1 MiB, 5 MiB + 4 KiB): a partial first PMD, a whole one, a partial last */
#define B_OFF KT_MIB
#define B_LEN (4 * KT_MIB + ATK_PAGE)
#define B_PAGES (B_LEN / ATK_PAGE)

struct pin_stat {
	long long acquired, released;
};

static int read_pin_stat(struct pin_stat *s)
{
	char line[128];
	FILE *f;

	s->acquired = s->released = -1;
	/* fold the per-CPU differences into the counters */
	kt_write_str("/proc/sys/vm/stat_refresh", "1");
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "nr_foll_pin_acquired %lld", &s->acquired);
		sscanf(line, "nr_foll_pin_released %lld", &s->released);
	}
	fclose(f);
	return s->acquired < 0 || s->released < 0 ? ENOENT : 0;
}

/*
 * FS-DAX: the file (extents PMD-mappable where extsize or the file system
 * allows) mapped at a 2 MiB-aligned address, every 2 MiB faulted in
 * (PMD entries), [1 MiB, 5 MiB + 4 KiB) registered under the exclusive
 * layout lease, which is then released.
 */
static void t_batch_fsdax(struct kt_dev *dev, const struct kt_fs *fs,
			  unsigned int extsize)
{
	const char *n_count = kt_name("i17_pmd_batch_pin_count", fs);
	const char *n_data = kt_name("i17_pmd_batch_data", fs);
	const char *n_split = kt_name("i17_pmd_batch_split_while_pinned", fs);
	const char *n_rel = kt_name("i17_pmd_batch_released", fs);
	const char *path = kt_path(fs, "i17");
	struct atk_falloc before = { path, ATK_PUNCH, B_OFF - ATK_PAGE, ATK_PAGE };
	struct atk_falloc after = { path, ATK_PUNCH, B_OFF + B_LEN, ATK_PAGE };
	struct atk_falloc inside = { path, ATK_PUNCH, 3 * KT_MIB, ATK_PAGE };
	char ext[256], why[256], v_in[256], v_lo[256], v_hi[256], v_2[256];
	struct pin_stat s0, s1, s2;
	long long net;
	uint8_t *res = MAP_FAILED, *map;
	int fd = -1, ret, r_b, r_a, r_i, w, in, lo, hi, in2, trunc;
	bool pmd, reg = false;
	struct ibv_mr raw;
	size_t i;

	ret = atk_make_file(path, KT_FILE_SIZE, 0x17, extsize);
	fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_SETLEASE, ATK_LAYOUT_EXCL)) {
		ret = ret ? ret : errno;
		goto not_reached;
	}
	pmd = atk_pmd_mappable(fd, ext, sizeof(ext));
	map = atk_map_pmd_aligned(fd, KT_FILE_SIZE, &res);
	if (!map) {
		ret = errno;
		goto not_reached;
	}
	for (i = 0; i < KT_FILE_SIZE; i += ATK_PMD_SIZE)
		(void)*(volatile uint8_t *)(map + i);
	ret = read_pin_stat(&s0);
	if (!ret)
		ret = kt_reg_mr_ioctl(dev, map + B_OFF, B_LEN, KT_ACCESS, fd,
				      B_OFF, &raw);
	reg = !ret;
	if (!ret)
		ret = read_pin_stat(&s1);
	fcntl(fd, F_SETLEASE, F_UNLCK);
	if (ret)
		goto not_reached;
	dtest_check(n_count, s1.acquired - s0.acquired == (long long)B_PAGES &&
		    s1.released == s0.released,
		    "REG_MR of [1 MiB, 5 MiB + 4 KiB) (%s%s): %lld pins taken, %lld released (want %lu and 0)",
		    ext, pmd ? ", PMD-mappable" : ": NOT PMD-mappable",
		    s1.acquired - s0.acquired, s1.released - s0.released,
		    (unsigned long)B_PAGES);

	/* every page at its place: the pattern is a function of the offset */
	w = kt_rdma_write_pattern(dev, (uintptr_t)(map + B_OFF), raw.rkey,
				  B_LEN, B_OFF, 0x71, why, sizeof(why));
	in = w ? -1 : kt_verify_pattern(path, B_OFF, B_LEN, 0x71, v_in,
					sizeof(v_in));
	lo = kt_verify_pattern(path, 0, B_OFF, 0x17, v_lo, sizeof(v_lo));
	hi = kt_verify_pattern(path, B_OFF + B_LEN,
			       KT_FILE_SIZE - (B_OFF + B_LEN), 0x17, v_hi,
			       sizeof(v_hi));
	dtest_check(n_data, pmd && !w && !in && !lo && !hi,
		    "RDMA WRITE of the whole MR: %s; the file at [1 MiB, 5 MiB + 4 KiB): %s; before: %s; after: %s%s",
		    w ? why : "done", w ? "not checked" : in ? v_in : "the data, page by page",
		    lo ? v_lo : "intact", hi ? v_hi : "intact",
		    pmd ? "" : " (the file is NOT PMD-mappable: the case is not tested)");

	/* split the first and the last PMD while pinned */
	r_b = kt_child(atk_falloc_fn, &before, KT_OP_TIMEOUT);
	r_a = kt_child(atk_falloc_fn, &after, KT_OP_TIMEOUT);
	r_i = kt_child(atk_falloc_fn, &inside, KT_OP_TIMEOUT);
	w = kt_rdma_write_pattern(dev, (uintptr_t)(map + B_OFF), raw.rkey,
				  B_LEN, B_OFF, 0x72, why, sizeof(why));
	in2 = w ? -1 : kt_verify_pattern(path, B_OFF, B_LEN, 0x72, v_2,
					 sizeof(v_2));
	dtest_check(n_split, pmd && !r_b && !r_a && r_i == ETXTBSY && !w && !in2,
		    "4 KiB punched right before and right after the range (splitting its first and last PMD): %s, %s (want success); inside at 3 MiB: %s (want ETXTBSY); an RDMA WRITE afterwards: %s, the file: %s",
		    kt_res_name(r_b), kt_res_name(r_a), kt_res_name(r_i),
		    w ? why : "done", w ? "not checked" : in2 ? v_2 : "has its data");

	ret = kt_destroy_mr(dev, raw.handle);
	reg = false;
	if (!ret)
		ret = read_pin_stat(&s2);
	munmap(res, KT_FILE_SIZE + ATK_PMD_SIZE);
	res = MAP_FAILED;
	trunc = ret ? -1 : kt_child_op_within(path, KT_OP_TRUNCATE, 0,
					      ATK_WAIT_BOUND);
	/* the writes' source buffers were pinned and unpinned meanwhile */
	net = ret ? 0 : (s2.released - s1.released) -
			(s2.acquired - s1.acquired);
	dtest_check(n_rel, !ret && net == s1.acquired - s0.acquired &&
		    trunc == 0,
		    "dereg: %s; %lld pins released more than taken since the registration (want %lld: the MR's); truncate to 0 afterwards: %s (want success at once: no page left busy)",
		    kt_res_name(ret), net, s1.acquired - s0.acquired,
		    ret ? "not reached" : kt_res_name(trunc));
	goto out;

not_reached:
	snprintf(why, sizeof(why), "not reached: file, lease, map, REG_MR: %s",
		 kt_res_name(ret));
	dtest_fail(n_count, "%s", why);
	dtest_fail(n_data, "not reached");
	dtest_fail(n_split, "not reached");
	dtest_fail(n_rel, "not reached");
out:
	if (reg)
		kt_destroy_mr(dev, raw.handle);
	if (res != MAP_FAILED)
		munmap(res, KT_FILE_SIZE + ATK_PMD_SIZE);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

void atk_pmd_batch(struct kt_dev *dev, const struct kt_fs *fs,
		   unsigned int extsize)
{
	t_batch_fsdax(dev, fs, extsize);
}

/*
 * Device DAX (compound pages, a folio per PMD): the same range of the
 * device through a plain REG_MR, its data checked through the mapping.
 */
void atk_pmd_batch_devdax(struct kt_dev *dev, const char *devdax)
{
	const char *n = "i17_pmd_batch_devdax";
	struct pin_stat s0, s1, s2;
	uint8_t *res = MAP_FAILED, *map = NULL, *e = NULL;
	char why[256] = "";
	struct ibv_mr *mr = NULL;
	int fd, ret, w = -1;
	size_t bad = 0, lo = 0;
	long long net;
	bool same = false;

	fd = open(devdax, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		map = atk_map_pmd_aligned(fd, KT_FILE_SIZE, &res);
	e = malloc(B_LEN);
	if (!map || !e) {
		dtest_fail(n, "not reached: open and map %s: %s", devdax,
			   strerror(errno));
		goto out;
	}
	memset(map, 0x17, KT_FILE_SIZE);
	ret = read_pin_stat(&s0);
	if (!ret) {
		mr = ibv_reg_mr(dev->pd, map + B_OFF, B_LEN, KT_ACCESS);
		ret = mr ? 0 : errno;
	}
	if (!ret)
		ret = read_pin_stat(&s1);
	if (ret) {
		dtest_fail(n, "not reached: REG_MR of [1 MiB, 5 MiB + 4 KiB) of %s: %s",
			   devdax, kt_res_name(ret));
		goto out;
	}
	w = kt_rdma_write_pattern(dev, (uintptr_t)(map + B_OFF), mr->rkey,
				  B_LEN, B_OFF, 0x71, why, sizeof(why));
	kt_pattern(e, B_LEN, B_OFF, 0x71);
	if (!w) {
		for (bad = 0; bad < B_LEN && map[B_OFF + bad] == e[bad]; bad++)
			;
		for (lo = 0; lo < B_OFF && map[lo] == 0x17; lo++)
			;
		same = bad == B_LEN && lo == B_OFF &&
		       map[B_OFF + B_LEN] == 0x17;
	}
	w = ibv_dereg_mr(mr) ? errno : 0;
	mr = NULL;
	if (!w)
		w = read_pin_stat(&s2);
	net = w ? 0 : (s2.released - s1.released) - (s2.acquired - s1.acquired);
	dtest_check(n, same && !w &&
		    s1.acquired - s0.acquired == (long long)B_PAGES &&
		    net == (long long)B_PAGES,
		    "REG_MR of [1 MiB, 5 MiB + 4 KiB) of %s: %lld pins taken (want %lu); RDMA WRITE of the MR: %s%s; dereg: %s, %lld pins released more than taken since the registration (want %lu)",
		    devdax, s1.acquired - s0.acquired, (unsigned long)B_PAGES,
		    *why ? why : "done",
		    *why ? "" : same ? ", the data is in place page by page" :
		    ", but the mapping differs",
		    kt_res_name(w), net, (unsigned long)B_PAGES);
out:
	if (mr)
		ibv_dereg_mr(mr);
	free(e);
	if (res != MAP_FAILED)
		munmap(res, KT_FILE_SIZE + ATK_PMD_SIZE);
	if (fd >= 0)
		close(fd);
}
