// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dl-attacks-test: attacks on the soundness of the layout-lease kernel
 * series (doc/design.md §2), with raw system calls and raw verbs only.
 * The invariant under attack: no block of a file may be freed, remapped
 * or reused while a long-term pin on it exists, whoever asks and however
 * the pin was taken.  Every test name starts with the number of the rule
 * it attacks ("i2_remap_race_daxfd_xfs"):
 *
 *  i1  other long-term pinners (AF_XDP as an unprivileged user in its own
 *      user + network namespace, io_uring fixed buffers) keep upstream's
 *      EOPNOTSUPP, with or without the lease, and leave nothing pinned
 *  i2  a REG_MR racing mmap(MAP_FIXED) of another file over its range
 *      pins only pages of files that /proc/self/file_pins lists (checked
 *      page by page with an RDMA READ of the MR)
 *  i3  lease ownership is the leased open file, not a pid: a process that
 *      was given the holder's pid cannot pin or act as the holder; who
 *      upgrades a shared open file's lease to exclusive holds it
 *  i4  only ext4 and xfs DAX files grant F_LAYOUT|F_EXCLUSIVE; ext2 -o dax
 *      pages never pin
 *  i5  extent moves and swaps, reflink, dedupe and copy-on-write over a
 *      pinned file fail
 *  i6  a layout change racing new pins never hangs
 *  i7  a page that merely looks pinned (many vmsplice references) does not
 *      make truncate fail
 *  i8  closing the uverbs file releases the pins; a failed destroy
 *      keeps them
 *  i9  one registration over 10,000 VMAs stays bounded
 *  i10 a refused change leaves size and times alone; changes next to a
 *      pinned page succeed, without a lockdep report after the i_pages
 *      lock was taken in a disk interrupt, and fail inside a pinned page's
 *      xfs realtime extent
 *  i11 read-only registration works through a descriptor opened
 *      read-only; such pins take only the named file's DAX pages (no
 *      zero page, no page cache), only for the owner, and stay read-only
 *  i12 the uverbs ABI of the DAX attributes
 *  i13 the range a layout change drops is the range it checked
 *      (attacks_drop.c)
 *  i14 the pmem device is not removed under a pin, nor under a mounted
 *      file system's DAX entries (attacks_remove.c)
 *  i15 a check does not walk every pin of a file: thousands of MRs on one
 *      file, and the records still answer right (attacks_scale.c)
 *  i16 no pNFS block layout of a pinned or exclusively leased DAX file:
 *      handing one out drops the file's DAX entries (attacks_pnfs.c)
 *
 * The spare NVDIMM (DAXLEASE_SPARE_DEV) is formatted here four times:
 * ext2 -o dax, xfs with and without reflink, ext4 with per-inode DAX.
 * After every group of refused layout changes the file system is
 * unmounted and checked (e2fsck -fn, xfs_repair -n).  The suite ends
 * with a scan of the kernel log.  Nothing is skipped: a test that cannot
 * run fails.
 *
 * usage: dl-attacks-test [--only SUBSTRING[,SUBSTRING...]] [--race-seconds N]
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/if_xdp.h>
#include <linux/io_uring.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/daxlease_user_ioctl_cmds.h>
#include <linux/daxlease_fcntl.h>

#include "attacks.h"
#define DTEST_SHARED_DEFINE
#include "dtest.h"
#include "ioctl.h"
#include "kt.h"
#include "kt_suite.h"

#define LAYOUT_EXCL ATK_LAYOUT_EXCL
#define NOBODY 65534
#define PAGE ATK_PAGE
#define PMD_SIZE ATK_PMD_SIZE
/* uverbs ids of the driver namespace, which the core never assigns */
#define DRIVER_NS (1U << UVERBS_ID_NS_SHIFT)

/* ext4 ioctls (fs/ext4/ext4.h, not exported as uapi) */
struct ext4_move_extent {
	uint32_t reserved;
	uint32_t donor_fd;
	uint64_t orig_start;
	uint64_t donor_start;
	uint64_t len;
	uint64_t moved_len;
};
#define EXT4_IOC_MOVE_EXT _IOWR('f', 15, struct ext4_move_extent)
#define EXT4_IOC_SWAP_BOOT _IO('f', 17)

/* xfs swapext (fs/xfs/libxfs/xfs_fs.h) */
struct xfs_bstime {
	long tv_sec;
	int32_t tv_nsec;
};
struct xfs_bstat {
	uint64_t bs_ino;
	uint16_t bs_mode;
	uint16_t bs_nlink;
	uint32_t bs_uid;
	uint32_t bs_gid;
	uint32_t bs_rdev;
	int32_t bs_blksize;
	int64_t bs_size;
	struct xfs_bstime bs_atime, bs_mtime, bs_ctime;
	int64_t bs_blocks;
	uint32_t bs_xflags;
	int32_t bs_extsize;
	int32_t bs_extents;
	uint32_t bs_gen;
	uint16_t bs_projid_lo;
	uint16_t bs_forkoff;
	uint16_t bs_projid_hi;
	uint16_t bs_sick;
	uint16_t bs_checked;
	unsigned char bs_pad[2];
	uint32_t bs_cowextsize;
	uint32_t bs_dmevmask;
	uint16_t bs_dmstate;
	uint16_t bs_aextents;
};
struct xfs_swapext {
	int64_t sx_version;
	int64_t sx_fdtarget;
	int64_t sx_fdtmp;
	int64_t sx_offset;
	int64_t sx_length;
	char sx_pad[16];
	struct xfs_bstat sx_stat;
};
#define XFS_IOC_SWAPEXT _IOWR('X', 109, struct xfs_swapext)
_Static_assert(sizeof(struct xfs_swapext) == 192, "xfs_swapext layout");

/* xfs exchange-range, Linux 6.10 (fs/xfs/libxfs/xfs_fs.h) */
struct xfs_exchange_range {
	int32_t file1_fd;
	uint32_t pad;
	uint64_t file1_offset;
	uint64_t file2_offset;
	uint64_t length;
	uint64_t flags;
};
#define XFS_IOC_EXCHANGE_RANGE _IOW('X', 129, struct xfs_exchange_range)
#define XFS_SB_FEAT_INCOMPAT_EXCHRANGE 0x40

static struct kt_dev dev;
static const char *only;
static char why[1024];
static int race_seconds = 12;
static const char *spare_dev;
static const char *spare_dir = ATK_SPARE_DIR;

/* --only A,B: groups whose name contains A or B */
static bool want(const char *group)
{
	const char *p = only, *end;
	char tok[64];

	if (!only)
		return true;
	for (; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ',');
		snprintf(tok, sizeof(tok), "%.*s", (int)(end - p), p);
		if (*tok && strstr(group, tok))
			return true;
	}
	return false;
}

static const char *en(int e)
{
	return kt_res_name(e);
}

/* ---- helpers ---------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

/* A child that died of signal sig */
#define CHILD_SIG(sig) (-100 - (sig))

/* A child started by child_start(), its result read by child_wait() */
struct achild {
	pid_t pid;
	int fd;
	int timeout;
	double start;
};

/*
 * Forks a child that runs fn(arg, res) under alarm(timeout) and sends res
 * (size bytes, under 4 KiB) back; fn's value is its exit status.
 */
static int child_start(struct achild *c, int (*fn)(void *arg, void *res),
		       void *arg, void *res, size_t size, int timeout)
{
	int pfd[2];

	c->pid = -1;
	c->fd = -1;
	c->timeout = timeout;
	if (pipe(pfd))
		return errno;
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return errno;
	}
	if (c->pid == 0) {
		int ret;

		close(pfd[0]);
		signal(SIGALRM, SIG_DFL);
		alarm(timeout);
		memset(res, 0, size);
		ret = fn(arg, res);
		if (write(pfd[1], res, size) != (ssize_t)size)
			_exit(EPIPE);
		_exit(ret & 0xff);
	}
	close(pfd[1]);
	c->fd = pfd[0];
	c->start = now_s();
	return 0;
}

/* true once the child has exited (not reaped) */
static bool child_exited(struct achild *c)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return !waitid(P_PID, c->pid, &si, WEXITED | WNOHANG | WNOWAIT) &&
	       si.si_pid == c->pid;
}

/*
 * Waits for the child (killing it 5 s after its alarm should have) and
 * reads res.  Returns fn's value, KT_HANG, CHILD_SIG(n) or KT_CRASH; res
 * is zeroed if it did not arrive.
 */
static int child_wait(struct achild *c, void *res, size_t size)
{
	int status;
	ssize_t n;
	pid_t r;

	for (;;) {
		r = waitpid(c->pid, &status, WNOHANG);
		if (r == c->pid)
			break;
		if (r < 0) {
			close(c->fd);
			return KT_CRASH;
		}
		if (now_s() - c->start > c->timeout + 5) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &status, 0);
			close(c->fd);
			memset(res, 0, size);
			return KT_HANG;
		}
		sleep_ms(20);
	}
	n = read(c->fd, res, size);
	close(c->fd);
	if (n != (ssize_t)size)
		memset(res, 0, size);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		return KT_HANG;
	if (WIFSIGNALED(status))
		return CHILD_SIG(WTERMSIG(status));
	return KT_CRASH;
}

static int child_data(int (*fn)(void *arg, void *res), void *arg, void *res,
		      size_t size, int timeout)
{
	struct achild c;

	if (child_start(&c, fn, arg, res, size, timeout))
		return KT_CRASH;
	return child_wait(&c, res, size);
}

static const char *child_res(int r)
{
	static char buf[64];

	if (r <= CHILD_SIG(1) && r > CHILD_SIG(64)) {
		snprintf(buf, sizeof(buf), "killed by signal %d (%s)",
			 -100 - r, strsignal(-100 - r));
		return buf;
	}
	return en(r);
}

int atk_pins_naming(const char *text, const char *path)
{
	char rp[4096];
	const char *p = text;
	size_t n;
	int count = 0;

	if (!realpath(path, rp))
		snprintf(rp, sizeof(rp), "%s", path);
	n = strlen(rp);
	while ((p = strchr(p, '\t'))) {
		p++;
		if (!strncmp(p, rp, n) && (p[n] == '\n' || p[n] == '\0'))
			count++;
	}
	return count;
}

/* Number of pinned-file lines ("\t...") in a file_pins text */
static int pins_lines(const char *text)
{
	int count = 0;

	for (; (text = strchr(text, '\t')); text++)
		count++;
	return count;
}

/* file_pins of this process, or a note why it cannot be read */
static const char *own_pins(char *buf, size_t size)
{
	int ret = kt_read_file_pins(getpid(), buf, size);

	if (ret)
		snprintf(buf, size, "<cannot read /proc/self/file_pins: %s>",
			 strerror(ret));
	return buf;
}

/* Creates path with pattern seed; preallocated in one piece first */
int atk_pin_released(struct kt_dev *d, const char *name, const char *path,
		     size_t size, uint8_t seed, struct kt_pin *p)
{
	const char *step = "";
	int ret;

	ret = atk_make_file(path, size, seed, 0);
	if (!ret)
		ret = kt_pin(d, path, 0, KT_MIB, ATK_LAYOUT_EXCL,
			     KT_PIN_DAXFD, p, &step);
	if (ret) {
		dtest_fail(name, "not reached: pin of [0, 1 MiB) of %s: %s: %s",
			   path, *step ? step : "create", kt_res_name(ret));
		kt_unpin(p);
		return ret;
	}
	fcntl(p->fd, F_SETLEASE, F_UNLCK);
	return 0;
}

int atk_make_file(const char *path, size_t size, uint8_t seed,
		     unsigned int extsize)
{
	struct fsxattr fa;
	int fd, err;

	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	if (extsize && !ioctl(fd, FS_IOC_FSGETXATTR, &fa)) {
		fa.fsx_xflags |= FS_XFLAG_EXTSIZE;
		fa.fsx_extsize = extsize;
		ioctl(fd, FS_IOC_FSSETXATTR, &fa);
	}
	/* one allocation: aligned extents where the file system can */
	fallocate(fd, 0, 0, size);
	err = kt_fill_pattern(fd, size, seed);
	close(fd);
	return err;
}

/* A small file of pattern seed, without fsync (many of them) */
static int make_small(const char *path, size_t size, uint8_t seed)
{
	uint8_t buf[64 * 1024];
	int fd, err = 0;

	if (size > sizeof(buf))
		return EINVAL;
	kt_pattern(buf, size, 0, seed);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	if (pwrite(fd, buf, size, 0) != (ssize_t)size)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

/* DAX state of path from statx: 1 DAX, 0 not, -errno */
static int is_dax(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx))
		return -errno;
	if (!(stx.stx_attributes_mask & STATX_ATTR_DAX))
		return -ENOTSUP;
	return !!(stx.stx_attributes & STATX_ATTR_DAX);
}

/*
 * Pins [off, off + len) of path: lease, mmap, REG_MR (how), then with
 * release the lease is dropped again, so that only the pin protects the
 * blocks.  why says what failed.
 */
static int pin_file(const char *path, off_t off, size_t len,
		    enum kt_pin_how how, bool release, struct kt_pin *p)
{
	const char *step;
	int ret;

	ret = kt_pin(&dev, path, off, len, LAYOUT_EXCL, how, p, &step);
	if (ret) {
		snprintf(why, sizeof(why), "%s of %s: %s", step, path,
			 strerror(ret));
		return ret;
	}
	if (release && fcntl(p->fd, F_SETLEASE, F_UNLCK)) {
		ret = errno;
		snprintf(why, sizeof(why), "F_UNLCK on %s: %s", path,
			 strerror(ret));
		kt_unpin(p);
	}
	return ret;
}

/*
 * RDMA READ of [remote, +len) of rkey into base + off; *lmr_cache
 * registers [base, base + base_len) at the first call (and is reused).
 */
static int rdma_read_at(uint64_t remote, uint32_t rkey, uint8_t *base,
			size_t base_len, size_t off, size_t len,
			struct ibv_mr **lmr_cache)
{
	if (!dev.loop) {
		snprintf(why, sizeof(why), "no RC loopback: %s", dev.loop_err);
		return ENODEV;
	}
	if (!*lmr_cache) {
		*lmr_cache = ibv_reg_mr(dev.pd, base, base_len,
					IBV_ACCESS_LOCAL_WRITE);
		if (!*lmr_cache) {
			snprintf(why, sizeof(why),
				 "ibv_reg_mr of the local buffer: %s",
				 strerror(errno));
			return errno ? errno : EIO;
		}
	}
	if (rcloop_read(dev.loop, base + off, (*lmr_cache)->lkey, remote, rkey,
			len)) {
		int err = errno ? errno : EIO;

		snprintf(why, sizeof(why), "RDMA READ of %zu bytes at %zu: %s",
			 len, off, rcloop_errmsg());
		rcloop_destroy(dev.loop);
		dev.loop = rcloop_create(dev.ctx, dev.pd, kt_env.gid_index);
		return err;
	}
	return 0;
}

/* RDMA READ of [remote, +len) of rkey into buf (registered here) */
static int rdma_read(uint64_t remote, uint32_t rkey, void *buf, size_t len,
		     struct ibv_mr **lmr_cache)
{
	return rdma_read_at(remote, rkey, buf, len, 0, len, lmr_cache);
}

/*
 * Opens path with oflags, takes the exclusive layout lease when lease,
 * and maps [off, off + len) MAP_SHARED with prot: the mapping and *fd, or
 * MAP_FAILED with errno (*fd is then whatever must still be closed).
 */
static void *open_lease_map(const char *path, int oflags, bool lease,
			    int prot, size_t len, off_t off, int *fd)
{
	*fd = open(path, oflags | O_CLOEXEC);
	if (*fd < 0 || (lease && fcntl(*fd, F_SETLEASE, LAYOUT_EXCL)))
		return MAP_FAILED;
	return mmap(NULL, len, prot, MAP_SHARED, *fd, off);
}

/* Unmaps map (MAP_FAILED: nothing), drops fd's lease and closes it (< 0: none) */
static void unmap_unlease(void *map, size_t len, int fd)
{
	if (map != MAP_FAILED)
		munmap(map, len);
	if (fd >= 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		close(fd);
	}
}

/* Runs the checker on fs and records it as fsck_<group>_<fs> */
static void fsck_check(const struct kt_fs *fs, const char *group,
		       bool remount)
{
	char name[96], out[1024];
	int ret;

	snprintf(name, sizeof(name), "fsck_%s_%s", group, fs->name);
	ret = kt_fsck(fs, remount, out, sizeof(out));
	dtest_check(name, ret == 0, "after the %s tests: %s", group, out);
}

/* ---- rule 1: other long-term pinners ---------------------------------- */

static int umem_reg(void *addr, size_t len, int *sock)
{
	struct xdp_umem_reg mr = {
		.addr = (uintptr_t)addr,
		.len = len,
		.chunk_size = 4096,
		.headroom = 0,
	};
	int s = socket(AF_XDP, SOCK_RAW, 0);

	*sock = s;
	if (s < 0)
		return -errno;
	return setsockopt(s, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)) ? errno : 0;
}

struct xdp_res {
	char step[32];		/* setup step that failed, "" if none */
	int step_err;
	int nolease;		/* XDP_UMEM_REG without a lease */
	int lease;		/* F_SETLEASE(F_LAYOUT | F_EXCLUSIVE) */
	int reg;		/* XDP_UMEM_REG with the lease held */
	int pins_err;
	char pins[512];
	int unlck;
	int trunc;		/* ftruncate(0) after F_UNLCK, socket open */
};

