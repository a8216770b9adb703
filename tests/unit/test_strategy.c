// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no device): the strategy table of doc/design.md §3.1,
 * walked with every combination of probed capabilities and policy flags.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "caps.h"
#include "errmsg.h"
#include "strategy.h"
#include "unit.h"

static int choose_pin(enum ibv_dax_file_kind kind, uint32_t flags,
		      unsigned int pin, uint64_t cap_flags,
		      enum ibv_dax_mr_strategy *s, char *msg)
{
	struct ibv_dax_caps caps = { .cap_flags = cap_flags };

	return dl_strategy_choose(kind, flags, pin, &caps, s, msg,
				  DL_ERRMSG_MAX);
}

/* Linux before 6.5: writable page-cache pins work */
static int choose(enum ibv_dax_file_kind kind, uint32_t flags, int lease,
		  int ext, int odp, enum ibv_dax_mr_strategy *s, char *msg)
{
	return choose_pin(kind, flags, DL_PIN_WRITE,
			  (lease ? IBV_DAX_CAP_LAYOUT_LEASE : 0) |
			  (ext ? IBV_DAX_CAP_EXT_REG_MR : 0) |
			  (odp ? IBV_DAX_CAP_ODP : 0) |
			  IBV_DAX_CAP_PAGECACHE_WRITE_PIN, s, msg);
}

/* Linux 6.5 and later: writable pins of page cache refused */
static void test_pagecache_write_refused(void)
{
	static const char *const remedies[] = {
		"-o dax", "read-only", "IBV_DAX_MR_ALLOW_ODP", "ODP", NULL
	};
	const char *const *r;
	char msg[DL_ERRMSG_MAX];
	enum ibv_dax_mr_strategy s;
	unsigned int pin, odp, fl;
	bool ok = true;
	int ret;

	ret = choose_pin(IBV_DAX_FILE_PAGECACHE, 0, DL_PIN_WRITE, 0, &s, msg);
	for (r = remedies; *r && strstr(msg, *r); r++)
		;
	dtest_check("pagecache/write-refused",
		    ret == EOPNOTSUPP && s == IBV_DAX_MR_STRATEGY_NONE && !*r &&
			    strstr(msg, "has none"),
		    "ret %d%s%s: %s", ret, *r ? ", lacks " : "", *r ? *r : "",
		    msg);
	ret = choose_pin(IBV_DAX_FILE_PAGECACHE, 0, DL_PIN_WRITE,
			 IBV_DAX_CAP_ODP, &s, msg);
	dtest_check("pagecache/write-refused-odp-not-allowed",
		    ret == EOPNOTSUPP && strstr(msg, "this device has ODP"),
		    "ret %d: %s", ret, msg);
	ret = choose_pin(IBV_DAX_FILE_PAGECACHE, IBV_DAX_MR_ALLOW_ODP,
			 DL_PIN_WRITE, IBV_DAX_CAP_ODP, &s, msg);
	dtest_check("pagecache/write-allow-odp",
		    !ret && s == IBV_DAX_MR_STRATEGY_ODP, "ret %d %s", ret,
		    dl_strategy_name(s));
	ret = choose_pin(IBV_DAX_FILE_PAGECACHE, IBV_DAX_MR_ALLOW_ODP,
			 DL_PIN_WRITE, 0, &s, msg);
	dtest_check("pagecache/write-allow-odp-without-odp",
		    ret == EOPNOTSUPP && strstr(msg, "has none"),
		    "ret %d: %s", ret, msg);
	ret = choose_pin(IBV_DAX_FILE_PAGECACHE, IBV_DAX_MR_NO_FALLBACK,
			 DL_PIN_WRITE, IBV_DAX_CAP_ODP, &s, msg);
	dtest_check("pagecache/write-no-fallback",
		    ret == EOPNOTSUPP && strstr(msg, "NO_FALLBACK"),
		    "ret %d: %s", ret, msg);

	/* read-only pins and tmpfs: plain, with or without ODP and flags */
	for (pin = 0; pin < 4; pin++)
		for (odp = 0; odp < 2; odp++)
			for (fl = 0; fl < 2; fl++) {
				if (pin == DL_PIN_WRITE)
					continue;
				ret = choose_pin(IBV_DAX_FILE_PAGECACHE,
						 fl ? IBV_DAX_MR_ALLOW_ODP : 0,
						 pin,
						 odp ? IBV_DAX_CAP_ODP : 0, &s,
						 msg);
				ok &= !ret && s == IBV_DAX_MR_STRATEGY_PLAIN;
			}
	dtest_check("pagecache/read-only-and-tmpfs-plain", ok,
		    "a combination differed");

	/* device DAX pins need no writeback */
	ret = choose_pin(IBV_DAX_FILE_DEVDAX, 0, DL_PIN_WRITE, 0, &s, msg);
	dtest_check("devdax/write-plain-on-6.5",
		    !ret && s == IBV_DAX_MR_STRATEGY_PLAIN, "ret %d", ret);
}

static void test_release(void)
{
	static const struct {
		const char *release;
		bool write_pin;
	} t[] = {
		{ "6.1.0-28-amd64", true },
		{ "6.4.16", true },
		{ "5.10.0-33-amd64", true },
		{ "4.19.0", true },
		{ "6.5.0", false },
		{ "6.5", false },
		{ "6.12.118+deb12-amd64", false },
		{ "6.17.0-rc1", false },
		{ "7.0.0", false },
		{ "10.2.1", false },
		{ "garbage", true },
		{ "", true },
		{ NULL, true },
	};
	size_t i;
	bool ok = true;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (dl_kernel_pagecache_write_pin(t[i].release) ==
		    t[i].write_pin)
			continue;
		ok = false;
		dtest_fail("kernel-release/pagecache-write-pin",
			   "release \"%s\": want %d", t[i].release ?: "(null)",
			   t[i].write_pin);
	}
	if (ok)
		dtest_pass("kernel-release/pagecache-write-pin",
			   "before 6.5 (and unparseable) yes, from 6.5 no");
}

