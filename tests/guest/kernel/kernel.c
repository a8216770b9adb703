// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dl-kernel-test: the kernel half of daxlease (the points 0-9 of
 * doc/design.md §1) on ext4-dax and xfs-dax, with raw system calls and
 * raw verbs only: fcntl(F_SETLEASE), mmap, ibv_reg_mr (FOLL_LONGTERM pin
 * through ib_umem_get), truncate/fallocate, RDMA WRITE over rxe, and
 * /proc/<pid>/file_pins.  Every test name starts with its point
 * ("p3_ftruncate_pinned_ext4").  Layout changes run in a child under a
 * time bound, so a hang is a failure, not a stuck suite.
 *
 * The rule being tested (kernel-headers/patches/linux-6.1/NOTES.md):
 * while an exclusive layout lease is held every layout change of the file
 * fails (ETXTBSY for other processes, EDEADLOCK for the holder); without
 * the lease, changes over long-term pinned blocks fail with ETXTBSY and
 * changes elsewhere succeed.
 *
 * usage: dl-kernel-test [--only SUBSTRING]
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/daxlease_fcntl.h>

#include "dtest.h"
#include "kt.h"
#include "kt_suite.h"

#define LAYOUT_EXCL (F_LAYOUT | F_EXCLUSIVE)
#define NOBODY 65534

static struct kt_dev dev;
static const char *only;
static char why[512];

static bool want(const char *group)
{
	return !only || strstr(group, only);
}

/* A pinned file: pattern seed 0x11, head [0, KT_PIN_LEN) registered. */
static int setup_pin_how(const struct kt_fs *fs, const char *tag, int lease,
			 enum kt_pin_how how, struct kt_pin *p,
			 const char **path)
{
	const char *step;
	int ret;

	*path = kt_path(fs, tag);
	ret = kt_make_file(*path, KT_FILE_SIZE, 0x11);
	if (ret) {
		snprintf(why, sizeof(why), "creating %s: %s", *path,
			 strerror(ret));
		return ret;
	}
	ret = kt_pin(&dev, *path, 0, KT_PIN_LEN, lease, how, p, &step);
	if (ret)
		snprintf(why, sizeof(why), "%s of %s%s failed: %s", step,
			 *path, lease ? " with F_LAYOUT|F_EXCLUSIVE" : "",
			 strerror(ret));
	return ret;
}

/* The canonical pin: lease, then the extended REG_MR naming the file */
static int setup_pin(const struct kt_fs *fs, const char *tag, int lease,
		     struct kt_pin *p, const char **path)
{
	return setup_pin_how(fs, tag, lease, KT_PIN_DAXFD, p, path);
}

/* size and head pattern unchanged after a refused layout change */
static bool file_intact(const char *path, char *out, size_t outlen)
{
	long long size = kt_file_size(path);

	if (size != (long long)KT_FILE_SIZE) {
		snprintf(out, outlen, "but the size is now %lld", size);
		return false;
	}
	if (kt_verify_pattern(path, 0, KT_PIN_LEN, 0x11, out, outlen)) {
		return false;
	}
	snprintf(out, outlen, "file unchanged");
	return true;
}

/* Offset a layout change starts at: inside the pinned head, or the tail */
static off_t head_off(enum kt_op op)
{
	return op == KT_OP_TRUNCATE || op == KT_OP_FTRUNCATE ?
		       (off_t)(KT_PIN_LEN / 2) : 0;
}

static off_t tail_off(enum kt_op op)
{
	return op == KT_OP_TRUNCATE || op == KT_OP_FTRUNCATE ?
		       (off_t)(6 * KT_MIB) : (off_t)KT_TAIL_OFF;
}

/* ---- point 0: device DAX ---------------------------------------------- */

static void t_p0_devdax(void)
{
	size_t len = 2 * KT_MIB;
	struct ibv_mr *mr;
	uint8_t *map, *map2, *expect;
	int fd, ret;

	if (!kt_env.devdax) {
		dtest_skip("p0_devdax_reg_mr_no_lease",
			   "DAXLEASE_DEVDAX not set: no device-DAX namespace");
		return;
	}
	fd = open(kt_env.devdax, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		dtest_fail("p0_devdax_reg_mr_no_lease", "open %s: %s",
			   kt_env.devdax, strerror(errno));
		return;
	}
	errno = 0;
	ret = fcntl(fd, F_SETLEASE, LAYOUT_EXCL);
	dtest_check("p0_devdax_setlease_einval", ret == -1 && errno == EINVAL,
		    "F_SETLEASE(F_LAYOUT|F_EXCLUSIVE) on %s: %s (want EINVAL: leases are for regular files, devdax needs none)",
		    kt_env.devdax, ret ? strerror(errno) : "succeeded");
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		dtest_fail("p0_devdax_reg_mr_no_lease", "mmap %s: %s",
			   kt_env.devdax, strerror(errno));
		close(fd);
		return;
	}
	memset(map, 0, len);
	mr = ibv_reg_mr(dev.pd, map, len, KT_ACCESS);
	dtest_check("p0_devdax_reg_mr_no_lease", mr,
		    "ibv_reg_mr of %zu bytes of %s without a lease: %s", len,
		    kt_env.devdax, mr ? "registered" : strerror(errno));
	if (mr) {
		ret = kt_rdma_write_pattern(&dev, (uintptr_t)map, mr->rkey,
					    len, 0, 0x22, why, sizeof(why));
		if (!ret) {
			/* read it through a second, independent mapping */
			map2 = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
			expect = malloc(len);
			if (map2 == MAP_FAILED || !expect) {
				ret = ENOMEM;
				snprintf(why, sizeof(why),
					 "second mapping failed");
			} else {
				kt_pattern(expect, len, 0, 0x22);
				ret = memcmp(map2, expect, len) ? EILSEQ : 0;
				snprintf(why, sizeof(why), "%s",
					 ret ? "device content differs from what was written" :
					       "2 MiB written over rxe read back through a new mapping");
			}
			if (map2 != MAP_FAILED)
				munmap(map2, len);
			free(expect);
		}
		dtest_check("p0_devdax_rdma_write", ret == 0, "%s", why);
		ibv_dereg_mr(mr);
	}
	munmap(map, len);
	close(fd);
}

/* ---- point 1: the lease itself ----------------------------------------- */

struct lease_as {
	const char *path;
	uid_t uid;
};

/* In a child: become uid (no capabilities), open O_RDONLY, take the lease */
static int lease_as_fn(void *arg)
{
	struct lease_as *a = arg;
	int fd, got;

	if (setgroups(0, NULL) || setgid(a->uid) || setuid(a->uid))
		return EPROTO;
	fd = open(a->path, O_RDONLY);
	if (fd < 0)
		return errno;
	if (fcntl(fd, F_SETLEASE, LAYOUT_EXCL))
		return errno;
	got = fcntl(fd, F_GETLEASE);
	return got == LAYOUT_EXCL ? 0 : EBADE;
}

