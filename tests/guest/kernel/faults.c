// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dl-faults-test: failures and faults on the patched kernel.
 *  - two processes register one file: the layout lease is read-level, so
 *    both hold it and both pin; truncate fails until both MRs are gone;
 *  - a conflicting write lease makes registration fail with EAGAIN and
 *    leaves that lease, and nothing of ours;
 *  - kill -9 at fixed stages (lease taken, MR registered, lease released)
 *    and at random points of a register/deregister loop leaves no lease,
 *    no pin and no /proc/<pid>/file_pins entry anywhere; every child
 *    must start, register without failure and die by the kill;
 *  - fork() after registration: the child gets no usable lease (a pin
 *    with an inherited descriptor that carries the parent's lease is
 *    refused, no lease release, ETXTBSY not EDEADLOCK) and does not hurt
 *    the parent's MR or lease; exec() after registration releases it all;
 *  - RDMA WRITE + ibv_dax_mr_persist, unmount, mount: the data is there;
 *  - kill -9 at each named stop point of the library's registration and
 *    deregistration (DAXLEASE_TEST_STOP, this program links the test
 *    build): no lease, no pin, the file truncates, fsck is clean and the
 *    data persisted before the kill is intact after a remount;
 *  - the lease holder itself: a layout change of an unpinned range and
 *    open(O_TRUNC) fail with EDEADLOCK, an extending write succeeds.
 *
 * usage: dl-faults-test [--iterations N]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs_dax.h>
#include <linux/daxlease_fcntl.h>

#include "dtest.h"
#include "kt.h"
#include "kt_lib.h"
#include "kt_suite.h"

static struct kt_dev dev;
static char why[512];
static int iterations = 10;

static struct ibv_mr *reg_on(struct ibv_pd *pd, const char *path,
			     uint64_t off, size_t len, uint32_t flags)
{
	return kt_reg_dax_mr(pd, path, off, len, flags, KT_ACCESS);
}

/* Every /proc/<pid>/file_pins empty?  0, or the first pid with pins. */
static pid_t any_file_pins(char *out, size_t outlen)
{
	struct dirent *de;
	char buf[4096];
	pid_t found = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -1;
	while (!found && (de = readdir(d))) {
		pid_t pid = atoi(de->d_name);

		if (pid <= 0)
			continue;
		if (kt_read_file_pins(pid, buf, sizeof(buf)) == 0 && buf[0]) {
			found = pid;
			snprintf(out, outlen, "%s", kt_oneline(buf));
		}
	}
	closedir(d);
	return found;
}

/* After a holder died: no lease, truncate works, no pins anywhere. */
static void check_released(const char *name, const char *path,
			   const char *what)
{
	char pins[1024] = "";
	int leases, ret, i;
	pid_t pp;

	/* up to 3 s: the last fput after a kill may run from a workqueue */
	for (i = 0; i < 30; i++) {
		leases = kt_count_leases(path);
		pp = any_file_pins(pins, sizeof(pins));
		ret = kt_child_op(path, KT_OP_TRUNCATE, KT_PIN_LEN / 2);
		if (leases == 0 && pp == 0 && ret == 0)
			break;
		usleep(100 * 1000);
	}
	if (leases == 0 && pp == 0 && ret == 0)
		dtest_pass(name, "%s: no lease, no file_pins, truncate ok",
			   what);
	else
		dtest_fail(name,
			   "%s: %d lease(s) left, file_pins %s%d%s%s, truncate %s",
			   what, leases, pp ? "of pid " : "none (", (int)pp,
			   pp ? ": " : ")", pins, kt_res_name(ret));
}

/* ---- two processes, one file ------------------------------------------ */

struct peer {
	pid_t pid;
	int cmd, ack;		/* parent writes cmd, reads ack */
};

/* Child: register path (lease kept), report, dereg on 'd', exit on EOF */
static int peer_start(struct peer *p, const char *path)
{
	int c2p[2], p2c[2];
	char c;

	if (pipe(c2p) || pipe(p2c))
		return errno;
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0)
		return errno;
	if (p->pid == 0) {
		struct ibv_dax_mr_attr qa = { 0 };
		struct ibv_mr *mr = NULL;
		struct kt_dev d;

		close(c2p[0]);
		close(p2c[1]);
		alarm(300);
		c = 'e';
		if (!kt_dev_open(&d, false)) {
			mr = reg_on(d.pd, path, 0, KT_PIN_LEN, 0);
			if (mr && !ibv_query_dax_mr(mr, &qa, sizeof(qa)))
				c = qa.lease_held ? 'r' : 'n';
			else if (!mr)
				fprintf(stderr, "peer %d: %s: %s\n",
					(int)getpid(), strerror(errno),
					ibv_dax_errmsg());
		}
		if (write(c2p[1], &c, 1) != 1)
			_exit(1);
		/* 'x' ends it: EOF may never come, later peers inherit our pipe */
		while (read(p2c[0], &c, 1) == 1 && c != 'x') {
			if (c == 'd') {
				c = mr && !ibv_dereg_dax_mr(mr) ? 'D' : 'E';
				mr = NULL;
				if (write(c2p[1], &c, 1) != 1)
					_exit(1);
			}
		}
		_exit(0);
	}
	close(c2p[1]);
	close(p2c[0]);
	p->ack = c2p[0];
	p->cmd = p2c[1];
	if (read(p->ack, &c, 1) != 1)
		return EPIPE;
	return c == 'r' ? 0 : c == 'n' ? ENOLCK : EIO;
}