/* As uid 65534 in a new user + network namespace (CAP_NET_RAW there) */
static int xdp_child(void *arg, void *resv)
{
	struct rlimit rl = { 64 << 20, 64 << 20 };
	struct xdp_res *r = resv;
	const char *path = arg;
	int fd, s1 = -1, s2 = -1;
	void *map;

	r->nolease = r->lease = r->reg = r->unlck = r->trunc = -1;
#define STEP(s) snprintf(r->step, sizeof(r->step), "%s", s)
	STEP("setrlimit(MEMLOCK)");
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		goto err;
	STEP("setuid(65534)");
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		goto err;
	/* else /proc/self is root's after the uid change */
	STEP("prctl(DUMPABLE)");
	if (prctl(PR_SET_DUMPABLE, 1))
		goto err;
	STEP("unshare(USER|NET)");
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET))
		goto err;
	STEP("open");
	fd = open(path, O_RDWR);
	if (fd < 0)
		goto err;
	STEP("mmap");
	map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	if (map == MAP_FAILED)
		goto err;
	r->nolease = umem_reg(map, KT_PIN_LEN, &s1);
	if (r->nolease < 0) {
		errno = -r->nolease;
		STEP("socket(AF_XDP)");
		goto err;
	}
	close(s1);
	r->lease = fcntl(fd, F_SETLEASE, LAYOUT_EXCL) ? errno : 0;
	r->reg = umem_reg(map, KT_PIN_LEN, &s2);
	r->pins_err = kt_read_file_pins(getpid(), r->pins, sizeof(r->pins));
	r->unlck = fcntl(fd, F_SETLEASE, F_UNLCK) ? errno : 0;
	/* the socket (and any pin it took) is still there */
	r->trunc = ftruncate(fd, 0) ? errno : 0;
	if (s2 >= 0)
		close(s2);
	munmap(map, KT_PIN_LEN);
	close(fd);
	r->step[0] = '\0';
	return 0;
err:
	r->step_err = errno;
	return 0;
#undef STEP
}

static void t_i1_afxdp(const struct kt_fs *fs)
{
	static const char *const names[] = {
		"i1_afxdp_unpriv_nolease_eopnotsupp", "i1_afxdp_unpriv_refused",
		"i1_afxdp_no_file_pin", "i1_afxdp_truncate_after_unlock",
	};
	const char *path = kt_path(fs, "i1xdp");
	struct xdp_res r;
	size_t i;
	int ret, fd;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (!ret && (chown(path, NOBODY, NOBODY) || chmod(path, 0666)))
		ret = errno;
	if (ret) {
		for (i = 0; i < 4; i++)
			dtest_fail(kt_name(names[i], fs), "test file %s: %s",
				   path, strerror(ret));
		return;
	}
	/* Debian's switch for unprivileged user namespaces, if built in */
	fd = open("/proc/sys/kernel/unprivileged_userns_clone", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			printf("note: unprivileged_userns_clone: %s\n",
			       strerror(errno));
		close(fd);
	}
	ret = child_data(xdp_child, (void *)path, &r, sizeof(r), 60);
	if (ret || r.step[0]) {
		for (i = 0; i < 4; i++)
			dtest_fail(kt_name(names[i], fs),
				   "not reached: child %s, step %s: %s",
				   child_res(ret), r.step[0] ? r.step : "?",
				   strerror(r.step_err));
		unlink(path);
		return;
	}
	dtest_check(kt_name(names[0], fs), r.nolease == EOPNOTSUPP,
		    "uid %d in its own user+net namespace, XDP_UMEM_REG of a MAP_SHARED FS-DAX mapping, no lease: %s (want EOPNOTSUPP, upstream's refusal)",
		    NOBODY, en(r.nolease));
	if (r.lease)
		dtest_fail(kt_name(names[1], fs),
			   "not reached: F_SETLEASE(F_LAYOUT|F_EXCLUSIVE) as owner uid %d: %s",
			   NOBODY, en(r.lease));
	else
		dtest_check(kt_name(names[1], fs), r.reg == EOPNOTSUPP,
			    "same, with the exclusive layout lease held by the caller: %s (want EOPNOTSUPP: only uverbs REG_MR may pin FS-DAX long term)",
			    en(r.reg));
	dtest_check(kt_name(names[2], fs), r.pins_err == 0 && !r.pins[0],
		    "/proc/self/file_pins after the AF_XDP attempt: %s\"%s\" (want empty)",
		    r.pins_err ? strerror(r.pins_err) : "",
		    kt_oneline(r.pins));
	dtest_check(kt_name(names[3], fs), r.unlck == 0 && r.trunc == 0,
		    "F_UNLCK %s, then ftruncate(0) with the XDP socket still open: %s (want success: nothing pinned)",
		    en(r.unlck), en(r.trunc));
	unlink(path);
}

static int uring_register(int ring, void *addr, size_t len)
{
	struct iovec iov = { addr, len };

	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS,
		    &iov, 1) == 0)
		return 0;
	return errno;
}

static void t_i1_uring(const struct kt_fs *fs)
{
	static const char *const names[] = {
		"i1_io_uring_nolease_eopnotsupp", "i1_io_uring_refused",
		"i1_io_uring_no_file_pin", "i1_io_uring_truncate_after_unlock",
	};
	const char *path = kt_path(fs, "i1uring");
	struct io_uring_params params;
	int fd = -1, ring = -1, ret, nolease, reg;
	void *map = MAP_FAILED;
	char pins[1024];
	size_t i;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED :
		       mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, 0);
	memset(&params, 0, sizeof(params));
	ring = map == MAP_FAILED ? -1 :
				   syscall(__NR_io_uring_setup, 4, &params);
	if (ring < 0) {
		ret = ret ? ret : errno;
		for (i = 0; i < 4; i++)
			dtest_fail(kt_name(names[i], fs),
				   "not reached: file, mmap or io_uring_setup: %s",
				   strerror(ret));
		goto out;
	}
	nolease = uring_register(ring, map, KT_PIN_LEN);
	if (!nolease)
		syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS,
			NULL, 0);
	dtest_check(kt_name(names[0], fs), nolease == EOPNOTSUPP,
		    "IORING_REGISTER_BUFFERS of a MAP_SHARED FS-DAX mapping, no lease: %s (want EOPNOTSUPP)",
		    en(nolease));
	if (fcntl(fd, F_SETLEASE, LAYOUT_EXCL)) {
		dtest_fail(kt_name(names[1], fs), "not reached: lease: %s",
			   strerror(errno));
	} else {
		reg = uring_register(ring, map, KT_PIN_LEN);
		dtest_check(kt_name(names[1], fs), reg == EOPNOTSUPP,
			    "same with the exclusive layout lease held: %s (want EOPNOTSUPP)",
			    en(reg));
	}
	own_pins(pins, sizeof(pins));
	dtest_check(kt_name(names[2], fs), pins[0] == '\0',
		    "/proc/self/file_pins after the io_uring attempts: \"%s\" (want empty)",
		    kt_oneline(pins));
	ret = fcntl(fd, F_SETLEASE, F_UNLCK) ? errno : 0;
	/* the ring (and anything registered) is still open */
	reg = kt_child_op(path, KT_OP_TRUNCATE, 0);
	dtest_check(kt_name(names[3], fs), ret == 0 && reg == 0,
		    "F_UNLCK %s, then truncate to 0 by another process with the ring open: %s (want success)",
		    en(ret), en(reg));
out:
	if (ring >= 0)
		close(ring);
	if (map != MAP_FAILED)
		munmap(map, KT_PIN_LEN);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* ---- rule 2: REG_MR racing mmap(MAP_FIXED) ---------------------------- */

#define RACE_LEN (PMD_SIZE + 256 * 1024)	/* two GUP batches */
#define RACE_MAX_ITER 1500
#define RACE_CHUNK (256 * 1024)		/* divides RACE_LEN */

struct remapper {
	uint8_t *addr;
	int prot;
	int fd[2];
	atomic_int stop;
	atomic_int pause;	/* set: stop remapping until cleared */
	atomic_int idle;	/* the remapper is paused or has ended */
	unsigned long count;
	int err;
};

static void *remap_fn(void *arg)
{
	struct remapper *m = arg;
	int k = 0;

	while (!atomic_load(&m->stop)) {
		if (atomic_load(&m->pause)) {
			atomic_store(&m->idle, 1);
			while (atomic_load(&m->pause) && !atomic_load(&m->stop))
				usleep(100);
			atomic_store(&m->idle, 0);
			continue;
		}
		k ^= 1;
		if (mmap(m->addr, RACE_LEN, m->prot, MAP_SHARED | MAP_FIXED,
			 m->fd[k], 0) == MAP_FAILED) {
			m->err = errno;
			break;
		}
		m->count++;
	}
	atomic_store(&m->idle, 1);
	return NULL;
}

/*
 * The race is between the registration's checks and its pins; reading
 * what the MR pinned back needs the device, whose work (a workqueue on
 * 6.12's rxe) a remapper spinning on the other CPU starves: pause it.
 */
static void remapper_pause(struct remapper *m, bool pause)
{
	atomic_store(&m->pause, pause);
	while (pause && !atomic_load(&m->idle))
		usleep(50);
}

/*
 * How the racing registrations are made: the legacy REG_MR (ibv_reg_mr),
 * the extended REG_MR naming the first file, or that REG_MR with
 * IBV_ACCESS_REMOTE_READ only through a descriptor opened read-only,
 * whose pages are pinned as they are: there the second file is a
 * page-cache file (tmpfs), which such a pin must never take.
 */
enum race_mode { RACE_LEGACY, RACE_DAXFD, RACE_READONLY };

