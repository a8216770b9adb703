// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Thread-local one-line reason for the last failure, as libpmem2's
 * pmem2_errormsg(): errno says what, the message says why and what to do.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs_dax.h>

#include "daxlease.h"
#include "errmsg.h"

static __thread char dl_msg[DL_ERRMSG_MAX];

static __attribute__((format(printf, 2, 0))) void
dl_vset(int err, const char *fmt, va_list ap)
{
	vsnprintf(dl_msg, sizeof(dl_msg), fmt, ap);
	errno = err;
}

int dl_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dl_vset(err, fmt, ap);
	va_end(ap);
	return -1;
}

void *dl_err_null(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dl_vset(err, fmt, ap);
	va_end(ap);
	return NULL;
}

DL_EXPORT const char *ibv_dax_errmsg(void)
{
	return dl_msg;
}

void dl_err_save(struct dl_err_save *s)
{
	s->err = errno;
	memcpy(s->msg, dl_msg, sizeof(s->msg));
}

void dl_err_restore(const struct dl_err_save *s)
{
	memcpy(dl_msg, s->msg, sizeof(dl_msg));
	errno = s->err;
}

int dl_check_inlen(uint32_t inlen, size_t first, const char *type)
{
	if (inlen >= first)
		return 0;
	return dl_err(EINVAL,
		      "inlen %u is smaller than %s (%zu bytes): pass the size of the struct",
		      inlen, type, first);
}
