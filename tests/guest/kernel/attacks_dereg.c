// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Attacks on the end of a registration (doc/design.md §1a: a pin ends
 * only when nothing can reach its pages any more): the driver's
 * deregistration while something in the driver still holds the MR.
 *
 * rxe waits up to 50 s for the references to an MR to go.  One that
 * outlives the wait is a memory window bound to the MR while the MR is
 * deregistered (the bind looks the MR up before the dereg takes it out of
 * the index and counts itself bound after the dereg checked for windows),
 * a worker stalled in the middle of a packet, or a leaked reference.  The
 * window race is a window of microseconds against milliseconds of jitter
 * in the test VM (1500 tries landed none), so the test kernel's hold_mr
 * hook (kernel-headers/patches/linux-LINE/test) takes the reference in
 * its place.  A dereg that reports success anyway unpins the pages and
 * drops the records of the pins: with the lease released nothing refuses
 * a truncate that frees the blocks under the holder, and the MR is freed
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
 * Neither may leave a report in the kernel log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/daxlease_fcntl.h>

#include "attacks.h"
#include "dtest.h"

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

/* Times file_pins of pid names path, -1 if unreadable */
static int pins_of(pid_t pid, const char *path)
{
	static char buf[65536];

	if (kt_read_file_pins(pid, buf, sizeof(buf)))
		return -1;
	return atk_pins_naming(buf, path);
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
		    d2 == -1 ? "not needed (the first one succeeded)" :
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
	/* the child, if it still waits, exits now */
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