int main(void)
{
	char msg[DL_ERRMSG_MAX];
	enum ibv_dax_mr_strategy s;
	int ret, l, e, o;
	bool ok = true;

	dtest_begin("unit-strategy");

	ret = choose(IBV_DAX_FILE_FSDAX, 0, 1, 1, 0, &s, msg);
	dtest_check("fsdax/patched", !ret && s == IBV_DAX_MR_STRATEGY_LEASE_PIN,
		    "ret %d %s", ret, dl_strategy_name(s));
	ret = choose(IBV_DAX_FILE_FSDAX, IBV_DAX_MR_NO_FALLBACK, 1, 1, 1, &s,
		     msg);
	dtest_check("fsdax/patched-no-fallback",
		    !ret && s == IBV_DAX_MR_STRATEGY_LEASE_PIN, "ret %d", ret);
	ret = choose(IBV_DAX_FILE_FSDAX, IBV_DAX_MR_ALLOW_ODP, 1, 1, 1, &s, msg);
	dtest_check("fsdax/patched-prefers-pin-over-odp",
		    !ret && s == IBV_DAX_MR_STRATEGY_LEASE_PIN, "ret %d", ret);
	ret = choose(IBV_DAX_FILE_FSDAX, IBV_DAX_MR_ALLOW_ODP, 0, 0, 1, &s, msg);
	dtest_check("fsdax/stock-odp", !ret && s == IBV_DAX_MR_STRATEGY_ODP,
		    "ret %d", ret);

	ret = choose(IBV_DAX_FILE_FSDAX, 0, 0, 0, 1, &s, msg);
	dtest_check("fsdax/stock-odp-not-allowed",
		    ret == EOPNOTSUPP && s == IBV_DAX_MR_STRATEGY_NONE &&
			    strstr(msg, "IBV_DAX_MR_ALLOW_ODP") &&
			    strstr(msg, "daxlease-kernel-patches"),
		    "ret %d: %s", ret, msg);
	ret = choose(IBV_DAX_FILE_FSDAX, 0, 0, 0, 0, &s, msg);
	dtest_check("fsdax/stock-no-odp",
		    ret == EOPNOTSUPP && strstr(msg, "F_LAYOUT") &&
			    strstr(msg, "REG_MR") &&
			    strstr(msg, "daxlease-kernel-patches") &&
			    strstr(msg, "daxlease(7)") &&
			    !strstr(msg, "set IBV_DAX_MR_ALLOW_ODP"),
		    "ret %d: %s", ret, msg);
	ret = choose(IBV_DAX_FILE_FSDAX, IBV_DAX_MR_ALLOW_ODP, 0, 0, 0, &s, msg);
	dtest_check("fsdax/allow-odp-without-odp", ret == EOPNOTSUPP,
		    "ret %d: %s", ret, msg);
	ret = choose(IBV_DAX_FILE_FSDAX, 0, 1, 0, 0, &s, msg);
	dtest_check("fsdax/lease-only",
		    ret == EOPNOTSUPP && strstr(msg, "REG_MR") &&
			    !strstr(msg, "F_LAYOUT"), "ret %d: %s", ret, msg);
	ret = choose(IBV_DAX_FILE_FSDAX, 0, 0, 1, 0, &s, msg);
	dtest_check("fsdax/reg-mr-only",
		    ret == EOPNOTSUPP && strstr(msg, "F_LAYOUT") &&
			    !strstr(msg, "REG_MR"), "ret %d: %s", ret, msg);
	ret = choose(IBV_DAX_FILE_FSDAX, IBV_DAX_MR_NO_FALLBACK, 0, 0, 1, &s,
		     msg);
	dtest_check("fsdax/no-fallback-never-odp", ret == EOPNOTSUPP,
		    "ret %d %s", ret, dl_strategy_name(s));

	/*
	 * devdax and page cache: plain on every kernel before 6.5, with
	 * any caps
	 */
	for (l = 0; l < 2; l++)
		for (e = 0; e < 2; e++)
			for (o = 0; o < 2; o++) {
				ret = choose(IBV_DAX_FILE_DEVDAX,
					     IBV_DAX_MR_NO_FALLBACK, l, e, o,
					     &s, msg);
				ok &= !ret && s == IBV_DAX_MR_STRATEGY_PLAIN;
				ret = choose(IBV_DAX_FILE_PAGECACHE,
					     IBV_DAX_MR_ALLOW_ODP, l, e, o, &s,
					     msg);
				ok &= !ret && s == IBV_DAX_MR_STRATEGY_PLAIN;
			}
	dtest_check("devdax-pagecache/plain-everywhere", ok, "a combination differed");

	ret = choose(IBV_DAX_FILE_PAGECACHE, IBV_DAX_MR_NO_FALLBACK, 1, 1, 1,
		     &s, msg);
	dtest_check("pagecache/no-fallback", ret == EOPNOTSUPP &&
		    strstr(msg, "dax"), "ret %d: %s", ret, msg);
	ret = choose(IBV_DAX_FILE_UNKNOWN, 0, 1, 1, 1, &s, msg);
	dtest_check("unknown-kind", ret == ENODEV, "ret %d", ret);

	test_pagecache_write_refused();
	test_release();
	return dtest_end();
}
