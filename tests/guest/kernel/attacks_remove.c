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
 * again afterwards.
 *
 * FS-DAX: ext4 and xfs on the spare namespace, a file pinned through the
 * DAX_FD registration with the lease released.  The pin holds the device
 * as the device DAX one does; a file system on the device holds it too
 * for as long as it keeps DAX entries over the device's pages (until it
 * is unmounted): after the dereg the removal still waits, and finishes
 * at the unmount.  A kernel that removes the device once the pin is gone
 * leaves the mounted file system with entries over a memmap that is
 * gone, and the unmount touches it.  The device is bound again, the file
 * system mounted again, and the data the RDMA WRITE put there is read
 * back.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#include <linux/daxlease_fcntl.h>

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

/* Writes name to driver/what ("bind" or "unbind"); 0 or errno */
static int nd_write_name(const char *driver, const char *name,
			 const char *what)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/%s", driver, what);
	return kt_write_str(path, name);
}

static int nd_write(const struct nd_dev *nd, const char *what)
{
	return nd_write_name(nd->driver, nd->name, what);
}

int atk_nd_write_main(int argc, char **argv)
{
	if (argc != 5 || strcmp(argv[1], "--nd-write"))
		return EINVAL;
	return nd_write_name(argv[2], argv[3], argv[4]) & 0xff;
}

/*
 * The unbind in a process of its own: it blocks for as long as the kernel
 * waits.  It is a new program (this one, --nd-write), with none of the
 * test's descriptors, mappings or working directory: a process that
 * holds a file system open cannot wait for its unmount.
 */
static pid_t unbind_start(const struct nd_dev *nd)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		syscall(SYS_close_range, 3, ~0U, 0);
		if (chdir("/"))
			_exit(errno & 0xff);
		execl("/proc/self/exe", "dl-attacks-test", "--nd-write",
		      nd->driver, nd->name, "unbind", (char *)NULL);
		_exit(errno & 0xff);
	}
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

/*
 * An unbind that did not finish waits in the kernel, where no signal
 * reaches it: it is left behind (killed if it ever returns), and the
 * test goes on.
 */
static void unbind_abandon(pid_t pid)
{
	kill(pid, SIGKILL);
	if (unbind_wait(pid, 1) < 0)
		printf("  the unbind (pid %d) is still waiting in the kernel; left behind\n",
		       (int)pid);
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
	if (done < 0)
		unbind_abandon(pid);
	bind = nd_write(nd, "bind");
	dtest_check(name, waiting < 0 && !wr && !dereg && done == 0 && !bind,
		    "unbind of %s from %s while an MR pins its pages: %s after %d s (want still waiting); RDMA WRITE into the MR meanwhile: %s%s%s; dereg: %s; the unbind then %s (want finished (ok)); bind again: %s",
		    nd->name, nd->driver, unbind_name(waiting), REMOVE_WAIT,
		    kt_res_name(wr), *why ? ": " : "", why,
		    kt_res_name(dereg), unbind_name(done),
		    bind ? strerror(bind) : "ok");
}

/* Waits up to sec seconds for path to exist; 0 or ENOENT */
static int wait_for_node(const char *path, int sec)
{
	struct stat st;
	int i;

	for (i = 0; i < sec * 20; i++) {
		if (!stat(path, &st))
			return 0;
		usleep(50 * 1000);
	}
	return ENOENT;
}

static void t_remove_devdax(struct kt_dev *dev, const char *devdax)
{
	const char *name = "i14_remove_pmem_under_pin_devdax";
	char sys[128], why[512];
	struct kt_pin p = KT_PIN_INIT;
	const char *step = "";
	struct nd_dev nd;
	int ret;

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
	wait_for_node(devdax, 5);
}

/*
 * Unbinds the spare namespace while a DAX_FD pin (lease released) holds
 * [0, 1 MiB) of a file on it: want the removal waiting while the pin
 * exists, an RDMA WRITE landing meanwhile, the removal still waiting
 * after the dereg (the mounted file system holds the pages in its DAX
 * entries), and done at the unmount.  Then bound and mounted again: the
 * written data is in the file, the rest untouched, fsck clean.
 */