static int peer_dereg(struct peer *p)
{
	char c = 'd';

	if (write(p->cmd, &c, 1) != 1 || read(p->ack, &c, 1) != 1)
		return EPIPE;
	return c == 'D' ? 0 : EIO;
}

static void peer_stop(struct peer *p)
{
	char c = 'x';

	if (p->pid <= 0)
		return;
	if (write(p->cmd, &c, 1) != 1)
		kill(p->pid, SIGKILL);
	close(p->cmd);
	close(p->ack);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

static void t_two_procs(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "two");
	struct peer a = { 0 }, b = { 0 };
	int ra, rb, ret;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret) {
		dtest_fail(kt_name("f_two_procs_both_register", fs),
			   "creating %s: %s", path, strerror(ret));
		return;
	}
	ra = peer_start(&a, path);
	rb = ra ? EIO : peer_start(&b, path);
	dtest_check(kt_name("f_two_procs_both_register", fs), !ra && !rb,
		    "process A: %s, process B: %s (each ibv_reg_dax_mr with the lease kept; ENOLCK: registered but no lease)",
		    kt_res_name(ra), kt_res_name(rb));
	if (ra || rb)
		goto out;
	ret = kt_count_leases(path);
	dtest_check(kt_name("f_two_procs_two_leases", fs), ret == 2,
		    "%d LEASE line(s) for the file in /proc/locks, want 2",
		    ret);
	ret = kt_child_op(path, KT_OP_TRUNCATE, KT_PIN_LEN / 2);
	dtest_check(kt_name("f_two_procs_truncate_blocked", fs),
		    ret == ETXTBSY, "truncate with both MRs: %s (want ETXTBSY)",
		    kt_res_name(ret));
	ret = peer_dereg(&a);
	ra = kt_child_op(path, KT_OP_TRUNCATE, KT_PIN_LEN / 2);
	dtest_check(kt_name("f_two_procs_one_left_blocked", fs),
		    !ret && ra == ETXTBSY,
		    "A deregistered (%s), truncate with B's MR: %s (want ETXTBSY)",
		    kt_res_name(ret), kt_res_name(ra));
	ret = peer_dereg(&b);
	rb = kt_child_op(path, KT_OP_TRUNCATE, KT_PIN_LEN / 2);
	dtest_check(kt_name("f_two_procs_truncate_after_both", fs),
		    !ret && rb == 0,
		    "B deregistered (%s), truncate: %s", kt_res_name(ret),
		    kt_res_name(rb));
out:
	peer_stop(&a);
	peer_stop(&b);
	unlink(path);
}

/* ---- a conflicting write lease ---------------------------------------- */

static void t_write_lease(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "wrlease");
	const char *name = kt_name("f_write_lease_eagain", fs);
	struct kt_lease_holder h;
	struct timespec t0, t1;
	struct ibv_mr *mr;
	int ret, err;
	double secs;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret) {
		dtest_fail(name, "setup: %s", strerror(ret));
		return;
	}
	ret = kt_lease_holder_start(&h, path, O_RDONLY, F_WRLCK, 120);
	if (ret) {
		dtest_fail(name, "the other process could not take F_WRLCK: %s",
			   strerror(ret));
		unlink(path);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	mr = reg_on(dev.pd, path, 0, KT_PIN_LEN, 0);
	err = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	dtest_check(name, !mr && err == EAGAIN && *ibv_dax_errmsg(),
		    "ibv_reg_dax_mr against another process's write lease: %s after %.2f s, message \"%s\"",
		    mr ? "registered" : strerror(err), secs,
		    mr ? "" : ibv_dax_errmsg());
	if (mr)
		ibv_dereg_dax_mr(mr);
	/*
	 * Nothing of ours may be left, and the other process's lease must
	 * still be there: zero lines would mean the refused registration
	 * took it away (or that the count could not be read).
	 */
	{
		int theirs;

		ret = kt_count_leases_of(path, h.pid, &theirs);
		dtest_check(kt_name("f_write_lease_nothing_left", fs),
			    ret == 1 && theirs == 1,
			    "%d lease line(s) for the file, %d of the other process %d (want exactly its one)",
			    ret, theirs, (int)h.pid);
	}
	kt_lease_holder_stop(&h);
	unlink(path);
}

/* ---- kill -9 ------------------------------------------------------------ */

enum stage {
	STAGE_LEASE,		/* F_SETLEASE + mmap, not yet registered */
	STAGE_REG,		/* ibv_reg_dax_mr done, lease kept */
	STAGE_RELEASED,		/* ibv_reg_dax_mr with RELEASE_LEASE */
	STAGE_NUM,
};

