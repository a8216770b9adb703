// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no device): the strategy table of doc/design.md §3.1,
 * walked with every combination of probed capabilities and policy flags.
 */
#include <errno.h>
#include <stdbool.h>

#include "errmsg.h"
#include "strategy.h"
#include "unit.h"

static int choose(enum ibv_dax_file_kind kind, uint32_t flags, int lease,
		  int ext, int odp, enum ibv_dax_mr_strategy *s, char *msg)
{
	struct ibv_dax_caps caps = {
		.cap_flags = (lease ? IBV_DAX_CAP_LAYOUT_LEASE : 0) |
			     (ext ? IBV_DAX_CAP_EXT_REG_MR : 0) |
			     (odp ? IBV_DAX_CAP_ODP : 0),
	};

	return dl_strategy_choose(kind, flags, &caps, s, msg, DL_ERRMSG_MAX);
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

	/* devdax and page cache: plain on every kernel, with any caps */
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
	return dtest_end();
}
