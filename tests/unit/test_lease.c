// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no RDMA device): the layout-lease probe and lease calls
 * on the host kernel.  The host runs an unpatched kernel (Debian 6.1 in
 * CI), where F_SETLEASE(F_LAYOUT | F_EXCLUSIVE) is EINVAL: the probe must
 * say "unsupported", dl_lease_take() must fail with EINVAL and a message
 * that points to the kernel series, and no lease may remain.  Set
 * DAXLEASE_KERNEL=patched to run it on a daxlease kernel instead, where
 * the opposite is asserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>

#include <linux/daxlease_fcntl.h>

#include "daxlease.h"
#include "unit.h"

static int probe_results[8];

static void *probe_thread(void *arg)
{
	int *out = arg;

	*out = dl_lease_supported(NULL);
	return NULL;
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
	ret = dl_lease_take(fd, f);
	if (patched) {
		dtest_check("take/patched", ret == 0 && dl_lease_held(fd),
			    "ret %d errno %d: %s", ret, errno, dl_errmsg());
		ret = dl_lease_release(fd, f);
		dtest_check("release/patched", ret == 0 && !dl_lease_held(fd),
			    "ret %d", ret);
	} else {
		dtest_check("take/stock-einval",
			    ret == -1 && errno == EINVAL &&
				    strstr(dl_errmsg(), "kernel-headers/patches"),
			    "ret %d errno %d: %s", ret, errno, dl_errmsg());
		dtest_check("take/stock-not-held", !dl_lease_held(fd),
			    "F_GETLEASE says held");
	}
	dtest_check("no-lease-left", unit_count_leases() == leases,
		    "leases %d -> %d", leases, unit_count_leases());
	/* F_EXCLUSIVE alone is never a lease type */
	ret = fcntl(fd, F_SETLEASE, F_EXCLUSIVE);
	dtest_check("exclusive-alone-einval", ret == -1 && errno == EINVAL,
		    "ret %d errno %d", ret, errno);
	/* releasing what is not held is harmless */
	ret = dl_lease_release(fd, f);
	dtest_check("release-unheld", ret == 0, "ret %d errno %d", ret, errno);
	close(fd);

	/* a read-only fd gets the same answer (the lease is read-level) */
	fd = open(f, O_RDONLY | O_CLOEXEC);
	ret = dl_lease_take(fd, f);
	dtest_check("take-readonly-fd", patched ? ret == 0 : errno == EINVAL,
		    "ret %d errno %d", ret, errno);
	if (!ret)
		dl_lease_release(fd, f);
	close(fd);

	unit_rmtree(dir);
	free(f);
	free(dir);
	return dtest_end();
}
