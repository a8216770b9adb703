/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * A DAX MR: the source, its mapping, the lease (lease-pin MRs) and the
 * registration, behind the struct ibv_mr the application holds.
 */
#ifndef DAXLEASE_MR_H
#define DAXLEASE_MR_H

#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs_dax.h>

#include "map.h"
#include "request.h"
#include "source.h"

struct dl_context;
struct dl_lease_share;

#define DL_MR_MAGIC 0x64786c656173654dULL	/* "Mesaelxd" */

struct dl_mr {
	struct ibv_mr ibv;		/* returned to the application */
	uint64_t magic;
	struct dl_mr *hnext;		/* registry bucket chain */
	pid_t owner_pid;		/* fork(): the child gets no MR */
	struct dl_context *ctx;
	struct ibv_mr *provider_mr;	/* PLAIN / ODP */
	struct dl_request req;		/* req.path: not after registration */
	struct dl_source src;
	struct dl_map map;
	enum ibv_dax_mr_strategy strategy;
	struct dl_lease_share *lease;	/* held: a lease-pin MR's share */
};

/*
 * In a forked child (fork.c): drop the child's copies of a lease-pin MR's
 * mapping and fd, which reference the open file carrying the lease.
 */
void dl_mr_fork_child(struct dl_mr *m);

#endif /* DAXLEASE_MR_H */