static void t_p1(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "p1");
	struct lease_as as = { path, NOBODY };
	int fd, ret, got;

	ret = kt_make_file(path, KT_MIB, 0x11);
	fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		dtest_fail(kt_name("p1_setlease_layout_exclusive", fs),
			   "test file %s: %s", path, strerror(ret ? ret : errno));
		return;
	}
	ret = fcntl(fd, F_SETLEASE, LAYOUT_EXCL);
	dtest_check(kt_name("p1_setlease_layout_exclusive", fs), ret == 0,
		    "F_SETLEASE(F_LAYOUT|F_EXCLUSIVE = %d) on an O_RDWR fd: %s",
		    LAYOUT_EXCL, ret ? strerror(errno) : "ok");
	got = fcntl(fd, F_GETLEASE);
	dtest_check(kt_name("p1_getlease_layout_exclusive", fs),
		    got == LAYOUT_EXCL, "F_GETLEASE = %d, want %d", got,
		    LAYOUT_EXCL);
	ret = kt_count_leases(path);
	dtest_check(kt_name("p1_proc_locks_lists_lease", fs), ret == 1,
		    "%d LEASE line(s) for the inode in /proc/locks, want 1",
		    ret);
	ret = fcntl(fd, F_SETLEASE, F_UNLCK);
	got = fcntl(fd, F_GETLEASE);
	dtest_check(kt_name("p1_unlock_lease", fs), ret == 0 && got == F_UNLCK,
		    "F_SETLEASE(F_UNLCK): %s, then F_GETLEASE = %d (want F_UNLCK = %d)",
		    ret ? strerror(errno) : "ok", got, F_UNLCK);

	ret = fcntl(fd, F_SETLEASE, F_LAYOUT);
	got = fcntl(fd, F_GETLEASE);
	dtest_check(kt_name("p1_setlease_layout", fs), ret == 0 && got == F_LAYOUT,
		    "F_SETLEASE(F_LAYOUT): %s, F_GETLEASE = %d (want %d)",
		    ret ? strerror(errno) : "ok", got, F_LAYOUT);
	ret = fcntl(fd, F_SETLEASE, LAYOUT_EXCL);
	got = fcntl(fd, F_GETLEASE);
	dtest_check(kt_name("p1_upgrade_to_exclusive", fs),
		    ret == 0 && got == LAYOUT_EXCL,
		    "F_LAYOUT then F_SETLEASE(F_LAYOUT|F_EXCLUSIVE): %s, F_GETLEASE = %d (want %d)",
		    ret ? strerror(errno) : "ok", got, LAYOUT_EXCL);
	fcntl(fd, F_SETLEASE, F_UNLCK);

	errno = 0;
	ret = fcntl(fd, F_SETLEASE, F_EXCLUSIVE);
	dtest_check(kt_name("p1_exclusive_alone_einval", fs),
		    ret == -1 && errno == EINVAL,
		    "F_SETLEASE(F_EXCLUSIVE) without F_LAYOUT: %s (want EINVAL)",
		    ret ? strerror(errno) : "succeeded");
	fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);

	/* lease permission: owner or CAP_LEASE, as for any lease */
	if (chown(path, 0, 0) || chmod(path, 0644)) {
		dtest_fail(kt_name("p1_nonowner_eacces", fs), "chown: %s",
			   strerror(errno));
	} else {
		ret = kt_child(lease_as_fn, &as, KT_OP_TIMEOUT);
		dtest_check(kt_name("p1_nonowner_eacces", fs), ret == EACCES,
			    "uid %d without CAP_LEASE on a root-owned file: %s (want EACCES)",
			    NOBODY, kt_res_name(ret));
	}
	if (chown(path, NOBODY, NOBODY)) {
		dtest_fail(kt_name("p1_owner_unprivileged", fs), "chown: %s",
			   strerror(errno));
	} else {
		ret = kt_child(lease_as_fn, &as, KT_OP_TIMEOUT);
		dtest_check(kt_name("p1_owner_unprivileged", fs), ret == 0,
			    "uid %d owning the file, O_RDONLY fd, no capabilities: %s (EBADE would mean F_GETLEASE differed)",
			    NOBODY, kt_res_name(ret));
	}
	unlink(path);
}

/* ---- point 2: no lease, no long-term pin ------------------------------- */

static void t_p2_other_process(const struct kt_fs *fs, const char *path)
{
	struct kt_lease_holder h;
	struct kt_pin p;
	const char *step;
	int ret;

	ret = kt_lease_holder_start(&h, path, O_RDWR, LAYOUT_EXCL, 60);
	if (ret) {
		dtest_fail(kt_name("p2_lease_other_process_eperm", fs),
			   "the other process could not take the lease: %s",
			   strerror(ret));
		return;
	}
	ret = kt_pin(&dev, path, 0, KT_PIN_LEN, 0, KT_PIN_LEGACY, &p, &step);
	dtest_check(kt_name("p2_lease_other_process_eperm", fs), ret == EPERM,
		    "ibv_reg_mr while only another process holds F_LAYOUT|F_EXCLUSIVE: %s%s%s (want EPERM)",
		    ret ? step : "registered", ret ? ": " : "",
		    ret ? strerror(ret) : "");
	kt_unpin(&p);
	kt_lease_holder_stop(&h);
}

/*
 * fork() shares the open file that carries the lease, but the lease
 * belongs to the parent's process: the child may not pin with it, and
 * its layout changes get ETXTBSY, not the holder's EDEADLOCK.
 */
struct fork_res {
	int getlease, daxfd, legacy, trunc;
};

