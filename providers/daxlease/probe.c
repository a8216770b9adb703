// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What the kernel and the device offer, found once per context and cached:
 * process-wide kernel facts (the layout lease) under pthread_once in
 * lease.c, per-device facts (driver id, extended REG_MR, ODP) here under a
 * mutex.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include "daxlease.h"

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dl_ctx *ctx_list;

static void probe_device(struct dl_ctx *c)
{
	struct ibv_device_attr_ex dattr = {};
	struct ibv_context *context = c->context;
	uint32_t need = IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_WRITE;
	int ret, err;

	c->caps.layout_lease = dl_lease_supported(&err);
	c->lease_err = err;

	ret = dl_ioctl_find_driver_id(context->cmd_fd, &c->driver_id);
	c->driver_id_known = ret == 0;
	if (c->driver_id_known) {
		ret = dl_ioctl_probe_reg_mr(context->cmd_fd, c->driver_id);
		c->caps.ext_reg_mr = ret == 1;
		c->reg_mr_err = ret < 0 ? -ret : 0;
	} else {
		c->reg_mr_err = ret;
	}

	if (ibv_query_device_ex(context, NULL, &dattr) == 0)
		c->caps.odp =
			(dattr.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
			(dattr.odp_caps.per_transport_caps.rc_odp_caps & need) ==
				need;

	/*
	 * RDMA FLUSH (IBTA 1.5) has no verbs in rdma-core 44 (Debian 12):
	 * there is nothing to probe, and no way to use it if it existed.
	 */
	c->caps.flush = 0;

	c->caps.strategy_devdax = IBV_DAX_MR_STRATEGY_PLAIN;
	c->caps.strategy_pagecache = IBV_DAX_MR_STRATEGY_PLAIN;
	dl_strategy_choose(IBV_DAX_FILE_FSDAX, 0, &c->caps,
			   &c->caps.strategy_fsdax, NULL, 0);
}

static dev_t fd_rdev(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return (dev_t)-1;
	return st.st_rdev;
}

static atomic_bool no_kcmp;

static bool same_file(int fd1, int fd2)
{
	struct stat a, b;
	long r;

	if (!atomic_load_explicit(&no_kcmp, memory_order_relaxed)) {
		pid_t pid = getpid();

		r = syscall(SYS_kcmp, pid, pid, KCMP_FILE, fd1, fd2);
		if (r >= 0)
			return r == 0;
		/* no CONFIG_KCMP: that stays so, stop asking */
		if (errno == ENOSYS)
			atomic_store_explicit(&no_kcmp, true,
					      memory_order_relaxed);
	}
	/*
	 * No kcmp (CONFIG_KCMP off): both still open on the same inode is
	 * the best available answer; it misses a context closed and reopened
	 * with the very same fd numbers.
	 */
	if (fstat(fd1, &a) || fstat(fd2, &b))
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

struct dl_ctx *dl_ctx_get(struct ibv_context *context)
{
	struct dl_ctx *c;
	dev_t rdev;

	if (!context)
		return dl_err_null(EINVAL, "context is NULL");
	rdev = fd_rdev(context->cmd_fd);
	if (rdev == (dev_t)-1)
		return dl_err_null(EBADF,
				   "the context's command fd %d is not open: was the device closed?",
				   context->cmd_fd);

	pthread_mutex_lock(&ctx_lock);
	/*
	 * A closed and reopened context may come back at the same address;
	 * the uverbs device node (st_rdev) says whether the cached facts
	 * still describe it.
	 */
	for (c = ctx_list; c; c = c->next) {
		if (c->dead || c->context != context ||
		    c->cmd_fd != context->cmd_fd || c->cmd_rdev != rdev)
			continue;
		/* with MRs alive, the held fd tells an old file from a new */
		if (c->nmrs && (c->async_fd != context->async_fd ||
				!same_file(c->ref_fd, context->async_fd))) {
			c->dead = true;
			continue;
		}
		goto out;
	}

	c = calloc(1, sizeof(*c));
	if (!c) {
		pthread_mutex_unlock(&ctx_lock);
		return dl_err_null(ENOMEM, "out of memory");
	}
	c->context = context;
	c->cmd_fd = context->cmd_fd;
	c->async_fd = context->async_fd;
	c->cmd_rdev = rdev;
	c->ref_fd = -1;
	probe_device(c);
	c->next = ctx_list;
	ctx_list = c;
out:
	pthread_mutex_unlock(&ctx_lock);
	return c;
}

int dl_ctx_ref(struct dl_ctx *ctx)
{
	int ret = 0;

	pthread_mutex_lock(&ctx_lock);
	if (ctx->nmrs == 0) {
		ctx->ref_fd = fcntl(ctx->async_fd, F_DUPFD_CLOEXEC, 0);
		if (ctx->ref_fd < 0)
			ret = dl_err(errno,
				     "cannot duplicate the context's async fd: %s",
				     strerror(errno));
	}
	if (!ret)
		ctx->nmrs++;
	pthread_mutex_unlock(&ctx_lock);
	return ret;
}

void dl_ctx_unref(struct dl_ctx *ctx)
{
	struct dl_ctx **pp;

	pthread_mutex_lock(&ctx_lock);
	if (--ctx->nmrs == 0) {
		close(ctx->ref_fd);
		ctx->ref_fd = -1;
		if (ctx->dead) {
			for (pp = &ctx_list; *pp; pp = &(*pp)->next)
				if (*pp == ctx) {
					*pp = ctx->next;
					break;
				}
			free(ctx);
		}
	}
	pthread_mutex_unlock(&ctx_lock);
}

bool dl_ctx_alive(struct dl_ctx *ctx)
{
	bool alive;

	pthread_mutex_lock(&ctx_lock);
	alive = !ctx->dead && ctx->ref_fd >= 0 &&
		same_file(ctx->ref_fd, ctx->async_fd) &&
		fd_rdev(ctx->cmd_fd) == ctx->cmd_rdev;
	if (!alive)
		ctx->dead = true;
	pthread_mutex_unlock(&ctx_lock);
	return alive;
}

DL_EXPORT int ibv_dax_query_caps(struct ibv_context *context,
				 struct ibv_dax_caps *caps)
{
	struct dl_ctx *c;

	if (!caps)
		return dl_err(EINVAL, "caps is NULL");
	if (caps->comp_mask)
		return dl_err(EOPNOTSUPP,
			      "unknown comp_mask 0x%llx in struct ibv_dax_caps: pass 0",
			      (unsigned long long)caps->comp_mask);
	c = dl_ctx_get(context);
	if (!c)
		return -1;
	*caps = c->caps;
	return 0;
}
