/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * fork() and lease-pin MRs: a child must neither keep the parent's lease
 * alive nor see the pinned pages.
 */
#ifndef DAXLEASE_FORK_H
#define DAXLEASE_FORK_H

#include <stddef.h>

/* Install the fork handlers, once; before the first lease is taken. */
void dl_fork_init(void);
/* Keep [addr, addr + len) out of children (MADV_DONTFORK, when it exists). */
void dl_fork_exclude(void *addr, size_t len);

#endif /* DAXLEASE_FORK_H */