static void t_p2_fork(const struct kt_fs *fs, const char *path)
{
	struct fork_res r = { -1, -1, -1, -1 };
	int fd, pfd[2];
	pid_t pid;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_SETLEASE, LAYOUT_EXCL) || pipe(pfd)) {
		dtest_fail(kt_name("p2_fork_child_daxfd_pin_eperm", fs),
			   "lease: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct ibv_mr raw;
		struct ibv_mr *mr;
		struct kt_dev d;
		void *map;

		close(pfd[0]);
		alarm(60);
		r.getlease = fcntl(fd, F_GETLEASE);
		map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, 0);
		if (map != MAP_FAILED && !kt_dev_open(&d, false)) {
			r.daxfd = kt_reg_mr_ioctl(&d, map, KT_PIN_LEN,
						  KT_ACCESS, fd, 0, &raw);
			mr = ibv_reg_mr(d.pd, map, KT_PIN_LEN, KT_ACCESS);
			r.legacy = mr ? 0 : errno;
			if (mr)
				ibv_dereg_mr(mr);
			kt_dev_close(&d);
		}
		r.trunc = kt_do_op(path, fd, KT_OP_FTRUNCATE, KT_MIB);
		if (write(pfd[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &r, sizeof(r)) != sizeof(r))
		r.daxfd = r.legacy = r.trunc = KT_CRASH;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	dtest_check(kt_name("p2_fork_child_daxfd_pin_eperm", fs),
		    r.daxfd == EPERM,
		    "child of the holder, inherited leased fd (F_GETLEASE there: %d) as DAX_FD: %s (want EPERM)",
		    r.getlease, kt_res_name(r.daxfd));
	dtest_check(kt_name("p2_fork_child_legacy_pin_eperm", fs),
		    r.legacy == EPERM,
		    "child of the holder, ibv_reg_mr of the inherited file: %s (want EPERM)",
		    kt_res_name(r.legacy));
	dtest_check(kt_name("p3_fork_child_ftruncate_etxtbsy", fs),
		    r.trunc == ETXTBSY,
		    "child of the holder, ftruncate on the inherited fd: %s (want ETXTBSY, not the holder's EDEADLOCK)",
		    kt_res_name(r.trunc));
	fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
}

/*
 * Short-term GUP (block O_DIRECT into a buffer that is an FS-DAX mapping)
 * is not a long-term pin and must keep working without any lease.
 */
static void t_p2_short_term(const struct kt_fs *fs, const char *path)
{
	const char *name = kt_name("p2_short_term_gup_allowed", fs);
	size_t len = 64 << 10;
	void *map = MAP_FAILED;
	uint8_t *ref = NULL;
	int fd = -1, bfd = -1, tries;
	ssize_t n = -1, n2 = -1;

	fd = open(path, O_RDWR | O_CLOEXEC);
	bfd = open(fs->dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || bfd < 0) {
		dtest_skip(name, "cannot open %s or %s O_DIRECT: %s", path,
			   fs->dev, strerror(errno));
		goto out;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (posix_memalign((void **)&ref, 4096, len))
		ref = NULL;
	if (map == MAP_FAILED || !ref) {
		dtest_fail(name, "mmap: %s", strerror(errno));
		goto out;
	}
	/*
	 * Compare with a second O_DIRECT read into anonymous memory: the
	 * buffered view of the device may hold newer metadata than the
	 * media.  The file system may still write in between: retry.
	 */
	for (tries = 0; tries < 3; tries++) {
		n = pread(bfd, map, len, 0);
		if (n != (ssize_t)len)
			break;
		n2 = pread(bfd, ref, len, 0);
		if (n2 == (ssize_t)len && !memcmp(ref, map, len))
			break;
	}
	dtest_check(name, n == (ssize_t)len && n2 == (ssize_t)len &&
			  !memcmp(ref, map, len),
		    "O_DIRECT read of 64 KiB of %s into an FS-DAX mapping without a lease: %s",
		    fs->dev, n != (ssize_t)len ? strerror(errno) :
		    n2 != (ssize_t)len ? "reference read failed" :
		    memcmp(ref, map, len) ? "data differs from a direct read into anonymous memory" :
					    "ok, data matches");
out:
	if (map != MAP_FAILED)
		munmap(map, len);
	free(ref);
	if (fd >= 0)
		close(fd);
	if (bfd >= 0)
		close(bfd);
}

static void t_p2(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "p2"), *step;
	struct kt_pin p;
	int ret;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret) {
		dtest_fail(kt_name("p2_no_lease_eperm", fs), "creating %s: %s",
			   path, strerror(ret));
		return;
	}
	ret = kt_pin(&dev, path, 0, KT_PIN_LEN, 0, KT_PIN_LEGACY, &p, &step);
	dtest_check(kt_name("p2_no_lease_eperm", fs),
		    ret == EPERM && !strcmp(step, "reg_mr"),
		    "ibv_reg_mr of an FS-DAX MAP_SHARED mapping without a lease: %s%s%s (want EPERM; stock 6.1 says EOPNOTSUPP)",
		    ret ? step : "registered", ret ? ": " : "",
		    ret ? strerror(ret) : "");
	kt_unpin(&p);

	ret = kt_pin(&dev, path, 0, KT_PIN_LEN, 0, KT_PIN_DAXFD, &p, &step);
	dtest_check(kt_name("p2_no_lease_reg_mr_daxfd_eperm", fs),
		    ret == EPERM && !strcmp(step, "reg_mr"),
		    "extended REG_MR with DAX_FD, no lease: %s%s%s (want EPERM)",
		    ret ? step : "registered", ret ? ": " : "",
		    ret ? strerror(ret) : "");
	kt_unpin(&p);

	ret = kt_pin(&dev, path, 0, KT_PIN_LEN, F_LAYOUT, KT_PIN_LEGACY, &p,
		     &step);
	dtest_check(kt_name("p2_layout_not_exclusive_eperm", fs),
		    ret == EPERM && !strcmp(step, "reg_mr"),
		    "ibv_reg_mr with a plain F_LAYOUT lease (no F_EXCLUSIVE): %s%s%s (want EPERM)",
		    ret ? step : "registered", ret ? ": " : "",
		    ret ? strerror(ret) : "");
	kt_unpin(&p);

	t_p2_other_process(fs, path);
	t_p2_fork(fs, path);

	ret = kt_pin(&dev, path, 0, KT_PIN_LEN, LAYOUT_EXCL, KT_PIN_DAXFD, &p,
		     &step);
	dtest_check(kt_name("p2_with_lease_pins", fs), ret == 0,
		    "F_SETLEASE(F_LAYOUT|F_EXCLUSIVE) then REG_MR (DAX_FD) of 1 MiB: %s%s%s",
		    ret ? step : "registered", ret ? ": " : "",
		    ret ? strerror(ret) : "");
	if (!ret) {
		ret = kt_rdma_write_pattern(&dev, p.iova,
					    p.rkey, KT_PIN_LEN, 0, 0x33,
					    why, sizeof(why));
		if (!ret)
			ret = kt_verify_pattern(path, 0, KT_PIN_LEN, 0x33, why,
						sizeof(why));
		dtest_check(kt_name("p2_with_lease_rdma_write", fs), ret == 0,
			    "RDMA WRITE over rxe into the pinned file: %s",
			    why);
	} else {
		dtest_fail(kt_name("p2_with_lease_rdma_write", fs),
			   "no MR to write into");
	}
	kt_unpin(&p);
	t_p2_short_term(fs, path);
	unlink(path);
}

/* ---- point 3: layout changes over pinned / leased files ---------------- */

struct holder_op {
	const struct kt_fs *fs;
	const char *path;
	enum kt_op op;
};

/* The lease holder itself (in a child, so a hang is bounded): EDEADLOCK */
static int holder_op_fn(void *arg)
{
	struct holder_op *h = arg;
	struct kt_dev d;
	struct kt_pin p;
	const char *step;
	int ret;

	if (kt_dev_open(&d, false))
		return ENODEV;
	ret = kt_pin(&d, h->path, 0, KT_PIN_LEN, LAYOUT_EXCL, KT_PIN_DAXFD,
		     &p, &step);
	if (ret)
		return ENOLINK;
	ret = kt_do_op(h->path, p.fd, h->op, head_off(h->op));
	kt_unpin(&p);
	kt_dev_close(&d);
	return ret;
}