static void t_kill9_stage(const struct kt_fs *fs, enum stage st)
{
	static const char *const names[STAGE_NUM] = {
		"f_kill9_after_lease", "f_kill9_after_reg",
		"f_kill9_after_release",
	};
	const char *path = kt_path(fs, names[st]);
	const char *name = kt_name(names[st], fs);
	int ready[2], ret;
	char c = 0;
	pid_t pid;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret || pipe(ready)) {
		dtest_fail(name, "setup: %s", strerror(ret ? ret : errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct ibv_mr *mr = NULL;
		struct kt_dev d;
		void *map;
		int fd;

		close(ready[0]);
		c = 'n';
		if (st == STAGE_LEASE) {
			fd = open(path, O_RDWR);
			map = fd < 0 ? MAP_FAILED :
				       mmap(NULL, KT_PIN_LEN,
					    PROT_READ | PROT_WRITE,
					    MAP_SHARED, fd, 0);
			if (map != MAP_FAILED &&
			    !fcntl(fd, F_SETLEASE, F_LAYOUT | F_EXCLUSIVE))
				c = 'y';
		} else if (!kt_dev_open(&d, false)) {
			mr = reg_on(d.pd, path, 0, KT_PIN_LEN,
				    st == STAGE_RELEASED ?
					    IBV_DAX_MR_RELEASE_LEASE : 0);
			c = mr ? 'y' : 'n';
		}
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		alarm(120);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1 || c != 'y') {
		dtest_fail(name, "the child did not reach its stage");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(ready[0]);
		unlink(path);
		return;
	}
	/* it holds something: the truncate must be refused now */
	ret = kt_child_op(path, KT_OP_TRUNCATE, KT_PIN_LEN / 2);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(ready[0]);
	if (ret != ETXTBSY)
		dtest_fail(name, "before the kill truncate gave %s, want ETXTBSY",
			   kt_res_name(ret));
	else
		check_released(name, path, "after kill -9");
	unlink(path);
}

static void t_kill9_random(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "kill9rand");
	const char *name = kt_name("f_kill9_random", fs);
	int i, bad = 0, ret, leases, st;
	char first[1024] = "", pins[512];
	unsigned int seed = 0x9e3779b9u;
	/*
	 * Shared with the children: the registrations they completed (the
	 * kills must hit MRs) and the ones that failed, which nothing in
	 * this loop excuses: no other process holds the file.
	 */
	struct {
		unsigned long regs, fails;
		int err;
		char msg[256];
	} *sh;
	long window_ms;
	int ready[2];
	pid_t pid, pp;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		dtest_fail(name, "mmap: %s", strerror(errno));
		return;
	}
	memset(sh, 0, sizeof(*sh));

	/*
	 * Kill within 0..3x the time one registration + deregistration
	 * takes here (TCG on a shared host varies a lot), counted from the
	 * moment the child has its device open.
	 */
	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	{
		struct timespec t0, t1;
		struct ibv_mr *mr;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		mr = ret ? NULL : reg_on(dev.pd, path, 0, KT_PIN_LEN, 0);
		if (mr)
			ibv_dereg_dax_mr(mr);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		window_ms = ((t1.tv_sec - t0.tv_sec) * 1000 +
			     (t1.tv_nsec - t0.tv_nsec) / 1000000) * 3;
		if (!mr) {
			dtest_fail(name, "a registration in the parent failed: %s",
				   ibv_dax_errmsg());
			munmap(sh, sizeof(*sh));
			unlink(path);
			return;
		}
		if (window_ms < 50)
			window_ms = 50;
	}

	for (i = 0; i < iterations; i++) {
		struct timespec delay;

		ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
		if (ret) {
			snprintf(first, sizeof(first), "creating: %s",
				 strerror(ret));
			bad++;
			break;
		}
		if (pipe(ready)) {
			bad++;
			break;
		}
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			struct kt_dev d;
			char c = 'y';

			alarm(120);
			close(ready[0]);
			if (kt_dev_open(&d, false))
				c = 'n';
			if (write(ready[1], &c, 1) != 1 || c != 'y')
				_exit(1);
			for (;;) {
				struct ibv_mr *mr =
					reg_on(d.pd, path, 0, KT_PIN_LEN,
					       (seed & 1) ?
						       IBV_DAX_MR_RELEASE_LEASE : 0);

				if (mr) {
					__atomic_add_fetch(&sh->regs, 1,
							   __ATOMIC_SEQ_CST);
					ibv_dereg_dax_mr(mr);
				} else if (__atomic_fetch_add(&sh->fails, 1,
							      __ATOMIC_SEQ_CST) == 0) {
					sh->err = errno;
					snprintf(sh->msg, sizeof(sh->msg), "%s",
						 ibv_dax_errmsg());
				}
			}
		}
		close(ready[1]);
		{
			char c;

			if (read(ready[0], &c, 1) != 1)
				c = 0;
			close(ready[0]);
			/* a child that could not start is no kill at all */
			if (c != 'y') {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
				if (!bad++)
					snprintf(first, sizeof(first),
						 "iteration %d: the child could not open the RDMA device",
						 i);
				continue;
			}
		}
		seed = seed * 1103515245u + 12345u;
		delay.tv_sec = ((seed >> 8) % window_ms) / 1000;
		delay.tv_nsec = ((seed >> 8) % window_ms) % 1000 * 1000000L;
		nanosleep(&delay, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		/* the kill, not an exit or another signal, must end it */
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
			if (!bad++)
				snprintf(first, sizeof(first),
					 "iteration %d: the child ended before the kill (status 0x%x)",
					 i, st);
		}

		for (int t = 0; t < 30; t++) {
			leases = kt_count_leases(path);
			pp = any_file_pins(pins, sizeof(pins));
			ret = kt_child_op(path, KT_OP_TRUNCATE, 0);
			if (!leases && !pp && !ret)
				break;
			usleep(100 * 1000);
		}
		if (leases || pp || ret) {
			if (!bad++)
				snprintf(first, sizeof(first),
					 "iteration %d (killed after %ld ms): %d lease(s), file_pins of pid %d \"%s\", truncate %s",
					 i, delay.tv_sec * 1000 + delay.tv_nsec / 1000000, leases,
					 (int)pp, pp ? pins : "", kt_res_name(ret));
		}
	}
	dtest_check(name, bad == 0 && sh->regs > 0 && sh->fails == 0,
		    "%d of %d kill -9 at random points (0..%ld ms) of a reg/dereg loop went wrong (%lu registrations completed, %lu failed%s%s%s%s)%s%s",
		    bad, iterations, window_ms, sh->regs, sh->fails,
		    sh->fails ? ", first: " : "",
		    sh->fails ? strerror(sh->err) : "",
		    sh->fails ? " " : "", sh->fails ? sh->msg : "",
		    bad ? ": " : "", first);
	munmap(sh, sizeof(*sh));
	unlink(path);
}

