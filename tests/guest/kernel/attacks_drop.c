// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Attacks on the range a layout change drops (doc/design.md §1a): the
 * range a file system checks for pins and busy pages must be the range
 * whose DAX entries it deletes, and a pin record is no proof that nothing
 * else holds a page.  A page whose DAX entry goes while something still
 * holds it is no longer seen by the next layout change, which then frees
 * its block under the holder.
 *
 * Short-term references are taken with vmsplice(2): the pipe holds the
 * page until it is read, as a FUSE direct-I/O read in flight or O_DIRECT
 * would; stock Linux waits for such a page before it frees its block.
 * "Waits" is measured as a child killed by its alarm (KT_HANG).
 *
 * Also: a pinned or exclusively leased DAX file must not become swap
 * (swap would write into the file's blocks).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/daxlease_fcntl.h>

#include "attacks.h"
#include "dtest.h"


/*
 * A pipe holding a reference to the page at addr, taken by vmsplice: a
 * short-term page reference that no pin record knows of.
 */
static int splice_page(void *addr, int pfd[2])
{
	struct iovec iov = { addr, ATK_PAGE };
	ssize_t n;
	int err;

	if (pipe2(pfd, O_CLOEXEC))
		return errno;
	n = vmsplice(pfd[1], &iov, 1, 0);
	if (n == (ssize_t)ATK_PAGE)
		return 0;
	err = n < 0 ? errno : EIO;
	close(pfd[0]);
	close(pfd[1]);
	pfd[0] = pfd[1] = -1;
	return err;
}

/*
 * Reads the page the pipe holds and compares it with the pattern of file
 * offset off: 0 if equal, else why says how (out, size).
 */
static int drain_page(int pfd[2], off_t off, uint8_t seed, char *out,
		      size_t size)
{
	uint8_t got[ATK_PAGE], want[ATK_PAGE];
	ssize_t n;
	size_t i;

	if (pfd[0] < 0)
		return snprintf(out, size, "no pipe"), EBADF;
	n = read(pfd[0], got, sizeof(got));
	close(pfd[0]);
	close(pfd[1]);
	pfd[0] = pfd[1] = -1;
	if (n != (ssize_t)sizeof(got)) {
		snprintf(out, size, "read of the pipe: %zd (%s)", n,
			 strerror(errno));
		return EIO;
	}
	kt_pattern(want, sizeof(want), off, seed);
	for (i = 0; i < sizeof(got) && got[i] == want[i]; i++)
		;
	if (i == sizeof(got)) {
		snprintf(out, size, "the file's data");
		return 0;
	}
	snprintf(out, size, "NOT the file's data (first difference at byte %zu)",
		 i);
	return EIO;
}

static void close_pipe(int pfd[2])
{
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	pfd[0] = pfd[1] = -1;
}

static bool is_xfs(const struct kt_fs *fs)
{
	return !strncmp(fs->name, "xfs", 3);
}

/*
 * Collapse or insert range at 1 MiB with the page right below it pinned
 * (lease released).  xfs stabilises the boundary of a shift: it writes
 * back and drops the DAX entries of the allocation unit before the
 * offset too (xfs_prepare_shift()), so there the pinned page is in the
 * range the change drops and the change must fail; ext4 drops nothing
 * below the offset and may go on.  Either way the pinned page keeps its
 * data and stays seen: a truncate over it still fails.
 */
static void t_shift_below_pinned(struct kt_dev *dev, const struct kt_fs *fs,
				 enum kt_op op)
{
	bool collapse = op == KT_OP_COLLAPSE_RANGE;
	const char *name = kt_name(collapse ? "i13_collapse_below_pinned" :
				   "i13_insert_below_pinned", fs);
	const char *path = kt_path(fs, "i13shift");
	char state[256], first[512] = "";
	struct kt_pin p = KT_PIN_INIT;
	const char *step = "";
	int ret, want, trunc, v, reports;
	uint64_t mark;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x31);
	if (!ret)
		ret = kt_pin(dev, path, 0, KT_MIB, ATK_LAYOUT_EXCL,
			     KT_PIN_DAXFD, &p, &step);
	if (ret) {
		dtest_fail(name, "not reached: pin of [0, 1 MiB): %s: %s", step,
			   kt_res_name(ret));
		goto out;
	}
	fcntl(p.fd, F_SETLEASE, F_UNLCK);
	mark = kt_kmsg_mark();
	ret = kt_child_op(path, op, KT_MIB);
	want = is_xfs(fs) ? ETXTBSY : 0;
	v = kt_verify_pattern(path, 0, KT_MIB, 0x31, state, sizeof(state));
	trunc = kt_child_op(path, KT_OP_TRUNCATE, 0);
	reports = kt_kmsg_scan(mark, first, sizeof(first));
	dtest_check(name, ret == want && !v && trunc == ETXTBSY && !reports,
		    "%s of 64 KiB at 1 MiB by another process, [0, 1 MiB) pinned (lease released): %s (want %s); pinned range %s; truncate to 0 afterwards: %s (want ETXTBSY); %d kernel report line(s)%s%s",
		    collapse ? "collapse" : "insert", kt_res_name(ret),
		    kt_res_name(want), v ? state : "unchanged",
		    kt_res_name(trunc), reports, reports > 0 ? "; first: " : "",
		    first);
	if (reports > 0)
		kt_kmsg_dump(mark, 60);
out:
	kt_unpin(&p);
	unlink(path);
}

