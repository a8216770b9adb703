// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * fork() handling (fork.h).  A lease lives on an open file that a
 * lease-pin MR's mapping (vm_file) and fd both reference.  The mapping is
 * MADV_DONTFORK; and the child drops its copies of the mappings and file
 * descriptors in a pthread_atfork handler, since MADV_DONTFORK alone is
 * not enough (kernels built without CONFIG_ADVISE_SYSCALLS have no
 * madvise).  Nothing else can be mapped there yet when the child handler
 * runs.  The registry and the lease shares are locked across fork() so
 * that the child's copies are consistent.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "fork.h"
#include "lease_share.h"
#include "mr.h"
#include "registry.h"

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static atomic_bool no_madvise;

static void fork_prepare(void)
{
	dl_registry_fork_prepare();
	dl_lease_share_fork_prepare();
}

static void fork_parent(void)
{
	dl_lease_share_fork_parent();
	dl_registry_fork_parent();
}

static void fork_child(void)
{
	dl_registry_fork_child(dl_mr_fork_child);
	dl_lease_share_fork_child();
}

static void fork_register(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void dl_fork_init(void)
{
	pthread_once(&fork_once, fork_register);
}

void dl_fork_exclude(void *addr, size_t len)
{
	/* ENOSYS (no CONFIG_ADVISE_SYSCALLS) stays so: stop asking */
	if (!atomic_load_explicit(&no_madvise, memory_order_relaxed) &&
	    madvise(addr, len, MADV_DONTFORK) && errno == ENOSYS)
		atomic_store_explicit(&no_madvise, true, memory_order_relaxed);
}
