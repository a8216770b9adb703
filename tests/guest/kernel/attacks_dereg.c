// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Attacks on the end of a registration (doc/design.md §1a: a pin ends
 * only when nothing can reach its pages any more): the driver's
 * deregistration while something in the driver still holds the MR.
 *
 * rxe waits up to 50 s for the references to an MR to go.  One that
 * outlives the wait is a QP stuck in the middle of a packet into the MR
 * (its worker starved, its vCPU not scheduled); on these kernels nothing
 * a user does holds one that long (the responder takes and drops its
 * reference per packet), so the test kernel's hold_mr hook
 * (kernel-headers/patches/linux-LINE/test) takes the reference in its
 * place.  A dereg that reports success anyway unpins the pages and drops
 * the records of the pins: with the lease released nothing refuses a
 * truncate that frees the blocks under the holder, and the MR is freed
 * under it.
 *
 * i18_dereg_held_<fs>: [0, 1 MiB) of a file pinned through the DAX_FD
 * registration, the lease released, the MR held: the dereg must fail
 * (EBUSY), file_pins still name the file and a truncate by another
 * process is refused (ETXTBSY); once the holder lets go, the dereg
 * succeeds, the records are gone and the truncate succeeds.
 *
 * i18_exit_held_<fs>: a process exits with such an MR held (and a CQ, so
 * that closing its uverbs file makes progress while the MR cannot go):
 * the MR and its pins must outlive the failed try (a truncate is still
 * refused after the wait) and go once the holder lets go, leaving no pin.
 * It runs beside the first test, so both waits cost one.
 *
 * i18_mw_race_<fs>: the same without the hook, as any user can: a type
 * 1 memory window bound to the MR while the MR is deregistered.  rxe's
 * dereg refuses an MR with windows bound before it takes the MR out of
 * its index, and a bind looks the MR up by key and only later counts
 * itself as bound and takes its reference: a bind that falls between
 * the two holds the MR for as long as the window lives.  Binds and
 * deregs race with a sweep of delays until one lands there (the dereg
 * still waits after the bind completed).  Then the dereg must fail
 * (EBUSY), the pins stay (truncate refused), an RDMA WRITE through the
 * window lands in the file and not in a file made next; once the window
 * is deallocated the dereg succeeds and the truncate too.  A dereg that
 * reports success instead lets the truncate free the blocks while the
 * window still writes into them.
 *
 * None may leave a report in the kernel log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/daxlease_fcntl.h>

#include "attacks.h"
#include "dtest.h"
#include "rcloop.h"

#define HOLD_PARAM "/sys/module/rdma_rxe/parameters/hold_mr"
/* after its own wait: the exiting process's first try has failed too */
#define HOLD_AFTER 2

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Holds the MR of key on the test device; 0 or errno */
static int hold(uint32_t key)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s %#x", kt_env.rdma_dev, key);
	return kt_write_str(HOLD_PARAM, cmd);
}

static int release_all(void)
{
	return kt_write_str(HOLD_PARAM, "-");
}

