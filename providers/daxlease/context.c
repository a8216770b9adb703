// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The records of the contexts this process registered on or queried
 * (context.h), under a mutex: the capabilities probed once per context
 * (caps.c), and the liveness of a context whose MRs are alive.
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

#include "caps.h"
#include "context.h"
#include "daxlease.h"
#include "errmsg.h"

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dl_context *ctx_list;

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

struct dl_context *dl_context_get(struct ibv_context *context)
{
	struct dl_context *c;
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
	dl_caps_probe(context, &c->caps, &c->driver_id);
	c->next = ctx_list;
	ctx_list = c;
out:
	pthread_mutex_unlock(&ctx_lock);
	return c;
}

int dl_context_ref(struct dl_context *ctx)
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

void dl_context_unref(struct dl_context *ctx)
{
	struct dl_context **pp;

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

bool dl_context_alive(struct dl_context *ctx)
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
				 struct ibv_dax_caps *caps, uint32_t inlen)
{
	struct dl_context *c;

	if (!caps)
		return dl_err(EINVAL, "caps is NULL");
	if (dl_check_inlen(inlen, DL_FIELD_END(struct ibv_dax_caps,
					       strategy_pagecache),
			   "struct ibv_dax_caps"))
		return -1;
	c = dl_context_get(context);
	if (!c)
		return -1;
	memset(caps, 0, inlen);
	caps->cap_flags = c->caps.cap_flags;
	caps->strategy_fsdax = c->caps.strategy_fsdax;
	caps->strategy_devdax = c->caps.strategy_devdax;
	caps->strategy_pagecache = c->caps.strategy_pagecache;
	return 0;
}
