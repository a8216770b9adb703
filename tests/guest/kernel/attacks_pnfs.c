// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Attacks through pNFS (xfs only: the one file system here that exports
 * block layouts).  Before the in-kernel NFS server hands a client the
 * block map of a file, xfs_fs_map_blocks() drops the file's page cache:
 * for a DAX file, the DAX entries of its pages, whoever holds them.  A
 * page held by a pipe (vmsplice) then has no entry, the next truncate
 * does not wait for it and frees its block: another file gets the block
 * and the pipe reads that file's data.  A pinned page keeps its pin
 * record, which refuses the truncate, but loses its entry all the same.
 * A client needs no privilege on the server, only the export (here: nfsd
 * on 127.0.0.1, driven by nfs41.c without nfs-utils).
 *
 *  i16_pnfs_layout_plain_xfs    no pin, no lease: the layout is granted
 *                               (the machinery works)
 *  i16_pnfs_layout_pinned_xfs   [0, 1 MiB) pinned (lease released): no
 *                               layout (NFS4ERR_LAYOUTUNAVAILABLE), the
 *                               truncate afterwards is refused, another
 *                               file does not see the RDMA WRITE
 *  i16_pnfs_layout_spliced_xfs  page 0 held by vmsplice() in a pipe: no
 *                               layout; a truncate afterwards waits for
 *                               the pipe, which reads the file's data
 *  i16_pnfs_layout_leased_xfs   an exclusive layout lease held by another
 *                               process: no layout
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/daxlease_fcntl.h>

#include "attacks.h"
#include "dtest.h"
#include "nfs41.h"

#define PNFS_FILE (4 * KT_MIB)
#define LEASE_BREAK_FILE "/proc/sys/fs/lease-break-time"

/* LAYOUTGET (read-write, whole file) of name by a new client; errno */
static int layoutget(const char *name, uint32_t *st, char *why,
		     size_t whylen)
{
	struct nfs41_client *c = NULL;
	int ret;

	*st = NFS41_NO_STATUS;
	ret = nfs41_connect(&c, why, whylen);
	if (!ret)
		ret = nfs41_open(c, name, why, whylen);
	if (!ret)
		ret = nfs41_layoutget(c, 1, 0, PNFS_FILE, st, why, whylen);
	/* returns the layouts: nfsd drops its layout lease */
	nfs41_close(c);
	return ret;
}

static const char *lg_name(int ret, uint32_t st)
{
	static char buf[96];

	if (!ret)
		return "granted";
	if (st != NFS41_NO_STATUS)
		snprintf(buf, sizeof(buf), "%s", nfs41_status_name(st));
	else
		snprintf(buf, sizeof(buf), "failed (%s)", strerror(ret));
	return buf;
}

/* what a refusal adds to lg_name(): the failing step when no status came */
static const char *lg_sep(int ret, uint32_t st)
{
	return ret && st == NFS41_NO_STATUS ? ": " : "";
}

static const char *lg_why(int ret, uint32_t st, const char *why)
{
	return ret && st == NFS41_NO_STATUS ? why : "";
}

static void t_plain(const struct kt_fs *fs)
{
	const char *name = "i16_pnfs_layout_plain_xfs";
	const char *path = kt_path(fs, "i16plain");
	char why[512] = "";
	uint32_t st;
	int ret;

	ret = atk_make_file(path, PNFS_FILE, 0x61, 0);
	if (ret) {
		dtest_fail(name, "not reached: %s: %s", path, strerror(ret));
		return;
	}
	ret = layoutget(strrchr(path, '/') + 1, &st, why, sizeof(why));
	dtest_check(name, ret == 0,
		    "LAYOUTGET (block, read-write) of a DAX file nobody pins or leases: %s%s%s (want granted)",
		    lg_name(ret, st), lg_sep(ret, st), lg_why(ret, st, why));
	unlink(path);
}