static void t_i2_race(const struct kt_fs *fs, enum race_mode mode)
{
	static const char *const names[] = {
		[RACE_LEGACY] = "i2_remap_race_legacy",
		[RACE_DAXFD] = "i2_remap_race_daxfd",
		[RACE_READONLY] = "i2_remap_race_readonly",
	};
	const char *name = kt_name(names[mode], fs);
	bool daxfd = mode != RACE_LEGACY, ro = mode == RACE_READONLY;
	char p[2][4096] = { "", "" }, pins[8192], hist[256] = "";
	char first[10240] = "";
	struct remapper m = { .fd = { -1, -1 },
			      .prot = ro ? PROT_READ : PROT_READ | PROT_WRITE };
	uint8_t *pat[2] = { NULL, NULL }, *buf = NULL, *res = MAP_FAILED;
	unsigned int redone = rcloop_redone_total();
	struct ibv_mr *lmr = NULL;
	unsigned long iter = 0, ok = 0, mixed = 0, viol = 0, fails = 0;
	int errs[8] = { 0 }, nerr = 0, ret, k;
	bool thread = false;
	pthread_t tid;
	double end;
	size_t pg;

	for (k = 0; k < 2; k++) {
		snprintf(p[k], sizeof(p[k]), "%s", ro && k ?
			 "/dev/shm/dl-attacks-i2ro.dat" :
			 kt_path(fs, k ? "i2b" : "i2a"));
		ret = kt_make_file(p[k], RACE_LEN, k ? 0x42 : 0x21);
		m.fd[k] = ret ? -1 : open(p[k], (ro ? O_RDONLY : O_RDWR) |
						O_CLOEXEC);
		if (m.fd[k] < 0 || ((!ro || !k) &&
				    fcntl(m.fd[k], F_SETLEASE, LAYOUT_EXCL))) {
			dtest_fail(name, "not reached: file %s and lease: %s",
				   p[k], strerror(ret ? ret : errno));
			goto out;
		}
		pat[k] = malloc(RACE_LEN);
		if (!pat[k]) {
			dtest_fail(name, "out of memory");
			goto out;
		}
		kt_pattern(pat[k], RACE_LEN, 0, k ? 0x42 : 0x21);
	}
	if (posix_memalign((void **)&buf, PAGE, RACE_LEN)) {
		dtest_fail(name, "out of memory");
		goto out;
	}
	/* a 2 MiB aligned range, so that the mappings fault in PMDs */
	res = mmap(NULL, RACE_LEN + PMD_SIZE, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		dtest_fail(name, "reserving the range: %s", strerror(errno));
		goto out;
	}
	m.addr = (uint8_t *)(((uintptr_t)res + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
	if (mmap(m.addr, RACE_LEN, m.prot, MAP_SHARED | MAP_FIXED, m.fd[0],
		 0) == MAP_FAILED) {
		dtest_fail(name, "mmap: %s", strerror(errno));
		goto out;
	}
	if (pthread_create(&tid, NULL, remap_fn, &m)) {
		dtest_fail(name, "pthread_create failed");
		goto out;
	}
	thread = true;
	end = now_s() + race_seconds;
	while (iter < RACE_MAX_ITER && now_s() < end && viol < 3) {
		struct ibv_mr *mr = NULL;
		struct ibv_mr raw;
		uint32_t rkey;
		int n1 = 0, n2 = 0, nx = 0, in1, in2;

		iter++;
		if (daxfd) {
			ret = kt_reg_mr_ioctl(&dev, m.addr, RACE_LEN,
					      ro ? IBV_ACCESS_REMOTE_READ :
						   KT_ACCESS, m.fd[0], 0, &raw);
			rkey = raw.rkey;
		} else {
			mr = ibv_reg_mr(dev.pd, m.addr, RACE_LEN, KT_ACCESS);
			ret = mr ? 0 : (errno ? errno : EIO);
			rkey = mr ? mr->rkey : 0;
		}
		if (ret) {
			fails++;
			for (k = 0; k < nerr && errs[k] != ret; k++)
				;
			if (k == nerr && nerr < 8)
				errs[nerr++] = ret;
			/* the vma check of a read-only pin says EFAULT */
			if (daxfd && ret != EINVAL && ret != EPERM &&
			    (!ro || ret != EFAULT) && !viol++)
				snprintf(first, sizeof(first),
					 "iteration %lu: REG_MR failed %s (want EINVAL or EPERM%s)",
					 iter, en(ret), ro ? " or EFAULT" : "");
			continue;
		}
		remapper_pause(&m, true);
		own_pins(pins, sizeof(pins));
		in1 = atk_pins_naming(pins, p[0]);
		in2 = atk_pins_naming(pins, p[1]);
		/* 256 KiB a READ: every page is read back all the same */
		for (pg = 0, ret = 0; !ret && pg < RACE_LEN; pg += RACE_CHUNK)
			ret = rdma_read_at((uintptr_t)m.addr + pg, rkey, buf,
					   RACE_LEN, pg, RACE_CHUNK, &lmr);
		if (daxfd)
			kt_destroy_mr(&dev, raw.handle);
		else
			ibv_dereg_mr(mr);
		remapper_pause(&m, false);
		if (ret) {
			viol++;
			snprintf(first, sizeof(first), "iteration %lu: %s",
				 iter, why);
			break;
		}
		ok++;
		for (pg = 0; pg < RACE_LEN; pg += PAGE) {
			if (!memcmp(buf + pg, pat[0] + pg, PAGE))
				n1++;
			else if (!memcmp(buf + pg, pat[1] + pg, PAGE))
				n2++;
			else
				nx++;
		}
		if (n1 && n2)
			mixed++;
		if (nx || (n1 && !in1) || (n2 && !in2) || (daxfd && n2) ||
		    in1 > 1 || in2 > 1) {
			if (!viol++)
				snprintf(first, sizeof(first),
					 "iteration %lu: the MR holds %d page(s) of %s, %d of %s, %d of neither; file_pins names them %d and %d time(s): \"%s\"%s",
					 iter, n1, p[0], n2, p[1], nx, in1,
					 in2, kt_oneline(pins),
					 !daxfd || !n2 ? "" : ro ?
					 " (a read-only pin took page-cache pages)" :
					 " (DAX_FD names the first file only)");
		}
	}
	atomic_store(&m.stop, 1);
	pthread_join(tid, NULL);
	thread = false;
	for (k = 0; k < nerr; k++)
		snprintf(hist + strlen(hist), sizeof(hist) - strlen(hist),
			 "%s%s", k ? "," : "", strerrorname_np(errs[k]) ?
			 strerrorname_np(errs[k]) : "?");
	redone = rcloop_redone_total() - redone;
	if (viol)
		dtest_fail(name, "%lu violation(s) in %lu registrations (%lu pinned, %lu failed: %s; %lu remaps; %u READ(s) redone after a stall); first: %s",
			   viol, iter, ok, fails, hist, m.count, redone, first);
	else
		dtest_check(name, ok > 0 && m.count > 0 && !m.err,
			    "%lu registrations racing %lu mmap(MAP_FIXED) swaps in %d s: %lu pinned (%lu of both files, each listed in file_pins), %lu failed (%s); every pinned page belongs to a listed file; %u READ(s) redone on a new QP pair after an rxe stall%s",
			    iter, m.count, race_seconds, ok, mixed, fails,
			    hist[0] ? hist : "-", redone,
			    m.err ? "; but the remapper failed" : "");
out:
	if (thread) {
		atomic_store(&m.stop, 1);
		pthread_join(tid, NULL);
	}
	if (lmr)
		ibv_dereg_mr(lmr);
	if (res != MAP_FAILED)
		munmap(res, RACE_LEN + PMD_SIZE);
	for (k = 0; k < 2; k++) {
		if (m.fd[k] >= 0) {
			fcntl(m.fd[k], F_SETLEASE, F_UNLCK);
			close(m.fd[k]);
		}
		free(pat[k]);
	}
	free(buf);
	for (k = 0; k < 2; k++)
		if (p[k][0])
			unlink(p[k]);
}

/* ---- rule 3: the lease belongs to an open file, not to a pid ---------- */

static int send_fd(int sock, int fd)
{
	char data = 'f', ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &data, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : errno;
}

static int recv_fd(int sock)
{
	char data, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &data, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * fork() with the child's pid chosen: through ns_last_pid where the
 * kernel has it (CONFIG_CHECKPOINT_RESTORE), else clone3() with set_tid.
 * 0 in the child; the child must check getpid().
 */
static pid_t fork_with_pid(pid_t pid, const char **how)
{
	struct clone_args ca;
	char buf[32];
	int fd, len;

	fflush(NULL);
	fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = snprintf(buf, sizeof(buf), "%d", (int)pid - 1);
		if (write(fd, buf, len) == len) {
			close(fd);
			*how = "ns_last_pid";
			return fork();
		}
		close(fd);
	}
	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	ca.set_tid = (uintptr_t)&pid;
	ca.set_tid_size = 1;
	*how = "clone3(set_tid)";
	return syscall(__NR_clone3, &ca, sizeof(ca));
}

struct pidb_res {
	pid_t pid;
	int dev, open, reg, trunc;
};

static void t_i3_recycled(const struct kt_fs *fs)
{
	const char *n_pin = kt_name("i3_recycled_pid_cannot_pin", fs);
	const char *n_hold = kt_name("i3_recycled_pid_not_holder", fs);
	struct pidb_res r = { .dev = -1, .open = -1, .reg = -1, .trunc = -1 };
	int sv[2], pfd[2], lfd = -1, ret, status, leases;
	const char *how = "?";
	char path[4096];
	pid_t a, b;

	snprintf(path, sizeof(path), "%s", kt_path(fs, "i3pid"));
	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) {
		dtest_fail(n_pin, "setup: %s", strerror(ret ? ret : errno));
		dtest_fail(n_hold, "setup: %s", strerror(ret ? ret : errno));
		return;
	}
	/* A: opens, leases, hands the open file over, exits */
	fflush(NULL);
	a = fork();
	if (a == 0) {
		int fd = open(path, O_RDWR);

		if (fd < 0 || fcntl(fd, F_SETLEASE, LAYOUT_EXCL))
			_exit(1);
		_exit(send_fd(sv[1], fd) ? 2 : 0);
	}
	close(sv[1]);
	waitpid(a, &status, 0);
	lfd = recv_fd(sv[0]);
	close(sv[0]);
	leases = kt_count_leases(path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || lfd < 0 ||
	    leases != 1) {
		dtest_fail(n_pin, "setup: holder %d exit %d, fd %d, %d lease(s) left",
			   (int)a, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			   lfd, leases);
		dtest_fail(n_hold, "setup failed");
		goto out;
	}
	/* B: a new process with A's pid, its own open of the file */
	if (pipe(pfd)) {
		dtest_fail(n_pin, "pipe: %s", strerror(errno));
		dtest_fail(n_hold, "pipe: %s", strerror(errno));
		goto out;
	}
	b = fork_with_pid(a, &how);
	if (b == 0) {
		struct ibv_mr *mr;
		struct kt_dev d;
		void *map;
		int fd;

		close(pfd[0]);
		alarm(60);
		r.pid = getpid();
		if (r.pid == a) {
			r.dev = kt_dev_open(&d, false);
			fd = open(path, O_RDWR);
			r.open = fd < 0 ? errno : 0;
			if (!r.dev && fd >= 0) {
				map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE,
					   MAP_SHARED, fd, 0);
				mr = map == MAP_FAILED ? NULL :
					ibv_reg_mr(d.pd, map, KT_PIN_LEN, KT_ACCESS);
				r.reg = mr ? 0 : errno;
				if (mr)
					ibv_dereg_mr(mr);
			}
			if (fd >= 0)
				r.trunc = ftruncate(fd, KT_MIB) ? errno : 0;
		}
		if (write(pfd[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (b < 0) {
		ret = errno;
		dtest_fail(n_pin, "no process with pid %d: %s: %s", (int)a,
			   how, strerror(ret));
		dtest_fail(n_hold, "no process with pid %d: %s: %s", (int)a,
			   how, strerror(ret));
		close(pfd[0]);
		goto out;
	}
	if (read(pfd[0], &r, sizeof(r)) != sizeof(r))
		r.pid = -1;
	close(pfd[0]);
	waitpid(b, NULL, 0);
	if (r.pid != a) {
		dtest_fail(n_pin, "the new process got pid %d, not %d (%s)",
			   (int)r.pid, (int)a, how);
		dtest_fail(n_hold, "pid not recycled");
		goto out;
	}
	if (r.dev || r.open) {
		dtest_fail(n_pin, "pid %d (%s): device %s, open %s", (int)a, how,
			   strerror(r.dev), en(r.open));
	} else {
		dtest_check(n_pin, r.reg == EPERM,
			    "holder pid %d exited, its leased open file kept elsewhere; a new process with pid %d (%s) opens the file itself and calls ibv_reg_mr: %s (want EPERM)",
			    (int)a, (int)a, how, en(r.reg));
	}
	dtest_check(n_hold, r.trunc == ETXTBSY,
		    "the same process's ftruncate: %s (want ETXTBSY; EDEADLOCK would treat it as the holder)",
		    en(r.trunc));
out:
	if (lfd >= 0) {
		fcntl(lfd, F_SETLEASE, F_UNLCK);
		close(lfd);
	}
	unlink(path);
}

/* The lease on one open file, the mapping through another of the same */
static void t_i3_other_open(const struct kt_fs *fs)
{
	const char *n_leg = kt_name("i3_lease_other_open_legacy_eperm", fs);
	const char *n_dax = kt_name("i3_lease_other_open_daxfd_eperm", fs);
	const char *path = kt_path(fs, "i3open");
	int fd1 = -1, fd2 = -1, ret;
	void *map = MAP_FAILED;
	struct ibv_mr raw;
	struct ibv_mr *mr;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (!ret) {
		fd1 = open(path, O_RDWR | O_CLOEXEC);
		fd2 = open(path, O_RDWR | O_CLOEXEC);
		if (fd1 < 0 || fd2 < 0 || fcntl(fd2, F_SETLEASE, LAYOUT_EXCL))
			ret = errno;
		else
			map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd1, 0);
		if (!ret && map == MAP_FAILED)
			ret = errno;
	}
	if (ret) {
		dtest_fail(n_leg, "setup: %s", strerror(ret));
		dtest_fail(n_dax, "setup: %s", strerror(ret));
		goto out;
	}
	mr = ibv_reg_mr(dev.pd, map, KT_PIN_LEN, KT_ACCESS);
	ret = mr ? 0 : errno;
	dtest_check(n_leg, ret == EPERM,
		    "lease set through a second open of the file, ibv_reg_mr of a mapping of the first (same process): %s (want EPERM)",
		    en(ret));
	if (mr)
		ibv_dereg_mr(mr);
	ret = kt_reg_mr_ioctl(&dev, map, KT_PIN_LEN, KT_ACCESS, fd1, 0, &raw);
	dtest_check(n_dax, ret == EPERM,
		    "same mapping, extended REG_MR with DAX_FD = the mapped, unleased open file: %s (want EPERM)",
		    en(ret));
	if (!ret)
		kt_destroy_mr(&dev, raw.handle);
out:
	if (map != MAP_FAILED)
		munmap(map, KT_PIN_LEN);
	if (fd2 >= 0) {
		fcntl(fd2, F_SETLEASE, F_UNLCK);
		close(fd2);
	}
	if (fd1 >= 0)
		close(fd1);
	unlink(path);
}

/*
 * One open file shared by two processes (inherited across fork, as
 * SCM_RIGHTS would too): A sets F_LAYOUT through it, B upgrades the same
 * lease to F_LAYOUT | F_EXCLUSIVE.  F_SETLEASE on an open file that has a
 * lease replaces it: B set the exclusive lease, so B holds it (pins under
 * it, EDEADLOCK for its own layout change) and A, who never asked for an
 * exclusive lease, does not (EPERM, ETXTBSY).
 */
struct i3_up_res {
	int upgrade, getlease, dev, pin, trunc;
};

static void t_i3_shared_upgrade(const struct kt_fs *fs)
{
	const char *n_b = kt_name("i3_shared_file_upgrade_setter_holds", fs);
	const char *n_a = kt_name("i3_shared_file_upgrade_first_setter_not_holder",
				  fs);
	const char *path = kt_path(fs, "i3up");
	struct i3_up_res r = { -1, -1, -1, -1, -1 };
	int fd = -1, res[2] = { -1, -1 }, go[2] = { -1, -1 }, ret, a_pin,
	    a_trunc;
	void *map = MAP_FAILED;
	struct ibv_mr raw;
	pid_t b = -1;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	fd = ret ? -1 : open(path, O_RDWR);	/* inherited by B */
	if (fd < 0 || fcntl(fd, F_SETLEASE, F_LAYOUT) || pipe(res) ||
	    pipe(go)) {
		ret = ret ? ret : errno;
		dtest_fail(n_b, "setup: %s", strerror(ret));
		dtest_fail(n_a, "setup: %s", strerror(ret));
		goto out;
	}
	map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		dtest_fail(n_b, "mmap: %s", strerror(errno));
		dtest_fail(n_a, "not reached");
		goto out;
	}
	fflush(NULL);
	b = fork();
	if (b == 0) {
		struct kt_dev d;
		char c;

		close(res[0]);
		close(go[1]);
		alarm(60);
		r.upgrade = fcntl(fd, F_SETLEASE, LAYOUT_EXCL) ? errno : 0;
		r.getlease = fcntl(fd, F_GETLEASE);
		r.dev = kt_dev_open(&d, false);
		if (!r.dev) {
			r.pin = kt_reg_mr_ioctl(&d, map, KT_PIN_LEN, KT_ACCESS,
						fd, 0, &raw);
			if (!r.pin)
				kt_destroy_mr(&d, raw.handle);
		}
		r.trunc = ftruncate(fd, KT_MIB) ? errno : 0;
		if (write(res[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		/* stay alive (the holder) until A is done */
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(res[1]);
	res[1] = -1;
	close(go[0]);
	go[0] = -1;
	if (b < 0 || read(res[0], &r, sizeof(r)) != sizeof(r)) {
		dtest_fail(n_b, "child B: %s", b < 0 ? strerror(errno) :
			   "no result");
		dtest_fail(n_a, "not reached");
		goto out;
	}
	a_pin = kt_reg_mr_ioctl(&dev, map, KT_PIN_LEN, KT_ACCESS, fd, 0, &raw);
	if (!a_pin)
		kt_destroy_mr(&dev, raw.handle);
	a_trunc = ftruncate(fd, KT_MIB) ? errno : 0;
	if (r.dev)
		dtest_fail(n_b, "B: device: %s", strerror(r.dev));
	else
		dtest_check(n_b, r.upgrade == 0 &&
			    r.getlease == LAYOUT_EXCL && r.pin == 0 &&
			    r.trunc == EDEADLOCK,
			    "A set F_LAYOUT on an open file, B (forked, same open file) upgraded it to F_LAYOUT|F_EXCLUSIVE: %s, F_GETLEASE %#x; B's REG_MR with DAX_FD: %s (want success), B's ftruncate: %s (want EDEADLOCK)",
			    en(r.upgrade), r.getlease, en(r.pin), en(r.trunc));
	dtest_check(n_a, a_pin == EPERM && a_trunc == ETXTBSY,
		    "A, the first setter, after B's upgrade: REG_MR with DAX_FD: %s (want EPERM: B holds the exclusive lease), ftruncate: %s (want ETXTBSY)",
		    en(a_pin), en(a_trunc));
out:
	if (go[1] >= 0)
		close(go[1]);
	if (b > 0)
		waitpid(b, NULL, 0);
	if (res[0] >= 0)
		close(res[0]);
	if (res[1] >= 0)
		close(res[1]);
	if (go[0] >= 0)
		close(go[0]);
	if (map != MAP_FAILED)
		munmap(map, KT_PIN_LEN);
	if (fd >= 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		close(fd);
	}
	unlink(path);
}

/* ---- rule 4: only ext4 and xfs DAX files -------------------------------- */

static void lease_checks(const char *path, const char *label)
{
	char n1[96], n2[96];
	int fd, ret, got;

	snprintf(n1, sizeof(n1), "i4_%s_exclusive_lease_eopnotsupp", label);
	snprintf(n2, sizeof(n2), "i4_%s_plain_layout_granted", label);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dtest_fail(n1, "open %s: %s", path, strerror(errno));
		dtest_fail(n2, "open %s: %s", path, strerror(errno));
		return;
	}
	ret = fcntl(fd, F_SETLEASE, LAYOUT_EXCL) ? errno : 0;
	dtest_check(n1, ret == EOPNOTSUPP,
		    "F_SETLEASE(F_RDLCK|F_LAYOUT|F_EXCLUSIVE) on %s (O_RDONLY, owner): %s (want EOPNOTSUPP)",
		    path, en(ret));
	fcntl(fd, F_SETLEASE, F_UNLCK);
	ret = fcntl(fd, F_SETLEASE, F_LAYOUT) ? errno : 0;
	got = fcntl(fd, F_GETLEASE);
	dtest_check(n2, ret == 0 && got == F_LAYOUT,
		    "plain F_SETLEASE(F_LAYOUT) on the same O_RDONLY fd: %s, F_GETLEASE %d (want granted, %d, as a read lease would be)",
		    en(ret), got, F_LAYOUT);
	fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
}

static void t_i4_tmpfs(void)
{
	const char *path = "/dev/shm/dl-attacks-i4.dat";
	int ret = kt_make_file(path, KT_MIB, 0x11);

	if (ret) {
		dtest_fail("i4_tmpfs_exclusive_lease_eopnotsupp", "%s: %s", path,
			   strerror(ret));
		return;
	}
	lease_checks(path, "tmpfs");
	unlink(path);
}

/* ext2 -o dax: a DAX file system that neither breaks layouts nor pins */
static void t_i4_ext2(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "i4");
	const char *n0 = "i4_ext2dax_reg_mr_eopnotsupp";
	const char *n1 = "i4_ext2dax_reg_mr_leased_eopnotsupp";
	const char *n2 = "i4_ext2dax_reg_mr_daxfd_refused";
	int fd = -1, ret, lease;
	void *map = MAP_FAILED;
	struct ibv_mr raw;
	struct ibv_mr *mr;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (!ret && is_dax(path) != 1)
		ret = EMEDIUMTYPE;
	if (ret) {
		dtest_fail(n0, "not reached: %s on ext2 -o dax: %s", path,
			   ret == EMEDIUMTYPE ? "statx says not DAX" :
			   strerror(ret));
		dtest_fail(n1, "not reached");
		dtest_fail(n2, "not reached");
		return;
	}
	lease_checks(path, "ext2dax");
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fd, 0);
	if (map == MAP_FAILED) {
		dtest_fail(n0, "open/mmap: %s", strerror(errno));
		goto out;
	}
	mr = ibv_reg_mr(dev.pd, map, KT_PIN_LEN, KT_ACCESS);
	ret = mr ? 0 : errno;
	if (mr)
		ibv_dereg_mr(mr);
	dtest_check(n0, ret == EOPNOTSUPP,
		    "ibv_reg_mr of an ext2 -o dax MAP_SHARED mapping, no lease: %s (want EOPNOTSUPP)",
		    en(ret));
	/* with whatever lease the kernel grants */
	lease = fcntl(fd, F_SETLEASE, LAYOUT_EXCL) ? errno : 0;
	mr = ibv_reg_mr(dev.pd, map, KT_PIN_LEN, KT_ACCESS);
	ret = mr ? 0 : errno;
	if (mr)
		ibv_dereg_mr(mr);
	dtest_check(n1, ret == EOPNOTSUPP,
		    "F_SETLEASE(F_LAYOUT|F_EXCLUSIVE): %s; then ibv_reg_mr: %s (want EOPNOTSUPP: ext2 does not honour pins)",
		    en(lease), en(ret));
	ret = kt_reg_mr_ioctl(&dev, map, KT_PIN_LEN, KT_ACCESS, fd, 0, &raw);
	if (!ret)
		kt_destroy_mr(&dev, raw.handle);
	dtest_check(n2, ret != 0,
		    "extended REG_MR with DAX_FD of the ext2 file: %s (want a refusal)",
		    en(ret));
	fcntl(fd, F_SETLEASE, F_UNLCK);
out:
	if (map != MAP_FAILED)
		munmap(map, KT_PIN_LEN);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* ---- rule 5: extent swaps, moves, reflink, dedupe, copy-on-write ------ */

enum i5_op {
	OP_MOVE_EXT,		/* a: orig, b: donor */
	OP_SWAP_BOOT,		/* a: the file */
	OP_SWAPEXT,		/* a: target, b: tmp */
	OP_EXCHANGE_RANGE,	/* a: file2 (the ioctl's), b: file1 */
	OP_FICLONE,		/* a: source, b: destination */
	OP_FICLONERANGE,
	OP_DEDUPE,
};

static const char *const i5_names[] = {
	[OP_MOVE_EXT] = "move_ext", [OP_SWAP_BOOT] = "swap_boot",
	[OP_SWAPEXT] = "swapext", [OP_EXCHANGE_RANGE] = "exchange_range",
	[OP_FICLONE] = "ficlone",
	[OP_FICLONERANGE] = "ficlonerange", [OP_DEDUPE] = "dedupe",
};

static int i5_do(enum i5_op op, int fa, int fb)
{
	switch (op) {
	case OP_MOVE_EXT: {
		struct ext4_move_extent me = {
			.donor_fd = fb,
			.len = KT_PIN_LEN / PAGE,
		};

		return ioctl(fa, EXT4_IOC_MOVE_EXT, &me) ? errno : 0;
	}
	case OP_SWAP_BOOT:
		return ioctl(fa, EXT4_IOC_SWAP_BOOT) ? errno : 0;
	case OP_SWAPEXT: {
		struct xfs_swapext sx;
		struct stat st;

		if (fstat(fa, &st))
			return errno;
		memset(&sx, 0, sizeof(sx));
		sx.sx_fdtarget = fa;
		sx.sx_fdtmp = fb;
		sx.sx_length = st.st_size;
		sx.sx_stat.bs_ino = st.st_ino;
		sx.sx_stat.bs_mtime.tv_sec = st.st_mtim.tv_sec;
		sx.sx_stat.bs_mtime.tv_nsec = st.st_mtim.tv_nsec;
		sx.sx_stat.bs_ctime.tv_sec = st.st_ctim.tv_sec;
		sx.sx_stat.bs_ctime.tv_nsec = st.st_ctim.tv_nsec;
		return ioctl(fb, XFS_IOC_SWAPEXT, &sx) ? errno : 0;
	}
	case OP_EXCHANGE_RANGE: {
		struct xfs_exchange_range x = {
			.file1_fd = fb, .length = KT_PIN_LEN,
		};

		return ioctl(fa, XFS_IOC_EXCHANGE_RANGE, &x) ? errno : 0;
	}
	case OP_FICLONE:
		return ioctl(fb, FICLONE, fa) ? errno : 0;
	case OP_FICLONERANGE: {
		struct file_clone_range r = {
			.src_fd = fa, .src_length = KT_PIN_LEN,
		};

		return ioctl(fb, FICLONERANGE, &r) ? errno : 0;
	}
	case OP_DEDUPE: {
		struct {
			struct file_dedupe_range r;
			struct file_dedupe_range_info info;
		} d;

		memset(&d, 0, sizeof(d));
		d.r.src_length = KT_PIN_LEN;
		d.r.dest_count = 1;
		d.info.dest_fd = fb;
		if (ioctl(fa, FIDEDUPERANGE, &d))
			return errno;
		if (d.info.status < 0)
			return -d.info.status;
		return d.info.status == FILE_DEDUPE_RANGE_DIFFERS ? EBADE : 0;
	}
	}
	return EINVAL;
}

struct i5_arg {
	enum i5_op op;
	const char *a, *b;
	int lease;		/* 1: lease a first, 2: lease b first */
};

static int i5_child(void *arg)
{
	struct i5_arg *x = arg;
	int fa, fb = -1;

	fa = open(x->a, O_RDWR);
	if (fa < 0)
		return ENOENT;
	if (x->b) {
		fb = open(x->b, O_RDWR);
		if (fb < 0)
			return ENOENT;
	}
	if (x->lease && fcntl(x->lease == 1 ? fa : fb, F_SETLEASE,
			      LAYOUT_EXCL))
		return ENOLINK;
	return i5_do(x->op, fa, fb);
}

/*
 * One attack on file pair (a, b): pin the head of a (pinned 1) or of b
 * (2) and release the lease, or neither (0: a control); then run op in
 * another process, which first takes the lease on a or b itself with
 * holder 1 or 2.  Checks the errno (want, or alt if not 0) and that the
 * pinned head still holds its data.
 */
static void i5_case(const char *name, enum i5_op op, const char *a,
		    const char *b, int pinned, int holder, int want, int alt,
		    const char *what)
{
	struct i5_arg x = { op, a, b, holder };
	uint8_t sa = 0x11, sb = op == OP_DEDUPE ? 0x11 : 0x66;
	struct kt_pin p = KT_PIN_INIT;
	char state[512] = "";
	int ret, v = 0;

	ret = atk_make_file(a, KT_FILE_SIZE, sa, 0);
	if (!ret && b)
		ret = atk_make_file(b, KT_FILE_SIZE, sb, 0);
	if (ret) {
		dtest_fail(name, "not reached: files: %s", strerror(ret));
		goto out;
	}
	if (pinned && pin_file(pinned == 1 ? a : b, 0, KT_PIN_LEN,
			       KT_PIN_DAXFD, true, &p)) {
		dtest_fail(name, "not reached: %s", why);
		goto out;
	}
	ret = kt_child(i5_child, &x, KT_OP_TIMEOUT);
	if (ret == ENOLINK || ret == ENOENT) {
		dtest_fail(name, "not reached: the other process could not %s",
			   ret == ENOLINK ? "take the lease" : "open the files");
		goto out;
	}
	if (want) {
		/* refused: both heads as they were */
		v = kt_verify_pattern(a, 0, KT_PIN_LEN, sa, state,
				      sizeof(state));
		if (!v && b)
			v = kt_verify_pattern(b, 0, KT_PIN_LEN, sb, state,
					      sizeof(state));
		if (!v)
			snprintf(state, sizeof(state), "data of both unchanged");
	}
	if (!want)
		dtest_check(name, ret == 0,
			    "%s: %s (the operation works here, so the refusals below are the pins')",
			    what, en(ret));
	else if (alt)
		dtest_check(name, (ret == want || ret == alt) && !v,
			    "%s: %s (want %s, or %s), %s", what, en(ret),
			    en(want), en(alt), state);
	else
		dtest_check(name, ret == want && !v, "%s: %s (want %s), %s",
			    what, en(ret), en(want), state);
out:
	kt_unpin(&p);
	unlink(a);
	if (b)
		unlink(b);
}

/* The pinned/holder attacks of one two-file operation */
static void i5_op_cases(const struct kt_fs *fs, enum i5_op op,
			const char *role_a, const char *role_b, bool control)
{
	char a[4096], b[4096], name[96], what[256];

	snprintf(a, sizeof(a), "%s", kt_path(fs, "i5a"));
	snprintf(b, sizeof(b), "%s", kt_path(fs, "i5b"));
	if (control) {
		snprintf(name, sizeof(name), "i5_%s_control_%s", i5_names[op],
			 fs->name);
		snprintf(what, sizeof(what), "%s of two unpinned files",
			 i5_names[op]);
		i5_case(name, op, a, b, 0, 0, 0, 0, what);
	}
	snprintf(name, sizeof(name), "i5_%s_pinned_%s_%s", i5_names[op],
		 role_a, fs->name);
	snprintf(what, sizeof(what), "%s by another process, the %s pinned (lease released)",
		 i5_names[op], role_a);
	i5_case(name, op, a, b, 1, 0, ETXTBSY, 0, what);
	snprintf(name, sizeof(name), "i5_%s_pinned_%s_%s", i5_names[op],
		 role_b, fs->name);
	snprintf(what, sizeof(what), "%s by another process, the %s pinned (lease released)",
		 i5_names[op], role_b);
	i5_case(name, op, a, b, 2, 0, ETXTBSY, 0, what);
	snprintf(name, sizeof(name), "i5_%s_leased_holder_%s", i5_names[op],
		 fs->name);
	snprintf(what, sizeof(what), "%s by the process holding the lease on the %s",
		 i5_names[op], role_a);
	i5_case(name, op, a, b, 0, 1, EDEADLOCK, 0, what);
}

/* xfs with reflink: remaps, and pins of shared extents */
static int cow_pwrite_fn(void *arg)
{
	char buf[4096];
	int fd = open(arg, O_RDWR);

	if (fd < 0)
		return ENOENT;
	memset(buf, 0x5a, sizeof(buf));
	return pwrite(fd, buf, sizeof(buf), 0) == sizeof(buf) ? 0 : errno;
}

static int cow_mapwrite_fn(void *arg, void *res)
{
	int fd = open(arg, O_RDWR);
	volatile uint8_t *map;

	(void)res;
	if (fd < 0)
		return ENOENT;
	map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	if (map == MAP_FAILED)
		return errno;
	signal(SIGBUS, SIG_DFL);
	map[64 * 1024] = 0x5a;
	return 0;
}

static void t_i5_reflink_shared(const struct kt_fs *fs)
{
	const char *n_leg = "i5_reflink_shared_pin_legacy_eopnotsupp_xfs";
	const char *n_dax = "i5_reflink_shared_pin_daxfd_eopnotsupp_xfs";
	const char *n_pw = "i5_reflink_cow_pwrite_pinned_etxtbsy_xfs";
	const char *n_mw = "i5_reflink_cow_mapwrite_pinned_sigbus_xfs";
	char src[4096], dst[4096], state[256];
	struct kt_pin pl = KT_PIN_INIT, pd = KT_PIN_INIT, *p = NULL;
	const char *step = "";
	int fs_, fd_, ret, rl, rd;

	snprintf(src, sizeof(src), "%s", kt_path(fs, "i5shsrc"));
	snprintf(dst, sizeof(dst), "%s", kt_path(fs, "i5shdst"));
	ret = atk_make_file(src, KT_FILE_SIZE, 0x11, 0);
	fs_ = ret ? -1 : open(src, O_RDWR | O_CLOEXEC);
	fd_ = fs_ < 0 ? -1 : open(dst, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
				  0644);
	ret = fd_ < 0 ? (ret ? ret : errno) :
			(ioctl(fd_, FICLONE, fs_) ? errno : 0);
	if (fs_ >= 0)
		close(fs_);
	if (fd_ >= 0)
		close(fd_);
	if (ret) {
		dtest_fail(n_leg, "not reached: FICLONE of %s to %s: %s", src,
			   dst, strerror(ret));
		dtest_fail(n_dax, "not reached");
		dtest_fail(n_pw, "not reached");
		dtest_fail(n_mw, "not reached");
		goto out;
	}
	/*
	 * Refused at the lease (a file system with reflink grants no
	 * exclusive layout lease) or at the pin: either way never pinned.
	 */
	rl = kt_pin(&dev, dst, 0, KT_PIN_LEN, LAYOUT_EXCL, KT_PIN_LEGACY, &pl,
		    &step);
	dtest_check(n_leg, rl == EOPNOTSUPP &&
			    (!strcmp(step, "lease") || !strcmp(step, "reg_mr")),
		    "lease + ibv_reg_mr of a file whose extents are shared with another (FICLONE): %s%s%s (want EOPNOTSUPP at the lease or reg_mr)",
		    rl ? step : "registered", rl ? ": " : "", rl ? en(rl) : "");
	rd = kt_pin(&dev, dst, 0, KT_PIN_LEN, LAYOUT_EXCL, KT_PIN_DAXFD, &pd,
		    &step);
	dtest_check(n_dax, rd == EOPNOTSUPP &&
			    (!strcmp(step, "lease") || !strcmp(step, "reg_mr")),
		    "lease + extended REG_MR (DAX_FD) of the same file: %s%s%s (want EOPNOTSUPP at the lease or reg_mr)",
		    rd ? step : "registered", rd ? ": " : "", rd ? en(rd) : "");
	p = !rd ? &pd : !rl ? &pl : NULL;
	if (!p) {
		/* nothing pinned the shared blocks: no copy-on-write under a pin */
		dtest_pass(n_pw, "not reachable: a file with shared extents cannot be pinned");
		dtest_pass(n_mw, "not reachable: a file with shared extents cannot be pinned");
		goto out;
	}
	/* the pin was allowed: what does a copy-on-write do to it? */
	kt_unpin(p == &pd ? &pl : &pd);
	fcntl(p->fd, F_SETLEASE, F_UNLCK);
	ret = kt_child(cow_pwrite_fn, dst, KT_OP_TIMEOUT);
	kt_verify_pattern(dst, 0, PAGE, 0x11, state, sizeof(state));
	dtest_check(n_pw, ret == ETXTBSY,
		    "pwrite of 4 KiB over a pinned shared block by another process: %s (want ETXTBSY; success moves the file away from the pinned block); %s",
		    en(ret), state);
	ret = child_data(cow_mapwrite_fn, dst, state, 1, KT_OP_TIMEOUT);
	dtest_check(n_mw, ret == CHILD_SIG(SIGBUS),
		    "store through a MAP_SHARED mapping into a pinned shared block: %s (want SIGBUS)",
		    child_res(ret));
out:
	kt_unpin(&pl);
	kt_unpin(&pd);
	unlink(src);
	unlink(dst);
}

/* ---- rule 6: a layout change racing new pins never hangs -------------- */

struct i6_arg {
	const char *path;
	double until;
};

struct i6_res {
	unsigned long n, ok, busy, other, pins, pin_fail;
	int other_err, pin_err;
	double max_s;
};

static int i6_pinner(void *arg, void *resv)
{
	struct i6_arg *x = arg;
	struct i6_res *r = resv;
	struct kt_dev d;
	struct kt_pin p;
	const char *step;
	int ret;

	if (kt_dev_open(&d, false))
		return ENODEV;
	while (now_s() < x->until) {
		alarm(KT_OP_TIMEOUT);
		ret = kt_pin(&d, x->path, 0, KT_PIN_LEN, LAYOUT_EXCL,
			     KT_PIN_DAXFD, &p, &step);
		if (ret) {
			r->pin_fail++;
			r->pin_err = ret;
			continue;
		}
		r->pins++;
		fcntl(p.fd, F_SETLEASE, F_UNLCK);
		sched_yield();
		kt_unpin(&p);
	}
	alarm(0);
	kt_dev_close(&d);
	return 0;
}

static int i6_changer(void *arg, void *resv)
{
	struct i6_arg *x = arg;
	struct i6_res *r = resv;
	int fd, ret;

	fd = open(x->path, O_RDWR);
	if (fd < 0)
		return ENOENT;
	while (now_s() < x->until) {
		double t0 = now_s(), dt;

		alarm(KT_OP_TIMEOUT);
		switch (r->n % 3) {
		case 0:
			ret = truncate(x->path, KT_PIN_LEN / 2) ? errno : 0;
			break;
		case 1:
			ret = ftruncate(fd, KT_FILE_SIZE) ? errno : 0;
			break;
		default:
			ret = fallocate(fd, FALLOC_FL_PUNCH_HOLE |
					FALLOC_FL_KEEP_SIZE, 0, KT_OP_LEN) ?
				      errno : 0;
			break;
		}
		dt = now_s() - t0;
		if (dt > r->max_s)
			r->max_s = dt;
		r->n++;
		if (ret == 0)
			r->ok++;
		else if (ret == ETXTBSY)
			r->busy++;
		else {
			r->other++;
			r->other_err = ret;
		}
	}
	alarm(0);
	close(fd);
	return 0;
}

static void t_i6(const struct kt_fs *fs)
{
	const char *name = kt_name("i6_pin_vs_layout_race", fs);
	const char *path = kt_path(fs, "i6");
	struct i6_arg x = { path, 0 };
	struct i6_res rp, rc;
	struct achild cp, cc;
	int ret, retp, retc;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret) {
		dtest_fail(name, "not reached: %s", strerror(ret));
		return;
	}
	x.until = now_s() + race_seconds;
	memset(&rp, 0, sizeof(rp));
	memset(&rc, 0, sizeof(rc));
	ret = child_start(&cp, i6_pinner, &x, &rp, sizeof(rp),
			  race_seconds + KT_OP_TIMEOUT + 10);
	if (!ret)
		ret = child_start(&cc, i6_changer, &x, &rc, sizeof(rc),
				  race_seconds + KT_OP_TIMEOUT + 10);
	if (ret) {
		dtest_fail(name, "fork: %s", strerror(ret));
		if (cp.pid > 0)
			child_wait(&cp, &rp, sizeof(rp));
		unlink(path);
		return;
	}
	retp = child_wait(&cp, &rp, sizeof(rp));
	retc = child_wait(&cc, &rc, sizeof(rc));
	dtest_check(name, retp == 0 && retc == 0 && rc.other == 0 &&
			  rc.n > 0 && rp.pins > 0 && rc.max_s < KT_OP_TIMEOUT,
		    "%d s: %lu truncate/grow/punch by another process: %lu ok, %lu ETXTBSY, %lu other (last %s), slowest %.2f s, changer %s; %lu lease+REG_MR pins (%lu failed, last %s), pinner %s",
		    race_seconds, rc.n, rc.ok, rc.busy, rc.other,
		    rc.other ? en(rc.other_err) : "-", rc.max_s, child_res(retc),
		    rp.pins, rp.pin_fail, rp.pin_fail ? en(rp.pin_err) : "-",
		    child_res(retp));
	unlink(path);
}

/* ---- rule 7: looking pinned is not being pinned ------------------------ */

static int trunc0_fn(void *arg, void *res)
{
	(void)res;
	return truncate(arg, 0) ? errno : 0;
}

/*
 * In a child of its own, so that no other process inherits the pipes:
 * >= 1024 vmsplice references (GUP_PIN_COUNTING_BIAS) to the first page
 * of path make it look pinned.  Reports the count on out, then waits to
 * be killed, which closes the pipes.
 */
static void i7_holder(const char *path, int out)
{
	int pipes[128][2], npipes = 0, refs = 0, fd;
	volatile uint8_t *map;
	struct iovec iov[256];

	fd = open(path, O_RDWR | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED : mmap(NULL, KT_PIN_LEN,
					 PROT_READ | PROT_WRITE, MAP_SHARED,
					 fd, 0);
	if (map != MAP_FAILED) {
		(void)map[0];
		while (refs < 1100 && npipes < 128) {
			int cap, i;
			ssize_t n;

			if (pipe2(pipes[npipes], O_CLOEXEC))
				break;
			fcntl(pipes[npipes][1], F_SETPIPE_SZ, (int)KT_MIB);
			cap = fcntl(pipes[npipes][1], F_GETPIPE_SZ) / PAGE;
			npipes++;
			if (cap > 256)
				cap = 256;
			for (i = 0; i < cap; i++) {
				iov[i].iov_base = (void *)map;
				iov[i].iov_len = PAGE;
			}
			n = vmsplice(pipes[npipes - 1][1], iov, cap,
				     SPLICE_F_NONBLOCK);
			if (n <= 0)
				break;
			refs += n / PAGE;
		}
		munmap((void *)map, KT_PIN_LEN);
	}
	if (write(out, &refs, sizeof(refs)) != sizeof(refs))
		_exit(1);
	for (;;)
		pause();
}

static void t_i7(const struct kt_fs *fs)
{
	const char *name = kt_name("i7_vmsplice_refs_truncate_not_etxtbsy", fs);
	const char *path = kt_path(fs, "i7");
	int sync[2] = { -1, -1 }, refs = 0, ret;
	pid_t holder = -1;
	struct achild c;
	bool early = false;
	char dummy;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret || pipe2(sync, O_CLOEXEC)) {
		dtest_fail(name, "not reached: file/pipe: %s",
			   strerror(ret ? ret : errno));
		goto out;
	}
	holder = fork();
	if (holder == 0) {
		close(sync[0]);
		i7_holder(path, sync[1]);
	}
	close(sync[1]);
	sync[1] = -1;
	if (holder < 0 || read(sync[0], &refs, sizeof(refs)) != sizeof(refs) ||
	    refs < 1024) {
		dtest_fail(name, "not reached: only %d vmsplice references to the page (%s)",
			   refs, holder < 0 ? strerror(errno) : "holder");
		goto out;
	}
	ret = child_start(&c, trunc0_fn, (void *)path, &dummy, 1,
			  KT_OP_TIMEOUT);
	if (ret) {
		dtest_fail(name, "fork: %s", strerror(ret));
		goto out;
	}
	sleep_ms(1000);
	early = child_exited(&c);
	/* the holder's exit closes the pipes and drops the references */
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	holder = -1;
	ret = child_wait(&c, &dummy, 1);
	dtest_check(name, ret == 0 && kt_file_size(path) == 0,
		    "truncate to 0 by another process while %d pipe buffers reference the first page (no long-term pin, no lease): %s%s, size now %lld (want success once the pipes are closed)",
		    refs, child_res(ret), early ? " at once" :
		    " after the pipes were closed", kt_file_size(path));
out:
	if (holder > 0) {
		kill(holder, SIGKILL);
		waitpid(holder, NULL, 0);
	}
	if (sync[0] >= 0)
		close(sync[0]);
	if (sync[1] >= 0)
		close(sync[1]);
	unlink(path);
}

/* ---- rule 8: closing the uverbs file releases the pins ---------------- */

static int truncate_retry(const char *path)
{
	int i, ret = 0;

	for (i = 0; i < 30; i++) {
		ret = kt_child_op(path, KT_OP_TRUNCATE, 0);
		if (ret != ETXTBSY)
			break;
		sleep_ms(100);
	}
	return ret;
}

static void t_i8(const struct kt_fs *fs)
{
	const char *name = kt_name("i8_close_uverbs_releases_pins", fs);
	struct kt_pin pa = KT_PIN_INIT, pb = KT_PIN_INIT;
	char a[4096], b[4096], before[4096], after[4096];
	const char *step;
	struct kt_dev d;
	int ret, ra, rb;

	snprintf(a, sizeof(a), "%s", kt_path(fs, "i8a"));
	snprintf(b, sizeof(b), "%s", kt_path(fs, "i8b"));
	ret = kt_dev_open(&d, false);
	if (!ret)
		ret = kt_make_file(a, KT_FILE_SIZE, 0x11);
	if (!ret)
		ret = kt_make_file(b, KT_FILE_SIZE, 0x11);
	if (!ret)
		ret = kt_pin(&d, a, 0, KT_PIN_LEN, LAYOUT_EXCL, KT_PIN_DAXFD,
			     &pa, &step);
	if (!ret)
		ret = kt_pin(&d, b, 0, KT_PIN_LEN, LAYOUT_EXCL, KT_PIN_LEGACY,
			     &pb, &step);
	if (ret) {
		dtest_fail(name, "not reached: second context and two pins: %s",
			   strerror(ret));
		kt_unpin(&pa);
		kt_unpin(&pb);
		if (d.ctx)
			kt_dev_close(&d);
		goto out;
	}
	own_pins(before, sizeof(before));
	/* leases go with the last reference of their open files */
	munmap(pa.addr, pa.len);
	munmap(pb.addr, pb.len);
	close(pa.fd);
	close(pb.fd);
	pa.addr = pb.addr = MAP_FAILED;
	pa.fd = pb.fd = -1;
	pa.registered = pb.registered = false;
	pb.mr = NULL;
	/* no dereg: ibv_dealloc_pd fails busy, the close destroys it all */
	kt_dev_close(&d);
	ra = truncate_retry(a);
	rb = truncate_retry(b);
	own_pins(after, sizeof(after));
	dtest_check(name, ra == 0 && rb == 0 && !atk_pins_naming(after, a) &&
			  !atk_pins_naming(after, b),
		    "two MRs (DAX_FD, legacy) on a second context, files unmapped and closed, then the uverbs fd closed with the MRs live: truncate %s / %s (want success); file_pins before \"%s\", after \"%s\"",
		    en(ra), en(rb), kt_oneline(before), kt_oneline(after));
out:
	unlink(a);
	unlink(b);
}

/*
 * A driver that fails to destroy an MR keeps its pages pinned: the pins
 * must stay.  rxe refuses to deregister an MR with a bound memory window
 * (IBA 10.6.7.2.6); the MR is destroyed once the window is gone.
 */
static void t_i8_failed_dereg(const struct kt_fs *fs)
{
	const char *name = kt_name("i8_failed_dereg_keeps_pins", fs);
	const char *path = kt_path(fs, "i8c");
	struct ibv_mr raw;
	struct ibv_mw *mw = NULL;
	struct ibv_mr fake;
	char pins_failed[4096], pins_after[4096];
	void *map = MAP_FAILED;
	int fd = -1, ret, d1 = -1, t1 = -1, d2 = -1, t2 = -1, in1, in2;
	bool registered = false;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x18);
	if (!ret) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0 || fcntl(fd, F_SETLEASE, LAYOUT_EXCL))
			ret = errno;
	}
	if (!ret) {
		map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, 0);
		ret = map == MAP_FAILED ? errno : 0;
	}
	if (!ret)
		ret = kt_reg_mr_ioctl(&dev, map, KT_PIN_LEN,
				      KT_ACCESS | IBV_ACCESS_MW_BIND, fd, 0,
				      &raw);
	registered = !ret;
	if (!ret) {
		mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_1);
		ret = mw ? 0 : (errno ? errno : EIO);
	}
	if (!ret && !dev.loop)
		ret = ENODEV;
	if (!ret) {
		memset(&fake, 0, sizeof(fake));
		fake.context = dev.ctx;
		fake.pd = dev.pd;
		fake.addr = map;
		fake.length = KT_PIN_LEN;
		fake.handle = raw.handle;
		fake.lkey = raw.lkey;
		fake.rkey = raw.rkey;
		if (rcloop_bind_mw(dev.loop, mw, &fake, (uintptr_t)map, PAGE,
				   IBV_ACCESS_REMOTE_READ))
			ret = errno ? errno : EIO;
	}
	if (ret) {
		dtest_fail(name, "not reached: MR with MW_BIND of %s and a bound type 1 window: %s (%s)",
			   path, strerror(ret), rcloop_errmsg());
		goto out;
	}
	/* the lease goes, so that only the pins can refuse the truncate */
	fcntl(fd, F_SETLEASE, F_UNLCK);
	d1 = kt_destroy_mr(&dev, raw.handle);
	if (!d1)
		registered = false;
	own_pins(pins_failed, sizeof(pins_failed));
	in1 = atk_pins_naming(pins_failed, path);
	t1 = kt_child_op(path, KT_OP_TRUNCATE, 0);

	ibv_dealloc_mw(mw);
	mw = NULL;
	d2 = registered ? kt_destroy_mr(&dev, raw.handle) : -1;
	if (!d2)
		registered = false;
	own_pins(pins_after, sizeof(pins_after));
	in2 = atk_pins_naming(pins_after, path);
	t2 = kt_child_op(path, KT_OP_TRUNCATE, 0);
	dtest_check(name, d1 == EINVAL && in1 == 1 && t1 == ETXTBSY &&
			  d2 == 0 && in2 == 0 && t2 == 0,
		    "MR of %s with a memory window bound, lease released: destroy %s (want EINVAL, the driver refuses), file_pins names it %d time(s) (want 1), truncate by another process %s (want ETXTBSY); window deallocated: destroy %s (want success), file_pins %d (want 0), truncate %s (want success)",
		    path, en(d1), in1, kt_res_name(t1), en(d2), in2,
		    kt_res_name(t2));
