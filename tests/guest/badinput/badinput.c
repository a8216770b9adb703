// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Bad input to the daxlease API: every case asserts the errno
 * documented in the man pages (ibv_reg_dax_mr(3), ...), a message that
 * says why (it must be new, i.e. set by this very call, and name the
 * cause), and that the process has the same fds, file mappings,
 * leases/locks and file_pins afterwards as before (dl_snapshot.h).
 *
 * Runs in the guest (rxe + emulated NVDIMMs, env from tests/vm) on the RDMA
 * device the harness set up (DAXLEASE_RDMA_DEV, else the first one): a
 * device that cannot be opened, or a pd that cannot be allocated, is a
 * failed test "rdma_device", not a reason to skip the cases that need it;
 * only the harness decides that there is no device, and then the run
 * fails.  With --no-device (host ctest) it opens none and runs only the
 * cases that need no protection domain; the others are not run and not
 * reported.  Cases that may crash
 * (double deregistration, deregistration after ibv_close_device) or need
 * another identity (setuid nobody) run in a forked child that reports back
 * through a pipe.
 *
 * usage: badinput [--list] [--only NAME] [--no-device]
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/verbs_dax.h>
#include <linux/daxlease_fcntl.h>

#include "dtest.h"
#include "dl_snapshot.h"

#ifndef F_SETLEASE
#define F_SETLEASE 1024
#endif

#define MiB (1UL << 20)
#define FILE_SIZE (4 * MiB)
#define NOBODY 65534

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_dax_caps caps;
	bool have_caps;
	const char *rdma_dev;
	const char *ext4;	/* DAXLEASE_EXT4 mount, or NULL */
	const char *devdax;	/* DAXLEASE_DEVDAX, or NULL */
	char dir[256];		/* scratch dir, page-cache fs */
	char pc[PATH_MAX];	/* FILE_SIZE page-cache file */
	char fsdax[PATH_MAX];	/* FILE_SIZE file on DAXLEASE_EXT4 */
	char ro_dir[300];	/* tmpfs remounted ro */
	char ro_file[PATH_MAX];
	char ro_dax_dir[300];	/* ro bind mount of DAXLEASE_EXT4 */
	char ro_dax_file[PATH_MAX];
	bool ro_mounted, ro_dax_mounted;
	char sentinel[512];	/* message of a known earlier call */
	int lease_break_time;	/* saved /proc/sys/fs/lease-break-time */
	double time_scale;	/* DAXLEASE_TIME_SCALE, >= 1 */
	const char *only;
	bool list;
	bool no_device;		/* --no-device: the pd-less cases only */
	int not_run;		/* cases left out by --no-device */
	char rdma_why[512];	/* why the device could not be used */
};

static struct env E = { .lease_break_time = -1 };

/* What a registration attempt did; written by a child through a pipe. */
struct outcome {
	bool ran;
	bool got_mr;		/* registration unexpectedly succeeded */
	int rc;			/* for int-returning calls */
	int err;
	char msg[512];
	bool same;		/* snapshot unchanged */
	char why[512];
	double secs;
	int sig;		/* child killed by this signal */
	char note[256];		/* set by the case when it could not run */
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static bool selected(const char *name)
{
	if (E.list) {
		printf("%s\n", name);
		return false;
	}
	return !E.only || !strcmp(E.only, name);
}

/* Does msg contain one of the '|'-separated keys (case-insensitive)? */
static bool msg_has(const char *msg, const char *keys)
{
	char buf[256], *k, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", keys);
	for (k = strtok_r(buf, "|", &save); k; k = strtok_r(NULL, "|", &save))
		if (strcasestr(msg, k))
			return true;
	return false;
}

static const char *ename(int e)
{
	static char b[32];

	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EOVERFLOW: return "EOVERFLOW";
	case ERANGE: return "ERANGE";
	case EBADF: return "EBADF";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EROFS: return "EROFS";
	case EISDIR: return "EISDIR";
	case ENODEV: return "ENODEV";
	case ELOOP: return "ELOOP";
	case ENOENT: return "ENOENT";
	case EAGAIN: return "EAGAIN";
	case ENOSPC: return "ENOSPC";
	case EFBIG: return "EFBIG";
	case EBUSY: return "EBUSY";
	case EIO: return "EIO";
	case EFAULT: return "EFAULT";
	default:
		snprintf(b, sizeof(b), "errno %d", e);
		return b;
	}
}

/* Reset the thread-local message to a known one before each call. */
static void set_sentinel(void)
{
	ibv_dereg_dax_mr(NULL);
}

static void attempt_reg(struct ibv_pd *pd,
			const struct ibv_dax_mr_init_attr *attr,
			struct outcome *o)
{
	struct dl_snap a, b;
	struct ibv_mr *mr;
	double t0;

	dl_snap_take(&a);
	set_sentinel();
	t0 = now();
	errno = 0;
	mr = ibv_reg_dax_mr(pd, attr);
	o->err = errno;
	o->secs = now() - t0;
	snprintf(o->msg, sizeof(o->msg), "%s", ibv_dax_errmsg());
	o->ran = true;
	if (mr) {
		o->got_mr = true;
		ibv_dereg_dax_mr(mr);
	}
	dl_snap_take(&b);
	o->same = dl_snap_same(&a, &b, o->why, sizeof(o->why));
	dl_snap_free(&a);
	dl_snap_free(&b);
}

/*
 * Judge a failing call: the documented errno, a fresh message naming the
 * cause, nothing left behind, and no blocking (lease breaks, fifos).
 */
static void judge_fail(const char *name, const struct outcome *o, int want,
		       const char *keys)
{
	if (o->note[0]) {
		dtest_fail(name, "could not run: %s", o->note);
		return;
	}
	if (o->sig) {
		dtest_fail(name, "child killed by signal %d (%s)", o->sig,
			   strsignal(o->sig));
		return;
	}
	if (o->got_mr) {
		dtest_fail(name, "registration succeeded; want %s", ename(want));
		return;
	}
	if (o->err != want) {
		dtest_fail(name, "errno %s, want %s; message \"%s\"",
			   ename(o->err), ename(want), o->msg);
		return;
	}
	if (!o->msg[0] || !strcmp(o->msg, E.sentinel)) {
		dtest_fail(name, "%s but no message of its own (\"%s\")",
			   ename(want), o->msg);
		return;
	}
	if (keys && !msg_has(o->msg, keys)) {
		dtest_fail(name, "%s but message \"%s\" does not name the cause (%s)",
			   ename(want), o->msg, keys);
		return;
	}
	if (!o->same) {
		dtest_fail(name, "%s, but left something behind: %s",
			   ename(want), o->why);
		return;
	}
	/*
	 * A library waiting for a lease break takes lease-break-time (set
	 * to 10 s by setup()); sanitizers under TCG make honest calls take
	 * a second or two.
	 */
	if (o->secs > 5.0 * E.time_scale) {
		dtest_fail(name, "%s after %.2f s: it blocked", ename(want),
			   o->secs);
		return;
	}
	dtest_pass(name, "%s \"%s\"; fds, maps, leases unchanged", ename(want),
		   o->msg);
}

