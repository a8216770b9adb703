// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* Host unit test of daxlease(1)'s value parsers and JSON writer. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "daxlease_tool.h"

static int passed, failed;

#define CHECK(cond)                                                           \
	do {                                                                  \
		if (cond) {                                                   \
			passed++;                                             \
		} else {                                                      \
			failed++;                                             \
			fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__,      \
				__LINE__, #cond);                             \
		}                                                             \
	} while (0)

static void test_size(void)
{
	uint64_t v = 0;

	CHECK(!dt_parse_size("0", &v) && v == 0);
	CHECK(!dt_parse_size("4096", &v) && v == 4096);
	CHECK(!dt_parse_size("0x1000", &v) && v == 4096);
	CHECK(!dt_parse_size("4k", &v) && v == 4096);
	CHECK(!dt_parse_size("2M", &v) && v == 2ull << 20);
	CHECK(!dt_parse_size("2MiB", &v) && v == 2ull << 20);
	CHECK(!dt_parse_size("1G", &v) && v == 1ull << 30);
	CHECK(!dt_parse_size("1T", &v) && v == 1ull << 40);
	CHECK(dt_parse_size("", &v) == EINVAL);
	CHECK(dt_parse_size(NULL, &v) == EINVAL);
	CHECK(dt_parse_size("-1", &v) == EINVAL);
	CHECK(dt_parse_size("12x", &v) == EINVAL);
	CHECK(dt_parse_size("1Mx", &v) == EINVAL);
	CHECK(dt_parse_size("k", &v) == EINVAL);
	CHECK(dt_parse_size("99999999999999999999", &v) == ERANGE);
	CHECK(dt_parse_size("16777216T", &v) == ERANGE);
}

static void test_access(void)
{
	unsigned int a = 0;
	char buf[128];

	CHECK(!dt_parse_access("r", &a) && a == IBV_ACCESS_REMOTE_READ);
	CHECK(!dt_parse_access("rw", &a) &&
	      a == (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_WRITE));
	CHECK(!dt_parse_access("rwa", &a) && (a & IBV_ACCESS_REMOTE_ATOMIC));
	CHECK(!dt_parse_access("local", &a) && a == 0);
	CHECK(!dt_parse_access("local-write,remote-read", &a) &&
	      a == (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	CHECK(!dt_parse_access("0x3", &a) && a == 3);
	CHECK(dt_parse_access("", &a) == EINVAL);
	CHECK(dt_parse_access("write", &a) == EINVAL);
	CHECK(dt_parse_access("remote-read,", &a) == EINVAL);
	CHECK(dt_parse_access("remote-read,,local-write", &a) == EINVAL);
	CHECK(dt_parse_access("0x1zz", &a) == EINVAL);

	dt_format_access(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, buf,
			 sizeof(buf));
	CHECK(!strcmp(buf, "local-write,remote-write"));
	dt_format_access(0, buf, sizeof(buf));
	CHECK(!strcmp(buf, "local"));
	dt_format_access(1u << 30, buf, sizeof(buf));
	CHECK(!strcmp(buf, "0x40000000"));
	/* round trip of every combination of the named bits */
	for (unsigned int bits = 0; bits < 32; bits++) {
		unsigned int in = 0, out = ~0u;

		if (bits & 1)
			in |= IBV_ACCESS_LOCAL_WRITE;
		if (bits & 2)
			in |= IBV_ACCESS_REMOTE_READ;
		if (bits & 4)
			in |= IBV_ACCESS_REMOTE_WRITE;
		if (bits & 8)
			in |= IBV_ACCESS_REMOTE_ATOMIC;
		if (bits & 16)
			in |= IBV_ACCESS_RELAXED_ORDERING;
		dt_format_access(in, buf, sizeof(buf));
		CHECK(!dt_parse_access(buf, &out) && out == in);
	}
}

static void test_pid_err(void)
{
	pid_t p = 0;

	CHECK(!dt_parse_pid("1", &p) && p == 1);
	CHECK(!dt_parse_pid("4194304", &p) && p == 4194304);
	CHECK(dt_parse_pid("0", &p) == EINVAL);
	CHECK(dt_parse_pid("-3", &p) == EINVAL);
	CHECK(dt_parse_pid("12a", &p) == EINVAL);
	CHECK(dt_parse_pid("self", &p) == EINVAL);
	CHECK(dt_parse_pid("99999999999", &p) == EINVAL);

	CHECK(!strcmp(dt_errname(EOPNOTSUPP), "EOPNOTSUPP"));
	CHECK(!strcmp(dt_errname(ETXTBSY), "ETXTBSY"));
	CHECK(!strcmp(dt_errname(9999), "E9999"));
	CHECK(dt_exit_code(EAGAIN) == EAGAIN);
	CHECK(dt_exit_code(EOPNOTSUPP) == 95);
	CHECK(dt_exit_code(0) == 1);
	CHECK(dt_exit_code(200) == 1);
}

static void test_json(void)
{
	struct dt_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		CHECK(f != NULL);
		return;
	}
	dt_json_init(&j, f);
	dt_json_obj_begin(&j, NULL);
	dt_json_str(&j, "s", "a\"b\\c\n\x01");
	dt_json_int(&j, "i", -5);
	dt_json_u64(&j, "u", UINT64_MAX);
	dt_json_bool(&j, "t", true);
	dt_json_null(&j, "n");
	dt_json_arr_begin(&j, "a");
	dt_json_int(&j, NULL, 1);
	dt_json_obj_begin(&j, NULL);
	dt_json_end(&j, '}');
	dt_json_arr_begin(&j, NULL);
	dt_json_end(&j, ']');
	dt_json_end(&j, ']');
	dt_json_end(&j, '}');
	dt_json_finish(&j);
	fclose(f);
	CHECK(!strcmp(buf,
		      "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"i\":-5,"
		      "\"u\":18446744073709551615,\"t\":true,\"n\":null,"
		      "\"a\":[1,{},[]]}\n"));
	free(buf);
}

int main(void)
{
	test_size();
	test_access();
	test_pid_err();
	test_json();
	printf("%d passed, %d failed\n", passed, failed);
	/* no check executed is a failure too */
	return failed || !passed ? 1 : 0;
}
