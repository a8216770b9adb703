// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no RDMA device, no DAX): argument validation of
 * ibv_reg_dax_mr() and the other entry points, through the pure validator
 * and through the public API.  Validation happens before any device
 * access, so a pd without a context is enough to reach it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs_dax.h>

#include "errmsg.h"
#include "request.h"
#include "unit.h"

struct vcase {
	const char *name;
	struct ibv_dax_mr_init_attr attr;
	int err;
};

static const struct vcase cases[] = {
	{ "ok-path", { .path = "/x", .length = 4096 }, 0 },
	{ "ok-fd", { .fd = 0, .length = 1 }, 0 },
	{ "ok-flags", { .comp_mask = IBV_DAX_MR_INIT_FLAGS, .path = "/x",
			.length = 1, .flags = IBV_DAX_MR_RELEASE_LEASE |
					      IBV_DAX_MR_CREATE }, 0 },
	{ "ok-iova", { .comp_mask = IBV_DAX_MR_INIT_IOVA, .path = "/x",
		       .length = 1, .iova = 0x1000 }, 0 },
	{ "ok-write", { .path = "/x", .length = 1,
			.access = IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC }, 0 },
	{ "zero-length", { .path = "/x", .length = 0 }, EINVAL },
	{ "unknown-comp-mask", { .comp_mask = 1ULL << 40, .path = "/x",
				 .length = 1 }, EOPNOTSUPP },
	{ "unknown-flag", { .comp_mask = IBV_DAX_MR_INIT_FLAGS, .path = "/x",
			    .length = 1, .flags = 1u << 20 }, EOPNOTSUPP },
	{ "flags-without-mask", { .path = "/x", .length = 1,
				  .flags = IBV_DAX_MR_NO_FALLBACK }, EINVAL },
	{ "iova-without-mask", { .path = "/x", .length = 1, .iova = 1 },
	  EINVAL },
	{ "odp-and-no-fallback", { .comp_mask = IBV_DAX_MR_INIT_FLAGS,
				   .path = "/x", .length = 1,
				   .flags = IBV_DAX_MR_ALLOW_ODP |
					    IBV_DAX_MR_NO_FALLBACK }, EINVAL },
	{ "no-path-bad-fd", { .fd = -1, .length = 1 }, EBADF },
	{ "on-demand-access", { .path = "/x", .length = 1,
				.access = IBV_ACCESS_ON_DEMAND }, EINVAL },
	{ "unknown-access", { .path = "/x", .length = 1,
			      .access = 1u << 28 }, EINVAL },
	{ "remote-write-no-local", { .path = "/x", .length = 1,
				     .access = IBV_ACCESS_REMOTE_WRITE },
	  EINVAL },
	{ "overflow-wrap", { .path = "/x", .offset = UINT64_MAX - 10,
			     .length = 100 }, EOVERFLOW },
	{ "overflow-off_t", { .path = "/x", .offset = (uint64_t)INT64_MAX,
			      .length = 2 }, EOVERFLOW },
	{ "huge-length", { .path = "/x", .length = SIZE_MAX }, EOVERFLOW },
	{ "iova-page-offset", { .comp_mask = IBV_DAX_MR_INIT_IOVA,
				.path = "/x", .offset = 0x10, .length = 1,
				.iova = 0x1000 }, EINVAL },
	{ "ok-iova-page-offset", { .comp_mask = IBV_DAX_MR_INIT_IOVA,
				   .path = "/x", .offset = 0x2010,
				   .length = 1, .iova = 0x10 }, 0 },
	/* IBV_DAX_MR_INIT_ADDR: the caller's mapping */
	{ "ok-addr-find", { .comp_mask = IBV_DAX_MR_INIT_ADDR, .fd = -1,
			    .length = 1, .addr = (void *)0x10000 }, 0 },
	{ "ok-addr-path", { .comp_mask = IBV_DAX_MR_INIT_ADDR, .path = "/x",
			    .offset = 0x3010, .length = 1,
			    .addr = (void *)0x10010 }, 0 },
	{ "ok-addr-fd", { .comp_mask = IBV_DAX_MR_INIT_ADDR, .fd = 3,
			  .length = 1, .addr = (void *)0x10000 }, 0 },
	{ "ok-addr-iova", { .comp_mask = IBV_DAX_MR_INIT_ADDR |
					 IBV_DAX_MR_INIT_IOVA,
			    .fd = -1, .length = 1, .addr = (void *)0x10010,
			    .iova = 0x7010 }, 0 },
	{ "addr-null", { .comp_mask = IBV_DAX_MR_INIT_ADDR, .fd = -1,
			 .length = 1 }, EINVAL },
	{ "addr-create", { .comp_mask = IBV_DAX_MR_INIT_ADDR |
					IBV_DAX_MR_INIT_FLAGS,
			   .fd = -1, .length = 1, .addr = (void *)0x10000,
			   .flags = IBV_DAX_MR_CREATE }, EINVAL },
	{ "addr-offset-no-file", { .comp_mask = IBV_DAX_MR_INIT_ADDR,
				   .fd = -1, .offset = 0x1000, .length = 1,
				   .addr = (void *)0x10000 }, EINVAL },
	{ "addr-bad-fd", { .comp_mask = IBV_DAX_MR_INIT_ADDR, .fd = -2,
			   .length = 1, .addr = (void *)0x10000 }, EBADF },
	{ "addr-page-offset", { .comp_mask = IBV_DAX_MR_INIT_ADDR,
				.path = "/x", .offset = 0x10, .length = 1,
				.addr = (void *)0x10020 }, EINVAL },
	{ "addr-iova-page-offset", { .comp_mask = IBV_DAX_MR_INIT_ADDR |
						  IBV_DAX_MR_INIT_IOVA,
				     .fd = -1, .length = 1,
				     .addr = (void *)0x10010,
				     .iova = 0x7000 }, EINVAL },
	{ "addr-wrap", { .comp_mask = IBV_DAX_MR_INIT_ADDR, .fd = -1,
			 .length = 0x2000,
			 .addr = (void *)(UINTPTR_MAX - 0xfff) }, EOVERFLOW },
};

