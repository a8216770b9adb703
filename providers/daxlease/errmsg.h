/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The thread's last error: errno says what, the message read by
 * ibv_dax_errmsg() says why and what to do.
 */
#ifndef DAXLEASE_ERRMSG_H
#define DAXLEASE_ERRMSG_H

#include <stddef.h>
#include <stdint.h>

#define DL_ERRMSG_MAX 512

/*
 * What a message tells a user whose kernel lacks the series: what to
 * install and where to read on, never a path of the source tree.
 */
#define DL_KERNEL_REMEDY "package daxlease-kernel-patches, see daxlease(7)"

/* Set errno = err and the thread-local message; returns -1. */
int dl_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Same, returning NULL, for pointer-returning paths. */
void *dl_err_null(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Keep errno and message across cleanup calls that may clobber them. */
struct dl_err_save {
	int err;
	char msg[DL_ERRMSG_MAX];
};
void dl_err_save(struct dl_err_save *s);
/*
 * 0 if the caller's struct (inlen bytes) holds the first version of the
 * struct named type (first bytes); else -1, errno EINVAL and a message.
 */
int dl_check_inlen(uint32_t inlen, size_t first, const char *type);
void dl_err_restore(const struct dl_err_save *s);

#endif /* DAXLEASE_ERRMSG_H */