out:
	if (mw)
		ibv_dealloc_mw(mw);
	if (registered)
		kt_destroy_mr(&dev, raw.handle);
	unmap_unlease(map, KT_PIN_LEN, fd);
	unlink(path);
}

/* ---- rule 9: one registration over 10,000 VMAs ------------------------ */

#define I9_VMAS 10000

static void t_i9(const struct kt_fs *fs, int nfiles)
{
	char name[96], dir[4096], path[4200], first[4400] = "", *pins = NULL;
	int pages = nfiles == 1 ? 1024 : I9_VMAS / nfiles;
	size_t len = (size_t)I9_VMAS * PAGE, pins_size = 1 << 20;
	uint8_t *base = MAP_FAILED;
	int i, k, fd, ret = 0, bad = 0, n;
	struct ibv_mr *mr = NULL;
	double t0, t_reg = 0;
	uint64_t mark;

	if (nfiles == 1)
		snprintf(name, sizeof(name), "i9_10k_vmas_one_file_%s",
			 fs->name);
	else
		snprintf(name, sizeof(name), "i9_10k_vmas_%d_files_%s", nfiles,
			 fs->name);
	snprintf(dir, sizeof(dir), "%s/i9", fs->dir);
	mkdir(dir, 0755);
	pins = malloc(pins_size);
	base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pins || base == MAP_FAILED) {
		dtest_fail(name, "out of memory");
		goto out;
	}
	t0 = now_s();
	for (k = 0; k < nfiles && !ret; k++) {
		snprintf(path, sizeof(path), "%s/f%04d", dir, k);
		ret = nfiles == 1 ? atk_make_file(path, (size_t)pages * PAGE, 0x11, 0) :
				    make_small(path, (size_t)pages * PAGE, 0x11);
		fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0 || fcntl(fd, F_SETLEASE, LAYOUT_EXCL)) {
			ret = ret ? ret : errno;
			break;
		}
		/* VMA i maps file i % nfiles: neighbours never merge */
		for (i = k; i < I9_VMAS && !ret; i += nfiles) {
			off_t off = nfiles == 1 ? (off_t)((i * 7) % pages) * PAGE :
						  (off_t)(i / nfiles) * PAGE;

			if (mmap(base + (size_t)i * PAGE, PAGE,
				 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				 fd, off) == MAP_FAILED)
				ret = errno;
		}
		/* the mappings keep the open file and its lease */
		close(fd);
	}
	if (ret) {
		dtest_fail(name, "not reached: file %d of %d: %s", k, nfiles,
			   strerror(ret));
		goto out;
	}
	printf("note: %s: %d files, %d VMAs set up in %.1f s\n", name, nfiles,
	       I9_VMAS, now_s() - t0);
	mark = kt_kmsg_mark();
	t0 = now_s();
	mr = ibv_reg_mr(dev.pd, base, len, KT_ACCESS);
	t_reg = now_s() - t0;
	ret = mr ? 0 : errno;
	if (!mr) {
		dtest_fail(name, "ibv_reg_mr of %d VMAs (%zu MiB) with every lease held: %s after %.1f s",
			   I9_VMAS, len >> 20, strerror(ret), t_reg);
		goto out;
	}
	own_pins(pins, pins_size);
	if (pins_lines(pins) != nfiles) {
		bad++;
		snprintf(first, sizeof(first), "%d pinned-file lines, want %d",
			 pins_lines(pins), nfiles);
	}
	for (k = 0; k < nfiles && !bad; k++) {
		snprintf(path, sizeof(path), "%s/f%04d", dir, k);
		n = atk_pins_naming(pins, path);
		if (n != 1) {
			bad++;
			snprintf(first, sizeof(first), "%s listed %d times",
				 path, n);
		}
	}
	ibv_dereg_mr(mr);
	n = kt_kmsg_scan(mark, why, sizeof(why));
	dtest_check(name, t_reg < 60 && !bad && n == 0,
		    "one ibv_reg_mr over %d VMAs of %d file(s): %.1f s (bound 60 s); file_pins %s%s; %d kernel report line(s)%s%s",
		    I9_VMAS, nfiles, t_reg, bad ? "wrong: " : "lists each file once",
		    first, n, n ? ": " : "", n ? why : "");