/*
 * Collapse or insert range at 4 KiB while a pipe holds page 0 (vmsplice).
 * On xfs page 0 is in the range the shift drops (the allocation unit
 * before the offset): the change must wait for the pipe, as stock Linux
 * does, not delete page 0's entry.  On ext4 page 0 is outside and the
 * change goes on.  Either way page 0 must still be seen afterwards: a
 * truncate to 0 waits while the pipe holds it, and the pipe reads the
 * file's data.
 */
static void t_shift_spliced(const struct kt_fs *fs, int mode)
{
	bool collapse = mode == FALLOC_FL_COLLAPSE_RANGE;
	const char *name = kt_name(collapse ? "i13_collapse_spliced_page" :
				   "i13_insert_spliced_page", fs);
	const char *path = kt_path(fs, "i13splice");
	struct atk_falloc op = { path, mode, ATK_PAGE, ATK_PAGE };
	int pfd[2] = { -1, -1 }, fd = -1, ret, want, trunc, d;
	char pipe_state[128] = "not read";
	uint8_t *map = MAP_FAILED;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x32);
	fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		map = mmap(NULL, ATK_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fd, 0);
	ret = map == MAP_FAILED ? (errno ? errno : EIO) : splice_page(map, pfd);
	if (ret) {
		dtest_fail(name, "not reached: file, mapping and vmsplice of page 0: %s",
			   kt_res_name(ret));
		goto out;
	}
	ret = kt_child(atk_falloc_fn, &op, ATK_WAIT_BOUND);
	want = is_xfs(fs) ? KT_HANG : 0;
	trunc = kt_child_op_within(path, KT_OP_TRUNCATE, 0, ATK_WAIT_BOUND);
	d = drain_page(pfd, 0, 0x32, pipe_state, sizeof(pipe_state));
	dtest_check(name, ret == want && trunc == KT_HANG && !d,
		    "%s of 4 KiB at 4 KiB by another process while a pipe holds page 0 (vmsplice): %s (want %s); truncate to 0 afterwards: %s (want it to wait for the pipe); the pipe then read %s",
		    collapse ? "collapse" : "insert", kt_res_name(ret),
		    kt_res_name(want), kt_res_name(trunc), pipe_state);
out:
	close_pipe(pfd);
	if (map != MAP_FAILED)
		munmap(map, ATK_PAGE);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/*
 * A 4 KiB hole punched in a 2 MiB DAX extent mapped by one PMD entry,
 * next to a page that something else holds (vmsplice) and that a pin
 * record covers: (a) the page is itself pinned, (b) the page is not
 * pinned but lies between two pinned pages of one registration, whose
 * record is the hull of what it pinned.  The punch may go on, but the
 * held page must keep its DAX entry: once the pins are gone, a truncate
 * must still wait for the pipe.
 */