/* ---- fork() after registration ---------------------------------------- */

enum fork_check {
	FC_RELEASE_EPERM,	/* ibv_dax_mr_release_lease in the child */
	FC_TRUNCATE_ETXTBSY,	/* child is not the holder */
	FC_PIN_EPERM,		/* REG_MR with the inherited leased fd */
	FC_LEGACY_PIN_EPERM,	/* ibv_reg_mr of its own mapping */
	FC_DEREG_OK,		/* child's ibv_dereg_dax_mr: its copies only */
	FC_NUM,
};

/*
 * In a forked child: offer every inherited descriptor of path that
 * carries the parent's exclusive layout lease as DAX_FD.  The library
 * closes its own in the child, so the parent leaves one of its own open
 * on purpose (leased); whatever the child inherits, the lease belongs
 * to the parent's process and each pin must be refused with EPERM.
 * ENOENT if no leased descriptor was inherited: the kernel was never
 * asked, which is a failed setup, not a pass.
 */
static int pin_inherited(struct kt_dev *d, const char *path)
{
	char rp[4096], link[64], target[4096];
	struct ibv_mr raw;
	int fd, ret, tried = 0;
	ssize_t n;
	void *map;

	if (!realpath(path, rp))
		return errno;
	for (fd = 3; fd < 1024; fd++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, rp))
			continue;
		if (fcntl(fd, F_GETLEASE) != (F_LAYOUT | F_EXCLUSIVE))
			continue;
		map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			return errno;
		ret = kt_reg_mr_ioctl(d, map, KT_PIN_LEN, KT_ACCESS, fd, 0,
				      &raw);
		if (!ret)
			kt_destroy_mr(d, raw.handle);
		munmap(map, KT_PIN_LEN);
		if (ret != EPERM)
			return ret;
		tried++;
	}
	return tried ? EPERM : ENOENT;
}

