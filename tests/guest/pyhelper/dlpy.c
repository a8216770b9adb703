// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The verbs half of the Python tests (tests/python/daxlease_ctypes.py):
 * opens the device, allocates a PD and a local buffer MR and connects the
 * RC loopback pair of rcloop.h on that PD.  The tests pass dlpy_pd() to
 * ibv_reg_dax_mr() and move data into and out of the registered file with
 * dlpy_write() / dlpy_read(), which go through the buffer.
 *
 * Every function returns 0 (or a pointer) on success and -1 (or NULL) with
 * errno set on failure; dlpy_errmsg() says why.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "rcloop.h"

#define DLPY_EXPORT __attribute__((visibility("default")))

struct dlpy {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct rcloop *loop;
	void *buf;
	size_t len;
	struct ibv_mr *mr;
};

static __thread char dlpy_msg[512];

__attribute__((format(printf, 2, 3)))
static void set_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dlpy_msg, sizeof(dlpy_msg), fmt, ap);
	va_end(ap);
	errno = err;
}

DLPY_EXPORT const char *dlpy_errmsg(void);
DLPY_EXPORT void dlpy_close(struct dlpy *p);
DLPY_EXPORT struct dlpy *dlpy_open(const char *dev, int gid_index,
				   size_t buf_len);
DLPY_EXPORT struct ibv_context *dlpy_context(struct dlpy *p);
DLPY_EXPORT struct ibv_pd *dlpy_pd(struct dlpy *p);
DLPY_EXPORT int dlpy_write(struct dlpy *p, const void *data, size_t len,
			   uint64_t remote_addr, uint32_t rkey);
DLPY_EXPORT int dlpy_read(struct dlpy *p, void *out, size_t len,
			  uint64_t remote_addr, uint32_t rkey);

const char *dlpy_errmsg(void)
{
	return dlpy_msg;
}

void dlpy_close(struct dlpy *p)
{
	if (!p)
		return;
	rcloop_destroy(p->loop);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	free(p->buf);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ctx)
		ibv_close_device(p->ctx);
	free(p);
}

struct dlpy *dlpy_open(const char *dev, int gid_index, size_t buf_len)
{
	struct dlpy *p = calloc(1, sizeof(*p));
	int err;

	if (!p) {
		set_err(ENOMEM, "out of memory");
		return NULL;
	}
	p->ctx = rcloop_open_device(dev);
	if (!p->ctx) {
		err = errno ? errno : ENODEV;
		set_err(err, "opening RDMA device %s: %s", dev ? dev : "(any)",
			rcloop_errmsg());
		goto fail;
	}
	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd) {
		err = errno ? errno : ENOMEM;
		set_err(err, "ibv_alloc_pd: %s", strerror(err));
		goto fail;
	}
	p->len = buf_len;
	p->buf = calloc(1, buf_len);
	p->mr = p->buf ? ibv_reg_mr(p->pd, p->buf, buf_len,
				    IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!p->mr) {
		err = errno ? errno : ENOMEM;
		set_err(err, "local buffer MR of %zu bytes: %s", buf_len,
			strerror(err));
		goto fail;
	}
	p->loop = rcloop_create(p->ctx, p->pd, gid_index);
	if (!p->loop) {
		err = errno ? errno : EIO;
		set_err(err, "RC loopback pair: %s", rcloop_errmsg());
		goto fail;
	}
	return p;
fail:
	dlpy_close(p);
	errno = err;
	return NULL;
}

struct ibv_context *dlpy_context(struct dlpy *p)
{
	return p->ctx;
}

struct ibv_pd *dlpy_pd(struct dlpy *p)
{
	return p->pd;
}

int dlpy_write(struct dlpy *p, const void *data, size_t len,
	       uint64_t remote_addr, uint32_t rkey)
{
	if (len > p->len) {
		set_err(EINVAL, "%zu bytes exceed the %zu-byte buffer", len,
			p->len);
		return -1;
	}
	memcpy(p->buf, data, len);
	if (rcloop_write(p->loop, p->buf, p->mr->lkey, remote_addr, rkey,
			 len)) {
		set_err(errno ? errno : EIO, "RDMA WRITE: %s", rcloop_errmsg());
		return -1;
	}
	return 0;
}

int dlpy_read(struct dlpy *p, void *out, size_t len, uint64_t remote_addr,
	      uint32_t rkey)
{
	if (len > p->len) {
		set_err(EINVAL, "%zu bytes exceed the %zu-byte buffer", len,
			p->len);
		return -1;
	}
	memset(p->buf, 0, len);
	if (rcloop_read(p->loop, p->buf, p->mr->lkey, remote_addr, rkey,
			len)) {
		set_err(errno ? errno : EIO, "RDMA READ: %s", rcloop_errmsg());
		return -1;
	}
	memcpy(out, p->buf, len);
	return 0;
}
