/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The live DAX MRs of this process.  Every public call on an MR first
 * finds the pointer here, so a foreign pointer or a second
 * ibv_dereg_dax_mr() fails with EINVAL instead of touching freed memory.
 */
#ifndef DAXLEASE_REGISTRY_H
#define DAXLEASE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include <infiniband/verbs.h>

struct dl_mr;

void dl_registry_insert(struct dl_mr *m);
/* Find mr and unlink it; NULL if it is not a live DAX MR. */
struct dl_mr *dl_registry_take(const struct ibv_mr *mr);
/*
 * Find mr with the registry locked (shared, or exclusive with write); the
 * caller calls dl_registry_unlock() when done with it.  NULL (and the
 * registry unlocked) if it is not a live DAX MR.
 */
struct dl_mr *dl_registry_lock(const struct ibv_mr *mr, bool write);
void dl_registry_unlock(void);
/* Live MRs (tests). */
size_t dl_registry_count(void);

/* fork(): the registry is held across it; the child drops each MR's copy */
void dl_registry_fork_prepare(void);
void dl_registry_fork_parent(void);
void dl_registry_fork_child(void (*drop)(struct dl_mr *m));

#endif /* DAXLEASE_REGISTRY_H */