static void t_remove_fsdax(struct kt_dev *dev, const char *spare, bool xfs)
{
	const char *name = xfs ? "i14_remove_pmem_under_pin_xfs" :
				 "i14_remove_pmem_under_pin_ext4";
	const char *const ext4[] = { "mkfs.ext4", "-q", "-F", "-b", "4096",
				     spare, NULL };
	const char *const xfsv[] = { "mkfs.xfs", "-q", "-f", "-m",
				     "reflink=0", spare, NULL };
	struct kt_fs fs = { xfs ? "xfs" : "ext4", ATK_SPARE_DIR, spare };
	int waiting, wr, dereg, after, um, done, bind, node, mnt, v1, v2;
	char sys[128], why[512] = "", st1[256] = "", st2[256] = "";
	char fsck[1024] = "not run";
	struct kt_pin p = KT_PIN_INIT;
	struct nd_dev nd;
	const char *path;
	int ret, fck;
	pid_t pid;

	snprintf(sys, sizeof(sys), "/sys/block/%s", strrchr(spare, '/') + 1);
	ret = nd_dev_of(sys, &nd, why, sizeof(why));
	if (!ret)
		ret = atk_spare_mount(spare, xfs ? xfsv : ext4, NULL, fs.name,
				      "dax", why, sizeof(why));
	if (ret) {
		dtest_fail(name, "not reached: %s", why);
		return;
	}
	path = kt_path(&fs, "i14");
	if (atk_pin_released(dev, name, path, 4 * KT_MIB, 0x21, &p)) {
		umount(fs.dir);
		return;
	}

	printf("  %s: unbinding %s from %s\n", name, nd.name, nd.driver);
	fflush(stdout);
	pid = unbind_start(&nd);
	if (pid < 0) {
		dtest_fail(name, "not reached: fork: %s", strerror(errno));
		kt_unpin(&p);
		umount(fs.dir);
		return;
	}
	waiting = unbind_wait(pid, REMOVE_WAIT);
	printf("  %s: unbind %s after %d s; RDMA WRITE into the MR\n", name,
	       unbind_name(waiting), REMOVE_WAIT);
	fflush(stdout);
	wr = kt_rdma_write_pattern(dev, p.iova, p.rkey, KT_MIB, 0, 0x44, why,
				   sizeof(why));
	dereg = kt_pin_dereg(&p);
	kt_unpin(&p);
	printf("  %s: RDMA WRITE: %s; dereg: %s; the file system stays mounted\n",
	       name, kt_res_name(wr), kt_res_name(dereg));
	fflush(stdout);
	after = waiting < 0 ? unbind_wait(pid, REMOVE_WAIT) : waiting;
	printf("  %s: unbind %s %d s after the dereg; unmounting\n", name,
	       unbind_name(after), REMOVE_WAIT);
	fflush(stdout);
	um = umount(fs.dir) ? errno : 0;
	done = after < 0 ? unbind_wait(pid, REMOVE_DONE) : after;
	if (done < 0)
		unbind_abandon(pid);
	bind = nd_write(&nd, "bind");
	node = bind ? EIO : wait_for_node(spare, 10);
	mnt = node ? node : (mount(spare, fs.dir, fs.name, 0, "dax") ? errno : 0);
	v1 = mnt ? mnt : kt_verify_pattern(path, 0, KT_MIB, 0x44, st1,
					   sizeof(st1));
	v2 = mnt ? mnt : kt_verify_pattern(path, KT_MIB, 3 * KT_MIB, 0x21, st2,
					   sizeof(st2));
	if (!mnt) {
		unlink(path);
		fck = kt_fsck(&fs, false, fsck, sizeof(fsck));
	} else {
		fck = mnt;
	}
	dtest_check(name, waiting < 0 && !wr && !dereg && after < 0 && !um &&
		    done == 0 && !bind && !mnt && !v1 && !v2 && !fck,
		    "unbind of %s (%s, mounted) while an MR pins [0, 1 MiB) of a file (lease released): %s after %d s (want still waiting); RDMA WRITE into the MR: %s%s%s; dereg: %s; the unbind then %s after %d s (want still waiting: the mounted file system's DAX entries hold the pages); umount: %s; the unbind then %s (want finished (ok)); bind again: %s; mount again: %s; [0, 1 MiB) %s%s (want the RDMA WRITE's data); [1, 4 MiB) %s%s; %s",
		    nd.name, fs.name, unbind_name(waiting), REMOVE_WAIT,
		    kt_res_name(wr), *why ? ": " : "", why, kt_res_name(dereg),
		    unbind_name(after), REMOVE_WAIT, um ? strerror(um) : "ok",
		    unbind_name(done), bind ? strerror(bind) : "ok",
		    mnt ? strerror(mnt) : "ok", v1 ? "differs: " : "intact",
		    v1 ? st1 : "", v2 ? "differs: " : "intact", v2 ? st2 : "",
		    fsck);
}

void atk_remove_under_pin(struct kt_dev *dev, const char *devdax,
			  const char *spare)
{
	if (devdax)
		t_remove_devdax(dev, devdax);
	else
		dtest_fail("i14_remove_pmem_under_pin_devdax",
			   "DAXLEASE_DEVDAX not set: the test VM has no device DAX");
	if (spare) {
		t_remove_fsdax(dev, spare, false);
		t_remove_fsdax(dev, spare, true);
	} else {
		dtest_fail("i14_remove_pmem_under_pin_ext4",
			   "DAXLEASE_SPARE_DEV not set: the test VM has no spare NVDIMM namespace");
		dtest_fail("i14_remove_pmem_under_pin_xfs",
			   "DAXLEASE_SPARE_DEV not set: the test VM has no spare NVDIMM namespace");
	}
}