static void t_punch_next_to_spliced(struct kt_dev *dev, const struct kt_fs *fs,
				    unsigned int extsize, bool hull)
{
	const char *name = kt_name(hull ? "i13_punch_next_to_hull_spliced_page" :
				   "i13_punch_next_to_pinned_spliced_page", fs);
	const char *path = kt_path(fs, "i13pmd");
	const off_t x = KT_MIB, held = hull ? x + (off_t)ATK_PAGE : x;
	struct atk_falloc punch = { path, ATK_PUNCH, x + 64 * 1024, ATK_PAGE };
	uint8_t *res = MAP_FAILED, *map, *two = MAP_FAILED;
	int pfd[2] = { -1, -1 }, fd = -1, ret, trunc = 0, d = EIO;
	char ext[256], state[256], pipe_state[128] = "not read";
	struct ibv_mr *mr = NULL;
	bool pmd;

	ret = atk_make_file(path, KT_FILE_SIZE, 0x33, extsize);
	fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_SETLEASE, ATK_LAYOUT_EXCL)) {
		dtest_fail(name, "not reached: file and lease: %s",
			   strerror(ret ? ret : errno));
		goto out;
	}
	pmd = atk_pmd_mappable(fd, ext, sizeof(ext));
	map = atk_map_pmd_aligned(fd, KT_FILE_SIZE, &res);
	if (!map) {
		dtest_fail(name, "not reached: mmap: %s", strerror(errno));
		goto out;
	}
	/* one PMD entry for [0, 2 MiB), where the extent allows */
	(void)*(volatile uint8_t *)(map + x);
	if (hull) {
		/* pages x and x + 8 KiB at neighbouring addresses: one MR */
		two = mmap(NULL, 2 * ATK_PAGE, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (two == MAP_FAILED ||
		    mmap(two, ATK_PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, x) == MAP_FAILED ||
		    mmap(two + ATK_PAGE, ATK_PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, x + 2 * ATK_PAGE) ==
		    MAP_FAILED) {
			dtest_fail(name, "not reached: mmap of the two pages: %s",
				   strerror(errno));
			goto out;
		}
		mr = ibv_reg_mr(dev->pd, two, 2 * ATK_PAGE, KT_ACCESS);
	} else {
		mr = ibv_reg_mr(dev->pd, map + x, ATK_PAGE, KT_ACCESS);
	}
	ret = mr ? 0 : errno;
	fcntl(fd, F_SETLEASE, F_UNLCK);
	if (!ret)
		ret = splice_page(map + held, pfd);
	if (ret) {
		dtest_fail(name, "not reached: REG_MR under the lease and vmsplice: %s",
			   kt_res_name(ret));
		goto out;
	}
	ret = kt_child(atk_falloc_fn, &punch, KT_OP_TIMEOUT);
	if (!ret) {
		ret = ibv_dereg_mr(mr) ? errno : 0;
		mr = NULL;
	}
	if (!ret) {
		munmap(res, KT_FILE_SIZE + ATK_PMD_SIZE);
		res = MAP_FAILED;
		if (two != MAP_FAILED)
			munmap(two, 2 * ATK_PAGE);
		two = MAP_FAILED;
		trunc = kt_child_op_within(path, KT_OP_TRUNCATE, 0, ATK_WAIT_BOUND);
		d = drain_page(pfd, held, 0x33, pipe_state, sizeof(pipe_state));
	}
	snprintf(state, sizeof(state), "%s", kt_res_name(ret));
	dtest_check(name, pmd && !ret && trunc == KT_HANG && !d,
		    "%s, a pipe holding page %s (vmsplice) (%s%s): punch of 4 KiB at 1 MiB + 64 KiB by another process, dereg: %s (want success); truncate to 0 afterwards: %s (want it to wait for the pipe); the pipe then read %s",
		    hull ? "pages 1 MiB and 1 MiB + 8 KiB pinned by one MR" :
		    "the page at 1 MiB pinned",
		    hull ? "1 MiB + 4 KiB" : "1 MiB", ext,
		    pmd ? ", PMD-mappable" :
		    ": NOT PMD-mappable, the case is not tested",
		    state, ret ? "not reached" : kt_res_name(trunc),
		    pipe_state);
out:
	if (mr)
		ibv_dereg_mr(mr);
	close_pipe(pfd);
	if (two != MAP_FAILED)
		munmap(two, 2 * ATK_PAGE);
	if (res != MAP_FAILED)
		munmap(res, KT_FILE_SIZE + ATK_PMD_SIZE);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* ---- swap ------------------------------------------------------------- */

/* A swap file header (mkswap's "SWAPSPACE2", version 1) on page 0 of fd */
static int write_swap_header(int fd, size_t size)
{
	uint8_t page[ATK_PAGE];
	uint32_t hdr[3] = { 1, (uint32_t)(size / ATK_PAGE - 1), 0 };

	memset(page, 0, sizeof(page));
	memcpy(page + 1024, hdr, sizeof(hdr));
	memcpy(page + ATK_PAGE - 10, "SWAPSPACE2", 10);
	if (pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page) ||
	    fsync(fd))
		return errno ? errno : EIO;
	return 0;
}

