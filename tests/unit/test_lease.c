// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no RDMA device): the layout-lease probe and lease calls
 * on the host kernel.  The host runs an unpatched kernel (Debian 6.1 in
 * CI), where F_SETLEASE(F_LAYOUT | F_EXCLUSIVE) is EINVAL: the probe must
 * say "unsupported", dl_lease_take() must fail with EINVAL and a message
 * that points to the kernel series, and no lease may remain.  Set
 * DAXLEASE_KERNEL=patched to run it on a daxlease kernel instead, where
 * the opposite is asserted.  Also: a registration that would break
 * another process's ordinary read lease fails at once with EAGAIN and
 * names the holder's pid.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include <infiniband/verbs_dax.h>

#include <linux/daxlease_fcntl.h>

#include "caps.h"
#include "lease.h"
#include "unit.h"

static int probe_results[8];

static void *probe_thread(void *arg)
{
	int *out = arg;

	*out = dl_lease_supported(NULL);
	return NULL;
}

/*
 * Another process holds an ordinary read lease: opening the file for
 * write would break it, so registration with write access fails at once
 * with EAGAIN naming the holder.  Regular leases exist on every kernel.
 */
static void other_holder(const char *f)
{
	struct ibv_dax_mr_init_attr a = {
		.path = f, .length = 4096,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_pd fake_pd = {};
	int ready[2], done[2], fds, err, st;
	struct timespec t0, t1;
	char pidstr[32], c;
	struct ibv_mr *mr;
	double secs;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) || pipe2(done, O_CLOEXEC)) {
		dtest_fail("other-holder/setup", "%s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		int fd = open(f, O_RDONLY | O_CLOEXEC);

		/* the break notice is SIGIO; the test only needs the lease */
		signal(SIGIO, SIG_IGN);
		c = fd >= 0 && fcntl(fd, F_SETLEASE, F_RDLCK) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(2);
		close(done[1]);
		if (read(done[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(ready[1]);
	close(done[0]);
	if (read(ready[0], &c, 1) != 1 || c != 'y') {
		dtest_fail("other-holder/lease", "the child could not take a read lease");
		goto out;
	}
	fds = unit_count_fds();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	mr = ibv_reg_dax_mr(&fake_pd, &a);
	err = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	snprintf(pidstr, sizeof(pidstr), "process %d", (int)pid);
	dtest_check("other-holder/eagain-names-pid",
		    !mr && err == EAGAIN && strstr(ibv_dax_errmsg(), pidstr) &&
			    strstr(ibv_dax_errmsg(), "lease") && secs < 1.0 &&
			    fds == unit_count_fds(),
		    "errno %d after %.3f s: %s", err, secs, ibv_dax_errmsg());
	/* read-only access does not break a read lease */
	a.access = IBV_ACCESS_REMOTE_READ;
	errno = 0;
	mr = ibv_reg_dax_mr(&fake_pd, &a);
	err = errno;
	dtest_check("other-holder/read-only-coexists",
		    !mr && err == EINVAL && strstr(ibv_dax_errmsg(), "context"),
		    "errno %d: %s", err, ibv_dax_errmsg());
out:
	close(done[1]);
	close(ready[0]);
	waitpid(pid, &st, 0);
}

int main(void)
{
	const char *k = getenv("DAXLEASE_KERNEL");
	bool patched = k && !strcmp(k, "patched");
	pthread_t th[8];
	int err, err2, now, fd, ret, i, leases;
	char *dir, *f;
	bool sup, same = true;

	dtest_begin("unit-lease");
	now = dl_lease_probe_now(&err);
	if (patched)
		dtest_check("probe/patched-supported", now == 1 && err == 0,
			    "probe %d errno %d", now, err);
	else
		dtest_check("probe/stock-unsupported-einval",
			    now == 0 && err == EINVAL,
			    "probe %d errno %d (%s)", now, err, strerror(err));

	/* pthread_once: every thread sees the same answer */
	for (i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, probe_thread, &probe_results[i]);
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	sup = dl_lease_supported(&err2);
	for (i = 0; i < 8; i++)
		same &= probe_results[i] == sup;
	dtest_check("probe/cached-thread-safe", same && sup == (now == 1) &&
		    err2 == err, "cached %d now %d", sup, now);

	/* an independent check of the kernel on a real file on disk */
	dir = unit_tmpdir("/var/tmp");
	f = dir ? unit_file(dir, "leased", 4096) : NULL;
	if (!f) {
		dtest_fail("setup", "%s", strerror(errno));
		return dtest_end();
	}
	fd = open(f, O_RDWR | O_CLOEXEC);
	leases = unit_count_leases();
	/*
	 * errno is read only where the call returned -1, and cleared before
	 * it: a value left by an earlier call must not pass for the answer.
	 */
	errno = 0;
	ret = dl_lease_take(fd, f);
	err = errno;
	if (patched) {
		dtest_check("take/patched", ret == 0 && dl_lease_held(fd),
			    "ret %d errno %d: %s", ret, err, ibv_dax_errmsg());
		ret = dl_lease_release(fd, f);
		dtest_check("release/patched", ret == 0 && !dl_lease_held(fd),
			    "ret %d", ret);
	} else {
		dtest_check("take/stock-einval",
			    ret == -1 && err == EINVAL &&
				    strstr(ibv_dax_errmsg(),
					   "daxlease-kernel-patches"),
			    "ret %d errno %d: %s", ret, err, ibv_dax_errmsg());
		dtest_check("take/stock-not-held", !dl_lease_held(fd),
			    "F_GETLEASE says held");
	}
	dtest_check("no-lease-left", unit_count_leases() == leases,
		    "leases %d -> %d", leases, unit_count_leases());
	/* F_EXCLUSIVE alone is never a lease type */
	errno = 0;
	ret = fcntl(fd, F_SETLEASE, F_EXCLUSIVE);
	err = errno;
	dtest_check("exclusive-alone-einval", ret == -1 && err == EINVAL,
		    "ret %d errno %d", ret, err);
	/* releasing what is not held is harmless */
	errno = 0;
	ret = dl_lease_release(fd, f);
	err = errno;
	dtest_check("release-unheld", ret == 0, "ret %d errno %d", ret, err);
	close(fd);

	/* a read-only fd gets the same answer (the lease is read-level) */
	fd = open(f, O_RDONLY | O_CLOEXEC);
	errno = 0;
	ret = dl_lease_take(fd, f);
	err = errno;
	dtest_check("take-readonly-fd",
		    patched ? ret == 0 && dl_lease_held(fd) :
			      ret == -1 && err == EINVAL && !dl_lease_held(fd),
		    "ret %d errno %d", ret, err);
	if (!ret)
		dl_lease_release(fd, f);
	close(fd);

	other_holder(f);

	unit_rmtree(dir);
	free(f);
	free(dir);
	return dtest_end();
}