static void t_pinned(struct kt_dev *dev, const struct kt_fs *fs)
{
	const char *name = "i16_pnfs_layout_pinned_xfs";
	const char *path = kt_path(fs, "i16pinned");
	char other[PATH_MAX], why[512] = "", wwhy[256] = "", state[256] = "";
	char pins[512] = "";
	struct kt_pin p = KT_PIN_INIT;
	int ret, trunc, mk, wr, v;
	uint32_t st;

	snprintf(other, sizeof(other), "%s", kt_path(fs, "i16other"));
	if (atk_pin_released(dev, name, path, PNFS_FILE, 0x62, &p)) {
		unlink(path);
		return;
	}

	ret = layoutget(strrchr(path, '/') + 1, &st, why, sizeof(why));
	/* the truncate and the file that may get the freed blocks */
	trunc = kt_child_op(path, KT_OP_TRUNCATE, 0);
	mk = atk_make_file(other, PNFS_FILE, 0x63, 0);
	wr = kt_rdma_write_pattern(dev, p.iova, p.rkey, KT_MIB, 0, 0x64, wwhy,
				   sizeof(wwhy));
	v = mk ? mk : kt_verify_pattern(other, 0, PNFS_FILE, 0x63, state,
					sizeof(state));
	kt_read_file_pins(getpid(), pins, sizeof(pins));
	dtest_check(name, ret == ENXIO && st == NFS41_ERR_LAYOUTUNAVAILABLE &&
		    trunc == ETXTBSY && !wr && !v,
		    "LAYOUTGET (block, read-write) of a DAX file with [0, 1 MiB) pinned (lease released): %s%s%s (want NFS4ERR_LAYOUTUNAVAILABLE: handing out the block map drops the DAX entries of the pinned pages); truncate to 0 by another process afterwards: %s (want ETXTBSY); another file written next: %s; RDMA WRITE into the MR: %s%s%s; the other file %s%s (want intact); pins: %s",
		    lg_name(ret, st), lg_sep(ret, st), lg_why(ret, st, why),
		    kt_res_name(trunc), mk ? strerror(mk) : "ok",
		    kt_res_name(wr), *wwhy ? ": " : "", wwhy,
		    v ? "differs: " : "intact", v ? state : "",
		    kt_oneline(pins));
	kt_unpin(&p);
	unlink(other);
	unlink(path);
}

/*
 * Page 0 of a DAX file held by a pipe: vmsplice() of it from a shared
 * mapping, which is then unmapped and closed.  0 or errno; pfd is the
 * pipe.
 */
static int splice_page0(const char *path, int pfd[2])
{
	struct iovec iov;
	uint8_t *map;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	map = mmap(NULL, ATK_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		close(fd);
		return err;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		err = errno;
	} else {
		iov.iov_base = map;
		iov.iov_len = ATK_PAGE;
		n = vmsplice(pfd[1], &iov, 1, 0);
		if (n != (ssize_t)ATK_PAGE) {
			err = n < 0 ? errno : EIO;
			close(pfd[0]);
			close(pfd[1]);
		}
	}
	munmap(map, ATK_PAGE);
	close(fd);
	return err;
}

