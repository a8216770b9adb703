/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * fork() and lease-pin MRs: a child must neither keep the parent's lease
 * alive nor keep the parent's mappings of the pinned pages.
 */
#ifndef DAXLEASE_FORK_H
#define DAXLEASE_FORK_H

/* Install the fork handlers, once; before the first lease is taken. */
void dl_fork_init(void);

#endif /* DAXLEASE_FORK_H */