out:
	if (base != MAP_FAILED)
		munmap(base, len);
	for (k = 0; k < nfiles; k++) {
		snprintf(path, sizeof(path), "%s/f%04d", dir, k);
		unlink(path);
	}
	rmdir(dir);
	free(pins);
}

/* ---- rule 10: refused changes leave the file alone -------------------- */

static off_t head_off(enum kt_op op)
{
	return op == KT_OP_TRUNCATE || op == KT_OP_FTRUNCATE ?
		       (off_t)(KT_PIN_LEN / 2) : 0;
}

struct i10_holder {
	const char *path;
	enum kt_op op;
};

static int i10_holder_fn(void *arg)
{
	struct i10_holder *h = arg;
	int fd = open(h->path, O_RDWR), ret;

	if (fd < 0)
		return ENOENT;
	if (fcntl(fd, F_SETLEASE, LAYOUT_EXCL))
		return ENOLINK;
	ret = kt_do_op(h->path, fd, h->op, head_off(h->op));
	close(fd);
	return ret;
}

static bool same_times(const struct stat *a, const struct stat *b)
{
	return a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void t_i10_times(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "i10");
	struct kt_pin p = KT_PIN_INIT;
	char name[96], state[256];
	struct stat st0, st1;
	enum kt_op op;
	int ret, holder;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret || pin_file(path, 0, KT_PIN_LEN, KT_PIN_DAXFD, true, &p)) {
		dtest_fail(kt_name("i10_refused_keeps_times", fs),
			   "not reached: %s", ret ? strerror(ret) : why);
		goto out;
	}
	for (op = 0; op < KT_OP_NUM; op++) {
		for (holder = 0; holder < 2; holder++) {
			struct i10_holder h = { path, op };

			snprintf(name, sizeof(name), "i10_%s_%s_keeps_times_%s",
				 kt_op_name(op), holder ? "holder" : "pinned",
				 fs->name);
			stat(path, &st0);
			/* coarse clocks: make a new time visible */
			sleep_ms(30);
			ret = holder ? kt_child(i10_holder_fn, &h, KT_OP_TIMEOUT) :
				       kt_child_op(path, op, head_off(op));
			stat(path, &st1);
			dtest_check(name, ret == (holder ? EDEADLOCK : ETXTBSY) &&
					  same_times(&st0, &st1),
				    "%s over the pinned head by %s: %s (want %s); size %lld -> %lld, mtime %ld.%09ld -> %ld.%09ld, ctime %ld.%09ld -> %ld.%09ld (want unchanged)",
				    kt_op_name(op), holder ?
				    "a process holding the lease itself" :
				    "another process (lease released)",
				    en(ret), en(holder ? EDEADLOCK : ETXTBSY),
				    (long long)st0.st_size, (long long)st1.st_size,
				    st0.st_mtim.tv_sec, st0.st_mtim.tv_nsec,
				    st1.st_mtim.tv_sec, st1.st_mtim.tv_nsec,
				    st0.st_ctim.tv_sec, st0.st_ctim.tv_nsec,
				    st1.st_ctim.tv_sec, st1.st_ctim.tv_nsec);
		}
	}
	ret = kt_child_op(path, KT_OP_FTRUNCATE, KT_FILE_SIZE);
	kt_verify_pattern(path, 0, KT_PIN_LEN, 0x11, state, sizeof(state));
	dtest_check(kt_name("i10_ftruncate_same_size_pinned", fs),
		    ret == 0 && kt_file_size(path) == (long long)KT_FILE_SIZE,
		    "ftruncate to the current size by another process over a pinned file: %s (want success); %s",
		    en(ret), state);
out:
	kt_unpin(&p);
	unlink(path);
}

int atk_falloc_fn(void *arg)
{
	struct atk_falloc *x = arg;
	int fd = open(x->path, O_RDWR), ret;

	if (fd < 0)
		return errno;
	ret = fallocate(fd, x->mode, x->off, x->len) ? errno : 0;
	close(fd);
	return ret;
}

/* Is [0, 2 MiB) of fd one extent that DAX can map with a PMD? */
bool atk_pmd_mappable(int fd, char *out, size_t len)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent ext[8];
	} f;
	unsigned int i;

	memset(&f, 0, sizeof(f));
	f.fm.fm_length = PMD_SIZE;
	f.fm.fm_flags = FIEMAP_FLAG_SYNC;
	f.fm.fm_extent_count = 8;
	if (ioctl(fd, FS_IOC_FIEMAP, &f.fm)) {
		snprintf(out, len, "FIEMAP: %s", strerror(errno));
		return false;
	}
	for (i = 0; i < f.fm.fm_mapped_extents; i++) {
		struct fiemap_extent *e = &f.ext[i];

		if (e->fe_logical > 0 || e->fe_logical + e->fe_length < PMD_SIZE)
			continue;
		snprintf(out, len, "extent at physical %#llx, %llu KiB",
			 (unsigned long long)e->fe_physical,
			 (unsigned long long)e->fe_length >> 10);
		return (e->fe_physical - e->fe_logical) % PMD_SIZE == 0;
	}
	snprintf(out, len, "%u extent(s), none covers [0, 2 MiB)",
		 f.fm.fm_mapped_extents);
	return false;
}

/*
 * The disk of the test VM (virtio-blk, tests/vm/run.sh): a block device
 * that is not DAX and completes its I/O in interrupt context.  NULL if
 * there is none.
 */
static const char *disk_dev(void)
{
	static char path[64];
	const char *env = getenv("DAXLEASE_DISK_DEV");
	struct stat st;
	char c;

	if (env && *env)
		return env;
	for (c = 'a'; c <= 'd'; c++) {
		snprintf(path, sizeof(path), "/dev/vd%c", c);
		if (!stat(path, &st) && S_ISBLK(st.st_mode))
			return path;
	}
	return NULL;
}

/*
 * Writes back a dirty page of the disk's own (page cache) mapping: its
 * writeback completes in the disk's interrupt, where folio_end_writeback()
 * takes the i_pages lock of the mapping.  Every mapping's i_pages lock is
 * one lockdep class, so from then on lockdep knows that class as
 * interrupt-safe, and reports any lock that the DAX code takes under it
 * with interrupts enabled elsewhere.  0, or errno with why set.
 */
static int irq_writeback(void)
{
	static int done = -1;
	const char *disk = disk_dev();
	uint8_t buf[64 * 1024];
	int fd, i;

	if (done >= 0)
		return done;
	done = ENODEV;
	if (!disk) {
		snprintf(why, sizeof(why),
			 "the VM has no disk (/dev/vd?, DAXLEASE_DISK_DEV)");
		return done;
	}
	fd = open(disk, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		done = errno;
		snprintf(why, sizeof(why), "open %s: %s", disk, strerror(done));
		return done;
	}
	kt_pattern(buf, sizeof(buf), 0, 0x5a);
	done = 0;
	for (i = 0; i < 4 && !done; i++)
		if (pwrite(fd, buf, sizeof(buf), i * sizeof(buf)) !=
		    (ssize_t)sizeof(buf) || fsync(fd))
			done = errno ? errno : EIO;
	if (done)
		snprintf(why, sizeof(why), "buffered write + fsync of %s: %s",
			 disk, strerror(done));
	close(fd);
	return done;
}