/* The request of attr, or the errno that refuses it */
static int validate(const struct ibv_dax_mr_init_attr *attr, char *msg,
		    size_t msglen)
{
	struct dl_request req;

	return dl_request_init(&req, attr, msg, msglen);
}

int main(void)
{
	struct ibv_pd fake_pd = {};	/* no context: never reached */
	struct ibv_dax_mr_init_attr ok = { .path = "/x", .length = 1 };
	char msg[DL_ERRMSG_MAX];
	struct ibv_dax_caps caps = {};
	struct ibv_mr *mr;
	size_t i;
	int ret;

	dtest_begin("unit-validate");

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[96];

		ret = validate(&cases[i].attr, msg, sizeof(msg));
		snprintf(name, sizeof(name), "validator/%s", cases[i].name);
		dtest_check(name, ret == cases[i].err && (!ret || *msg),
			    "want %d got %d (%s)", cases[i].err, ret, msg);

		if (!cases[i].err)
			continue;
		/* the public API returns the same errno with a message */
		errno = 0;
		mr = ibv_reg_dax_mr(&fake_pd, &cases[i].attr);
		snprintf(name, sizeof(name), "api/%s", cases[i].name);
		dtest_check(name,
			    !mr && errno == cases[i].err &&
				    *ibv_dax_errmsg(),
			    "want %d got %d: %s", cases[i].err, errno,
			    ibv_dax_errmsg());
	}

	ret = validate(NULL, msg, sizeof(msg));
	dtest_check("validator/null-attr", ret == EINVAL, "got %d", ret);
	ret = validate(&ok, NULL, 0);
	dtest_check("validator/null-msg-ok", ret == 0, "got %d", ret);

	errno = 0;
	mr = ibv_reg_dax_mr(NULL, &ok);
	dtest_check("api/null-pd", !mr && errno == EINVAL &&
		    strstr(ibv_dax_errmsg(), "pd"),
		    "errno %d: %s", errno, ibv_dax_errmsg());
	errno = 0;
	mr = ibv_reg_dax_mr(&fake_pd, NULL);
	dtest_check("api/null-attr", !mr && errno == EINVAL,
		    "errno %d: %s", errno, ibv_dax_errmsg());

	ret = ibv_dax_query_caps(NULL, &caps, sizeof(caps));
	dtest_check("caps/null-context", ret == -1 && errno == EINVAL,
		    "ret %d errno %d", ret, errno);
	/* comp_mask is an output: an input value is not looked at */
	caps.comp_mask = 1;
	ret = ibv_dax_query_caps(NULL, &caps, sizeof(caps));
	dtest_check("caps/comp-mask-is-output",
		    ret == -1 && errno == EINVAL && caps.comp_mask == 1 &&
			    strstr(ibv_dax_errmsg(), "context"),
		    "ret %d errno %d: %s", ret, errno, ibv_dax_errmsg());
	/* shorter than the first version of the struct */
	ret = ibv_dax_query_caps(NULL, &caps,
				 offsetof(struct ibv_dax_caps,
					  strategy_pagecache));
	dtest_check("caps/inlen-short",
		    ret == -1 && errno == EINVAL &&
			    strstr(ibv_dax_errmsg(), "inlen"),
		    "ret %d errno %d: %s", ret, errno, ibv_dax_errmsg());
	ret = ibv_dax_query_caps(NULL, NULL, sizeof(caps));
	dtest_check("caps/null-caps", ret == -1 && errno == EINVAL,
		    "ret %d errno %d", ret, errno);

	return dtest_end();
}