static void t_spliced(const struct kt_fs *fs)
{
	const char *name = "i16_pnfs_layout_spliced_xfs";
	const char *path = kt_path(fs, "i16spliced");
	char other[PATH_MAX], why[512] = "";
	uint8_t got[ATK_PAGE], want[ATK_PAGE];
	int ret, trunc, mk, rd, trunc2, pfd[2];
	uint32_t st;

	snprintf(other, sizeof(other), "%s", kt_path(fs, "i16other"));
	ret = atk_make_file(path, PNFS_FILE, 0x66, 0);
	if (!ret)
		ret = splice_page0(path, pfd);
	if (ret) {
		dtest_fail(name, "not reached: vmsplice of page 0 of %s: %s",
			   path, strerror(ret));
		unlink(path);
		return;
	}
	ret = layoutget(strrchr(path, '/') + 1, &st, why, sizeof(why));
	/* stock waits for the pipe's reference here */
	trunc = kt_child_op_within(path, KT_OP_TRUNCATE, 0, 3);
	/* xfs reuses freed blocks once the freeing is in the log */
	sync();
	mk = atk_make_file(other, PNFS_FILE, 0x67, 0);
	rd = read(pfd[0], got, sizeof(got)) == (ssize_t)sizeof(got) ? 0 : EIO;
	kt_pattern(want, sizeof(want), 0, 0x66);
	if (!rd && memcmp(got, want, sizeof(want)))
		rd = EILSEQ;
	close(pfd[0]);
	close(pfd[1]);
	trunc2 = kt_child_op(path, KT_OP_TRUNCATE, 0);
	dtest_check(name, ret == ENXIO && st == NFS41_ERR_LAYOUTUNAVAILABLE &&
		    trunc == KT_HANG && !rd && !trunc2,
		    "LAYOUTGET (block, read-write) of a DAX file whose page 0 a pipe holds (vmsplice): %s%s%s (want NFS4ERR_LAYOUTUNAVAILABLE: handing out the block map drops the entry of the page); truncate to 0 by another process afterwards: %s (want hang: it waits for the pipe); another file written next: %s; the pipe then reads %s (want the file's data); truncate once the pipe is drained: %s (want success)",
		    lg_name(ret, st), lg_sep(ret, st), lg_why(ret, st, why),
		    kt_res_name(trunc), mk ? strerror(mk) : "ok",
		    rd == EILSEQ ? "other data" :
		    rd ? "nothing" : "the file's data",
		    kt_res_name(trunc2));
	unlink(other);
	unlink(path);
}

static void t_leased(const struct kt_fs *fs)
{
	const char *name = "i16_pnfs_layout_leased_xfs";
	const char *path = kt_path(fs, "i16leased");
	struct kt_lease_holder h;
	char why[512] = "";
	uint32_t st;
	int ret;

	ret = atk_make_file(path, PNFS_FILE, 0x65, 0);
	if (!ret)
		ret = kt_lease_holder_start(&h, path, O_RDWR, ATK_LAYOUT_EXCL,
					    120);
	if (ret) {
		dtest_fail(name, "not reached: exclusive layout lease on %s: %s",
			   path, strerror(ret));
		unlink(path);
		return;
	}
	ret = layoutget(strrchr(path, '/') + 1, &st, why, sizeof(why));
	kt_lease_holder_stop(&h);
	dtest_check(name, ret == ENXIO && st == NFS41_ERR_LAYOUTUNAVAILABLE,
		    "LAYOUTGET (block, read-write) of a DAX file under another process's exclusive layout lease: %s%s%s (want NFS4ERR_LAYOUTUNAVAILABLE)",
		    lg_name(ret, st), lg_sep(ret, st), lg_why(ret, st, why));
	unlink(path);
}

void atk_pnfs(struct kt_dev *dev, const struct kt_fs *fs)
{
	char lbt[32] = "", why[512] = "";
	int ret;

	ret = nfs41_server_start(fs->dir, why, sizeof(why));
	if (ret) {
		dtest_fail("i16_pnfs_layout_plain_xfs",
			   "not reached: nfsd exporting %s: %s", fs->dir, why);
		dtest_fail("i16_pnfs_layout_pinned_xfs", "not reached: no nfsd");
		dtest_fail("i16_pnfs_layout_spliced_xfs", "not reached: no nfsd");
		dtest_fail("i16_pnfs_layout_leased_xfs", "not reached: no nfsd");
		return;
	}
	/* a layout the client failed to return is recalled in 5 s, not 45 */
	if (!kt_read_str(LEASE_BREAK_FILE, lbt, sizeof(lbt)))
		kt_write_str(LEASE_BREAK_FILE, "5");
	t_plain(fs);
	t_pinned(dev, fs);
	t_spliced(fs);
	t_leased(fs);
	if (*lbt)
		kt_write_str(LEASE_BREAK_FILE, lbt);
	nfs41_server_stop();
}