enum p3_case {
	P3_PINNED,		/* lease released, pins hold the head */
	P3_LEASED_OTHER,	/* lease held, another process, pinned head */
	P3_LEASED_TAIL,		/* lease held, another process, unpinned tail */
	P3_LEASED_HOLDER,	/* lease held, the holder itself */
	P9_UNPINNED_TAIL,	/* lease released, unpinned tail */
	P3_NCASES,
};

static void t_layout(const struct kt_fs *fs, enum p3_case c, enum kt_op op)
{
	/* test names: <point>_<op>_<case> */
	static const char *const point[P3_NCASES] = {
		[P3_PINNED] = "p3",
		[P3_LEASED_OTHER] = "p3",
		[P3_LEASED_TAIL] = "p3",
		[P3_LEASED_HOLDER] = "p3",
		[P9_UNPINNED_TAIL] = "p9",
	};
	static const char *const cname[P3_NCASES] = {
		[P3_PINNED] = "pinned",
		[P3_LEASED_OTHER] = "leased_other",
		[P3_LEASED_TAIL] = "leased_tail_other",
		[P3_LEASED_HOLDER] = "leased_holder",
		[P9_UNPINNED_TAIL] = "unpinned_tail",
	};
	static const char *const what[P3_NCASES] = {
		[P3_PINNED] = "over the pinned head, lease released",
		[P3_LEASED_OTHER] = "over the pinned head by another process, lease held",
		[P3_LEASED_TAIL] = "over the unpinned tail by another process, lease held",
		[P3_LEASED_HOLDER] = "over the pinned head by the lease holder",
		[P9_UNPINNED_TAIL] = "over the unpinned tail, lease released, head pinned",
	};
	const int expect[P3_NCASES] = {
		[P3_PINNED] = ETXTBSY,
		[P3_LEASED_OTHER] = ETXTBSY,
		[P3_LEASED_TAIL] = ETXTBSY,
		[P3_LEASED_HOLDER] = EDEADLOCK,
		[P9_UNPINNED_TAIL] = 0,
	};
	char base[96], tag[96], state[256];
	const char *path, *name;
	struct kt_pin p = KT_PIN_INIT;
	bool intact;
	int ret;

	snprintf(base, sizeof(base), "%s_%s_%s", point[c], kt_op_name(op),
		 cname[c]);
	name = kt_name(base, fs);
	snprintf(tag, sizeof(tag), "%s", base);

	if (c == P3_LEASED_HOLDER) {
		struct holder_op h = { fs, kt_path(fs, tag), op };

		path = h.path;
		ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
		if (ret) {
			dtest_fail(name, "creating %s: %s", path,
				   strerror(ret));
			return;
		}
		ret = kt_child(holder_op_fn, &h, KT_OP_TIMEOUT);
		if (ret == ENOLINK || ret == ENODEV) {
			dtest_fail(name, "the holder could not %s",
				   ret == ENODEV ? "open the device" :
				   "take the lease and pin");
			unlink(path);
			return;
		}
		intact = file_intact(path, state, sizeof(state));
		dtest_check(name, ret == EDEADLOCK && intact,
			    "%s %s: %s (want EDEADLOCK), %s", kt_op_name(op),
			    what[c], kt_res_name(ret), state);
		unlink(path);
		return;
	}

	if (setup_pin(fs, tag, LAYOUT_EXCL, &p, &path)) {
		dtest_fail(name, "%s", why);
		goto out;
	}
	if ((c == P3_PINNED || c == P9_UNPINNED_TAIL) &&
	    fcntl(p.fd, F_SETLEASE, F_UNLCK)) {
		dtest_fail(name, "F_SETLEASE(F_UNLCK): %s", strerror(errno));
		goto out;
	}
	ret = kt_child_op(path, op, c == P3_LEASED_TAIL ||
				     c == P9_UNPINNED_TAIL ?
				     tail_off(op) : head_off(op));
	if (c == P9_UNPINNED_TAIL) {
		/* the change happened; the pinned head must be untouched */
		int v = kt_verify_pattern(path, 0, KT_PIN_LEN, 0x11, state,
					  sizeof(state));

		dtest_check(name, ret == 0 && v == 0, "%s %s: %s, head: %s",
			    kt_op_name(op), what[c], kt_res_name(ret), state);
	} else {
		intact = file_intact(path, state, sizeof(state));
		dtest_check(name, ret == expect[c] && intact,
			    "%s %s: %s (want %s), %s", kt_op_name(op), what[c],
			    kt_res_name(ret), kt_res_name(expect[c]), state);
	}
out:
	kt_unpin(&p);
	if (path)
		unlink(path);
}

struct write_arg {
	const char *path;
};

static int pwrite_fn(void *arg)
{
	struct write_arg *w = arg;
	char buf[4096];
	int fd;

	memset(buf, 0x5a, sizeof(buf));
	fd = open(w->path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (pwrite(fd, buf, sizeof(buf), KT_TAIL_OFF) != sizeof(buf))
		return errno ? errno : EIO;
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, KT_FILE_SIZE, KT_OP_LEN))
		return errno;
	close(fd);
	return 0;
}

static void t_p3(const struct kt_fs *fs)
{
	struct kt_pin p = KT_PIN_INIT;
	const char *path = NULL, *name;
	enum kt_op op;
	int c, ret;

	for (c = 0; c < P3_NCASES; c++)
		for (op = 0; op < KT_OP_NUM; op++)
			t_layout(fs, c, op);

	/* growing is a layout change too while the lease is held */
	name = kt_name("p3_ftruncate_grow_leased_other", fs);
	if (setup_pin(fs, "p3grow", LAYOUT_EXCL, &p, &path)) {
		dtest_fail(name, "%s", why);
	} else {
		ret = kt_child_op(path, KT_OP_FTRUNCATE, 2 * KT_FILE_SIZE);
		dtest_check(name, ret == ETXTBSY &&
				  kt_file_size(path) == (long long)KT_FILE_SIZE,
			    "ftruncate to 16 MiB by another process, lease held: %s (want ETXTBSY)",
			    kt_res_name(ret));
		/* rule 4: writes and plain preallocation are not layout changes */
		{
			struct write_arg w = { path };

			ret = kt_child(pwrite_fn, &w, KT_OP_TIMEOUT);
			dtest_check(kt_name("p3_pwrite_fallocate_leased_ok", fs),
				    ret == 0,
				    "pwrite + fallocate(KEEP_SIZE) by another process, lease held: %s",
				    kt_res_name(ret));
		}
	}
	kt_unpin(&p);
	if (path)
		unlink(path);
}