static void expect_reg_fail(const char *name, struct ibv_pd *pd,
			    const struct ibv_dax_mr_init_attr *attr, int want,
			    const char *keys)
{
	struct outcome o = {};

	if (!selected(name))
		return;
	dtest_clock();
	attempt_reg(pd, attr, &o);
	judge_fail(name, &o, want, keys);
}

static bool need_pd(const char *name)
{
	if (!selected(name))
		return false;
	/*
	 * Without the device the case is not run: --no-device asked for
	 * that, else "rdma_device" has failed the program already.
	 */
	if (!E.pd) {
		E.not_run++;
		return false;
	}
	return true;
}

static bool need(const char *name, const void *what, const char *why)
{
	if (!need_pd(name))
		return false;
	if (!what) {
		dtest_skip(name, "%s", why);
		return false;
	}
	return true;
}

/* path-based attrs ignore fd; fd-based ones set it */
#define ATTR(...) ((struct ibv_dax_mr_init_attr){ __VA_ARGS__ })
#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |		\
	    IBV_ACCESS_REMOTE_READ)
#define RO (IBV_ACCESS_REMOTE_READ)

/* ---------------------------------------------------------------- setup */

static void expect_reg_ok(const char *name,
			  const struct ibv_dax_mr_init_attr *attr,
			  const char *check_path, off_t want_size);

static int make_file(const char *path, off_t size)
{
	char buf[4096];
	off_t done;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	memset(buf, 0x5a, sizeof(buf));
	for (done = 0; done < size; done += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			close(fd);
			return -1;
		}
	fchmod(fd, 0666);
	close(fd);
	return 0;
}

static void write_int(const char *path, int v)
{
	FILE *f = fopen(path, "we");

	if (f) {
		fprintf(f, "%d\n", v);
		fclose(f);
	}
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * Linux < 6.2 ib_umem_get() pins with FOLL_WRITE, so a read-only shared
 * mapping cannot be registered: documented EFAULT (verbs_dax.h).
 */
static bool kernel_pins_for_write(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major < 6 || (major == 6 && minor < 2);
}

/* A read-only registration: works, or the documented EFAULT on < 6.2. */
static void expect_reg_ro(const char *name,
			  const struct ibv_dax_mr_init_attr *attr)
{
	struct outcome o = {};

	if (!kernel_pins_for_write()) {
		expect_reg_ok(name, attr, NULL, 0);
		return;
	}
	dtest_clock();
	attempt_reg(E.pd, attr, &o);
	judge_fail(name, &o, EFAULT, "6.2");
}

/* Open E.rdma_dev (or the first device) and a pd; else E.rdma_why. */
static void open_rdma(struct ibv_context **ctxp, struct ibv_pd **pdp)
{
	const char *want = E.rdma_dev ? E.rdma_dev : "(the first device)";
	struct ibv_device **list;
	int i, n = 0;

	*ctxp = NULL;
	*pdp = NULL;
	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(E.rdma_why, sizeof(E.rdma_why),
			 "ibv_get_device_list: %s", strerror(errno));
		return;
	}
	snprintf(E.rdma_why, sizeof(E.rdma_why),
		 "no RDMA device %s among the %d listed", want, n);
	for (i = 0; i < n; i++) {
		if (E.rdma_dev && strcmp(ibv_get_device_name(list[i]),
					 E.rdma_dev))
			continue;
		errno = 0;
		*ctxp = ibv_open_device(list[i]);
		if (!*ctxp)
			snprintf(E.rdma_why, sizeof(E.rdma_why),
				 "ibv_open_device(%s): %s",
				 ibv_get_device_name(list[i]),
				 strerror(errno ? errno : ENODEV));
		break;
	}
	ibv_free_device_list(list);
	if (*ctxp) {
		errno = 0;
		*pdp = ibv_alloc_pd(*ctxp);
		if (!*pdp) {
			snprintf(E.rdma_why, sizeof(E.rdma_why),
				 "ibv_alloc_pd on %s: %s",
				 ibv_get_device_name((*ctxp)->device),
				 strerror(errno ? errno : ENOMEM));
			ibv_close_device(*ctxp);
			*ctxp = NULL;
		}
	}
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	struct stat st;

	/* valgrind runs: DAXLEASE_TIME_SCALE=6 stretches the time limits */
	if (getenv("DAXLEASE_TIME_SCALE"))
		E.time_scale = atof(getenv("DAXLEASE_TIME_SCALE"));
	if (E.time_scale < 1)
		E.time_scale = 1;
	E.rdma_dev = getenv("DAXLEASE_RDMA_DEV");
	E.ext4 = getenv("DAXLEASE_EXT4");
	E.devdax = getenv("DAXLEASE_DEVDAX");
	if (E.ext4 && (stat(E.ext4, &st) || !S_ISDIR(st.st_mode)))
		E.ext4 = NULL;
	if (E.devdax && stat(E.devdax, &st))
		E.devdax = NULL;

	snprintf(E.dir, sizeof(E.dir), "%.200s/dl-badinput.%d", t ? t : "/tmp",
		 (int)getpid());
	mkdir(E.dir, 0755);
	chmod(E.dir, 0755);
	snprintf(E.pc, sizeof(E.pc), "%s/pagecache.dat", E.dir);
	if (make_file(E.pc, FILE_SIZE))
		fprintf(stderr, "cannot create %s: %m\n", E.pc);
	if (E.ext4) {
		snprintf(E.fsdax, sizeof(E.fsdax), "%s/dl-badinput.%d.dat",
			 E.ext4, (int)getpid());
		if (make_file(E.fsdax, FILE_SIZE))
			E.fsdax[0] = 0;
	}

	/* read-only mounts need root; without it those cases skip */
	snprintf(E.ro_dir, sizeof(E.ro_dir), "%s/ro", E.dir);
	mkdir(E.ro_dir, 0755);
	if (!mount("dl-badinput", E.ro_dir, "tmpfs", 0, "size=8m,mode=0755")) {
		snprintf(E.ro_file, sizeof(E.ro_file), "%s/file.dat", E.ro_dir);
		make_file(E.ro_file, FILE_SIZE);
		if (!mount("dl-badinput", E.ro_dir, "tmpfs",
			   MS_REMOUNT | MS_RDONLY, NULL))
			E.ro_mounted = true;
		else
			umount(E.ro_dir);
	}
	if (E.fsdax[0]) {
		snprintf(E.ro_dax_dir, sizeof(E.ro_dax_dir), "%s/ro-dax",
			 E.dir);
		mkdir(E.ro_dax_dir, 0755);
		if (!mount(E.ext4, E.ro_dax_dir, "none", MS_BIND, NULL)) {
			if (!mount("none", E.ro_dax_dir, "none",
				   MS_REMOUNT | MS_BIND | MS_RDONLY, NULL)) {
				E.ro_dax_mounted = true;
				snprintf(E.ro_dax_file, sizeof(E.ro_dax_file),
					 "%s/%s", E.ro_dax_dir,
					 strrchr(E.fsdax, '/') + 1);
			} else {
				umount(E.ro_dax_dir);
			}
		}
	}

	/*
	 * Bound a library that would wait for a lease break: the kernel
	 * gives the holder lease-break-time seconds (default 45).
	 */
	E.lease_break_time = read_int("/proc/sys/fs/lease-break-time");
	if (E.lease_break_time >= 0 && geteuid() == 0)
		write_int("/proc/sys/fs/lease-break-time",
			  (int)(10 * E.time_scale));

	if (!E.no_device)
		open_rdma(&E.ctx, &E.pd);
	if (E.ctx && !ibv_dax_query_caps(E.ctx, &E.caps, sizeof(E.caps)))
		E.have_caps = true;

	set_sentinel();
	snprintf(E.sentinel, sizeof(E.sentinel), "%s", ibv_dax_errmsg());
}