static int make_swap_file(const char *path)
{
	int fd, err;

	err = kt_make_file(path, KT_FILE_SIZE, 0x34);
	fd = err ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return err ? err : errno;
	err = write_swap_header(fd, KT_FILE_SIZE);
	close(fd);
	return err;
}

/* swapon(2) of path: 0 or errno; a swapon that worked is undone */
static int try_swapon(const char *path, int *off_err)
{
	*off_err = 0;
	if (swapon(path, 0))
		return errno;
	*off_err = swapoff(path) ? errno : 0;
	return 0;
}

/*
 * swapon of a DAX file whose pages are pinned (lease released) or that
 * is under an exclusive layout lease: swap would write swapped-out memory
 * into blocks an RDMA peer reads and writes.  Both lines refuse swap on
 * every DAX file before anything else (EINVAL: swap reads its header
 * through ->read_folio, which DAX mappings do not have), and pins and
 * exclusive leases exist only on DAX files.  This guards that refusal.
 */
static void t_swap(struct kt_dev *dev, const struct kt_fs *fs)
{
	const char *n_pin = kt_name("i13_swapon_pinned", fs);
	const char *n_lease = kt_name("i13_swapon_leased", fs);
	const char *path = kt_path(fs, "i13swap");
	struct kt_lease_holder h;
	struct kt_pin p = KT_PIN_INIT;
	const char *step = "";
	int ret, off_err;

	ret = make_swap_file(path);
	if (!ret)
		ret = kt_pin(dev, path, KT_MIB, KT_MIB, ATK_LAYOUT_EXCL,
			     KT_PIN_DAXFD, &p, &step);
	if (ret) {
		dtest_fail(n_pin, "not reached: swap file and pin: %s: %s",
			   step, kt_res_name(ret));
	} else {
		fcntl(p.fd, F_SETLEASE, F_UNLCK);
		ret = try_swapon(path, &off_err);
		dtest_check(n_pin, ret == EINVAL,
			    "swapon of a DAX file with [1 MiB, 2 MiB) pinned (lease released): %s (want EINVAL: no swap on DAX files)%s%s",
			    kt_res_name(ret), off_err ? "; swapoff: " : "",
			    off_err ? strerror(off_err) : "");
	}
	kt_unpin(&p);

	ret = kt_lease_holder_start(&h, path, O_RDONLY, ATK_LAYOUT_EXCL, 30);
	if (ret) {
		dtest_fail(n_lease, "not reached: lease holder: %s",
			   kt_res_name(ret));
	} else {
		ret = try_swapon(path, &off_err);
		kt_lease_holder_stop(&h);
		dtest_check(n_lease, ret == EINVAL,
			    "swapon of a DAX file under another process's exclusive layout lease: %s (want EINVAL: no swap on DAX files)%s%s",
			    kt_res_name(ret), off_err ? "; swapoff: " : "",
			    off_err ? strerror(off_err) : "");
	}
	unlink(path);
}

void atk_drop_range_fs(struct kt_dev *dev, const struct kt_fs *fs)
{
	t_shift_below_pinned(dev, fs, KT_OP_COLLAPSE_RANGE);
	t_shift_below_pinned(dev, fs, KT_OP_INSERT_RANGE);
	t_shift_spliced(fs, FALLOC_FL_COLLAPSE_RANGE);
	t_shift_spliced(fs, FALLOC_FL_INSERT_RANGE);
	t_swap(dev, fs);
}

void atk_drop_range_pmd(struct kt_dev *dev, const struct kt_fs *fs,
			unsigned int extsize)
{
	t_punch_next_to_spliced(dev, fs, extsize, false);
	t_punch_next_to_spliced(dev, fs, extsize, true);
}