/* ---- point 4: release the lease, keep the pin -------------------------- */

static void t_p4(const struct kt_fs *fs)
{
	struct kt_pin p = KT_PIN_INIT;
	const char *path = NULL;
	struct ibv_mr *mr2;
	void *map2;
	int ret, got;

	if (setup_pin(fs, "p4", LAYOUT_EXCL, &p, &path)) {
		dtest_fail(kt_name("p4_release_lease", fs), "%s", why);
		goto out;
	}
	ret = fcntl(p.fd, F_SETLEASE, F_UNLCK);
	got = fcntl(p.fd, F_GETLEASE);
	dtest_check(kt_name("p4_release_lease", fs),
		    ret == 0 && got == F_UNLCK,
		    "F_SETLEASE(F_UNLCK) with the MR registered: %s, F_GETLEASE = %d",
		    ret ? strerror(errno) : "ok", got);

	/* a new pin of the file, same fd, another range: refused */
	map2 = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		    p.fd, 2 * KT_MIB);
	mr2 = map2 == MAP_FAILED ? NULL :
				   ibv_reg_mr(dev.pd, map2, KT_PIN_LEN, KT_ACCESS);
	dtest_check(kt_name("p4_new_pin_after_release_eperm", fs),
		    !mr2 && map2 != MAP_FAILED && errno == EPERM,
		    "ibv_reg_mr of [2 MiB, 3 MiB) after the release: %s (want EPERM)",
		    mr2 ? "registered" : strerror(errno));
	if (mr2)
		ibv_dereg_mr(mr2);
	if (map2 != MAP_FAILED) {
		struct ibv_mr raw;

		ret = kt_reg_mr_ioctl(&dev, map2, KT_PIN_LEN, KT_ACCESS, p.fd,
				      2 * KT_MIB, &raw);
		dtest_check(kt_name("p4_new_daxfd_pin_after_release_eperm", fs),
			    ret == EPERM,
			    "REG_MR (DAX_FD) of [2 MiB, 3 MiB) after the release: %s (want EPERM)",
			    kt_res_name(ret));
		if (!ret)
			kt_destroy_mr(&dev, raw.handle);
		munmap(map2, KT_PIN_LEN);
	}

	ret = kt_rdma_write_pattern(&dev, p.iova, p.rkey,
				    KT_PIN_LEN, 0, 0x44, why, sizeof(why));
	if (!ret)
		ret = kt_verify_pattern(path, 0, KT_PIN_LEN, 0x44, why,
					sizeof(why));
	dtest_check(kt_name("p4_existing_mr_works", fs), ret == 0,
		    "RDMA WRITE into the MR after the lease release: %s", why);
out:
	kt_unpin(&p);
	if (path)
		unlink(path);
}

/* ---- points 5 and 6: close and munmap, the MR stays -------------------- */

static void t_p56(const struct kt_fs *fs, bool do_close)
{
	const char *pfx = do_close ? "p5_close" : "p6_munmap";
	struct kt_pin p = KT_PIN_INIT;
	const char *path = NULL;
	char n1[64], n2[64], n3[64];
	int ret;

	snprintf(n1, sizeof(n1), "%s_mr_valid", pfx);
	snprintf(n2, sizeof(n2), "%s_truncate_etxtbsy", pfx);
	snprintf(n3, sizeof(n3), "%s_fd", pfx);
	if (setup_pin(fs, pfx, LAYOUT_EXCL, &p, &path)) {
		dtest_fail(kt_name(n1, fs), "%s", why);
		goto out;
	}
	if (do_close) {
		/*
		 * The mapping and the pin keep the struct file (and with it
		 * the lease) alive: the close itself must just work.
		 */
		ret = close(p.fd);
		p.fd = -1;
		dtest_check(kt_name(n3, fs), ret == 0,
			    "close() of the leased fd with the MR registered: %s",
			    ret ? strerror(errno) : "ok");
	} else {
		ret = munmap(p.addr, p.len);
		p.addr = MAP_FAILED;
		if (ret || fcntl(p.fd, F_SETLEASE, F_UNLCK)) {
			dtest_fail(kt_name(n1, fs), "munmap/F_UNLCK: %s",
				   strerror(errno));
			goto out;
		}
	}
	ret = kt_rdma_write_pattern(&dev, p.iova, p.rkey,
				    KT_PIN_LEN, 0, 0x55, why, sizeof(why));
	if (!ret)
		ret = kt_verify_pattern(path, 0, KT_PIN_LEN, 0x55, why,
					sizeof(why));
	dtest_check(kt_name(n1, fs), ret == 0,
		    "RDMA WRITE after %s lands in the file: %s",
		    do_close ? "close()" : "munmap() and F_UNLCK", why);
	/* the pins still hold the blocks (NOTES rule 5) */
	ret = kt_child_op(path, KT_OP_TRUNCATE, 0);
	dtest_check(kt_name(n2, fs), ret == ETXTBSY,
		    "truncate to 0 after %s, no lease: %s (want ETXTBSY)",
		    do_close ? "close()" : "munmap()", kt_res_name(ret));
out:
	kt_unpin(&p);
	if (path)
		unlink(path);
}

/*
 * Point 5 taken further: munmap, close and unlink the pinned file.  The
 * last name is gone but the pin must keep the inode (and its blocks)
 * alive: RDMA still works and no kernel report (dax_disassociate_entry()
 * busy-page WARN on eviction) appears, for either registration path.
 */
static void t_p5_unlink(const struct kt_fs *fs, enum kt_pin_how how)
{
	const char *name = kt_name(how == KT_PIN_DAXFD ?
					   "p5_unlink_while_pinned_daxfd" :
					   "p5_unlink_while_pinned_legacy",
				   fs);
	struct kt_pin p = KT_PIN_INIT;
	const char *path = NULL;
	char first[512] = "";
	uint64_t mark;
	int ret, n;

	if (setup_pin_how(fs, how == KT_PIN_DAXFD ? "p5unlinkd" : "p5unlinkl",
			  LAYOUT_EXCL, how, &p, &path)) {
		dtest_fail(name, "%s", why);
		goto out;
	}
	mark = kt_kmsg_mark();
	munmap(p.addr, p.len);
	p.addr = MAP_FAILED;
	close(p.fd);
	p.fd = -1;
	if (unlink(path)) {
		dtest_fail(name, "unlink: %s", strerror(errno));
		goto out;
	}
	ret = kt_rdma_write_pattern(&dev, p.iova, p.rkey, KT_PIN_LEN, 0, 0x5a,
				    why, sizeof(why));
	kt_pin_dereg(&p);
	n = kt_kmsg_scan(mark, first, sizeof(first));
	dtest_check(name, ret == 0 && n == 0,
		    "RDMA WRITE into the MR of an unmapped, closed, unlinked file: %s; %d kernel report line(s)%s%s",
		    ret ? why : "ok", n, n ? ": " : "", first);
out:
	kt_unpin(&p);
}