static void t_fork(const struct kt_fs *fs)
{
	static const char *const names[FC_NUM] = {
		"f_fork_child_release_lease_eperm",
		"f_fork_child_truncate_etxtbsy",
		"f_fork_child_no_usable_inherited_lease",
		"f_fork_child_legacy_pin_eperm",
		"f_fork_child_dereg_ok",
	};
	const char *path = kt_path(fs, "fork");
	int res[FC_NUM], pfd[2], i, ret, lfd, qret;
	struct ibv_dax_mr_attr qa;
	struct ibv_mr *mr;
	pid_t pid;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	mr = ret ? NULL : reg_on(dev.pd, path, 0, KT_PIN_LEN, 0);
	if (!mr || pipe(pfd)) {
		dtest_fail(kt_name("f_fork_setup", fs), "ibv_reg_dax_mr: %s: %s",
			   strerror(errno), ibv_dax_errmsg());
		if (mr)
			ibv_dereg_dax_mr(mr);
		unlink(path);
		return;
	}
	/*
	 * A leased descriptor for the child to inherit (not close-on-exec,
	 * not the library's): exclusive layout leases of one process on two
	 * open files of the inode coexist.
	 */
	lfd = open(path, O_RDWR);
	if (lfd < 0 || fcntl(lfd, F_SETLEASE, F_LAYOUT | F_EXCLUSIVE)) {
		dtest_fail(kt_name("f_fork_setup", fs),
			   "a second leased descriptor of %s: %s", path,
			   strerror(errno));
		if (lfd >= 0)
			close(lfd);
		close(pfd[0]);
		close(pfd[1]);
		ibv_dereg_dax_mr(mr);
		unlink(path);
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct kt_dev d;
		struct kt_pin p;
		const char *step;

		close(pfd[0]);
		alarm(120);
		res[FC_RELEASE_EPERM] = ibv_dax_mr_release_lease(mr) ?
						errno : 0;
		res[FC_TRUNCATE_ETXTBSY] =
			kt_do_op(path, -1, KT_OP_TRUNCATE, 6 * KT_MIB);
		res[FC_PIN_EPERM] = kt_dev_open(&d, false);
		res[FC_LEGACY_PIN_EPERM] = res[FC_PIN_EPERM];
		if (!res[FC_PIN_EPERM]) {
			res[FC_PIN_EPERM] = pin_inherited(&d, path);
			res[FC_LEGACY_PIN_EPERM] =
				kt_pin(&d, path, 0, KT_PIN_LEN, 0,
				       KT_PIN_LEGACY, &p, &step);
			kt_unpin(&p);
			kt_dev_close(&d);
		}
		res[FC_DEREG_OK] = ibv_dereg_dax_mr(mr) ? errno : 0;
		if (write(pfd[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], res, sizeof(res)) != sizeof(res)) {
		dtest_fail(kt_name("f_fork_setup", fs),
			   "the child reported nothing");
	} else {
		static const int want[FC_NUM] = {
			EPERM, ETXTBSY, EPERM, EPERM, 0,
		};

		for (i = 0; i < FC_NUM; i++)
			dtest_check(kt_name(names[i], fs), res[i] == want[i],
				    "in the child: %s (want %s%s)",
				    kt_res_name(res[i]), kt_res_name(want[i]),
				    i == FC_PIN_EPERM ?
					    " for every inherited descriptor with the parent's layout lease; ENOENT: none inherited, the kernel was not asked" :
					    "");
	}
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	if (fcntl(lfd, F_SETLEASE, F_UNLCK))
		dtest_fail(kt_name("f_fork_setup", fs),
			   "F_UNLCK of the second descriptor: %s",
			   strerror(errno));
	close(lfd);

	/* the parent's MR and lease are untouched */
	ret = kt_rdma_write_pattern(&dev, (uintptr_t)mr->addr, mr->rkey,
				    KT_PIN_LEN, 0, 0x31, why, sizeof(why));
	if (!ret)
		ret = kt_verify_pattern(path, 0, KT_PIN_LEN, 0x31, why,
					sizeof(why));
	dtest_check(kt_name("f_fork_parent_mr_intact", fs), ret == 0,
		    "RDMA WRITE into the parent's MR after the child exited: %s",
		    why);
	memset(&qa, 0, sizeof(qa));
	qret = ibv_query_dax_mr(mr, &qa, sizeof(qa));
	ret = kt_child_op(path, KT_OP_TRUNCATE, 6 * KT_MIB);
	i = kt_count_leases(path);
	dtest_check(kt_name("f_fork_parent_lease_intact", fs),
		    qret == 0 && qa.lease_held == 1 && ret == ETXTBSY &&
			    i == 1,
		    "query %s, lease_held %d, %d LEASE line(s), truncate of the tail %s (want ok, 1, 1, ETXTBSY)",
		    qret ? ibv_dax_errmsg() : "ok", qa.lease_held, i,
		    kt_res_name(ret));
	ret = ibv_dereg_dax_mr(mr);
	dtest_check(kt_name("f_fork_parent_dereg", fs), ret == 0,
		    "ibv_dereg_dax_mr in the parent: %s",
		    ret ? strerror(errno) : "ok");
	check_released(kt_name("f_fork_released_after_dereg", fs), path,
		       "after the parent's dereg");
	unlink(path);
}

/* ---- exec() after registration ---------------------------------------- */

/*
 * The new image of t_exec's child: say it is running, wait for EOF.
 * Everything the old image held went with exec (close-on-exec uverbs and
 * file descriptors), so the parent finds no MR, pin or lease while this
 * process is still alive.
 */
static int exec_wait(int ready, int hold)
{
	char c = 'y';

	if (write(ready, &c, 1) != 1)
		return 1;
	while (read(hold, &c, 1) > 0)
		;
	return 0;
}

static void t_exec(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "exec");
	const char *name = kt_name("f_exec_after_reg_releases", fs);
	int ready[2], hold[2], ret;
	char c = 0;
	pid_t pid;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret || pipe(ready) || pipe(hold)) {
		dtest_fail(name, "setup: %s", strerror(ret ? ret : errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char rfd[16], hfd[16];
		struct ibv_mr *mr = NULL;
		struct kt_dev d;

		close(ready[0]);
		close(hold[1]);
		if (!kt_dev_open(&d, false))
			mr = reg_on(d.pd, path, 0, KT_PIN_LEN, 0);
		if (!mr) {
			c = 'n';
			if (write(ready[1], &c, 1) != 1)
				_exit(1);
			_exit(1);
		}
		snprintf(rfd, sizeof(rfd), "%d", ready[1]);
		snprintf(hfd, sizeof(hfd), "%d", hold[0]);
		execl("/proc/self/exe", "dl-faults-test", "--exec-wait", rfd,
		      hfd, (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	close(hold[0]);
	if (read(ready[0], &c, 1) != 1 || c != 'y')
		dtest_fail(name, "the child did not register and exec (%c)",
			   c ? c : '-');
	else
		check_released(name, path,
			       "after exec() of the registering process, still alive");
	close(hold[1]);
	close(ready[0]);
	waitpid(pid, NULL, 0);
	unlink(path);
}

/* ---- persistence across unmount / mount -------------------------------- */

static uint64_t fnv1a(const char *path, size_t len, int *err)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint8_t *buf = malloc(len);
	ssize_t n = -1;
	size_t i;
	int fd;

	*err = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && buf)
		n = pread(fd, buf, len, 0);
	if (n != (ssize_t)len)
		*err = errno ? errno : EIO;
	for (i = 0; !*err && i < len; i++)
		h = (h ^ buf[i]) * 0x100000001b3ull;
	if (fd >= 0)
		close(fd);
	free(buf);
	return h;
}

/* The dax option of the mount at dir ("dax", "dax=always"), or NULL */
static const char *dax_option(const char *dir, char *fstype, size_t len)
{
	static char opt[64];
	char line[1024], mnt[512], type[64], opts[512], *tok, *save;
	FILE *f = fopen("/proc/mounts", "re");
	const char *found = NULL;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %511s %63s %511s", mnt, type, opts) != 3 ||
		    strcmp(mnt, dir))
			continue;
		snprintf(fstype, len, "%s", type);
		for (tok = strtok_r(opts, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save))
			if (!strncmp(tok, "dax", 3)) {
				snprintf(opt, sizeof(opt), "%s", tok);
				found = opt;
			}
	}
	fclose(f);
	return found;
}

