// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Attacks on the device under a pin (doc/design.md §1a: pins outlive
 * nothing they depend on).  The pmem device of pinned pages is unbound
 * from its driver (root: what "ndctl disable-namespace" does) while an MR
 * pins them: removal must wait for the MR, and until then the pages stay
 * memory that the RDMA device may read and write.  Tearing down the memmap
 * and the direct map under the MR instead makes the next RDMA access, or
 * the unpin, touch memory that is gone.
 *
 * Device DAX: the devdax namespace, registered with ibv_reg_mr, bound
 * again afterwards.  FS-DAX pins hold the pagemap the same way (the same
 * GUP code), but a file system on the removed device is not tested here:
 * ext4 keeps the DAX entries of its files over the removed memory, and
 * unmounting it afterwards touches the memmap that is gone, pins or not.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#include "attacks.h"
#include "dtest.h"

/* How long removal must keep waiting while the pin exists */
#define REMOVE_WAIT 4
/* How long removal may take once the pin is gone */
#define REMOVE_DONE 60

struct nd_dev {
	char name[64];		/* e.g. pfn3.1, dax2.1 */
	char driver[PATH_MAX];	/* /sys/bus/nd/drivers/... */
};

/*
 * The libnvdimm device that provides sysfs device path sys (a pmem block
 * device or a device DAX instance): the first ancestor with a
 * "namespace" attribute (the pfn or dax seed of the namespace), and its
 * driver.  0, or errno with why set.
 */
static int nd_dev_of(const char *sys, struct nd_dev *nd, char *why,
		     size_t whylen)
{
	char path[PATH_MAX], attr[PATH_MAX + 16], drv[PATH_MAX + 16];
	struct stat st;
	int err;

	if (!realpath(sys, path)) {
		err = errno;
		snprintf(why, whylen, "realpath %s: %s", sys, strerror(err));
		return err;
	}
	while (path[0] == '/' && strcmp(path, "/") && strcmp(path, "/sys")) {
		char *up;

		snprintf(attr, sizeof(attr), "%s/namespace", path);
		if (!stat(attr, &st)) {
			snprintf(nd->name, sizeof(nd->name), "%s",
				 basename(path));
			snprintf(drv, sizeof(drv), "%s/driver", path);
			if (!realpath(drv, nd->driver)) {
				err = errno;
				snprintf(why, whylen, "%s has no driver: %s",
					 nd->name, strerror(err));
				return err;
			}
			return 0;
		}
		up = dirname(path);
		memmove(path, up, strlen(up) + 1);
	}
	snprintf(why, whylen, "no libnvdimm device with a namespace above %s",
		 sys);
	return ENOENT;
}

/* Writes nd's name to its driver's "bind" or "unbind"; 0 or errno */
static int nd_write(const struct nd_dev *nd, const char *what)
{
	char path[PATH_MAX + 16];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", nd->driver, what);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = write(fd, nd->name, strlen(nd->name));
	close(fd);
	return n == (ssize_t)strlen(nd->name) ? 0 : (n < 0 ? errno : EIO);
}

/* The unbind in a child: it blocks for as long as the kernel waits */
static pid_t unbind_start(const struct nd_dev *nd)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(nd_write(nd, "unbind") & 0xff);
	return pid;
}

/*
 * Waits up to sec seconds for the unbind child: its exit status (an errno
 * value), or -1 if it is still running.
 */
static int unbind_wait(pid_t pid, int sec)
{
	struct timespec tick = { 0, 50 * 1000 * 1000 };
	int status, i;

	for (i = 0; i < sec * 20; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
		nanosleep(&tick, NULL);
	}
	return -1;
}

static const char *unbind_name(int r)
{
	static char buf[96];

	if (r < 0)
		return "still waiting";
	snprintf(buf, sizeof(buf), "finished (%s)", r ? strerror(r) : "ok");
	return buf;
}

/*
 * Unbinds nd while p pins its pages: want the removal still waiting after
 * REMOVE_WAIT s, an RDMA WRITE into the MR that lands meanwhile, and the
 * removal done within REMOVE_DONE s of the dereg.  nd is bound again.
 */
static void remove_under_pin(struct kt_dev *dev, const char *name,
			     const struct nd_dev *nd, struct kt_pin *p)
{
	int waiting, wr, dereg, done, bind;
	char why[512] = "";
	pid_t pid;

	printf("  %s: unbinding %s from %s\n", name, nd->name, nd->driver);
	fflush(stdout);
	pid = unbind_start(nd);
	if (pid < 0) {
		dtest_fail(name, "not reached: fork: %s", strerror(errno));
		return;
	}
	waiting = unbind_wait(pid, REMOVE_WAIT);
	printf("  %s: unbind %s after %d s; RDMA WRITE into the MR\n", name,
	       unbind_name(waiting), REMOVE_WAIT);
	fflush(stdout);
	wr = kt_rdma_write_pattern(dev, p->iova, p->rkey, KT_MIB, p->off, 0x44,
				   why, sizeof(why));
	printf("  %s: RDMA WRITE: %s; deregistering\n", name, kt_res_name(wr));
	fflush(stdout);
	dereg = kt_pin_dereg(p);
	kt_unpin(p);
	done = waiting < 0 ? unbind_wait(pid, REMOVE_DONE) : waiting;
	if (done < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	bind = nd_write(nd, "bind");
	dtest_check(name, waiting < 0 && !wr && !dereg && done == 0 && !bind,
		    "unbind of %s from %s while an MR pins its pages: %s after %d s (want still waiting); RDMA WRITE into the MR meanwhile: %s%s%s; dereg: %s; the unbind then %s (want finished (ok)); bind again: %s",
		    nd->name, nd->driver, unbind_name(waiting), REMOVE_WAIT,
		    kt_res_name(wr), *why ? ": " : "", why,
		    kt_res_name(dereg), unbind_name(done),
		    bind ? strerror(bind) : "ok");
}

static void t_remove_devdax(struct kt_dev *dev, const char *devdax)
{
	const char *name = "i14_remove_pmem_under_pin_devdax";
	char sys[128], why[512];
	struct kt_pin p = KT_PIN_INIT;
	const char *step = "";
	struct nd_dev nd;
	struct stat st;
	int ret, i;

	snprintf(sys, sizeof(sys), "/sys/bus/dax/devices/%s",
		 strrchr(devdax, '/') + 1);
	ret = nd_dev_of(sys, &nd, why, sizeof(why));
	if (ret) {
		dtest_fail(name, "not reached: %s", why);
		return;
	}
	ret = kt_pin(dev, devdax, 0, ATK_PMD_SIZE, 0, KT_PIN_LEGACY, &p, &step);
	if (ret) {
		dtest_fail(name, "not reached: ibv_reg_mr of %s: %s: %s", devdax,
			   step, kt_res_name(ret));
		return;
	}
	remove_under_pin(dev, name, &nd, &p);
	/* later suites use the device: wait for its node to come back */
	for (i = 0; i < 100 && stat(devdax, &st); i++)
		usleep(50 * 1000);
}

void atk_remove_under_pin(struct kt_dev *dev, const char *devdax)
{
	if (devdax)
		t_remove_devdax(dev, devdax);
	else
		dtest_fail("i14_remove_pmem_under_pin_devdax",
			   "DAXLEASE_DEVDAX not set: the test VM has no device DAX");
}