/* ---- point 7: pins tracked to the uverbs file ------------------------- */

static void check_pins(const char *name, pid_t pid, int cmd_fd,
		       const char *const *paths, int npaths, const char *when)
{
	char got[4096], want1[4096], want2[4096];
	const char *rev[2];
	bool ok;
	int ret;

	ret = kt_read_file_pins(pid, got, sizeof(got));
	if (ret) {
		dtest_fail(name, "/proc/%d/file_pins: %s", (int)pid,
			   strerror(ret));
		return;
	}
	if (npaths == 0) {
		dtest_check(name, got[0] == '\0',
			    "%s: file_pins \"%s\", want empty", when,
			    kt_oneline(got));
		return;
	}
	kt_expect_pins(want1, sizeof(want1), cmd_fd, paths, npaths);
	ok = !strcmp(got, want1);
	if (!ok && npaths == 2) {
		/* the two paths of one context may come in either order */
		rev[0] = paths[1];
		rev[1] = paths[0];
		kt_expect_pins(want2, sizeof(want2), cmd_fd, rev, 2);
		ok = !strcmp(got, want2);
	}
	if (ok)
		dtest_pass(name, "%s: \"%s\"", when, kt_oneline(got));
	else
		dtest_fail(name, "%s: file_pins \"%s\", want \"%s\"", when,
			   kt_oneline(got), kt_oneline(want1));
}

static int read_pins_fn(void *arg)
{
	const char *expect = arg;
	char got[4096];
	int ret = kt_read_file_pins(getppid(), got, sizeof(got));

	if (ret)
		return ret;
	return strcmp(got, expect) ? EBADE : 0;
}

static void t_p7(const struct kt_fs *fs)
{
	struct kt_pin pa = KT_PIN_INIT, pb = KT_PIN_INIT;
	const char *a = NULL, *b = NULL, *step, *paths[2];
	char ra[4096], rb[4096], got[4096];
	int ret;

	check_pins(kt_name("p7_file_pins_empty", fs), getpid(), -1, NULL, 0,
		   "no MR");
	if (setup_pin(fs, "p7a", LAYOUT_EXCL, &pa, &a)) {
		dtest_fail(kt_name("p7_file_pins_one", fs), "%s", why);
		goto out;
	}
	if (!realpath(a, ra))
		snprintf(ra, sizeof(ra), "%s", a);
	paths[0] = ra;
	check_pins(kt_name("p7_file_pins_one", fs), getpid(),
		   dev.ctx->cmd_fd, paths, 1, "one MR");

	b = kt_path(fs, "p7b");
	ret = kt_make_file(b, KT_PIN_LEN, 0x11);
	if (!ret)
		ret = kt_pin(&dev, b, 0, KT_PIN_LEN, LAYOUT_EXCL,
			     KT_PIN_DAXFD, &pb, &step);
	if (ret) {
		dtest_fail(kt_name("p7_file_pins_two_files", fs),
			   "second file: %s", strerror(ret));
	} else {
		if (!realpath(b, rb))
			snprintf(rb, sizeof(rb), "%s", b);
		paths[1] = rb;
		check_pins(kt_name("p7_file_pins_two_files", fs), getpid(),
			   dev.ctx->cmd_fd, paths, 2, "two files, one context");
		kt_unpin(&pb);
	}

	/* another process reads it; and it survives close + munmap */
	close(pa.fd);
	pa.fd = -1;
	munmap(pa.addr, pa.len);
	pa.addr = MAP_FAILED;
	check_pins(kt_name("p7_file_pins_after_close_munmap", fs), getpid(),
		   dev.ctx->cmd_fd, paths, 1, "after close() and munmap()");
	if (kt_read_file_pins(getpid(), got, sizeof(got)) == 0) {
		ret = kt_child(read_pins_fn, got, KT_OP_TIMEOUT);
		dtest_check(kt_name("p7_file_pins_read_by_other", fs),
			    ret == 0 && got[0],
			    "/proc/<parent>/file_pins read by a child: %s",
			    ret == EBADE ? "differs" : kt_res_name(ret));
	}
	kt_pin_dereg(&pa);
	check_pins(kt_name("p7_file_pins_after_dereg", fs), getpid(), -1,
		   NULL, 0, "after ibv_dereg_mr");
out:
	kt_unpin(&pa);
	kt_unpin(&pb);
	if (a)
		unlink(a);
	if (b)
		unlink(b);
}

/*
 * A legacy ibv_reg_mr of a leased FS-DAX file is a long-term pin too: the
 * kernel must either refuse it or track it like a REG_MR pin; an
 * untracked pin would hold blocks that nobody can see in file_pins.
 */
static void t_p7_legacy(const struct kt_fs *fs)
{
	const char *name = kt_name("p7_legacy_pin_tracked_or_refused", fs);
	struct kt_pin p = KT_PIN_INIT;
	const char *path = NULL, *paths[1];
	char got[4096], want[4096], rp[4096];
	int ret;

	ret = setup_pin_how(fs, "p7legacy", LAYOUT_EXCL, KT_PIN_LEGACY, &p,
			    &path);
	if (ret) {
		/* the holder's legacy REG_MR pins, and the pin is recorded */
		dtest_fail(name, "%s", why);
		goto out;
	}
	if (!realpath(path, rp))
		snprintf(rp, sizeof(rp), "%s", path);
	paths[0] = rp;
	kt_expect_pins(want, sizeof(want), dev.ctx->cmd_fd, paths, 1);
	ret = kt_read_file_pins(getpid(), got, sizeof(got));
	dtest_check(name, ret == 0 && !strcmp(got, want),
		    "ibv_reg_mr with the lease held registered; file_pins %s\"%s\", want \"%s\" (an untracked long-term pin)",
		    ret ? strerror(ret) : "", ret ? "" : kt_oneline(got),
		    kt_oneline(want));
out:
	kt_unpin(&p);
	if (path)
		unlink(path);
}

/*
 * Issue 3 item 6: the extended REG_MR checks that DAX_FD backs the range
 * at DAX_FD_OFFSET and that the lease was set through that open file.
 */
