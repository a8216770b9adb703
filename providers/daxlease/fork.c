// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * fork() handling (fork.h).  A lease lives on an open file that a
 * lease-pin MR's mapping (vm_file) and descriptors reference.  The child
 * drops its copies of the mappings and descriptors in a pthread_atfork
 * handler, before anything else can be mapped there.  (MADV_DONTFORK
 * would keep the mappings out but not the descriptors, which hold the
 * lease as well, and costs a system call per registration.)  The
 * registry and the lease shares are locked across fork() so that the
 * child's copies are consistent.
 */
#include <pthread.h>

#include "fork.h"
#include "lease_share.h"
#include "mr.h"
#include "registry.h"

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

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