/* Is lockdep (still) on?  "debug_locks: 1" in /proc/lockdep_stats */
static bool lockdep_on(void)
{
	char line[256];
	bool on = false;
	FILE *f = fopen("/proc/lockdep_stats", "re");
	unsigned int v;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " debug_locks: %u", &v) == 1)
			on = v == 1;
	fclose(f);
	return on;
}

uint8_t *atk_map_pmd_aligned(int fd, size_t len, uint8_t **res)
{
	uint8_t *r, *map;
	int err;

	r = mmap(NULL, len + PMD_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	map = (uint8_t *)(((uintptr_t)r + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
	if (mmap(map, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 0) == MAP_FAILED) {
		err = errno;
		munmap(r, len + PMD_SIZE);
		errno = err;
		return NULL;
	}
	*res = r;
	return map;
}

static void t_i10_pmd_punch(const struct kt_fs *fs, unsigned int extsize)
{
	const char *n_next = kt_name("i10_punch_next_to_pinned_page", fs);
	const char *n_over = kt_name("i10_punch_over_pinned_page", fs);
	const char *n_lockdep = kt_name("i10_punch_next_to_pinned_page_lockdep",
					fs);
	const char *path = kt_path(fs, "i10pmd");
	char lock_why[1024], first[512] = "";
	uint64_t mark;
	bool lockdep;
	const off_t x = KT_MIB;
	struct atk_falloc after = { path, ATK_PUNCH, x + PAGE, PAGE };
	struct atk_falloc before = { path, ATK_PUNCH, x - PAGE, PAGE };
	struct atk_falloc over = { path, ATK_PUNCH, x, PAGE };
	uint8_t *res = MAP_FAILED, *map, zero[PAGE];
	char ext[256], state[256], got[PAGE];
	struct ibv_mr raw;
	int fd = -1, ret, r1, r2, r3, v, fz;
	bool pmd, reg = false;

	/*
	 * Lockdep sees the i_pages lock taken in interrupt context first,
	 * then the punches below, which take the DAX code's locks under it.
	 */
	ret = irq_writeback();
	snprintf(lock_why, sizeof(lock_why), "%s", ret ? why : "");
	lockdep = lockdep_on();
	mark = kt_kmsg_mark();
	ret = atk_make_file(path, KT_FILE_SIZE, 0x11, extsize);
	fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_SETLEASE, LAYOUT_EXCL)) {
		dtest_fail(n_next, "not reached: file and lease: %s",
			   strerror(ret ? ret : errno));
		dtest_fail(n_over, "not reached");
		dtest_fail(n_lockdep, "not reached");
		goto out;
	}
	pmd = atk_pmd_mappable(fd, ext, sizeof(ext));
	map = atk_map_pmd_aligned(fd, KT_FILE_SIZE, &res);
	if (!map) {
		dtest_fail(n_next, "mmap: %s", strerror(errno));
		dtest_fail(n_over, "not reached");
		dtest_fail(n_lockdep, "not reached");
		goto out;
	}
	/* fault the 2 MiB block in (a PMD where the extent allows) */
	(void)*(volatile uint8_t *)(map + x);
	ret = kt_reg_mr_ioctl(&dev, map + x, PAGE, KT_ACCESS, fd, x, &raw);
	reg = !ret;
	fcntl(fd, F_SETLEASE, F_UNLCK);
	if (ret) {
		dtest_fail(n_next, "not reached: REG_MR of the 4 KiB page at 1 MiB: %s",
			   en(ret));
		dtest_fail(n_over, "not reached");
		dtest_fail(n_lockdep, "not reached");
		goto out;
	}
	r3 = kt_child(atk_falloc_fn, &over, KT_OP_TIMEOUT);
	dtest_check(n_over, r3 == ETXTBSY,
		    "punch of the pinned 4 KiB page itself by another process: %s (want ETXTBSY)",
		    en(r3));
	r1 = kt_child(atk_falloc_fn, &after, KT_OP_TIMEOUT);
	r2 = kt_child(atk_falloc_fn, &before, KT_OP_TIMEOUT);
	v = kt_verify_pattern(path, x, PAGE, 0x11, state, sizeof(state));
	memset(zero, 0, sizeof(zero));
	fz = pread(fd, got, PAGE, x + PAGE) == PAGE && !memcmp(got, zero, PAGE);
	dtest_check(n_next, pmd && r1 == 0 && r2 == 0 && !v && fz,
		    "4 KiB punches right after and right before a pinned 4 KiB page in the same 2 MiB block (%s%s): %s, %s (want success); pinned page: %s; punched page %s",
		    ext, pmd ? ", PMD-mappable" :
		    ": NOT PMD-mappable, the case is not tested", en(r1),
		    en(r2), v ? state : "unchanged", fz ? "reads zero" :
		    "does not read zero");
	ret = kt_kmsg_scan(mark, first, sizeof(first));
	if (*lock_why || !lockdep)
		dtest_fail(n_lockdep, "lockdep cannot see both sides: %s",
			   *lock_why ? lock_why :
			   "lockdep is off (/proc/lockdep_stats: debug_locks is not 1)");
	else
		dtest_check(n_lockdep, ret == 0,
			    "after writeback completed in the disk's interrupt (i_pages lock class interrupt-safe), the punches next to the pinned page: %d kernel report line(s)%s%s",
			    ret, ret ? "; first: " : "", first);
	if (ret > 0)
		kt_kmsg_dump(mark, 80);
out:
	if (reg)
		kt_destroy_mr(&dev, raw.handle);
	if (res != MAP_FAILED)
		munmap(res, KT_FILE_SIZE + PMD_SIZE);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* ---- rule 11: read-only registration ---------------------------------- */

/*
 * Read-only registration.  Linux 6.1 pins a read-only MR with a forced
 * write fault, which a shared mapping of a descriptor opened read-only
 * refuses (EFAULT).  The series pins the pages of such a registration as
 * they are, under rules that the tests below attack: only shared DAX
 * mappings of the named file (a thread remapping a page-cache file over
 * the range gets nothing pinned: i2_remap_race_readonly), never the zero
 * page of a hole or an unwritten extent (ENODATA), only for the file's
 * owner (EACCES), and the device never writes into the pages (an RDMA
 * WRITE and a REREG_MR to write access fail).
 */

/* REREG_MR (the write command) of the access flags only; 0 or errno */
static int rereg_access(uint32_t handle, unsigned int access)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr cmd;
	} req;
	struct ib_uverbs_rereg_mr_resp resp;

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_REREG_MR;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.mr_handle = handle;
	req.cmd.flags = IBV_REREG_MR_CHANGE_ACCESS;
	req.cmd.access_flags = access;
	if (write(dev.ctx->cmd_fd, &req, sizeof(req)) == (ssize_t)sizeof(req))
		return 0;
	return errno ? errno : EIO;
}

/*
 * 0 if [0, len) of path, read through a new shared read-only mapping (a
 * Device-DAX file cannot be read(2)), equals expect; else why says how.
 */
static int map_differs(const char *path, size_t len, const uint8_t *expect,
		       char *out, size_t size)
{
	const uint8_t *map;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED :
		       mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(out, size, "cannot be read back: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	for (i = 0; i < len && map[i] == expect[i]; i++)
		;
	munmap((void *)map, len);
	close(fd);
	if (i < len)
		snprintf(out, size, "differs at offset %zu", i);
	return i < len;
}

/*
 * A REMOTE_READ-only extended REG_MR (DAX_FD) of [0, len) of a file, with
 * what reads it back: the mapping, its open file, the MR and the RDMA
 * READ's buffer and local MR, and the file's pattern to compare with.
 */
struct ro_mr {
	void *map;
	int fd;
	size_t len;
	struct ibv_mr raw;
	bool registered;
	struct ibv_mr *lmr;
	uint8_t *buf, *expect;
};

/*
 * Opens path with oflags (with the exclusive layout lease when lease),
 * maps [0, len) MAP_SHARED with prot and registers it REMOTE_READ-only
 * through the extended REG_MR; r->expect holds pattern seed.  0, or the
 * errno of the open, lease, map or allocation (*reg false) or of the
 * REG_MR (*reg true).  ro_mr_release() in every case.
 */
static int ro_mr_reg(struct ro_mr *r, const char *path, int oflags,
		     bool lease, int prot, size_t len, uint8_t seed,
		     bool *reg)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->len = len;
	r->map = open_lease_map(path, oflags, lease, prot, len, 0, &r->fd);
	r->buf = malloc(len);
	r->expect = malloc(len);
	*reg = false;
	if (r->map == MAP_FAILED || !r->buf || !r->expect)
		return errno ? errno : ENOMEM;
	kt_pattern(r->expect, len, 0, seed);
	*reg = true;
	ret = kt_reg_mr_ioctl(&dev, r->map, len, IBV_ACCESS_REMOTE_READ, r->fd,
			      0, &r->raw);
	r->registered = !ret;
	return ret;
}

/*
 * RDMA READ of the whole MR into r->buf: 0 (*same: it equals the file's
 * pattern) or errno, why saying what failed.
 */
static int ro_mr_read_back(struct ro_mr *r, bool *same)
{
	int ret;

	ret = rdma_read((uintptr_t)r->map, r->raw.rkey, r->buf, r->len,
			&r->lmr);
	*same = !ret && !memcmp(r->buf, r->expect, r->len);
	return ret;
}

/* Destroys the MR and releases whatever else r still holds */
static void ro_mr_release(struct ro_mr *r)
{
	if (r->registered)
		kt_destroy_mr(&dev, r->raw.handle);
	if (r->lmr)
		ibv_dereg_mr(r->lmr);
	unmap_unlease(r->map, r->len, r->fd);
	free(r->buf);
	free(r->expect);
}

/*
 * Registers [0, len) of path through a descriptor opened read-only
 * (mapping PROT_READ, MAP_SHARED; with the exclusive layout lease when
 * lease), IBV_ACCESS_REMOTE_READ only, and checks what may be done with
 * it: tag is the file system or "devdax".
 */
static void readonly_fd_reg(const char *tag, const char *path, size_t len,
			    bool lease, uint8_t seed)
{
	char n_reg[96], n_write[96], n_rereg[96], pins[4096], vwhy[256];
	int ret, in, wr, rr, wr2, differs;
	struct ro_mr r;
	bool reg, same;

	snprintf(n_reg, sizeof(n_reg), "i11_readonly_fd_reg_mr_%s", tag);
	snprintf(n_write, sizeof(n_write), "i11_readonly_no_remote_write_%s",
		 tag);
	snprintf(n_rereg, sizeof(n_rereg),
		 "i11_readonly_rereg_write_refused_%s", tag);
	ret = ro_mr_reg(&r, path, O_RDONLY, lease, PROT_READ, len, seed, &reg);
	if (ret) {
		if (!reg)
			dtest_fail(n_reg, "open O_RDONLY%s, PROT_READ MAP_SHARED mmap of %s: %s",
				   lease ? " + lease" : "", path,
				   strerror(ret));
		else
			dtest_fail(n_reg, "REMOTE_READ-only REG_MR (DAX_FD) of the O_RDONLY PROT_READ mapping of %s: %s (want success)",
				   path, en(ret));
		dtest_fail(n_write, "not reached");
		dtest_fail(n_rereg, "not reached");
		goto out;
	}
	own_pins(pins, sizeof(pins));
	in = atk_pins_naming(pins, path);
	ret = ro_mr_read_back(&r, &same);
	if (ret)
		dtest_fail(n_reg, "registered; %s", why);
	else
		dtest_check(n_reg, in == 1 && same,
			    "REMOTE_READ-only REG_MR (DAX_FD) of the O_RDONLY PROT_READ mapping of %s: registered, file_pins names it %d time(s) (want 1), RDMA READ of %zu KiB %s",
			    path, in, len >> 10, same ?
			    "returns the file's data" : "differs from the file");

	wr = kt_rdma_write_pattern(&dev, (uintptr_t)r.map, r.raw.rkey, PAGE, 0,
				   seed ^ 0xff, why, sizeof(why));
	differs = map_differs(path, len, r.expect, vwhy, sizeof(vwhy));
	dtest_check(n_write, wr && !differs,
		    "RDMA WRITE of 4 KiB through the read-only MR's rkey: %s (want a remote access error); the file %s",
		    wr ? "failed" : "completed", differs ? vwhy : "is unchanged");

	/*
	 * rxe has no REREG_MR: the kernel refuses it before the driver
	 * (EOPNOTSUPP); with a driver that has one, uverbs refuses write
	 * access for read-only pins (EPERM).  Either way the MR must stay
	 * read-only.
	 */
	rr = rereg_access(r.raw.handle, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ);
	wr2 = kt_rdma_write_pattern(&dev, (uintptr_t)r.map, r.raw.rkey, PAGE,
				    0, seed ^ 0xff, why, sizeof(why));
	differs = map_differs(path, len, r.expect, vwhy, sizeof(vwhy));
	dtest_check(n_rereg, (rr == EPERM || rr == EOPNOTSUPP) && wr2 &&
			     !differs,
		    "REREG_MR of the read-only MR to LOCAL_WRITE|REMOTE_WRITE: %s (want EPERM, or EOPNOTSUPP where the driver has no rereg); RDMA WRITE after it %s; the file %s",
		    en(rr), wr2 ? "failed" : "completed",
		    differs ? vwhy : "is unchanged");
out:
	ro_mr_release(&r);
}

/* A REMOTE_READ-only MR over the writable mapping: the forced write path */
static void readonly_rdwr_reg(const char *name, const char *path, size_t len,
			      bool lease, uint8_t seed)
{
	struct ro_mr r;
	bool reg, same;
	int ret;

	ret = ro_mr_reg(&r, path, O_RDWR, lease, PROT_READ | PROT_WRITE, len,
			seed, &reg);
	if (ret && !reg)
		dtest_fail(name, "open O_RDWR%s, MAP_SHARED mmap of %s: %s",
			   lease ? " + lease" : "", path, strerror(ret));
	else if (ret)
		dtest_fail(name, "extended REG_MR (DAX_FD, IBV_ACCESS_REMOTE_READ only) of an O_RDWR MAP_SHARED mapping: %s (want success)",
			   en(ret));
	else if (ro_mr_read_back(&r, &same))
		dtest_fail(name, "registered; %s", why);
	else
		dtest_check(name, same,
			    "REMOTE_READ-only REG_MR (DAX_FD) of an O_RDWR mapping: registered, RDMA READ of %zu KiB %s",
			    len >> 10, same ? "returns the file's data" :
			    "differs from the file");
	ro_mr_release(&r);
}

/*
 * A read-only registration over a hole (unwritten: fallocated) of path
 * at [off, off + PMD_SIZE): the zero page is not the file's block, and a
 * device must never own it.
 */
static void readonly_hole(const char *name, const char *path, off_t off,
			  const char *what)
{
	struct ibv_mr raw;
	char pins[4096];
	void *map = MAP_FAILED;
	int fd, ret;

	map = open_lease_map(path, O_RDONLY, true, PROT_READ, PMD_SIZE, off,
			     &fd);
	if (map == MAP_FAILED) {
		dtest_fail(name, "open O_RDONLY + lease, mmap of %s: %s", path,
			   strerror(errno));
		goto out;
	}
	ret = kt_reg_mr_ioctl(&dev, map, PMD_SIZE, IBV_ACCESS_REMOTE_READ, fd,
			      off, &raw);
	if (!ret)
		kt_destroy_mr(&dev, raw.handle);
	own_pins(pins, sizeof(pins));
	dtest_check(name, ret == ENODATA && !pins_lines(pins),
		    "REMOTE_READ-only REG_MR (DAX_FD, O_RDONLY) of 2 MiB %s: %s (want ENODATA: the zero page is no block of the file); file_pins after: \"%s\" (want empty)",
		    what, en(ret), kt_oneline(pins));
out:
	unmap_unlease(map, PMD_SIZE, fd);
}

/* FS_IOC_SETFLAGS: set (on) or clear flag on path; 0 or errno */
static int set_inode_flag(const char *path, int flag, bool on)
{
	int fd, flags, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		ret = errno;
	flags = on ? flags | flag : flags & ~flag;
	if (!ret && ioctl(fd, FS_IOC_SETFLAGS, &flags))
		ret = errno;
	close(fd);
	return ret;
}

/*
 * The owner (root here) of an immutable or append-only file, holding its
 * lease, registers it read-only: the pages would be pinned as they are,
 * where a driver could write them, and nobody may write this file.
 */
static void readonly_unwritable(const struct kt_fs *fs, const char *base,
				int flag, const char *what)
{
	const char *name = kt_name(base, fs);
	const char *path = kt_path(fs, "i11f");
	struct ibv_mr raw;
	void *map = MAP_FAILED;
	int fd = -1, ret;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x13);
	if (!ret)
		ret = set_inode_flag(path, flag, true);
	if (!ret) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fcntl(fd, F_SETLEASE, LAYOUT_EXCL))
			ret = errno;
	}
	if (!ret) {
		map = mmap(NULL, KT_PIN_LEN, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			ret = errno;
	}
	if (ret) {
		dtest_fail(name, "%s file %s, O_RDONLY + lease + mmap: %s",
			   what, path, strerror(ret));
		goto out;
	}
	ret = kt_reg_mr_ioctl(&dev, map, KT_PIN_LEN, IBV_ACCESS_REMOTE_READ,
			      fd, 0, &raw);
	if (!ret)
		kt_destroy_mr(&dev, raw.handle);
	dtest_check(name, ret == EACCES,
		    "root, owner and lease holder of the %s file %s, REMOTE_READ-only REG_MR (DAX_FD) of its O_RDONLY PROT_READ mapping: %s (want EACCES: nobody may write the file, so no pin that a driver could write through)",
		    what, path, en(ret));
out:
	unmap_unlease(map, KT_PIN_LEN, fd);
	set_inode_flag(path, flag, false);
	unlink(path);
}

