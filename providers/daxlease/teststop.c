// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Test-only stop points (daxlease.h): compiled into the daxlease_teststop
 * archive of the guest fault tests with DAXLEASE_TEST_STOP defined, never
 * into libdaxlease.so.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "daxlease.h"

#ifndef DAXLEASE_TEST_STOP
#error "teststop.c belongs to test builds only (DAXLEASE_TEST_STOP)"
#endif

void dl_test_stop(const char *stage)
{
	const char *want = getenv("DAXLEASE_TEST_STOP");
	int err = errno;

	if (want && !strcmp(want, stage))
		raise(SIGSTOP);
	errno = err;
}