static void t_persist_remount(const struct kt_fs *fs)
{
	const char *name = kt_name("f_persist_survives_remount", fs);
	const char *path = kt_path(fs, "persist");
	size_t len = 4 * KT_MIB, off;
	uint64_t h_expect, h_before, h_after;
	char fstype[64] = "";
	const char *opt;
	struct ibv_mr *mr;
	uint8_t *pat;
	int ret, err;

	opt = dax_option(fs->dir, fstype, sizeof(fstype));
	if (!opt) {
		dtest_fail(name, "%s is not mounted with a dax option", fs->dir);
		return;
	}
	ret = kt_make_file(path, len, 0x11);
	mr = ret ? NULL : reg_on(dev.pd, path, 0, len, 0);
	if (!mr) {
		dtest_fail(name, "ibv_reg_dax_mr: %s: %s", strerror(errno),
			   ibv_dax_errmsg());
		unlink(path);
		return;
	}
	ret = 0;
	for (off = 0; !ret && off < len; off += KT_MIB)
		ret = kt_rdma_write_pattern(&dev, (uintptr_t)mr->addr + off,
					    mr->rkey, KT_MIB, off, 0x77, why,
					    sizeof(why));
	if (!ret && ibv_dax_mr_persist(mr, 0, len)) {
		ret = errno;
		snprintf(why, sizeof(why), "ibv_dax_mr_persist: %s",
			 ibv_dax_errmsg());
	}
	ibv_dereg_dax_mr(mr);
	if (ret) {
		dtest_fail(name, "%s", why);
		unlink(path);
		return;
	}
	pat = malloc(len);
	if (!pat) {
		dtest_fail(name, "out of memory");
		return;
	}
	kt_pattern(pat, len, 0, 0x77);
	h_expect = 0xcbf29ce484222325ull;
	for (off = 0; off < len; off++)
		h_expect = (h_expect ^ pat[off]) * 0x100000001b3ull;
	free(pat);
	h_before = fnv1a(path, len, &err);

	sync();
	if (umount2(fs->dir, 0)) {
		dtest_fail(name, "umount %s: %s", fs->dir, strerror(errno));
		unlink(path);
		return;
	}
	if (mount(fs->dev, fs->dir, fstype, 0, opt)) {
		dtest_fail(name, "mount -t %s -o %s %s %s: %s (the fs stays unmounted)",
			   fstype, opt, fs->dev, fs->dir, strerror(errno));
		return;
	}
	h_after = fnv1a(path, len, &ret);
	dtest_check(name, !err && !ret && h_before == h_expect &&
			  h_after == h_expect,
		    "FNV-1a of the 4 MiB written over rxe: expected %016llx, before unmount %016llx, after mount -o %s %016llx",
		    (unsigned long long)h_expect, (unsigned long long)h_before,
		    opt, (unsigned long long)h_after);
	unlink(path);
}

/* ---- kill -9 at the library's stop points ------------------------------ */

/*
 * The stages of providers/daxlease/daxlease.h (dl_test_stop()); the
 * library, built with the stop points for this program, raises SIGSTOP
 * there when DAXLEASE_TEST_STOP names the stage.
 */
static const char *const lib_stages[] = {
	"reg_opened", "reg_mapped", "reg_leased", "reg_ioctl",
	"reg_registered", "dereg_destroyed",
};
#define N_LIB_STAGES (sizeof(lib_stages) / sizeof(lib_stages[0]))

#define STOP_SEED 0x5b
#define STOP_REG_OFF (2 * KT_MIB)

/*
 * The child: register the head (no stop point set yet), write the pattern
 * into it through the mapping, ibv_dax_mr_persist() it and say 'p'; then
 * set DAXLEASE_TEST_STOP and either register a second range (reg_*) or
 * deregister the head (dereg_*), which stops.  Anything else is reported
 * on the pipe ('e', or 'n' if the call returned without stopping).
 */