static void t_i11_fs(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "i11");
	const char *hole = kt_path(fs, "i11h");
	int ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	int fd;

	if (ret) {
		dtest_fail(kt_name("i11_readonly_fd_reg_mr", fs),
			   "not reached: %s", strerror(ret));
	} else {
		readonly_fd_reg(fs->name, path, KT_PIN_LEN, true, 0x11);
		readonly_rdwr_reg(kt_name("i11_readonly_rdwr_reg_mr", fs),
				  path, KT_PIN_LEN, true, 0x11);
	}
	unlink(path);

	/* [0, 2 MiB) written, [2, 4) a hole, [4, 6) fallocated */
	ret = kt_make_file(hole, PMD_SIZE, 0x12);
	fd = ret ? -1 : open(hole, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 3 * PMD_SIZE) ||
	    fallocate(fd, FALLOC_FL_KEEP_SIZE, 2 * PMD_SIZE, PMD_SIZE)) {
		ret = ret ? ret : errno;
		dtest_fail(kt_name("i11_readonly_hole_enodata", fs),
			   "sparse file %s: %s", hole, strerror(ret));
		dtest_fail(kt_name("i11_readonly_unwritten_enodata", fs),
			   "sparse file %s: %s", hole, strerror(ret));
	} else {
		close(fd);
		fd = -1;
		readonly_hole(kt_name("i11_readonly_hole_enodata", fs), hole,
			      PMD_SIZE, "over a hole");
		readonly_hole(kt_name("i11_readonly_unwritten_enodata", fs),
			      hole, 2 * PMD_SIZE, "over an unwritten extent");
	}
	if (fd >= 0)
		close(fd);
	unlink(hole);

	readonly_unwritable(fs, "i11_readonly_immutable_eacces",
			    FS_IMMUTABLE_FL, "immutable");
	readonly_unwritable(fs, "i11_readonly_append_only_eacces",
			    FS_APPEND_FL, "append-only");
}

/* In a child as NOBODY: a read-only registration of a device it may read */
static int devdax_not_owner_fn(void *arg, void *res)
{
	const char *path = arg;
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	struct ibv_mr raw;
	int *out = res;
	void *map;
	int fd, ret;

	*out = -1;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setgid(NOBODY) || setuid(NOBODY))
		return errno;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	map = mmap(NULL, PMD_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return errno;
	/* the parent's uverbs context: its descriptor was inherited */
	ret = kt_reg_mr_ioctl(&dev, map, PMD_SIZE, IBV_ACCESS_REMOTE_READ, fd,
			      0, &raw);
	if (!ret)
		kt_destroy_mr(&dev, raw.handle);
	*out = ret;
	return 0;
}

static void t_i11_devdax(void)
{
	const char *name = "i11_readonly_fd_reg_mr_devdax";
	const char *n_owner = "i11_readonly_not_owner_devdax";
	size_t len = PMD_SIZE;
	struct stat st;
	void *map;
	int fd, ret, res = -1;

	if (!kt_env.devdax) {
		dtest_fail(name, "DAXLEASE_DEVDAX not set: no device-DAX namespace");
		dtest_fail(n_owner, "DAXLEASE_DEVDAX not set");
		return;
	}
	fd = open(kt_env.devdax, O_RDWR | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED :
		       mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		dtest_fail(name, "writing the pattern into %s: %s",
			   kt_env.devdax, strerror(errno));
		dtest_fail(n_owner, "not reached");
		if (fd >= 0)
			close(fd);
		return;
	}
	kt_pattern(map, len, 0, 0x77);
	munmap(map, len);
	close(fd);
	readonly_fd_reg("devdax", kt_env.devdax, len, false, 0x77);
	readonly_rdwr_reg("i11_readonly_rdwr_reg_mr_devdax", kt_env.devdax,
			  len, false, 0x77);

	/* readable by everyone, owned by root: NOBODY may read, not write */
	if (stat(kt_env.devdax, &st) || chmod(kt_env.devdax, 0644)) {
		dtest_fail(n_owner, "chmod 0644 %s: %s", kt_env.devdax,
			   strerror(errno));
		return;
	}
	ret = child_data(devdax_not_owner_fn, (void *)kt_env.devdax, &res,
			 sizeof(res), 60);
	chmod(kt_env.devdax, st.st_mode & 07777);
	if (ret)
		dtest_fail(n_owner, "not reached: child %s", child_res(ret));
	else
		dtest_check(n_owner, res == EACCES,
			    "uid %d, %s opened O_RDONLY (mode 0644, owner root), PROT_READ MAP_SHARED, REMOTE_READ-only REG_MR (DAX_FD): %s (want EACCES: pinned as they are, the pages could be written by a driver; only the owner may)",
			    NOBODY, kt_env.devdax, en(res));
}

/* ---- rule 12: the ABI ------------------------------------------------- */

static void t_i12(void)
{
	const unsigned int dax_fd = DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD;
	const unsigned int dax_off = DAXLEASE_UVERBS_ATTR_REG_MR_DAX_FD_OFFSET;
	const struct kt_fs *fs = &kt_env.fs[0];
	const char *path = kt_path(fs, "i12");
	struct kt_pin p = KT_PIN_INIT;
	uint32_t lkey, rkey;
	struct ib_uverbs_attr *h;
	struct dl_ioctl c;
	bool ns;
	void *anon;
	int ret;

	dl_ioctl_init(&c, UVERBS_OBJECT_MR, DAXLEASE_UVERBS_METHOD_REG_MR,
		      RDMA_DRIVER_RXE);
	ret = dl_ioctl_exec(dev.ctx->cmd_fd, &c);
	dtest_check("i12_reg_mr_method_id_5",
		    DAXLEASE_UVERBS_METHOD_REG_MR == 5 && ret == EINVAL,
		    "method id %d (want upstream's UVERBS_METHOD_REG_MR = 5); an empty call: %s (want EINVAL: a known method missing its mandatory attributes)",
		    DAXLEASE_UVERBS_METHOD_REG_MR, en(ret));

	ns = (dax_fd & UVERBS_ID_NS_MASK) == DRIVER_NS &&
	     (dax_off & UVERBS_ID_NS_MASK) == DRIVER_NS;
	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (!ret)
		ret = pin_file(path, 0, KT_PIN_LEN, KT_PIN_DAXFD, false, &p);
	dtest_check("i12_dax_attrs_in_driver_namespace", ns && !ret,
		    "DAX_FD id %#x, DAX_FD_OFFSET id %#x (want (1 << UVERBS_ID_NS_SHIFT) | n: the driver namespace, ids upstream cannot assign); REG_MR with them, sent mandatory: %s",
		    dax_fd, dax_off, ret ? why : "registered");
	kt_unpin(&p);
	unlink(path);

	/* the first attribute id after upstream's last: unknown to the method */
	anon = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dl_ioctl_init(&c, UVERBS_OBJECT_MR, DAXLEASE_UVERBS_METHOD_REG_MR,
		      RDMA_DRIVER_RXE);
	h = dl_ioctl_new_obj(&c, DAXLEASE_UVERBS_ATTR_REG_MR_HANDLE);
	dl_ioctl_in_obj(&c, DAXLEASE_UVERBS_ATTR_REG_MR_PD_HANDLE,
			dev.pd->handle);
	dl_ioctl_in_u64(&c, DAXLEASE_UVERBS_ATTR_REG_MR_IOVA, (uintptr_t)anon);
	dl_ioctl_in_u64(&c, DAXLEASE_UVERBS_ATTR_REG_MR_ADDR, (uintptr_t)anon);
	dl_ioctl_in_u64(&c, DAXLEASE_UVERBS_ATTR_REG_MR_LENGTH, KT_PIN_LEN);
	dl_ioctl_in_u64(&c, DAXLEASE_UVERBS_ATTR_REG_MR_ACCESS_FLAGS,
			KT_ACCESS);
	dl_ioctl_out(&c, DAXLEASE_UVERBS_ATTR_REG_MR_RESP_LKEY, &lkey,
		     sizeof(lkey));
	dl_ioctl_out(&c, DAXLEASE_UVERBS_ATTR_REG_MR_RESP_RKEY, &rkey,
		     sizeof(rkey));
	/* any 8-byte value: the id, not the content, must be refused */
	dl_ioctl_in_u64(&c, DAXLEASE_UVERBS_ATTR_REG_MR_RESP_RKEY + 1, 0);
	ret = anon == MAP_FAILED ? ENOMEM :
				   dl_ioctl_exec(dev.ctx->cmd_fd, &c);
	if (!ret)
		kt_destroy_mr(&dev, (uint32_t)h->data);
	dtest_check("i12_next_upstream_attr_id_unknown", ret == EPROTONOSUPPORT,
		    "REG_MR of anonymous memory plus a mandatory attribute id %d (the next one upstream may assign): %s (want EPROTONOSUPPORT: the series does not use it)",
		    DAXLEASE_UVERBS_ATTR_REG_MR_RESP_RKEY + 1, en(ret));
	if (anon != MAP_FAILED)
		munmap(anon, KT_PIN_LEN);
}

/* ---- the spare NVDIMM ------------------------------------------------- */

int atk_spare_mount(const char *disk, const char *const mkfs[],
		    int (*then)(char *out, size_t len), const char *type,
		    const char *opts, char *msg, size_t msglen)
{
	char out[2048];
	int ret;

	ret = kt_run(mkfs, out, sizeof(out), 300);
	if (ret) {
		snprintf(msg, msglen, "%s on %s: exit %d: %s", mkfs[0], disk,
			 ret, kt_oneline(out));
		return EIO;
	}
	if (then && then(out, sizeof(out))) {
		snprintf(msg, msglen, "after %s on %s: %s", mkfs[0], disk, out);
		return EIO;
	}
	mkdir(ATK_SPARE_DIR, 0755);
	if (mount(disk, ATK_SPARE_DIR, type, 0, opts)) {
		ret = errno;
		snprintf(msg, msglen, "mount -t %s -o %s %s %s: %s", type, opts,
			 disk, ATK_SPARE_DIR, strerror(ret));
		return ret;
	}
	return 0;
}

static bool spare_format_then(struct kt_fs *fs, const char *name,
			      const char *fsname, const char *const mkfs[],
			      int (*then)(char *out, size_t len),
			      const char *type, const char *opts)
{
	char msg[2048];

	fs->name = fsname;
	fs->dir = spare_dir;
	fs->dev = spare_dev;
	if (!spare_dev) {
		dtest_fail(name, "DAXLEASE_SPARE_DEV not set: the test VM has no spare NVDIMM namespace");
		return false;
	}
	if (atk_spare_mount(spare_dev, mkfs, then, type, opts, msg,
			    sizeof(msg))) {
		dtest_fail(name, "%s", msg);
		return false;
	}
	dtest_pass(name, "%s on %s, mounted -t %s -o %s on %s", mkfs[0],
		   spare_dev, type, opts, spare_dir);
	return true;
}

static bool spare_format(struct kt_fs *fs, const char *name,
			 const char *fsname, const char *const mkfs[],
			 const char *type, const char *opts)
{
	return spare_format_then(fs, name, fsname, mkfs, NULL, type, opts);
}

static void t_spare_ext2(void)
{
	const char *const mkfs[] = { "mkfs.ext2", "-q", "-F", "-b", "4096",
				      spare_dev, NULL };
	struct kt_fs fs;

	if (!spare_format(&fs, "setup_spare_ext2", "ext2", mkfs, "ext2", "dax")) {
		dtest_fail("i4_ext2dax_reg_mr_eopnotsupp", "not reached: no ext2 -o dax");
		return;
	}
	t_i4_ext2(&fs);
	fsck_check(&fs, "i4", false);
}

/*
 * A file system with reflink grants no exclusive layout lease, so no
 * file on it is ever pinned, shared extents or not: clone, dedupe and
 * copy-on-write can never move a pinned block.  What is left to attack
 * there is the lease and the pin themselves.
 */
static void i5_reflink_fs_lease(const struct kt_fs *fs)
{
	const char *name = "i5_reflink_fs_no_exclusive_lease_xfs";
	const char *path = kt_path(fs, "i5rl");
	int fd, ret;

	ret = atk_make_file(path, KT_FILE_SIZE, 0x11, 0);
	fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		dtest_fail(name, "not reached: %s", strerror(ret ? ret : errno));
		goto out;
	}
	ret = fcntl(fd, F_SETLEASE, LAYOUT_EXCL) ? errno : 0;
	dtest_check(name, ret == EOPNOTSUPP,
		    "F_SETLEASE(F_LAYOUT|F_EXCLUSIVE) on an unshared DAX file of an xfs with reflink: %s (want EOPNOTSUPP: a clone could share its blocks under a pin)",
		    en(ret));
	if (!ret)
		fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
out:
	unlink(path);
}

/* Add flag to the FS_IOC_FSGETXATTR flags of fd's inode: 0 or errno */
static int set_fd_xflag(int fd, uint32_t flag)
{
	struct fsxattr fa;

	if (ioctl(fd, FS_IOC_FSGETXATTR, &fa))
		return errno;
	fa.fsx_xflags |= flag;
	return ioctl(fd, FS_IOC_FSSETXATTR, &fa) ? errno : 0;
}

/* The same for directory dir */
static int set_dir_xflag(const char *dir, uint32_t flag)
{
	int fd, ret;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ret = set_fd_xflag(fd, flag);
	close(fd);
	return ret;
}

/*
 * On a dax=inode mount: fs->dir/dax with FS_XFLAG_DAX, so that files made
 * there are DAX and the others are not; dfs is fs with that directory.
 */
static int make_dax_dir(const struct kt_fs *fs, struct kt_fs *dfs,
			char *dir, size_t len)
{
	int ret;

	snprintf(dir, len, "%s/dax", fs->dir);
	mkdir(dir, 0755);
	ret = set_dir_xflag(dir, FS_XFLAG_DAX);
	*dfs = *fs;
	dfs->dir = dir;
	return ret;
}

/*
 * XFS_IOC_EXCHANGE_RANGE (Linux 6.10) exchanges the block maps of two
 * files, as swapext does.  Before 6.10 the ioctl does not exist.
 */
static bool has_exchange_range(void)
{
	unsigned int major, minor;
	struct utsname u;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return true;	/* unknown: attack */
	return major > 6 || (major == 6 && minor >= 10);
}

