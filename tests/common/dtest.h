/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Minimal structured test reporting shared by the host and guest C tests.
 *
 * Every result is one JSON object per line, written to the file named by
 * $DAXLEASE_RESULTS (appended; the guest points it at the results serial
 * port) and echoed in readable form on stdout.  The host harness decides
 * pass/fail from these records only:
 *   {"suite":"s","event":"start"}
 *   {"suite":"s","test":"t","result":"pass|fail|skip","reason":"...","seconds":0.01}
 *   {"suite":"s","event":"end","pass":N,"fail":N,"skip":N}
 *
 * A program that executed no check (no pass and no fail: nothing, or only
 * skips) tested nothing: dtest_end() then records a failed test
 * "no-checks" and returns 1.
 */
#ifndef DAXLEASE_DTEST_H
#define DAXLEASE_DTEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the JSON string escaping of the tool, by its path: one copy */
#include "../../tools/json_string.h"

struct dtest_state {
	const char *suite;
	FILE *out;
	int pass, fail, skip;
	struct timespec t0;
};

/*
 * A test program of several source files shares one state: each file
 * defines DTEST_SHARED before including this header, the file with main()
 * DTEST_SHARED_DEFINE as well.
 */
#if defined(DTEST_SHARED) && !defined(DTEST_SHARED_DEFINE)
extern struct dtest_state dtest;
#elif defined(DTEST_SHARED)
struct dtest_state dtest;
#else
static struct dtest_state dtest;
#endif

static inline void dtest_begin(const char *suite)
{
	const char *path = getenv("DAXLEASE_RESULTS");

	dtest.suite = suite;
	dtest.out = path && *path ? fopen(path, "a") : NULL;
	if (dtest.out) {
		fprintf(dtest.out, "{\"suite\":");
		dt_json_write_string(dtest.out, suite);
		fprintf(dtest.out, ",\"event\":\"start\"}\n");
		fflush(dtest.out);
	}
	printf("=== suite %s\n", suite);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &dtest.t0);
}

/* Restart the per-test clock; results report time since the last one. */
static inline void dtest_clock(void)
{
	clock_gettime(CLOCK_MONOTONIC, &dtest.t0);
}

static inline __attribute__((format(printf, 3, 0))) void
dtest_vresult(const char *name, const char *result, const char *fmt,
	      va_list ap)
{
	char reason[512] = "";
	struct timespec t1;
	double secs;

	if (fmt)
		vsnprintf(reason, sizeof(reason), fmt, ap);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - dtest.t0.tv_sec) +
	       (t1.tv_nsec - dtest.t0.tv_nsec) / 1e9;
	if (dtest.out) {
		fprintf(dtest.out, "{\"suite\":");
		dt_json_write_string(dtest.out, dtest.suite);
		fprintf(dtest.out, ",\"test\":");
		dt_json_write_string(dtest.out, name);
		fprintf(dtest.out, ",\"result\":\"%s\",\"reason\":", result);
		dt_json_write_string(dtest.out, reason);
		fprintf(dtest.out, ",\"seconds\":%.3f}\n", secs);
		fflush(dtest.out);
	}
	printf("%-4s %s/%s%s%s (%.3fs)\n", result, dtest.suite, name,
	       *reason ? ": " : "", reason, secs);
	fflush(stdout);
	dtest.t0 = t1;
}

#define DTEST_RESULT_FN(fn, word, counter)				\
	static inline __attribute__((format(printf, 2, 3))) void	\
	fn(const char *name, const char *fmt, ...)			\
	{								\
		va_list ap;						\
									\
		va_start(ap, fmt);					\
		dtest_vresult(name, word, fmt, ap);			\
		va_end(ap);						\
		dtest.counter++;					\
	}

DTEST_RESULT_FN(dtest_pass, "pass", pass)
DTEST_RESULT_FN(dtest_fail, "fail", fail)
DTEST_RESULT_FN(dtest_skip, "skip", skip)

/* Pass when cond holds, else fail with the reason; returns cond. */
#define dtest_check(name, cond, ...)					\
	__extension__({							\
		int dtest_ok_ = !!(cond);				\
									\
		if (dtest_ok_)						\
			dtest_pass(name, __VA_ARGS__);			\
		else							\
			dtest_fail(name, __VA_ARGS__);			\
		dtest_ok_;						\
	})

/*
 * Ends the suite; returns the process exit status: 1 if any failed or if
 * none passed or failed (a suite of skips asserted nothing).
 */
static inline int dtest_end(void)
{
	if (!dtest.pass && !dtest.fail)
		dtest_fail("no-checks",
			   "the program executed no check (%d skipped)",
			   dtest.skip);
	if (dtest.out) {
		fprintf(dtest.out, "{\"suite\":");
		dt_json_write_string(dtest.out, dtest.suite);
		fprintf(dtest.out,
			",\"event\":\"end\",\"pass\":%d,\"fail\":%d,\"skip\":%d}\n",
			dtest.pass, dtest.fail, dtest.skip);
		fclose(dtest.out);
		dtest.out = NULL;
	}
	printf("=== suite %s: %d pass, %d fail, %d skip\n", dtest.suite,
	       dtest.pass, dtest.fail, dtest.skip);
	return dtest.fail ? 1 : 0;
}

#endif /* DAXLEASE_DTEST_H */