static void stop_child(const char *path, const char *stage, int out)
{
	struct ibv_mr *mr, *mr2;
	struct kt_dev d;
	char c = 'e';
	int ret;

	alarm(300);
	if (kt_dev_open(&d, false))
		goto report;
	mr = reg_on(d.pd, path, 0, KT_PIN_LEN, 0);
	if (!mr) {
		fprintf(stderr, "stop child: ibv_reg_dax_mr: %s\n",
			ibv_dax_errmsg());
		goto report;
	}
	kt_pattern(mr->addr, KT_PIN_LEN, 0, STOP_SEED);
	if (ibv_dax_mr_persist(mr, 0, KT_PIN_LEN)) {
		fprintf(stderr, "stop child: ibv_dax_mr_persist: %s\n",
			ibv_dax_errmsg());
		goto report;
	}
	c = 'p';
	if (write(out, &c, 1) != 1)
		_exit(1);
	setenv("DAXLEASE_TEST_STOP", stage, 1);
	if (!strncmp(stage, "reg_", 4)) {
		mr2 = reg_on(d.pd, path, STOP_REG_OFF, KT_PIN_LEN, 0);
		ret = mr2 ? 0 : errno;
	} else {
		ret = ibv_dereg_dax_mr(mr) ? errno : 0;
	}
	fprintf(stderr, "stop child: %s returned (%s) without stopping\n",
		stage, strerror(ret));
	c = 'n';
report:
	if (write(out, &c, 1) != 1)
		_exit(1);
	_exit(3);
}

/* waitpid(WUNTRACED) bounded by secs: 0 and *st, or ETIMEDOUT / errno */
static int wait_stopped(pid_t pid, int *st, int secs)
{
	int i;
	pid_t r;

	for (i = 0; i < secs * 10; i++) {
		r = waitpid(pid, st, WUNTRACED | WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0)
			return errno;
		usleep(100 * 1000);
	}
	return ETIMEDOUT;
}

