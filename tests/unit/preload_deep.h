/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libdl-preload-deep.so, which test_preload loads with RTLD_DEEPBIND: an
 * object that links libibverbs, so that its own lookups search libibverbs
 * before the global scope (and the preload library in it).
 */
#ifndef DAXLEASE_PRELOAD_DEEP_H
#define DAXLEASE_PRELOAD_DEEP_H

#include <infiniband/verbs.h>

/* the ways dl_deep_lookup() looks a name up, from inside the object */
enum dl_deep_way {
	DL_DEEP_DLSYM_DEFAULT,
	DL_DEEP_DLSYM_NEXT,
	DL_DEEP_DLSYM_HANDLE,		/* of libibverbs.so.1 */
	DL_DEEP_DLVSYM_DEFAULT,
	DL_DEEP_DLVSYM_NEXT,
	DL_DEEP_DLVSYM_HANDLE,
	DL_DEEP_WAYS
};

/* out[way]: what name (version for dlvsym()) resolves to from here */
void dl_deep_lookup(const char *name, const char *version,
		    void *out[DL_DEEP_WAYS]);

/*
 * Never called (they need a device): they give the object a PLT slot for
 * each registration function, which test_preload reads once bound.
 */
struct ibv_mr *dl_deep_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			      int access);
struct ibv_mr *dl_deep_reg_mr_iova(struct ibv_pd *pd, void *addr,
				   size_t len, uint64_t iova, int access);
struct ibv_mr *dl_deep_reg_mr_iova2(struct ibv_pd *pd, void *addr,
				    size_t len, uint64_t iova,
				    unsigned int access);
int dl_deep_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
		     void *addr, size_t len, int access);
int dl_deep_dereg_mr(struct ibv_mr *mr);

#endif