static void t_i6(const struct kt_fs *fs)
{
	struct kt_pin p = KT_PIN_INIT;
	const char *path = NULL, *other = kt_path(fs, "i6other");
	struct ibv_mr raw;
	int ofd = -1, fd2 = -1, ret;
	uint8_t *anon;
	char got[256];

	if (setup_pin(fs, "i6", LAYOUT_EXCL, &p, &path)) {
		dtest_fail(kt_name("i6_reg_mr_daxfd_ok", fs), "%s", why);
		goto out;
	}
	dtest_pass(kt_name("i6_reg_mr_daxfd_ok", fs),
		   "REG_MR with DAX_FD: handle %u lkey 0x%x rkey 0x%x",
		   p.raw.handle, p.raw.lkey, p.raw.rkey);

	/* DAX_FD names a file that does not back the range */
	ret = kt_make_file(other, KT_FILE_SIZE, 0x66);
	ofd = ret ? -1 : open(other, O_RDWR | O_CLOEXEC);
	if (ofd < 0 || fcntl(ofd, F_SETLEASE, LAYOUT_EXCL)) {
		dtest_fail(kt_name("i6_reg_mr_wrong_file_einval", fs),
			   "second file: %s", strerror(ret ? ret : errno));
	} else {
		ret = kt_reg_mr_ioctl(&dev, p.addr, KT_PIN_LEN, KT_ACCESS, ofd,
				      0, &raw);
		dtest_check(kt_name("i6_reg_mr_wrong_file_einval", fs),
			    ret == EINVAL,
			    "range of one file, DAX_FD of another (leased): %s (want EINVAL)",
			    kt_res_name(ret));
		if (!ret)
			kt_destroy_mr(&dev, raw.handle);
	}

	ret = kt_reg_mr_ioctl(&dev, p.addr, KT_PIN_LEN, KT_ACCESS, p.fd,
			      KT_MIB, &raw);
	dtest_check(kt_name("i6_reg_mr_wrong_offset_einval", fs),
		    ret == EINVAL,
		    "range at file offset 0, DAX_FD_OFFSET 1 MiB: %s (want EINVAL)",
		    kt_res_name(ret));
	if (!ret)
		kt_destroy_mr(&dev, raw.handle);

	/* the lease lives on p.fd's open file, not on a second open */
	fd2 = open(path, O_RDWR | O_CLOEXEC);
	ret = fd2 < 0 ? errno :
			kt_reg_mr_ioctl(&dev, p.addr, KT_PIN_LEN, KT_ACCESS,
					fd2, 0, &raw);
	dtest_check(kt_name("i6_reg_mr_lease_on_other_open_eperm", fs),
		    ret == EPERM,
		    "DAX_FD is a second open of the leased file, without a lease of its own: %s (want EPERM)",
		    kt_res_name(ret));
	if (!ret)
		kt_destroy_mr(&dev, raw.handle);

	ret = kt_reg_mr_ioctl(&dev, p.addr, KT_PIN_LEN, KT_ACCESS, 1000, 0,
			      &raw);
	dtest_check(kt_name("i6_reg_mr_bad_fd_ebadf", fs), ret == EBADF,
		    "DAX_FD 1000 (not open): %s (want EBADF)",
		    kt_res_name(ret));
	if (!ret)
		kt_destroy_mr(&dev, raw.handle);

	ret = kt_reg_mr_ioctl(&dev, p.addr, KT_PIN_LEN,
			      KT_ACCESS | IBV_ACCESS_ON_DEMAND, p.fd, 0, &raw);
	dtest_check(kt_name("i6_reg_mr_odp_einval", fs), ret == EINVAL,
		    "DAX_FD with IBV_ACCESS_ON_DEMAND: %s (want EINVAL)",
		    kt_res_name(ret));
	if (!ret)
		kt_destroy_mr(&dev, raw.handle);

	/* without DAX_FD the method is a plain MR and records no pin */
	kt_pin_dereg(&p);
	anon = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = anon == MAP_FAILED ? ENOMEM :
				   kt_reg_mr_ioctl(&dev, anon, KT_PIN_LEN,
						   KT_ACCESS, -1, 0, &raw);
	if (!ret) {
		int r2 = kt_read_file_pins(getpid(), got, sizeof(got));

		dtest_check(kt_name("i6_reg_mr_plain_no_file_pin", fs),
			    r2 == 0 && got[0] == '\0',
			    "REG_MR without DAX_FD on anonymous memory: registered, file_pins %s\"%s\" (want empty)",
			    r2 ? strerror(r2) : "", r2 ? "" : kt_oneline(got));
		ret = kt_destroy_mr(&dev, raw.handle);
		dtest_check(kt_name("i6_mr_destroy", fs), ret == 0,
			    "UVERBS_METHOD_MR_DESTROY: %s", kt_res_name(ret));
	} else {
		dtest_fail(kt_name("i6_reg_mr_plain_no_file_pin", fs),
			   "REG_MR without DAX_FD on anonymous memory: %s",
			   kt_res_name(ret));
	}
	if (anon != MAP_FAILED)
		munmap(anon, KT_PIN_LEN);
out:
	if (ofd >= 0)
		close(ofd);
	if (fd2 >= 0)
		close(fd2);
	unlink(other);
	kt_unpin(&p);
	if (path)
		unlink(path);
}

/* Retries for up to 3 s: the last fput after a kill may be deferred. */
static int leases_after_death(const char *path)
{
	int i, n = 0;

	for (i = 0; i < 30; i++) {
		n = kt_count_leases(path);
		if (n == 0)
			break;
		usleep(100 * 1000);
	}
	return n;
}

static int truncate_after_death(const char *path)
{
	int i, ret = 0;

	for (i = 0; i < 30; i++) {
		ret = kt_child_op(path, KT_OP_TRUNCATE, 0);
		if (ret != ETXTBSY)
			break;
		usleep(100 * 1000);
	}
	return ret;
}

/* kill -9 of the holder releases its pins and its lease */
static void t_kill9(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "kill9"), *step;
	int ready[2], ret, child_fd = -1;
	char got[4096], want[8192], rp[4096];
	pid_t pid;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret || pipe(ready)) {
		dtest_fail(kt_name("p7_kill9_pins_listed", fs), "setup: %s",
			   strerror(ret ? ret : errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct kt_dev d;
		struct kt_pin p;
		int msg = -1;

		close(ready[0]);
		if (!kt_dev_open(&d, false) &&
		    !kt_pin(&d, path, 0, KT_PIN_LEN, LAYOUT_EXCL,
			    KT_PIN_DAXFD, &p, &step))
			msg = d.ctx->cmd_fd;
		if (write(ready[1], &msg, sizeof(msg)) != sizeof(msg))
			_exit(1);
		alarm(120);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &child_fd, sizeof(child_fd)) != sizeof(child_fd) ||
	    child_fd < 0) {
		static const char *const names[] = {
			"p7_kill9_pins_listed", "p7_kill9_blocked_before",
			"p7_kill9_no_lease_after", "p7_kill9_truncate_after",
		};
		size_t k;

		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			dtest_fail(kt_name(names[k], fs),
				   "not reached: the child could not lease and pin %s",
				   path);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(ready[0]);
		unlink(path);
		return;
	}
	/* the child's expected text: its fd, its uverbs path, the file */
	ret = kt_read_file_pins(pid, got, sizeof(got));
	{
		char link[64], target[256];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid,
			 child_fd);
		n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		if (!realpath(path, rp))
			snprintf(rp, sizeof(rp), "%s", path);
		snprintf(want, sizeof(want), "%d: %s\n\t%s\n", child_fd,
			 target, rp);
	}
	dtest_check(kt_name("p7_kill9_pins_listed", fs),
		    ret == 0 && !strcmp(got, want),
		    "/proc/%d/file_pins of the holder: %s \"%s\", want \"%s\"",
		    (int)pid, ret ? strerror(ret) : "",
		    ret ? "" : kt_oneline(got), kt_oneline(want));
	ret = kt_child_op(path, KT_OP_TRUNCATE, 0);
	dtest_check(kt_name("p7_kill9_blocked_before", fs), ret == ETXTBSY,
		    "truncate while the holder lives: %s (want ETXTBSY)",
		    kt_res_name(ret));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(ready[0]);
	ret = leases_after_death(path);
	dtest_check(kt_name("p7_kill9_no_lease_after", fs), ret == 0,
		    "%d LEASE line(s) for the file in /proc/locks after kill -9, want 0",
		    ret);
	ret = truncate_after_death(path);
	dtest_check(kt_name("p7_kill9_truncate_after", fs), ret == 0,
		    "truncate to 0 after kill -9 of the holder: %s",
		    kt_res_name(ret));
	unlink(path);
}