static void t_kill9_lib_stage(const struct kt_fs *fs, const char *stage)
{
	char base[64], tag[64], pins[1024] = "", out[1024] = "";
	const char *path, *name;
	int ready[2], ret, st = 0, leases = -1, trunc = 0, fsck, data;
	pid_t pid, pp = -1;
	char c = 0;
	int i;

	snprintf(base, sizeof(base), "f_stop_%s", stage);
	snprintf(tag, sizeof(tag), "stop-%s", stage);
	name = kt_name(base, fs);
	path = kt_path(fs, tag);
	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret || pipe(ready)) {
		dtest_fail(name, "setup: %s", strerror(ret ? ret : errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		stop_child(path, stage, ready[1]);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1 || c != 'p') {
		dtest_fail(name, "the child did not register and persist the head (%c)",
			   c ? c : '-');
		goto kill;
	}
	ret = wait_stopped(pid, &st, 120);
	if (ret || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP) {
		if (read(ready[0], &c, 1) != 1)
			c = '-';
		dtest_fail(name, "the child did not stop at %s: %s, status 0x%x, reported '%c' (n: the call returned; is this the test build of the library?)",
			   stage, ret ? strerror(ret) : "no stop", st, c);
		goto kill;
	}
	kill(pid, SIGKILL);
	ret = waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
	      WTERMSIG(st) == SIGKILL;
	pid = 0;
	if (!ret) {
		dtest_fail(name, "the stopped child did not die by the kill (status 0x%x)",
			   st);
		goto out;
	}

	/* no lease and no pin anywhere (the last fput may come late) */
	for (i = 0; i < 30; i++) {
		leases = kt_count_leases(path);
		pp = any_file_pins(pins, sizeof(pins));
		if (leases == 0 && pp == 0)
			break;
		usleep(100 * 1000);
	}
	if (leases || pp) {
		dtest_fail(name, "after kill -9 at %s: %d lease(s), file_pins of pid %d: %s",
			   stage, leases, (int)pp, pp > 0 ? pins : "none");
		goto out;
	}
	/* clean on disk, and the persisted head survives a remount */
	fsck = kt_fsck(fs, true, out, sizeof(out));
	data = fsck ? -1 : kt_verify_pattern(path, 0, KT_PIN_LEN, STOP_SEED,
					     why, sizeof(why));
	/* all of it truncates, from another process */
	if (!fsck)
		trunc = kt_child_op(path, KT_OP_TRUNCATE, 0);
	dtest_check(name, fsck == 0 && data == 0 && trunc == 0,
		    "kill -9 stopped at %s: no lease, no file_pins; %s %s; persisted head after remount: %s; truncate to 0 by another process: %s",
		    stage, !strcmp(fs->name, "xfs") ? "xfs_repair -n" : "e2fsck -fn",
		    fsck ? kt_oneline(out) : "clean",
		    data ? (data < 0 ? "not checked" : why) : "intact",
		    fsck ? "not tried" : kt_res_name(trunc));
	goto out;
kill:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
out:
	close(ready[0]);
	unlink(path);
}

/* ---- the lease holder's own changes ------------------------------------ */

enum holder_case {
	HC_TAIL_PUNCH,		/* punch hole in the unpinned tail */
	HC_TAIL_TRUNCATE,	/* ftruncate to the tail: unpinned blocks go */
	HC_OPEN_TRUNC,		/* open(O_TRUNC) */
	HC_EXTEND_WRITE,	/* pwrite past EOF: blocks added, none taken */
	HC_NUM,
};

struct holder_arg {
	const char *path;
	enum holder_case c;
};

/*
 * In a child (a hang is bounded): take the exclusive layout lease and pin
 * the head through the extended REG_MR, then make the change as the
 * holder.  ENOLINK / ENODEV: the setup failed.
 */
static int holder_fn(void *arg)
{
	struct holder_arg *h = arg;
	struct kt_pin p = KT_PIN_INIT;
	const char *step;
	char buf[KT_OP_LEN];
	struct kt_dev d;
	int fd, ret;

	if (kt_dev_open(&d, false))
		return ENODEV;
	if (kt_pin(&d, h->path, 0, KT_PIN_LEN, F_LAYOUT | F_EXCLUSIVE,
		   KT_PIN_DAXFD, &p, &step))
		return ENOLINK;
	switch (h->c) {
	case HC_TAIL_PUNCH:
		ret = kt_do_op(h->path, -1, KT_OP_PUNCH_HOLE, KT_TAIL_OFF);
		break;
	case HC_TAIL_TRUNCATE:
		ret = kt_do_op(h->path, -1, KT_OP_FTRUNCATE, KT_TAIL_OFF);
		break;
	case HC_OPEN_TRUNC:
		fd = open(h->path, O_RDWR | O_TRUNC | O_CLOEXEC);
		ret = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		break;
	default:
		kt_pattern(buf, sizeof(buf), KT_FILE_SIZE, 0x11);
		fd = open(h->path, O_WRONLY | O_CLOEXEC);
		ret = fd < 0 ? errno : 0;
		if (fd >= 0 && pwrite(fd, buf, sizeof(buf), KT_FILE_SIZE) !=
				       (ssize_t)sizeof(buf))
			ret = errno ? errno : EIO;
		if (fd >= 0)
			close(fd);
		break;
	}
	kt_unpin(&p);
	kt_dev_close(&d);
	return ret;
}

static void t_holder(const struct kt_fs *fs, enum holder_case c)
{
	static const char *const names[HC_NUM] = {
		"f_holder_punch_unpinned_edeadlock",
		"f_holder_truncate_unpinned_edeadlock",
		"f_holder_open_trunc_edeadlock",
		"f_holder_extending_write_ok",
	};
	static const char *const what[HC_NUM] = {
		"punch hole of the unpinned tail",
		"ftruncate to 4 MiB (unpinned blocks only)",
		"open(O_TRUNC)",
		"pwrite of 64 KiB at EOF (extends the file)",
	};
	struct holder_arg h = { kt_path(fs, names[c]), c };
	const char *name = kt_name(names[c], fs);
	size_t want_size = c == HC_EXTEND_WRITE ? KT_FILE_SIZE + KT_OP_LEN :
						  KT_FILE_SIZE;
	long long size;
	int ret, v;

	ret = kt_make_file(h.path, KT_FILE_SIZE, 0x11);
	if (ret) {
		dtest_fail(name, "creating %s: %s", h.path, strerror(ret));
		return;
	}
	ret = kt_child(holder_fn, &h, KT_OP_TIMEOUT);
	if (ret == ENOLINK || ret == ENODEV) {
		dtest_fail(name, "the holder could not %s",
			   ret == ENODEV ? "open the device" :
					   "take the lease and pin the head");
		unlink(h.path);
		return;
	}
	/* refused: nothing changed; the write: the old bytes and the new */
	size = kt_file_size(h.path);
	v = kt_verify_pattern(h.path, 0, want_size, 0x11, why, sizeof(why));
	dtest_check(name, ret == (c == HC_EXTEND_WRITE ? 0 : EDEADLOCK) &&
			  size == (long long)want_size && v == 0,
		    "%s by the holder of the exclusive layout lease (head pinned): %s (want %s); size %lld (want %zu), content %s",
		    what[c], kt_res_name(ret),
		    c == HC_EXTEND_WRITE ? "success" : "EDEADLOCK", size,
		    want_size, v ? why : "as expected");
	unlink(h.path);
}

int main(int argc, char **argv)
{
	uint64_t mark;
	int i;
	enum holder_case c;
	enum stage st;
	size_t s;

	if (argc == 4 && !strcmp(argv[1], "--exec-wait"))
		return exec_wait(atoi(argv[2]), atoi(argv[3]));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
			iterations = atoi(argv[++i]);
		} else {
			printf("usage: %s [--iterations N]\nRuns the faults suite in the test VM; see tests/vm/suites/faults.sh.\n",
			       argv[0]);
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	kt_env_init();
	mark = kt_kmsg_mark();
	if (kt_suite_begin("faults", &dev, 1))
		return dtest_end();
	for (i = 0; i < kt_env.nfs; i++) {
		const struct kt_fs *fs = &kt_env.fs[i];

		t_two_procs(fs);
		t_write_lease(fs);
		for (st = 0; st < STAGE_NUM; st++)
			t_kill9_stage(fs, st);
		t_kill9_random(fs);
		t_fork(fs);
		t_exec(fs);
		t_persist_remount(fs);
		for (c = 0; c < HC_NUM; c++)
			t_holder(fs, c);
		for (s = 0; s < N_LIB_STAGES; s++)
			t_kill9_lib_stage(fs, lib_stages[s]);
	}
	return kt_suite_end(&dev, "f_dmesg_clean", mark);
}
