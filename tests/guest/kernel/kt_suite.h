/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The start and the end that the guest kernel suites share.  Static
 * inline, as dtest.h is: its results are kept per file, so these record
 * them in the suite's own.  Include after dtest.h and kt.h.
 */
#ifndef DAXLEASE_KT_SUITE_H
#define DAXLEASE_KT_SUITE_H

#include <stdio.h>
#include <string.h>

#include "dtest.h"
#include "kt.h"

/*
 * Starts suite: line-buffered stdout, dtest_begin(), d opened with its RC
 * loopback pair.  0, or the errno of opening the device
 * (setup_rdma_device failed: the caller ends the suite); a missing
 * loopback pair or fewer than min_fs fsdax mounts fail
 * setup_rc_loopback and setup_fsdax_mounts and the suite goes on.
 * kt_env_init() must have run.
 */
static inline int kt_suite_begin(const char *suite, struct kt_dev *d,
				 int min_fs)
{
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	dtest_begin(suite);
	ret = kt_dev_open(d, true);
	if (ret) {
		dtest_fail("setup_rdma_device", "%s: %s", kt_env.rdma_dev,
			   strerror(ret));
		return ret;
	}
	if (!d->loop)
		dtest_fail("setup_rc_loopback", "%s", d->loop_err);
	if (kt_env.nfs < min_fs)
		dtest_fail("setup_fsdax_mounts",
			   "%d of DAXLEASE_EXT4 and DAXLEASE_XFS mounted, want %d",
			   kt_env.nfs, min_fs);
	return 0;
}

/*
 * Ends the suite: closes d, checks as test name that the kernel logged no
 * report (kt_kmsg_scan()) after mark, since boot if mark is 0, and
 * returns dtest_end().
 */
static inline int kt_suite_end(struct kt_dev *d, const char *name,
			       uint64_t mark)
{
	char first[512] = "";
	int n;

	kt_dev_close(d);
	n = kt_kmsg_scan(mark, first, sizeof(first));
	if (n > 0)
		kt_kmsg_dump(mark, 200);
	if (n < 0)
		dtest_fail(name, "cannot read /dev/kmsg: %s", strerror(-n));
	else
		dtest_check(name, n == 0,
			    "%d WARN/BUG/lockdep/KASAN/soft-lockup/hung-task line(s) in the kernel log %s%s%s",
			    n, mark ? "during the suite" : "since boot",
			    n ? "; first: " : "", first);
	return dtest_end();
}

#endif /* DAXLEASE_KT_SUITE_H */