/* Times file_pins of pid names path ("\t<path>\n"), -1 if unreadable */
static int pins_of(pid_t pid, const char *path)
{
	static char buf[65536];
	char rp[4096];
	const char *p = buf;
	int count = 0;
	size_t n;

	if (kt_read_file_pins(pid, buf, sizeof(buf)))
		return -1;
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

struct exit_report {
	int err;
	uint32_t rkey;
	char why[256];
};

/*
 * The exiting process: a device context of its own, a CQ, the pinned
 * file; reports on wfd, waits for a byte on rfd, exits without cleaning
 * up.
 */
static void exit_child(const char *path, int wfd, int rfd)
{
	struct exit_report r = { 0 };
	struct kt_pin p = KT_PIN_INIT;
	struct kt_dev d;
	char c;

	memset(&d, 0, sizeof(d));
	r.err = kt_dev_open(&d, false);
	if (r.err) {
		snprintf(r.why, sizeof(r.why), "opening the RDMA device: %s",
			 strerror(r.err));
	} else if (!ibv_create_cq(d.ctx, 1, NULL, NULL, 0)) {
		r.err = errno ? errno : EIO;
		snprintf(r.why, sizeof(r.why), "ibv_create_cq: %s",
			 strerror(r.err));
	} else {
		const char *step = "create";

		r.err = atk_make_file(path, KT_FILE_SIZE, 0x19, 0);
		if (!r.err)
			r.err = kt_pin(&d, path, 0, KT_MIB, ATK_LAYOUT_EXCL,
				       KT_PIN_DAXFD, &p, &step);
		if (!r.err)
			fcntl(p.fd, F_SETLEASE, F_UNLCK);
		snprintf(r.why, sizeof(r.why), "pin of [0, 1 MiB) of %s: %s: %s",
			 path, step, strerror(r.err));
		r.rkey = p.raw.rkey;
	}
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	if (read(rfd, &c, 1) < 0)
		_exit(4);
	/* the MR, the CQ and the context stay for the exit to clean up */
	_exit(0);
}

void atk_dereg_busy(struct kt_dev *dev, const struct kt_fs *fs)
{
	const char *name = kt_name("i18_dereg_held", fs);
	const char *n_exit = kt_name("i18_exit_held", fs);
	const char *path = kt_path(fs, "i18");
	const char *path_x = kt_path(fs, "i18x");
	struct exit_report xr = { .err = EIO };
	struct kt_pin p = KT_PIN_INIT;
	char report[256] = "";
	int up[2] = { -1, -1 }, down[2] = { -1, -1 }, st = -1;
	int d1, d2 = -1, in1, in2, t1, t2, tx1, tx2 = -1, h, hx, nrep;
	double t0, dt1, dtx = -1;
	uint64_t mark;
	pid_t pid = -1;

	mark = kt_kmsg_mark();
	snprintf(xr.why, sizeof(xr.why), "no report from the child");
	if (pipe(up) == 0 && pipe(down) == 0)
		pid = fork();
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		exit_child(path_x, up[1], down[0]);
	}
	if (up[1] >= 0)
		close(up[1]);
	if (down[0] >= 0)
		close(down[0]);
	if (pid > 0 && read(up[0], &xr, sizeof(xr)) != sizeof(xr))
		xr.err = EIO;
	xr.why[sizeof(xr.why) - 1] = '\0';

	if (atk_pin_released(dev, name, path, KT_FILE_SIZE, 0x18, &p)) {
		/* atk_pin_released() failed the first test */
		dtest_fail(n_exit, "not reached: the pin of %s failed", path);
		if (down[1] >= 0)
			close(down[1]);
		down[1] = -1;
		goto exit_test;
	}
	h = hold(p.raw.rkey);
	hx = xr.err ? -1 : hold(xr.rkey);
	if (h || (!xr.err && hx)) {
		dtest_fail(name, "not reached: hold_mr (%s) of key %#x: %s, of the exiting process's %#x: %s",
			   HOLD_PARAM, p.raw.rkey, kt_res_name(h), xr.rkey,
			   kt_res_name(hx));
		dtest_fail(n_exit, "not reached: %s",
			   xr.err ? xr.why : "hold_mr failed");
		release_all();
		close(down[1]);
		down[1] = -1;
		goto exit_test;
	}
	/* the exiting process goes now: its wait runs beside this one's */
	t0 = now_s();
	if (down[1] >= 0)
		close(down[1]);
	down[1] = -1;

	d1 = kt_pin_dereg(&p);
	dt1 = now_s() - t0;
	in1 = pins_of(getpid(), path);
	t1 = kt_child_op(path, KT_OP_TRUNCATE, 0);
	sleep(HOLD_AFTER);
	tx1 = xr.err ? -1 : kt_child_op(path_x, KT_OP_TRUNCATE, 0);

	/* the holder lets go */
	release_all();
	d2 = p.registered ? kt_pin_dereg(&p) : -1;
	in2 = pins_of(getpid(), path);
	t2 = kt_child_op(path, KT_OP_TRUNCATE, 0);
	if (pid > 0) {
		waitpid(pid, &st, 0);
		dtx = now_s() - t0;
		pid = -1;
	}
	if (!xr.err)
		tx2 = kt_child_op(path_x, KT_OP_TRUNCATE, 0);
	nrep = kt_kmsg_scan(mark, report, sizeof(report));

	dtest_check(name, d1 == EBUSY && in1 == 1 && t1 == ETXTBSY &&
			  d2 == 0 && in2 == 0 && t2 == 0 && nrep == 0,
		    "MR of [0, 1 MiB) of %s, lease released, a reference to it held in the driver: dereg %s after %.1f s (want EBUSY), file_pins names it %d time(s) (want 1), truncate by another process %s (want ETXTBSY); holder gone: dereg %s (want success), file_pins %d (want 0), truncate %s (want success); kernel log: %d report line(s)%s%s",
		    path, kt_res_name(d1), dt1, in1, kt_res_name(t1),
		    kt_res_name(d2), in2, kt_res_name(t2), nrep,
		    nrep > 0 ? ", first: " : "", nrep > 0 ? report : "");
	if (xr.err)
		dtest_fail(n_exit, "not reached: %s", xr.why);
	else
		dtest_check(n_exit,
			    WIFEXITED(st) && !WEXITSTATUS(st) &&
			    tx1 == ETXTBSY && tx2 == 0 && nrep == 0,
			    "a process exited with an MR of [0, 1 MiB) of %s held in the driver: truncate by another process %.0f s later %s (want ETXTBSY: the MR outlives the failed try), holder gone: the process was gone %.1f s after it began to exit (wait status %#x, want 0), truncate %s (want success: no pin left); kernel log: %d report line(s)",
			    path_x, dt1 + HOLD_AFTER, kt_res_name(tx1), dtx,
			    st, kt_res_name(tx2), nrep);
	if (nrep)
		kt_kmsg_dump(mark, 40);

exit_test:
	if (down[1] >= 0)
		close(down[1]);
	if (up[0] >= 0)
		close(up[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	kt_unpin(&p);
	unlink(path);
	unlink(path_x);
}

/* ---- the memory-window race ------------------------------------------- */

/* attempts and time for the race to land, and the delays it sweeps */
#define RACE_TRIES 600
#define RACE_SECONDS 150
#define RACE_STEP_US 4
#define RACE_STEPS 50
/* a dereg still running this long after the bind completed is waiting */
#define RACE_HELD 2.0

struct racer {
	struct kt_dev *dev;
	uint32_t handle;
	double delay_us;
	volatile int go;
	volatile int done;
	int ret;
	double t_end;
};

static void spin_us(double us)
{
	double end = now_s() + us / 1e6;

	while (now_s() < end)
		;
}

static void *dereg_thread(void *arg)
{
	struct racer *r = arg;

	while (!r->go)
		;
	spin_us(r->delay_us);
	r->ret = kt_destroy_mr(r->dev, r->handle);
	r->t_end = now_s();
	r->done = 1;
	return NULL;
}

/* Does [0, len) of path hold len bytes of byte c?  1, 0 or -errno */
static int file_holds(const char *path, size_t len, uint8_t c)
{
	uint8_t buf[4096];
	ssize_t n;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, 0);
	close(fd);
	if (n < 0)
		return -errno;
	if ((size_t)n < len)
		return 0;
	for (i = 0; i < len; i++)
		if (buf[i] != c)
			return 0;
	return 1;
}

void atk_dereg_mw_race(struct kt_dev *dev, const struct kt_fs *fs)
{
	const char *name = kt_name("i18_mw_race", fs);
	const char *path = kt_path(fs, "i18r");
	const char *victim = kt_path(fs, "i18v");
	struct rcloop *pair = NULL;
	struct ibv_mw *mw = NULL;
	struct ibv_mr raw, fake, *src = NULL;
	struct racer r;
	pthread_t th;
	uint8_t *map = MAP_FAILED, *sbuf = NULL;
	char report[256] = "", why[320] = "";
	int fd = -1, ret, tries = 0, bind_first = 0, dereg_first = 0, other = 0;
	int d1 = -1, d2 = -1, in1 = -1, in2 = -1, t1 = -1, t2 = -1, w = -1;
	int bret, in_file = -1, in_victim = -1, nrep;
	bool registered = false, hit = false;
	double t_start, t_bind = 0, held = 0;
	uint64_t mark;

	mark = kt_kmsg_mark();
	ret = atk_make_file(path, KT_FILE_SIZE, 0x1a, 0);
	if (!ret) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0 || fcntl(fd, F_SETLEASE, ATK_LAYOUT_EXCL))
			ret = errno;
	}
	if (!ret) {
		map = mmap(NULL, KT_PIN_LEN, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, 0);
		ret = map == MAP_FAILED ? errno : 0;
	}
	if (!ret) {
		sbuf = aligned_alloc(4096, 4096);
		src = sbuf ? ibv_reg_mr(dev->pd, sbuf, 4096,
					IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (!src)
			ret = errno ? errno : ENOMEM;
	}
	if (ret) {
		dtest_fail(name, "not reached: lease, mapping and source MR for %s: %s",
			   path, strerror(ret));
		goto out;
	}

	t_start = now_s();
	while (!hit && tries < RACE_TRIES && now_s() - t_start < RACE_SECONDS) {
		int step = (tries / 2) % RACE_STEPS;
		bool delay_dereg = tries % 2;

		tries++;
		if (!mw)
			mw = ibv_alloc_mw(dev->pd, IBV_MW_TYPE_1);
		if (!pair)
			pair = rcloop_create(dev->ctx, dev->pd, kt_env.gid_index);
		if (!mw || !pair) {
			snprintf(why, sizeof(why), "%s: %s",
				 mw ? "rcloop_create" : "ibv_alloc_mw",
				 mw ? rcloop_errmsg() : strerror(errno));
			break;
		}
		if (!registered) {
			ret = kt_reg_mr_ioctl(dev, map, KT_PIN_LEN,
					      KT_ACCESS | IBV_ACCESS_MW_BIND,
					      fd, 0, &raw);
			if (ret) {
				snprintf(why, sizeof(why), "REG_MR of %s: %s",
					 path, strerror(ret));
				break;
			}
			registered = true;
		}
		memset(&fake, 0, sizeof(fake));
		fake.context = dev->ctx;
		fake.pd = dev->pd;
		fake.addr = map;
		fake.length = KT_PIN_LEN;
		fake.handle = raw.handle;
		fake.lkey = raw.lkey;
		fake.rkey = raw.rkey;

		memset(&r, 0, sizeof(r));
		r.dev = dev;
		r.handle = raw.handle;
		r.delay_us = delay_dereg ? step * RACE_STEP_US : 0;
		if (pthread_create(&th, NULL, dereg_thread, &r)) {
			snprintf(why, sizeof(why), "pthread_create failed");
			break;
		}
		r.go = 1;
		if (!delay_dereg)
			spin_us(step * RACE_STEP_US);
		bret = rcloop_bind_mw(pair, mw, &fake, (uintptr_t)map, 4096,
				      IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ);
		t_bind = now_s();
		while (!r.done && now_s() - t_bind < RACE_HELD)
			usleep(1000);
		if (!r.done && !bret) {
			hit = true;
			pthread_join(th, NULL);
			held = r.t_end - t_bind;
			d1 = r.ret;
			if (!d1)
				registered = false;
			break;
		}
		pthread_join(th, NULL);
		if (!r.ret)
			registered = false;
		if (bret) {
			/* the MR left the index first: the bind failed */
			dereg_first++;
			rcloop_destroy(pair);
			pair = NULL;
		} else {
			/* the window was counted first: the dereg refused */
			if (r.ret == EINVAL)
				bind_first++;
			else
				other++;
			ibv_dealloc_mw(mw);
			mw = NULL;
		}
		if (registered && !kt_destroy_mr(dev, raw.handle))
			registered = false;
	}
	if (!hit) {
		dtest_fail(name, "not reached: no bind landed between the dereg's check and its removal of the MR in %d attempts (%.0f s): the bind came first %d times, the dereg %d, other %d%s%s",
			   tries, now_s() - t_start, bind_first, dereg_first,
			   other, *why ? "; stopped by " : "", why);
		goto out;
	}

	/* only the pins may refuse a truncate now */
	fcntl(fd, F_SETLEASE, F_UNLCK);
	in1 = pins_of(getpid(), path);
	t1 = kt_child_op(path, KT_OP_TRUNCATE, 0);
	/* a file made now gets the blocks a truncate freed */
	ret = kt_make_file(victim, KT_PIN_LEN, 0x1b);
	memset(sbuf, 0xa5, 4096);
	w = ret ? -ret : rcloop_write(pair, sbuf, src->lkey, (uintptr_t)map,
				      mw->rkey, 4096);
	if (w)
		w = errno ? errno : EIO;
	in_file = file_holds(path, 4096, 0xa5);
	in_victim = file_holds(victim, 4096, 0xa5);
	ibv_dealloc_mw(mw);
	mw = NULL;
	d2 = registered ? kt_destroy_mr(dev, raw.handle) : -1;
	if (!d2)
		registered = false;
	in2 = pins_of(getpid(), path);
	t2 = kt_child_op(path, KT_OP_TRUNCATE, 0);
	nrep = kt_kmsg_scan(mark, report, sizeof(report));
	dtest_check(name, d1 == EBUSY && in1 == 1 && t1 == ETXTBSY &&
			  w == 0 && in_file == 1 && in_victim == 0 &&
			  d2 == 0 && in2 == 0 && t2 == 0 && nrep == 0,
		    "a type 1 window bound to the MR of [0, 1 MiB) of %s while it was deregistered (attempt %d; before it the bind came first %d times, the dereg %d): dereg %s %.1f s after the bind (want EBUSY: the window holds the MR), lease released: file_pins names it %d time(s) (want 1), truncate by another process %s (want ETXTBSY); RDMA WRITE through the window: %s, in the file %d (want 1), in a file made next %d (want 0); window deallocated: dereg %s (want success), file_pins %d (want 0), truncate %s (want success); kernel log: %d report line(s)%s%s",
		    path, tries, bind_first, dereg_first, kt_res_name(d1), held,
		    in1, kt_res_name(t1), kt_res_name(w), in_file, in_victim,
		    kt_res_name(d2), in2, kt_res_name(t2), nrep,
		    nrep > 0 ? ", first: " : "", nrep > 0 ? report : "");
	if (nrep)
		kt_kmsg_dump(mark, 40);
out:
	if (mw)
		ibv_dealloc_mw(mw);
	if (registered)
		kt_destroy_mr(dev, raw.handle);
	rcloop_destroy(pair);
	if (src)
		ibv_dereg_mr(src);
	free(sbuf);
	if (map != MAP_FAILED)
		munmap(map, KT_PIN_LEN);
	if (fd >= 0)
		close(fd);
	unlink(path);
	unlink(victim);
}