static void i5_exchange_range_absent(const struct kt_fs *fs)
{
	const char *name = "i5_exchange_range_absent_xfs";
	struct xfs_exchange_range x = { .length = KT_PIN_LEN };
	char a[4096], b[4096];
	int fa = -1, fb = -1, ret;
	struct utsname u;

	snprintf(a, sizeof(a), "%s", kt_path(fs, "i5xa"));
	snprintf(b, sizeof(b), "%s", kt_path(fs, "i5xb"));
	ret = atk_make_file(a, KT_FILE_SIZE, 0x11, 0);
	if (!ret)
		ret = atk_make_file(b, KT_FILE_SIZE, 0x66, 0);
	if (!ret) {
		fa = open(a, O_RDWR | O_CLOEXEC);
		fb = open(b, O_RDWR | O_CLOEXEC);
		if (fa < 0 || fb < 0)
			ret = errno;
	}
	if (ret) {
		dtest_fail(name, "not reached: files: %s", strerror(ret));
	} else {
		x.file1_fd = fb;
		ret = ioctl(fa, XFS_IOC_EXCHANGE_RANGE, &x) ? errno : 0;
		uname(&u);
		dtest_check(name, ret == ENOTTY,
			    "XFS_IOC_EXCHANGE_RANGE of two unpinned files on Linux %s: %s (want ENOTTY: before 6.10 xfs has no exchange-range)",
			    u.release, en(ret));
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	unlink(a);
	unlink(b);
}

/*
 * xfs_db on the unmounted spare: set or clear the exchange-range feature
 * (Debian 12's mkfs.xfs cannot make it, its xfs_repair does not know it).
 * write -d: without the write verifier of a xfs_db that does not know the
 * bit either, with the checksum updated.
 */
static int sb_exchrange(bool on, char *out, size_t len)
{
	const char *const get[] = { "xfs_db", "-r", "-c", "sb 0", "-c",
				    "print features_incompat", spare_dev,
				    NULL };
	char cmd[64], *p;
	long v;
	int ret;

	ret = kt_run(get, out, len, 60);
	p = strstr(out, "features_incompat = ");
	if (ret || !p || sscanf(p, "features_incompat = %li", &v) != 1) {
		size_t l = strlen(out);

		snprintf(out + l, len - l, " (xfs_db print exit %d)", ret);
		return ret ? ret : EIO;
	}
	v = on ? v | XFS_SB_FEAT_INCOMPAT_EXCHRANGE :
		 v & ~XFS_SB_FEAT_INCOMPAT_EXCHRANGE;
	snprintf(cmd, sizeof(cmd), "write -d features_incompat %#lx",
		 (unsigned long)v);
	{
		const char *const set[] = { "xfs_db", "-x", "-c", "sb 0", "-c",
					    cmd, spare_dev, NULL };

		ret = kt_run(set, out, len, 60);
	}
	return ret;
}

static int sb_exchrange_on(char *out, size_t len)
{
	return sb_exchrange(true, out, len);
}

/*
 * The exchange attacks on a non-reflink xfs with the exchange-range
 * feature, mounted dax=inode: two DAX files, then a pinned DAX file and
 * one that is not DAX (xfs breaks the layouts of both only when both are
 * DAX); then the feature off again, so that xfs_repair -n can check it.
 */
static void t_spare_xfs_exchange(const char *const mkfs[])
{
	const char *fsck = "fsck_i5_exchange_xfs";
	char out[2048], daxdir[4096], a[4096], b[4096];
	struct kt_fs fs, dfs;
	int i, ret;

	if (!spare_format_then(&fs, "setup_spare_xfs_exchange", "xfs", mkfs,
			       sb_exchrange_on, "xfs", "dax=inode")) {
		dtest_fail("i5_exchange_range_control_xfs",
			   "not reached: no xfs with exchange-range and dax=inode");
		return;
	}
	ret = make_dax_dir(&fs, &dfs, daxdir, sizeof(daxdir));
	if (ret) {
		dtest_fail("i5_exchange_range_control_xfs",
			   "not reached: FS_XFLAG_DAX directory %s: %s", daxdir,
			   strerror(ret));
	} else {
		i5_op_cases(&dfs, OP_EXCHANGE_RANGE, "file2", "file1", true);
		snprintf(a, sizeof(a), "%s", kt_path(&dfs, "i5xdax"));
		snprintf(b, sizeof(b), "%s", kt_path(&fs, "i5xpc"));
		i5_case("i5_exchange_range_mixed_pinned_file2_xfs",
			OP_EXCHANGE_RANGE, a, b, 1, 0, ETXTBSY, 0,
			"exchange_range by another process of a pinned DAX file2 (lease released) with a file1 that is not DAX");
		i5_case("i5_exchange_range_mixed_pinned_file1_xfs",
			OP_EXCHANGE_RANGE, b, a, 2, 0, ETXTBSY, 0,
			"exchange_range by another process of a file2 that is not DAX with a pinned DAX file1 (lease released)");
	}
	sync();
	for (i = 0; i < 50; i++) {
		ret = umount2(spare_dir, 0) ? errno : 0;
		if (ret != EBUSY)
			break;
		usleep(100 * 1000);	/* a killed child's last fput */
	}
	if (!ret)
		ret = sb_exchrange(false, out, sizeof(out));
	else
		snprintf(out, sizeof(out), "umount %s: %s", spare_dir,
			 strerror(ret));
	if (!ret && mount(spare_dev, spare_dir, "xfs", 0, "dax=always")) {
		ret = errno;
		snprintf(out, sizeof(out), "mount without exchange-range: %s",
			 strerror(ret));
	}
	if (ret)
		dtest_fail(fsck, "not reached: %s", kt_oneline(out));
	else
		fsck_check(&fs, "i5_exchange", false);
}

static void t_spare_xfs(void)
{
	const char *const mkfs_rl[] = { "mkfs.xfs", "-q", "-f", "-m",
					 "reflink=1", "-d", "su=2m,sw=1,agcount=2",
					 spare_dev, NULL };
	const char *const mkfs[] = { "mkfs.xfs", "-q", "-f", "-m", "reflink=0",
				      "-d", "su=2m,sw=1,agcount=2", spare_dev,
				      NULL };
	struct kt_fs fs;

	if (!spare_format(&fs, "setup_spare_xfs_reflink", "xfs", mkfs_rl,
			  "xfs", "dax=always")) {
		dtest_fail("i5_reflink_shared_pin_daxfd_eopnotsupp_xfs",
			   "not reached: no xfs with reflink and dax=always");
		return;
	}
	if (want("i5_reflink")) {
		i5_reflink_fs_lease(&fs);
		t_i5_reflink_shared(&fs);
	}
	fsck_check(&fs, "i5_reflink", false);

	/* su=2m: PMD-mappable extents; no reflink, so files can be pinned */
	if (!spare_format(&fs, "setup_spare_xfs", "xfs", mkfs, "xfs",
			  "dax=always")) {
		dtest_fail("i5_swapext_control_xfs",
			   "not reached: no xfs with dax=always");
		return;
	}
	if (want("i10_pmd"))
		t_i10_pmd_punch(&fs, PMD_SIZE);
	if (want("i13_pmd"))
		atk_drop_range_pmd(&dev, &fs, PMD_SIZE);
	if (want("i17"))
		atk_pmd_batch(&dev, &fs, PMD_SIZE);
	/* a kernel that swaps pinned extents is left unstable: last */
	if (want("i5_swapext"))
		i5_op_cases(&fs, OP_SWAPEXT, "target", "tmp", true);
	if (want("i5_exchange_range") && !has_exchange_range())
		i5_exchange_range_absent(&fs);
	fsck_check(&fs, "i5", false);
	if (want("i5_exchange_range") && has_exchange_range())
		t_spare_xfs_exchange(mkfs);
}

/*
 * xfs realtime files allocate in realtime extents (-r extsize) larger
 * than a block, and xfs unmaps and frees whole ones: a punch of one page
 * next to a pinned page in the same realtime extent unmaps the pinned
 * page's DAX entry too (a WARN in dax_disassociate_entry()), unless the
 * layout break covers the whole extent and so sees the pin.  The spare
 * NVDIMM is the realtime device (DAX), the VM's disk the data device.
 */
#define RT_EXTSIZE (64 * 1024)

static int make_rt_file(const char *path, size_t size, uint8_t seed)
{
	int fd, err;

	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	err = set_fd_xflag(fd, FS_XFLAG_REALTIME);
	if (!err)
		err = fallocate(fd, 0, 0, size) ? errno : 0;
	if (!err)
		err = kt_fill_pattern(fd, size, seed);
	close(fd);
	return err;
}

static void t_i10_rt_punch(const struct kt_fs *fs)
{
	const char *n_next = "i10_punch_next_to_pinned_page_rtextent_xfs";
	const char *n_other = "i10_punch_other_rtextent_xfs";
	const char *path = kt_path(fs, "i10rt");
	struct atk_falloc next = { path, ATK_PUNCH, KT_MIB + PAGE, PAGE };
	struct atk_falloc other = { path, ATK_PUNCH, KT_TAIL_OFF, RT_EXTSIZE };
	char state[256], first[512] = "";
	struct kt_pin p = KT_PIN_INIT;
	struct fsxattr fa;
	int ret, r1, r2, v, n, fd;
	uint64_t mark;

	ret = make_rt_file(path, KT_FILE_SIZE, 0x11);
	fd = ret ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (!ret && fd < 0)
		ret = errno;
	if (!ret && ioctl(fd, FS_IOC_FSGETXATTR, &fa))
		ret = errno;
	if (ret || !(fa.fsx_xflags & FS_XFLAG_REALTIME) || is_dax(path) != 1) {
		dtest_fail(n_next, "not reached: realtime DAX file %s: %s, realtime %d, DAX %d",
			   path, strerror(ret), !ret &&
			   !!(fa.fsx_xflags & FS_XFLAG_REALTIME), is_dax(path));
		dtest_fail(n_other, "not reached");
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	if (pin_file(path, KT_MIB, PAGE, KT_PIN_DAXFD, true, &p)) {
		dtest_fail(n_next, "not reached: pin of the page at 1 MiB: %s",
			   why);
		dtest_fail(n_other, "not reached");
		goto out;
	}
	mark = kt_kmsg_mark();
	r1 = kt_child(atk_falloc_fn, &next, KT_OP_TIMEOUT);
	r2 = kt_child(atk_falloc_fn, &other, KT_OP_TIMEOUT);
	n = kt_kmsg_scan(mark, first, sizeof(first));
	v = kt_verify_pattern(path, KT_MIB, PAGE, 0x11, state, sizeof(state));
	dtest_check(n_next, r1 == ETXTBSY && n == 0 && !v,
		    "realtime extent %d KiB; 4 KiB punch right after a pinned 4 KiB page in the same realtime extent, by another process: %s (want ETXTBSY: xfs unmaps the whole extent); %d kernel report line(s)%s%s; pinned page %s",
		    RT_EXTSIZE / 1024, en(r1), n, n ? "; first: " : "", first,
		    v ? state : "unchanged");
	if (n > 0)
		kt_kmsg_dump(mark, 80);
	dtest_check(n_other, r2 == 0,
		    "punch of a whole realtime extent at 4 MiB, away from the pin: %s (want success)",
		    en(r2));
out:
	kt_unpin(&p);
	unlink(path);
}

static void t_spare_xfs_rt(void)
{
	const char *disk = disk_dev();
	char rtopt[256], opts[320], out[2048];
	const char *mkfs[] = { "mkfs.xfs", "-q", "-f", "-m", "reflink=0", "-r",
			       rtopt, disk, NULL };
	const char *repair[] = { "xfs_repair", "-n", "-r", spare_dev, disk,
				 NULL };
	struct kt_fs fs = { "xfs", spare_dir, disk };
	int ret;

	if (!spare_dev || !disk) {
		dtest_fail("setup_spare_xfs_rt",
			   "need the spare NVDIMM (realtime device) and the VM's disk (data device): %s, %s",
			   spare_dev ? spare_dev : "no DAXLEASE_SPARE_DEV",
			   disk ? disk : "no /dev/vd?");
		return;
	}
	snprintf(rtopt, sizeof(rtopt), "rtdev=%s,extsize=%d", spare_dev,
		 RT_EXTSIZE);
	snprintf(opts, sizeof(opts), "rtdev=%s,dax=always", spare_dev);
	ret = kt_run(mkfs, out, sizeof(out), 300);
	if (ret) {
		dtest_fail("setup_spare_xfs_rt", "mkfs.xfs -r %s %s: exit %d: %s",
			   rtopt, disk, ret, kt_oneline(out));
		return;
	}
	mkdir(spare_dir, 0755);
	if (mount(disk, spare_dir, "xfs", 0, opts)) {
		dtest_fail("setup_spare_xfs_rt", "mount -t xfs -o %s %s %s: %s",
			   opts, disk, spare_dir, strerror(errno));
		return;
	}
	/*
	 * New files inherit the realtime flag: DAX is decided when the
	 * inode is set up, by the device its data lives on.
	 */
	ret = set_dir_xflag(spare_dir, FS_XFLAG_RTINHERIT);
	if (ret) {
		dtest_fail("setup_spare_xfs_rt", "FS_XFLAG_RTINHERIT on %s: %s",
			   spare_dir, strerror(ret));
		umount2(spare_dir, 0);
		return;
	}
	dtest_pass("setup_spare_xfs_rt",
		   "data device %s, realtime device %s (-r extsize=%d), mounted -o %s",
		   disk, spare_dev, RT_EXTSIZE, opts);
	t_i10_rt_punch(&fs);
	ret = umount2(spare_dir, 0) ? errno : 0;
	if (!ret)
		ret = kt_run(repair, out, sizeof(out), 300);
	dtest_check("fsck_i10_rt_xfs", ret == 0,
		    "umount, xfs_repair -n -r %s %s: %d: %s", spare_dev, disk,
		    ret, kt_oneline(out));
}

static void t_spare_ext4(void)
{
	const char *const mkfs[] = { "mkfs.ext4", "-q", "-F", "-b", "4096",
				      "-E", "stride=512,stripe_width=512",
				      spare_dev, NULL };
	char daxdir[4096], a[4096], b[4096];
	struct kt_fs fs, dfs;
	int ret;

	if (!spare_format(&fs, "setup_spare_ext4", "ext4", mkfs, "ext4",
			  "dax=inode")) {
		dtest_fail("i5_move_ext_pinned_donor_ext4",
			   "not reached: no ext4 with dax=inode");
		return;
	}
	/* files in dax/ are DAX (inherited FS_XFLAG_DAX), the others not */
	ret = make_dax_dir(&fs, &dfs, daxdir, sizeof(daxdir));
	snprintf(a, sizeof(a), "%s", kt_path(&fs, "nodax"));
	snprintf(b, sizeof(b), "%s", kt_path(&dfs, "dax"));
	if (!ret)
		ret = kt_make_file(a, KT_MIB, 0x11);
	if (!ret)
		ret = kt_make_file(b, KT_MIB, 0x11);
	if (ret || is_dax(a) != 0 || is_dax(b) != 1) {
		ret = ret ? ret : EMEDIUMTYPE;
		dtest_fail("setup_spare_ext4_dax_inode",
			   "FS_XFLAG_DAX directory: %s; statx DAX of %s: %d (want 0), of %s: %d (want 1)",
			   strerror(ret), a, is_dax(a), b, is_dax(b));
	} else {
		dtest_pass("setup_spare_ext4_dax_inode",
			   "%s is not DAX, %s is", a, b);
		if (want("i4_ext4_nodax"))
			lease_checks(a, "ext4_nodax");
	}
	unlink(a);
	unlink(b);
	if (ret) {
		fsck_check(&fs, "i5", false);
		return;
	}

	snprintf(a, sizeof(a), "%s", kt_path(&dfs, "i5orig"));
	snprintf(b, sizeof(b), "%s", kt_path(&dfs, "i5donor"));
	if (!want("i5_swap_boot"))
		goto move_ext;
	i5_case("i5_swap_boot_pinned_ext4", OP_SWAP_BOOT, a, NULL, 1, 0,
		ETXTBSY, 0,
		"EXT4_IOC_SWAP_BOOT by another process on a pinned DAX file (lease released)");
	i5_case("i5_swap_boot_leased_holder_ext4", OP_SWAP_BOOT, a, NULL, 0, 1,
		EDEADLOCK, 0,
		"EXT4_IOC_SWAP_BOOT by the process holding the lease on the DAX file");
move_ext:
	if (!want("i5_move_ext"))
		goto out;
	i5_case("i5_move_ext_pinned_orig_ext4", OP_MOVE_EXT, a, b, 1, 0,
		ETXTBSY, EOPNOTSUPP,
		"EXT4_IOC_MOVE_EXT by another process, pinned DAX orig (upstream refuses DAX origs with EOPNOTSUPP first)");
	/*
	 * EXT4_IOC_MOVE_EXT refuses a DAX orig (upstream) but not a DAX
	 * donor: a non-DAX orig with a pinned DAX donor is the way in.  A
	 * kernel that lets it through puts page cache pages into the DAX
	 * donor's mapping and may oops at its unlink: last.
	 */
	snprintf(a, sizeof(a), "%s", kt_path(&fs, "i5orig"));
	i5_case("i5_move_ext_pinned_donor_ext4", OP_MOVE_EXT, a, b, 2, 0,
		ETXTBSY, 0,
		"EXT4_IOC_MOVE_EXT by another process, non-DAX orig, pinned DAX donor (lease released)");
	i5_case("i5_move_ext_leased_holder_ext4", OP_MOVE_EXT, a, b, 0, 2,
		EDEADLOCK, 0,
		"EXT4_IOC_MOVE_EXT, non-DAX orig, DAX donor leased by the caller");
out:
	rmdir(daxdir);
	fsck_check(&fs, "i5", false);
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
	int i;

	if (argc > 1 && !strcmp(argv[1], "--nd-write"))
		return atk_nd_write_main(argc, argv);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--race-seconds") && i + 1 < argc) {
			race_seconds = atoi(argv[++i]);
		} else {
			printf("usage: %s [--only SUBSTRING[,SUBSTRING...]] [--race-seconds N]\n"
			       "Runs the attacks suite in the test VM; see tests/vm/suites/attacks.sh.\n",
			       argv[0]);
			return !strcmp(argv[i], "--help") ? 0 : 2;
		}
	}
	kt_env_init();
	spare_dev = getenv("DAXLEASE_SPARE_DEV");
	if (spare_dev && !*spare_dev)
		spare_dev = NULL;
	if (kt_suite_begin("attacks", &dev, 2))
		return dtest_end();

	if (want("i12") && kt_env.nfs)
		t_i12();
	for (i = 0; i < kt_env.nfs; i++) {
		const struct kt_fs *fs = &kt_env.fs[i];

		if (want("i1")) {
			t_i1_afxdp(fs);
			t_i1_uring(fs);
		}
		if (want("i3")) {
			t_i3_recycled(fs);
			t_i3_other_open(fs);
			t_i3_shared_upgrade(fs);
		}
		if (want("i7"))
			t_i7(fs);
		if (want("i8")) {
			t_i8(fs);
			t_i8_failed_dereg(fs);
		}
		/*
		 * rxe's 50 s wait for a held MR, once: the flaw is in the
		 * driver, the file system only supplies the truncate
		 */
		if (want("i18") && i == 0)
			atk_dereg_busy(&dev, fs);
		/* 10,000 VMAs take half a minute to set up: one shape each */
		if (want("i9"))
			t_i9(fs, strcmp(fs->name, "ext4") ? 1000 : 1);
		if (want("i11"))
			t_i11_fs(fs);
		if (want("i15"))
			atk_pins_scale(&dev, fs);
		if (want("i16") && !strcmp(fs->name, "xfs"))
			atk_pnfs(&dev, fs);
		if (want("i2")) {
			t_i2_race(fs, RACE_LEGACY);
			t_i2_race(fs, RACE_DAXFD);
			t_i2_race(fs, RACE_READONLY);
		}
	}
	/* the groups of refused layout changes, each checked with fsck */
	for (i = 0; i < kt_env.nfs; i++) {
		const struct kt_fs *fs = &kt_env.fs[i];

		if (want("i10"))
			t_i10_times(fs);
		if (!strcmp(fs->name, "ext4") && want("i10_pmd"))
			t_i10_pmd_punch(fs, 0);
		if (want("i10") || want("i10_pmd"))
			fsck_check(fs, "i10", true);
		if (want("i13_drop"))
			atk_drop_range_fs(&dev, fs);
		if (!strcmp(fs->name, "ext4") && want("i13_pmd"))
			atk_drop_range_pmd(&dev, fs, 0);
		if (want("i13_drop") || want("i13_pmd"))
			fsck_check(fs, "i13", true);
		if (!strcmp(fs->name, "ext4") && want("i17")) {
			atk_pmd_batch(&dev, fs, 0);
			fsck_check(fs, "i17", true);
		}
		if (want("i6")) {
			t_i6(fs);
			fsck_check(fs, "i6", true);
		}
	}
	if (want("i11"))
		t_i11_devdax();
	if (want("i17"))
		atk_pmd_batch_devdax(&dev, kt_env.devdax);
	if (want("i4_tmpfs"))
		t_i4_tmpfs();
	/* the spare NVDIMM; ext4's extent moves last */
	if (want("i4_ext2"))
		t_spare_ext2();
	if (want("i10_pmd") || want("i13_pmd") || want("i5_reflink") ||
	    want("i5_swapext") || want("i17") ||
	    want("i5_exchange_range"))
		t_spare_xfs();
	if (want("i10_rt"))
		t_spare_xfs_rt();
	if (want("i4_ext4_nodax") || want("i5_swap_boot") ||
	    want("i5_move_ext"))
		t_spare_ext4();
	/* unbinds the devdax and the spare namespace, then binds them again */
	if (want("i14"))
		atk_remove_under_pin(&dev, kt_env.devdax, spare_dev);

	return kt_suite_end(&dev, "dmesg_clean", 0);
}