/* ---- point 8: only uverbs takes the pins ------------------------------ */

static void t_p8(const struct kt_fs *fs)
{
	const char *name = kt_name("p8_io_uring_fixed_buffer_refused", fs);
	const char *path = kt_path(fs, "p8");
	struct io_uring_params params;
	void *map = MAP_FAILED;
	struct iovec iov;
	int fd = -1, ring = -1, ret;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_SETLEASE, LAYOUT_EXCL)) {
		dtest_fail(name, "file and lease: %s",
			   strerror(ret ? ret : errno));
		goto out;
	}
	map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	memset(&params, 0, sizeof(params));
	ring = syscall(__NR_io_uring_setup, 4, &params);
	if (ring < 0) {
		dtest_skip(name,
			   "io_uring_setup: %s: no other long-term pinner in this kernel (CONFIG_IO_URING off)",
			   strerror(errno));
		goto out;
	}
	iov.iov_base = map;
	iov.iov_len = KT_PIN_LEN;
	ret = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS,
		      &iov, 1);
	dtest_check(name, ret < 0 && map != MAP_FAILED,
		    "IORING_REGISTER_BUFFERS (FOLL_LONGTERM) of an FS-DAX mapping with the lease held: %s (want a refusal: only uverbs may pin)",
		    ret < 0 ? strerror(errno) : "registered");
	if (ret == 0)
		syscall(__NR_io_uring_register, ring,
			IORING_UNREGISTER_BUFFERS, NULL, 0);
	/* and nothing is left pinned: without the lease, truncate works */
	fcntl(fd, F_SETLEASE, F_UNLCK);
	ret = kt_child_op(path, KT_OP_TRUNCATE, 0);
	dtest_check(kt_name("p8_io_uring_left_no_pin", fs), ret == 0,
		    "truncate after the refused io_uring registration: %s",
		    kt_res_name(ret));
out:
	if (ring >= 0)
		close(ring);
	if (map != MAP_FAILED)
		munmap(map, KT_PIN_LEN);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* ---- point 9: what is neither pinned nor leased may change ------------ */

static void t_p9(const struct kt_fs *fs)
{
	struct kt_pin p = KT_PIN_INIT;
	const char *path = NULL, *other = kt_path(fs, "p9other");
	enum kt_op op;
	int ret, fail = 0;
	char res[512] = "";

	if (setup_pin(fs, "p9", LAYOUT_EXCL, &p, &path)) {
		dtest_fail(kt_name("p9_other_file_changes", fs), "%s", why);
		goto out;
	}
	/* another file of the same fs while the first is leased and pinned */
	for (op = 0; op < KT_OP_NUM; op++) {
		ret = kt_make_file(other, KT_FILE_SIZE, 0x66);
		if (!ret)
			ret = kt_child_op(other, op, head_off(op));
		if (ret) {
			fail++;
			snprintf(res + strlen(res), sizeof(res) - strlen(res),
				 "%s: %s; ", kt_op_name(op), kt_res_name(ret));
		}
	}
	dtest_check(kt_name("p9_other_file_changes", fs), fail == 0,
		    "every layout change of another file while %s is leased and pinned: %s",
		    path, fail ? res : "all succeeded");
	unlink(other);

	kt_unpin(&p);
	ret = kt_child_op(path, KT_OP_TRUNCATE, 0);
	dtest_check(kt_name("p9_truncate_after_dereg", fs), ret == 0,
		    "truncate to 0 after ibv_dereg_mr and close: %s",
		    kt_res_name(ret));
out:
	kt_unpin(&p);
	if (path)
		unlink(path);
}

/*
 * After a group of refused layout changes: the file system is consistent
 * (e2fsck -fn / xfs_repair -n on the unmounted device), then mounted again
 * for the tests that follow.
 */
static void t_fsck(const struct kt_fs *fs, const char *name)
{
	char out[1024];
	int ret;

	ret = kt_fsck(fs, true, out, sizeof(out));
	dtest_check(kt_name(name, fs), ret == 0, "%s: %s", name, out);
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
		} else {
			printf("usage: %s [--only SUBSTRING]\n"
			       "Runs the kernel suite (points 0-9) in the test VM; see tests/vm/suites/kernel.sh.\n",
			       argv[0]);
			return !strcmp(argv[i], "--help") ? 0 : 2;
		}
	}
	kt_env_init();
	if (kt_suite_begin("kernel", &dev, 1))
		return dtest_end();

	if (want("p0"))
		t_p0_devdax();
	for (i = 0; i < kt_env.nfs; i++) {
		const struct kt_fs *fs = &kt_env.fs[i];

		if (want("p1"))
			t_p1(fs);
		if (want("p2"))
			t_p2(fs);
		if (want("p3") || want("p9")) {
			t_p3(fs);
			t_fsck(fs, "fsck_p3");
		}
		if (want("p4"))
			t_p4(fs);
		if (want("p5"))
			t_p56(fs, true);
		if (want("p6"))
			t_p56(fs, false);
		if (want("p7"))
			t_p7(fs);
		if (want("p7")) {
			t_p7_legacy(fs);
			t_kill9(fs);
		}
		if (want("i6"))
			t_i6(fs);
		if (want("p8"))
			t_p8(fs);
		if (want("p9"))
			t_p9(fs);
	}
	/* last: a failure here can leave freed blocks under an MR */
	for (i = 0; i < kt_env.nfs && want("p5"); i++) {
		t_p5_unlink(&kt_env.fs[i], KT_PIN_DAXFD);
		t_p5_unlink(&kt_env.fs[i], KT_PIN_LEGACY);
		t_fsck(&kt_env.fs[i], "fsck_p5_unlink");
	}
	return kt_suite_end(&dev, "dmesg_clean", 0);
}