static void cleanup(void)
{
	char p[PATH_MAX + 16];

	if (E.pd)
		ibv_dealloc_pd(E.pd);
	if (E.ctx)
		ibv_close_device(E.ctx);
	if (E.ro_mounted)
		umount2(E.ro_dir, MNT_DETACH);
	if (E.ro_dax_mounted)
		umount2(E.ro_dax_dir, MNT_DETACH);
	rmdir(E.ro_dax_dir);
	rmdir(E.ro_dir);
	if (E.fsdax[0])
		unlink(E.fsdax);
	unlink(E.pc);
	snprintf(p, sizeof(p), "%s/fifo", E.dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sock", E.dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/loop-a", E.dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/loop-b", E.dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/created.dat", E.dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/huge.dat", E.dir);
	unlink(p);
	rmdir(E.dir);
	if (E.lease_break_time >= 0 && geteuid() == 0)
		write_int("/proc/sys/fs/lease-break-time", E.lease_break_time);
}

/* ------------------------------------------------------ forked children */

typedef void (*child_fn)(struct outcome *o, void *arg);

/*
 * Run fn in a child (own context if it wants one) and bring its outcome
 * back; a crash or a hang (30 s) becomes o->sig.
 */
static void in_child(child_fn fn, void *arg, struct outcome *o)
{
	int p[2], status;
	double t0 = now();
	pid_t pid;
	ssize_t n;

	memset(o, 0, sizeof(*o));
	if (pipe2(p, O_CLOEXEC)) {
		snprintf(o->note, sizeof(o->note), "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(o->note, sizeof(o->note), "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (!pid) {
		struct outcome co = {};

		close(p[0]);
		fn(&co, arg);
		if (write(p[1], &co, sizeof(co)) != sizeof(co))
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };

		if (poll(&pfd, 1, 1000) > 0 || now() - t0 > 30)
			break;
	}
	n = read(p[0], o, sizeof(*o));
	close(p[0]);
	if (n != sizeof(*o)) {
		memset(o, 0, sizeof(*o));
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	if (n != sizeof(*o)) {
		if (WIFSIGNALED(status))
			o->sig = WTERMSIG(status);
		else
			snprintf(o->note, sizeof(o->note),
				 "child exited %d without a report",
				 WEXITSTATUS(status));
	}
}

/* A child holding a lease of type on path until the returned fd closes. */
struct holder {
	pid_t pid;
	int ctl;		/* write end: close to release */
	int err;		/* errno of the child's F_SETLEASE, 0 = held */
};

static void lease_holder(const char *path, int oflags, int type,
			 struct holder *h)
{
	int ready[2], ctl[2];

	h->pid = -1;
	h->ctl = -1;
	h->err = EIO;
	if (pipe2(ready, O_CLOEXEC))
		return;
	if (pipe2(ctl, O_CLOEXEC)) {
		close(ready[0]);
		close(ready[1]);
		return;
	}
	fflush(NULL);
	h->pid = fork();
	if (!h->pid) {
		int fd, err = 0;
		char c;

		close(ready[0]);
		close(ctl[1]);
		/* a lease break is announced with SIGIO: stay alive */
		signal(SIGIO, SIG_IGN);
		fd = open(path, oflags | O_CLOEXEC);
		if (fd < 0 || fcntl(fd, F_SETLEASE, type))
			err = errno;
		if (write(ready[1], &err, sizeof(err)) != sizeof(err))
			_exit(2);
		while (read(ctl[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(ctl[0]);
	h->ctl = ctl[1];
	if (h->pid < 0 || read(ready[0], &h->err, sizeof(h->err)) !=
			  sizeof(h->err))
		h->err = EIO;
	close(ready[0]);
}

static void holder_release(struct holder *h)
{
	if (h->ctl >= 0)
		close(h->ctl);
	if (h->pid > 0)
		waitpid(h->pid, NULL, 0);
}

/* ---------------------------------------------------------- the cases */

static void case_null_and_masks(void)
{
	struct ibv_dax_mr_init_attr a;

	a = ATTR(.path = E.pc, .length = MiB, .access = RW);
	expect_reg_fail("null_pd", NULL, &a, EINVAL, "pd");

	if (need_pd("null_attr"))
		expect_reg_fail("null_attr", E.pd, NULL, EINVAL, "attr");

	a = ATTR(.comp_mask = 1ULL << 3, .path = E.pc, .length = MiB,
		 .access = RW);
	if (need_pd("unknown_comp_mask_bit3"))
		expect_reg_fail("unknown_comp_mask_bit3", E.pd, &a, EOPNOTSUPP,
				"comp_mask");
	a.comp_mask = 1ULL << 63 | IBV_DAX_MR_INIT_FLAGS;
	if (need_pd("unknown_comp_mask_bit63"))
		expect_reg_fail("unknown_comp_mask_bit63", E.pd, &a, EOPNOTSUPP,
				"comp_mask");

	a = ATTR(.comp_mask = IBV_DAX_MR_INIT_FLAGS, .flags = 1u << 4,
		 .path = E.pc, .length = MiB, .access = RW);
	if (need_pd("unknown_flag_bit4"))
		expect_reg_fail("unknown_flag_bit4", E.pd, &a, EOPNOTSUPP,
				"flag");
	a.flags = 1u << 31 | IBV_DAX_MR_CREATE;
	if (need_pd("unknown_flag_bit31"))
		expect_reg_fail("unknown_flag_bit31", E.pd, &a, EOPNOTSUPP,
				"flag");
	a = ATTR(.flags = IBV_DAX_MR_NO_FALLBACK, .path = E.pc, .length = MiB,
		 .access = RW);
	if (need_pd("flags_without_comp_mask"))
		expect_reg_fail("flags_without_comp_mask", E.pd, &a, EINVAL,
				"IBV_DAX_MR_INIT_FLAGS");
	a = ATTR(.comp_mask = IBV_DAX_MR_INIT_FLAGS,
		 .flags = IBV_DAX_MR_ALLOW_ODP | IBV_DAX_MR_NO_FALLBACK,
		 .path = E.pc, .length = MiB, .access = RW);
	if (need_pd("odp_and_no_fallback"))
		expect_reg_fail("odp_and_no_fallback", E.pd, &a, EINVAL,
				"contradict");
	a = ATTR(.path = E.pc, .length = MiB, .access = IBV_ACCESS_ON_DEMAND);
	if (need_pd("access_on_demand"))
		expect_reg_fail("access_on_demand", E.pd, &a, EINVAL,
				"ALLOW_ODP");
	a = ATTR(.path = E.pc, .length = MiB, .access = 1u << 30);
	if (need_pd("access_unknown_bit"))
		expect_reg_fail("access_unknown_bit", E.pd, &a, EINVAL,
				"IBV_ACCESS");
	a = ATTR(.path = E.pc, .length = MiB,
		 .access = IBV_ACCESS_REMOTE_WRITE);
	if (need_pd("remote_write_without_local"))
		expect_reg_fail("remote_write_without_local", E.pd, &a, EINVAL,
				"LOCAL_WRITE");
}

static void case_lengths(void)
{
	struct ibv_dax_mr_init_attr a;

	a = ATTR(.path = E.pc, .length = 0, .access = RW);
	if (need_pd("zero_length"))
		expect_reg_fail("zero_length", E.pd, &a, EINVAL, "length");

	a = ATTR(.path = E.pc, .offset = UINT64_MAX - 4095, .length = 8192,
		 .access = RW);
	if (need_pd("offset_length_wraps"))
		expect_reg_fail("offset_length_wraps", E.pd, &a, EOVERFLOW,
				"overflow");
	a = ATTR(.path = E.pc, .offset = 4096, .length = SIZE_MAX,
		 .access = RW);
	if (need_pd("length_size_max"))
		expect_reg_fail("length_size_max", E.pd, &a, EOVERFLOW,
				"overflow");
	a = ATTR(.path = E.pc, .offset = (uint64_t)INT64_MAX - 4095,
		 .length = 8192, .access = RW);
	if (need_pd("past_off_t_max"))
		expect_reg_fail("past_off_t_max", E.pd, &a, EOVERFLOW,
				"overflow");
	a = ATTR(.path = E.pc, .length = 1ULL << 40, .access = RW);
	if (need_pd("huge_length_past_eof"))
		expect_reg_fail("huge_length_past_eof", E.pd, &a, ERANGE,
				"end of");
	a = ATTR(.path = E.pc, .offset = FILE_SIZE, .length = 4096,
		 .access = RW);
	if (need_pd("range_past_eof"))
		expect_reg_fail("range_past_eof", E.pd, &a, ERANGE,
				"IBV_DAX_MR_CREATE");
	a.offset = FILE_SIZE - 4096;
	a.length = 8192;
	if (need_pd("range_straddles_eof"))
		expect_reg_fail("range_straddles_eof", E.pd, &a, ERANGE,
				"end of");
	if (need("fsdax_range_past_eof", E.fsdax[0] ? E.fsdax : NULL,
		 "no DAXLEASE_EXT4 mount")) {
		a = ATTR(.path = E.fsdax, .offset = FILE_SIZE, .length = 4096,
			 .access = RW);
		expect_reg_fail("fsdax_range_past_eof", E.pd, &a, ERANGE,
				"IBV_DAX_MR_CREATE");
	}
}

/* A registration that must work, and leave nothing behind once gone. */
static void expect_reg_ok(const char *name,
			  const struct ibv_dax_mr_init_attr *attr,
			  const char *check_path, off_t want_size)
{
	struct dl_snap a, b;
	struct ibv_dax_mr_attr q = {};
	struct ibv_mr *mr;
	char why[512];
	struct stat st;
	int ret;

	dtest_clock();
	dl_snap_take(&a);
	mr = ibv_reg_dax_mr(E.pd, attr);
	if (!mr) {
		dtest_fail(name, "registration failed: %s \"%s\"", ename(errno),
			   ibv_dax_errmsg());
		dl_snap_free(&a);
		return;
	}
	if (ibv_query_dax_mr(mr, &q, sizeof(q)) || q.length != attr->length) {
		dtest_fail(name, "query: %s \"%s\"", ename(errno),
			   ibv_dax_errmsg());
		ibv_dereg_dax_mr(mr);
		dl_snap_free(&a);
		return;
	}
	if (check_path && (stat(check_path, &st) || st.st_size < want_size)) {
		dtest_fail(name, "%s has %lld bytes, want >= %lld", check_path,
			   (long long)st.st_size, (long long)want_size);
		ibv_dereg_dax_mr(mr);
		dl_snap_free(&a);
		return;
	}
	ret = ibv_dereg_dax_mr(mr);
	if (ret) {
		dtest_fail(name, "dereg: %s \"%s\"", ename(ret),
			   ibv_dax_errmsg());
		dl_snap_free(&a);
		return;
	}
	dl_snap_take(&b);
	if (!dl_snap_same(&a, &b, why, sizeof(why)))
		dtest_fail(name, "after dereg: %s", why);
	else
		dtest_pass(name, "%s strategy %d; nothing left after dereg",
			   q.kind == IBV_DAX_FILE_FSDAX ? "fsdax" :
			   q.kind == IBV_DAX_FILE_DEVDAX ? "devdax" :
							    "pagecache",
			   q.strategy);
	dl_snap_free(&a);
	dl_snap_free(&b);
}

static void case_create(void)
{
	char path[PATH_MAX + 16], huge[PATH_MAX + 16];
	struct ibv_dax_mr_init_attr a;
	struct outcome o = {};
	struct stat st;

	snprintf(path, sizeof(path), "%s/created.dat", E.dir);
	snprintf(huge, sizeof(huge), "%s/huge.dat", E.dir);
	unlink(path);
	unlink(huge);

	if (need_pd("create_missing_file")) {
		a = ATTR(.comp_mask = IBV_DAX_MR_INIT_FLAGS,
			 .flags = IBV_DAX_MR_CREATE, .path = path,
			 .offset = 2 * MiB, .length = 2 * MiB, .access = RW);
		expect_reg_ok("create_missing_file", &a, path, 4 * MiB);
	}
	if (need_pd("create_extends_past_eof")) {
		a = ATTR(.comp_mask = IBV_DAX_MR_INIT_FLAGS,
			 .flags = IBV_DAX_MR_CREATE, .path = path,
			 .offset = 6 * MiB, .length = 2 * MiB, .access = RW);
		expect_reg_ok("create_extends_past_eof", &a, path, 8 * MiB);
	}
	/*
	 * A range no file system here can hold: the call must fail, and a
	 * file it created for the purpose must not stay behind.
	 */
	if (need_pd("create_huge_nospace")) {
		a = ATTR(.comp_mask = IBV_DAX_MR_INIT_FLAGS,
			 .flags = IBV_DAX_MR_CREATE, .path = huge,
			 .length = 1ULL << 50, .access = RW);
		dtest_clock();
		attempt_reg(E.pd, &a, &o);
		if (!o.got_mr && !stat(huge, &st)) {
			dtest_fail("create_huge_nospace",
				   "%s \"%s\", but left %s behind (%lld bytes)",
				   ename(o.err), o.msg, huge,
				   (long long)st.st_size);
			unlink(huge);
		} else {
			judge_fail("create_huge_nospace", &o,
				   o.err == EFBIG ? EFBIG : ENOSPC,
				   "cannot extend");
		}
	}
	if (need("create_on_ro_mount", E.ro_mounted ? E.ro_dir : NULL,
		 "no read-only tmpfs (needs root)")) {
		snprintf(path, sizeof(path), "%s/new.dat", E.ro_dir);
		a = ATTR(.comp_mask = IBV_DAX_MR_INIT_FLAGS,
			 .flags = IBV_DAX_MR_CREATE, .path = path,
			 .length = MiB, .access = RO);
		expect_reg_fail("create_on_ro_mount", E.pd, &a, EROFS,
				"read-only");
	}
}

static void case_file_types(void)
{
	char fifo[PATH_MAX + 16], sock[PATH_MAX + 16], la[PATH_MAX + 16],
		lb[PATH_MAX + 16];
	struct ibv_dax_mr_init_attr a;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int s;

	a = ATTR(.path = E.dir, .length = MiB, .access = RO);
	if (need_pd("directory_read"))
		expect_reg_fail("directory_read", E.pd, &a, EISDIR,
				"directory");
	a.access = RW;
	if (need_pd("directory_write"))
		expect_reg_fail("directory_write", E.pd, &a, EISDIR,
				"directory");

	snprintf(fifo, sizeof(fifo), "%s/fifo", E.dir);
	unlink(fifo);
	if (need("fifo_read", mkfifo(fifo, 0666) ? NULL : fifo,
		 "mkfifo failed")) {
		/* O_RDONLY open of a fifo blocks without O_NONBLOCK */
		a = ATTR(.path = fifo, .length = MiB, .access = RO);
		alarm(20);
		expect_reg_fail("fifo_read", E.pd, &a, ENODEV, "fifo");
		a.access = RW;
		expect_reg_fail("fifo_write", E.pd, &a, ENODEV, "fifo");
		alarm(0);
	}

	snprintf(sock, sizeof(sock), "%s/sock", E.dir);
	unlink(sock);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.100s", sock);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s >= 0 && bind(s, (struct sockaddr *)&sun, sizeof(sun))) {
		close(s);
		s = -1;
	}
	if (need("socket", s >= 0 ? sock : NULL, "cannot bind a unix socket")) {
		a = ATTR(.path = sock, .length = MiB, .access = RW);
		expect_reg_fail("socket", E.pd, &a, ENODEV, "socket");
	}
	if (s >= 0)
		close(s);

	a = ATTR(.path = "/dev/null", .length = MiB, .access = RW);
	if (need_pd("dev_null"))
		expect_reg_fail("dev_null", E.pd, &a, ENODEV,
				"character device");
	a = ATTR(.path = "/dev/zero", .length = MiB, .access = RO);
	if (need_pd("dev_zero_read"))
		expect_reg_fail("dev_zero_read", E.pd, &a, ENODEV,
				"character device");

	snprintf(la, sizeof(la), "%s/loop-a", E.dir);
	snprintf(lb, sizeof(lb), "%s/loop-b", E.dir);
	unlink(la);
	unlink(lb);
	if (need("symlink_loop",
		 symlink(lb, la) || symlink(la, lb) ? NULL : la,
		 "cannot create symlinks")) {
		a = ATTR(.path = la, .length = MiB, .access = RW);
		expect_reg_fail("symlink_loop", E.pd, &a, ELOOP,
				"symbolic link");
	}

	a = ATTR(.path = "/nonexistent/dl-badinput", .length = MiB,
		 .access = RW);
	if (need_pd("missing_file"))
		expect_reg_fail("missing_file", E.pd, &a, ENOENT,
				"does not exist");
	a.path = "";
	if (need_pd("empty_path"))
		expect_reg_fail("empty_path", E.pd, &a, ENOENT,
				"does not exist");
}

static void case_devdax(void)
{
	struct ibv_dax_mr_init_attr a;

	if (!need("devdax_misaligned_offset", E.devdax,
		  "no DAXLEASE_DEVDAX device"))
		return;
	a = ATTR(.path = E.devdax, .offset = 4096, .length = 2 * MiB,
		 .access = RW);
	expect_reg_fail("devdax_misaligned_offset", E.pd, &a, EINVAL,
			"align");
	a.offset = 1ULL << 45;
	if (selected("devdax_past_end"))
		expect_reg_fail("devdax_past_end", E.pd, &a, ERANGE,
				"end of");
	a = ATTR(.path = E.devdax, .length = 2 * MiB, .access = RW);
	if (selected("devdax_ok"))
		expect_reg_ok("devdax_ok", &a, NULL, 0);
}

static void case_ro(void)
{
	struct ibv_dax_mr_init_attr a;
	int fd;

	if (need("ro_mount_write", E.ro_mounted ? E.ro_file : NULL,
		 "no read-only tmpfs (needs root)")) {
		a = ATTR(.path = E.ro_file, .length = MiB, .access = RW);
		expect_reg_fail("ro_mount_write", E.pd, &a, EROFS, "read-only");
		a.access = RO;
		if (selected("ro_mount_read"))
			expect_reg_ro("ro_mount_read", &a);
	}
	if (need("ro_dax_mount_write",
		 E.ro_dax_mounted ? E.ro_dax_file : NULL,
		 "no read-only bind mount of DAXLEASE_EXT4")) {
		a = ATTR(.path = E.ro_dax_file, .length = MiB, .access = RW);
		expect_reg_fail("ro_dax_mount_write", E.pd, &a, EROFS,
				"read-only");
	}

	if (need_pd("ro_fd_write_access")) {
		fd = open(E.pc, O_RDONLY | O_CLOEXEC);
		a = ATTR(.fd = fd, .length = MiB, .access = RW);
		expect_reg_fail("ro_fd_write_access", E.pd, &a, EACCES,
				"read-only");
		close(fd);
	}
	if (need_pd("wronly_fd")) {
		fd = open(E.pc, O_WRONLY | O_CLOEXEC);
		a = ATTR(.fd = fd, .length = MiB, .access = RW);
		expect_reg_fail("wronly_fd", E.pd, &a, EACCES, "write-only");
		close(fd);
	}
	if (need_pd("opath_fd")) {
		fd = open(E.pc, O_PATH | O_CLOEXEC);
		a = ATTR(.fd = fd, .length = MiB, .access = RO);
		expect_reg_fail("opath_fd", E.pd, &a, EBADF, "O_PATH");
		close(fd);
	}
	if (need_pd("fd_already_closed")) {
		fd = open(E.pc, O_RDWR | O_CLOEXEC);
		close(fd);
		a = ATTR(.fd = fd, .length = MiB, .access = RW);
		expect_reg_fail("fd_already_closed", E.pd, &a, EBADF,
				"not an open file");
	}
	a = ATTR(.fd = -1, .length = MiB, .access = RW);
	if (need_pd("no_path_no_fd"))
		expect_reg_fail("no_path_no_fd", E.pd, &a, EBADF, "fd");
	if (need_pd("fd_ok")) {
		fd = open(E.pc, O_RDWR | O_CLOEXEC);
		a = ATTR(.fd = fd, .length = MiB, .access = RW);
		expect_reg_ok("fd_ok", &a, NULL, 0);
		dtest_check("fd_ok_caller_fd_open", fcntl(fd, F_GETFD) >= 0,
			    "caller's fd %s after dereg",
			    fcntl(fd, F_GETFD) >= 0 ? "still open" : "closed");
		close(fd);
	}
}

/* ------------------------------------------------------- other user */

struct other_arg {
	const char *path;
};

static void other_user_child(struct outcome *o, void *arg)
{
	struct other_arg *oa = arg;
	struct ibv_dax_mr_init_attr a =
		ATTR(.path = oa->path, .length = MiB, .access = RW);
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)) {
		snprintf(o->note, sizeof(o->note), "cannot become nobody: %s",
			 strerror(errno));
		return;
	}
	open_rdma(&ctx, &pd);
	if (!pd) {
		snprintf(o->note, sizeof(o->note),
			 "nobody cannot open %s/alloc a pd: %s",
			 E.rdma_dev ? E.rdma_dev : "the device",
			 strerror(errno));
		return;
	}
	attempt_reg(pd, &a, o);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

static void case_other_user(void)
{
	struct other_arg oa;
	struct outcome o;

	if (!need("other_user_fsdax", E.fsdax[0] ? E.fsdax : NULL,
		  "no DAXLEASE_EXT4 mount"))
		return;
	if (geteuid() != 0) {
		dtest_skip("other_user_fsdax", "needs root to setuid nobody");
		return;
	}
	/*
	 * The file is root's, mode 0666: nobody may open it read-write but
	 * may not take a lease on it (fcntl(2): owner or CAP_LEASE).  On a
	 * kernel without the layout lease an FS-DAX file cannot be pinned
	 * at all (rxe has no ODP): EOPNOTSUPP comes first.
	 */
	oa.path = E.fsdax;
	dtest_clock();
	in_child(other_user_child, &oa, &o);
	if (E.have_caps && (E.caps.cap_flags & IBV_DAX_CAP_LAYOUT_LEASE))
		judge_fail("other_user_fsdax", &o, EACCES, "owner|CAP_LEASE");
	else
		judge_fail("other_user_fsdax", &o, EOPNOTSUPP, "kernel");
}

/* --------------------------------------------------- leases held by others */

static void lease_case(const char *name, const char *path, int oflags,
		       int type, unsigned int access, int want,
		       const char *keys)
{
	struct ibv_dax_mr_init_attr a =
		ATTR(.path = path, .length = MiB, .access = access);
	struct holder h;
	struct outcome o = {};

	dtest_clock();
	lease_holder(path, oflags, type, &h);
	if (h.err) {
		holder_release(&h);
		if (h.err == EINVAL && (type & F_LAYOUT))
			dtest_skip(name, "this kernel has no F_LAYOUT lease (F_SETLEASE: EINVAL)");
		else
			dtest_fail(name, "the holder could not take its lease: %s",
				   strerror(h.err));
		return;
	}
	attempt_reg(E.pd, &a, &o);
	holder_release(&h);
	judge_fail(name, &o, want, keys);
}

/*
 * The layout lease is a read-level lease (doc/design.md §1.1: two
 * processes may both hold it and both pin), and F_EXCLUSIVE only makes it
 * unbreakable by layout changes, so another process's exclusive layout lease
 * does not stop ours: registration succeeds, the other lease stays, and
 * deregistration leaves nothing of ours behind.
 */
static void layout_lease_case(const char *name)
{
	struct ibv_dax_mr_init_attr a =
		ATTR(.path = E.fsdax, .length = MiB, .access = RW);
	struct ibv_dax_mr_attr q = {};
	struct dl_snap s1, s2;
	struct ibv_mr *mr;
	struct holder h;
	char why[512], pid[16], *locks;
	int ret;

	dtest_clock();
	lease_holder(E.fsdax, O_RDONLY, F_RDLCK | F_LAYOUT | F_EXCLUSIVE, &h);
	if (h.err) {
		holder_release(&h);
		if (h.err == EINVAL)
			dtest_skip(name, "this kernel has no F_LAYOUT lease (F_SETLEASE: EINVAL)");
		else
			dtest_fail(name, "the holder could not take its layout lease: %s",
				   strerror(h.err));
		return;
	}
	dl_snap_take(&s1);
	mr = ibv_reg_dax_mr(E.pd, &a);
	if (!mr) {
		dtest_fail(name, "registration beside another process's layout lease failed: %s \"%s\"",
			   ename(errno), ibv_dax_errmsg());
		goto out;
	}
	locks = dl_snap_locks(h.pid);
	snprintf(pid, sizeof(pid), "%d", (int)h.pid);
	if (ibv_query_dax_mr(mr, &q, sizeof(q)) || !q.lease_held || !strstr(locks, pid)) {
		dtest_fail(name, "registered, but lease_held %d, holder's lease %s",
			   q.lease_held, strstr(locks, pid) ? "kept" : "gone");
		free(locks);
		ibv_dereg_dax_mr(mr);
		goto out;
	}
	free(locks);
	ret = ibv_dereg_dax_mr(mr);
	if (ret) {
		dtest_fail(name, "dereg: %s \"%s\"", ename(ret),
			   ibv_dax_errmsg());
		goto out;
	}
	dl_snap_take(&s2);
	if (dl_snap_same(&s1, &s2, why, sizeof(why)))
		dtest_pass(name, "both layout leases held at once (strategy %d); nothing of ours left after dereg",
			   q.strategy);
	else
		dtest_fail(name, "after dereg: %s", why);
	dl_snap_free(&s2);
out:
	dl_snap_free(&s1);
	holder_release(&h);
}

static void case_leases(void)
{
	/*
	 * Opening for write breaks another process's read lease and any
	 * open breaks a write lease: the library opens O_NONBLOCK, so the
	 * break is refused at once with EAGAIN (fcntl(2) "lease breaking")
	 * instead of waiting lease-break-time seconds.
	 */
	if (need_pd("read_lease_by_other_write_access"))
		lease_case("read_lease_by_other_write_access", E.pc, O_RDONLY,
			   F_RDLCK, RW, EAGAIN, "lease");
	if (need_pd("write_lease_by_other"))
		lease_case("write_lease_by_other", E.pc, O_RDWR, F_WRLCK, RO,
			   EAGAIN, "lease");
	if (need_pd("read_lease_by_other_read_only")) {
		/*
		 * A read-only registration does not break a read lease: it
		 * must not fail with EAGAIN (on < 6.2 it ends in EFAULT,
		 * after the open, see expect_reg_ro()).
		 */
		struct ibv_dax_mr_init_attr a;
		struct holder h;

		lease_holder(E.pc, O_RDONLY, F_RDLCK, &h);
		if (h.err) {
			dtest_fail("read_lease_by_other_read_only", "holder: %s",
				   strerror(h.err));
		} else {
			a = ATTR(.path = E.pc, .length = MiB, .access = RO);
			expect_reg_ro("read_lease_by_other_read_only", &a);
		}
		holder_release(&h);
	}
	if (need("layout_lease_by_other", E.fsdax[0] ? E.fsdax : NULL,
		 "no DAXLEASE_EXT4 mount"))
		layout_lease_case("layout_lease_by_other");
	if (need("read_lease_by_other_fsdax", E.fsdax[0] ? E.fsdax : NULL,
		 "no DAXLEASE_EXT4 mount"))
		lease_case("read_lease_by_other_fsdax", E.fsdax, O_RDONLY,
			   F_RDLCK, RW, EAGAIN, "lease");
}

/* ------------------------------------------------------ deregistration */

static void double_dereg_child(struct outcome *o, void *arg)
{
	struct ibv_dax_mr_init_attr a =
		ATTR(.path = E.pc, .length = MiB, .access = RW);
	struct dl_snap s1, s2;
	struct ibv_mr *mr;

	(void)arg;
	dl_snap_take(&s1);
	mr = ibv_reg_dax_mr(E.pd, &a);
	if (!mr) {
		snprintf(o->note, sizeof(o->note), "registration: %s \"%s\"",
			 ename(errno), ibv_dax_errmsg());
		dl_snap_free(&s1);
		return;
	}
	o->rc = ibv_dereg_dax_mr(mr);
	if (o->rc) {
		snprintf(o->note, sizeof(o->note), "first dereg: %s \"%s\"",
			 ename(o->rc), ibv_dax_errmsg());
		dl_snap_free(&s1);
		return;
	}
	set_sentinel();
	/* the errno value is the return value, as ibv_dereg_mr()'s */
	o->rc = ibv_dereg_dax_mr(mr);
	o->err = o->rc;
	o->ran = true;
	o->got_mr = o->rc == 0;	/* "succeeded" */
	snprintf(o->msg, sizeof(o->msg), "%s", ibv_dax_errmsg());
	dl_snap_take(&s2);
	o->same = dl_snap_same(&s1, &s2, o->why, sizeof(o->why));
	dl_snap_free(&s1);
	dl_snap_free(&s2);
}

static void dereg_after_close_child(struct outcome *o, void *arg)
{
	const char *path = arg;
	struct ibv_dax_mr_init_attr a =
		ATTR(.path = path, .length = MiB, .access = RW);
	struct ibv_context *ctx;
	struct dl_snap s1, s2;
	struct ibv_mr *mr;
	struct ibv_pd *pd;

	open_rdma(&ctx, &pd);
	if (!pd) {
		snprintf(o->note, sizeof(o->note), "no pd: %s",
			 strerror(errno));
		return;
	}
	dl_snap_take(&s1);
	mr = ibv_reg_dax_mr(pd, &a);
	if (!mr) {
		snprintf(o->note, sizeof(o->note), "registration: %s \"%s\"",
			 ename(errno), ibv_dax_errmsg());
		dl_snap_free(&s1);
		return;
	}
	/* the application forgets its objects and closes the context */
	ibv_close_device(ctx);
	set_sentinel();
	o->rc = ibv_dereg_dax_mr(mr);
	o->err = o->rc;
	o->ran = true;
	snprintf(o->msg, sizeof(o->msg), "%s", ibv_dax_errmsg());
	dl_snap_take(&s2);
	/*
	 * ibv_close_device() itself closed the uverbs fd and unmapped the
	 * provider's pages: compare only what concerns the file.
	 */
	o->same = !strstr(s2.fds, path) && !strstr(s2.maps, path) &&
		  !strcmp(s1.locks, s2.locks) && !strcmp(s1.pins, s2.pins);
	if (!o->same)
		snprintf(o->why, sizeof(o->why),
			 "%s still open, mapped, leased or pinned", path);
	dl_snap_free(&s1);
	dl_snap_free(&s2);
}

static void case_dereg(void)
{
	struct ibv_mr fake = {};
	struct ibv_dax_mr_attr qa = {};
	struct ibv_dax_caps caps = {};
	struct outcome o;
	int rc;

	if (selected("dereg_null")) {
		dtest_clock();
		errno = 0;
		rc = ibv_dereg_dax_mr(NULL);
		dtest_check("dereg_null", rc == EINVAL && errno == EINVAL &&
			    msg_has(ibv_dax_errmsg(), "NULL"),
			    "rc %d %s \"%s\"", rc, ename(errno),
			    ibv_dax_errmsg());
	}
	if (selected("dereg_foreign_mr")) {
		dtest_clock();
		set_sentinel();
		errno = 0;
		rc = ibv_dereg_dax_mr(&fake);
		dtest_check("dereg_foreign_mr", rc == EINVAL && errno == EINVAL &&
			    msg_has(ibv_dax_errmsg(), "not a live DAX MR"),
			    "rc %d %s \"%s\"", rc, ename(errno),
			    ibv_dax_errmsg());
	}
	if (selected("query_null_attr")) {
		dtest_clock();
		errno = 0;
		rc = ibv_query_dax_mr(&fake, NULL, sizeof(struct ibv_dax_mr_attr));
		dtest_check("query_null_attr", rc == -1 && errno == EINVAL &&
			    msg_has(ibv_dax_errmsg(), "attr"),
			    "rc %d %s \"%s\"", rc, ename(errno),
			    ibv_dax_errmsg());
	}
	if (selected("query_foreign_mr")) {
		dtest_clock();
		errno = 0;
		rc = ibv_query_dax_mr(&fake, &qa, sizeof(qa));
		dtest_check("query_foreign_mr", rc == -1 && errno == EINVAL &&
			    msg_has(ibv_dax_errmsg(), "not a live DAX MR"),
			    "rc %d %s \"%s\"", rc, ename(errno),
			    ibv_dax_errmsg());
	}
	if (selected("persist_foreign_mr")) {
		dtest_clock();
		errno = 0;
		rc = ibv_dax_mr_persist(&fake, 0, 1);
		dtest_check("persist_foreign_mr", rc == -1 && errno == EINVAL,
			    "rc %d %s \"%s\"", rc, ename(errno),
			    ibv_dax_errmsg());
	}
	if (selected("release_lease_foreign_mr")) {
		dtest_clock();
		errno = 0;
		rc = ibv_dax_mr_release_lease(&fake);
		dtest_check("release_lease_foreign_mr",
			    rc == -1 && errno == EINVAL, "rc %d %s \"%s\"", rc,
			    ename(errno), ibv_dax_errmsg());
	}
	if (selected("query_caps_null_context")) {
		dtest_clock();
		errno = 0;
		rc = ibv_dax_query_caps(NULL, &caps, sizeof(caps));
		dtest_check("query_caps_null_context",
			    rc == -1 && errno == EINVAL &&
			    msg_has(ibv_dax_errmsg(), "context"),
			    "rc %d %s \"%s\"", rc, ename(errno),
			    ibv_dax_errmsg());
	}
	if (need_pd("query_caps_null_caps")) {
		dtest_clock();
		errno = 0;
		rc = ibv_dax_query_caps(E.ctx, NULL, sizeof(struct ibv_dax_caps));
		dtest_check("query_caps_null_caps",
			    rc == -1 && errno == EINVAL &&
			    msg_has(ibv_dax_errmsg(), "caps"),
			    "rc %d %s \"%s\"", rc, ename(errno),
			    ibv_dax_errmsg());
	}

	if (need_pd("query_caps_inlen")) {
		/* a newer caller's larger struct: filled, the rest zeroed */
		struct {
			struct ibv_dax_caps caps;
			unsigned char tail[16];
		} big;
		size_t i, tail_set = 0;
		int rc_short, err_short;

		dtest_clock();
		errno = 0;
		rc_short = ibv_dax_query_caps(E.ctx, &caps,
					      offsetof(struct ibv_dax_caps,
						       strategy_pagecache));
		err_short = errno;
		memset(&big, 0xff, sizeof(big));
		rc = ibv_dax_query_caps(E.ctx, &big.caps, sizeof(big));
		for (i = 0; i < sizeof(big.tail); i++)
			tail_set += big.tail[i] != 0;
		dtest_check("query_caps_inlen",
			    rc_short == -1 && err_short == EINVAL && rc == 0 &&
				    big.caps.comp_mask == 0 &&
				    big.caps.strategy_devdax ==
					    IBV_DAX_MR_STRATEGY_PLAIN &&
				    tail_set == 0,
			    "short: rc %d %s; larger: rc %d comp_mask 0x%llx devdax %d, %zu tail byte(s) not zeroed",
			    rc_short, ename(err_short), rc,
			    (unsigned long long)big.caps.comp_mask,
			    big.caps.strategy_devdax, tail_set);
	}

	if (need_pd("double_dereg")) {
		dtest_clock();
		in_child(double_dereg_child, NULL, &o);
		judge_fail("double_dereg", &o, EINVAL, "not a live DAX MR");
	}

	if (need_pd("dereg_after_close_pagecache")) {
		dtest_clock();
		in_child(dereg_after_close_child, E.pc, &o);
		if (o.ran && o.rc == 0 && o.same)
			dtest_pass("dereg_after_close_pagecache",
				   "0; file unmapped, closed, unleased");
		else if (o.ran && o.rc == 0)
			dtest_fail("dereg_after_close_pagecache",
				   "returned 0 but %s", o.why);
		else
			judge_fail("dereg_after_close_pagecache", &o, 0, NULL);
	}
	if (need("dereg_after_close_fsdax",
		 E.have_caps && E.caps.strategy_fsdax && E.fsdax[0] ?
			 E.fsdax : NULL,
		 "FS-DAX cannot be registered on this kernel/device")) {
		dtest_clock();
		in_child(dereg_after_close_child, E.fsdax, &o);
		if (o.ran && o.rc == 0 && o.same)
			dtest_pass("dereg_after_close_fsdax",
				   "0; file unmapped, closed, unleased, unpinned");
		else if (o.ran && o.rc == 0)
			dtest_fail("dereg_after_close_fsdax",
				   "returned 0 but %s", o.why);
		else
			judge_fail("dereg_after_close_fsdax", &o, 0, NULL);
	}
}

static void case_positive(void)
{
	struct ibv_dax_mr_init_attr a;

	a = ATTR(.path = E.pc, .length = 2 * MiB, .access = RW);
	if (need_pd("pagecache_ok"))
		expect_reg_ok("pagecache_ok", &a, NULL, 0);
	if (need("fsdax_ok", E.have_caps && E.caps.strategy_fsdax &&
			     E.fsdax[0] ? E.fsdax : NULL,
		 "FS-DAX cannot be registered on this kernel/device (caps.strategy_fsdax NONE)")) {
		a = ATTR(.path = E.fsdax, .length = 2 * MiB, .access = RW);
		expect_reg_ok("fsdax_ok", &a, NULL, 0);
	}
}

static void on_alarm(int sig)
{
	static const char m[] = "fail badinput: a call blocked for 20 s\n";

	(void)sig;
	if (write(2, m, sizeof(m) - 1) < 0)
		_exit(3);
	_exit(3);
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--list")) {
			E.list = true;
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			E.only = argv[++i];
		} else if (!strcmp(argv[i], "--no-device")) {
			E.no_device = true;
		} else {
			fprintf(stderr, "usage: %s [--list] [--only NAME] [--no-device]\n",
				argv[0]);
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	signal(SIGALRM, on_alarm);
	if (!E.list) {
		setup();
		dtest_begin("badinput");
		if (E.no_device)
			printf("# --no-device: only the cases without a pd run\n");
		else if (!E.pd)
			dtest_fail("rdma_device", "%s: the cases that need a protection domain cannot run",
				   E.rdma_why);
		else
			printf("# device %s, caps: cap_flags 0x%llx fsdax strategy %d\n",
			       ibv_get_device_name(E.ctx->device),
			       (unsigned long long)E.caps.cap_flags,
			       E.caps.strategy_fsdax);
	}
	/* positive first: it also warms up the probe's process-wide state */
	case_positive();
	case_null_and_masks();
	case_lengths();
	case_create();
	case_file_types();
	case_devdax();
	case_ro();
	case_other_user();
	case_leases();
	case_dereg();
	if (E.list)
		return 0;
	if (E.not_run)
		printf("# %d cases need a protection domain: not run\n",
		       E.not_run);
	cleanup();
	return dtest_end();
}
