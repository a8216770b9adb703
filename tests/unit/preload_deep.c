// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Loaded by test_preload with RTLD_DEEPBIND (see preload_deep.h): its
 * PLT is bound, and its calls to dlsym() and dlvsym() are made, with
 * libibverbs searched before the preload library.  Its dlsym() is
 * glibc's, not the preload's, which comes later in that order too.
 */
#include <dlfcn.h>

#include "preload_deep.h"

/* the functions themselves, not verbs.h's inline dispatch */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

void dl_deep_lookup(const char *name, const char *version,
		    void *out[DL_DEEP_WAYS])
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);

	out[DL_DEEP_DLSYM_DEFAULT] = dlsym(RTLD_DEFAULT, name);
	out[DL_DEEP_DLSYM_NEXT] = dlsym(RTLD_NEXT, name);
	out[DL_DEEP_DLSYM_HANDLE] = h ? dlsym(h, name) : NULL;
	out[DL_DEEP_DLVSYM_DEFAULT] = dlvsym(RTLD_DEFAULT, name, version);
	out[DL_DEEP_DLVSYM_NEXT] = dlvsym(RTLD_NEXT, name, version);
	out[DL_DEEP_DLVSYM_HANDLE] = h ? dlvsym(h, name, version) : NULL;
	if (h)
		dlclose(h);
}

struct ibv_mr *dl_deep_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			      int access)
{
	return ibv_reg_mr(pd, addr, len, access);
}

struct ibv_mr *dl_deep_reg_mr_iova(struct ibv_pd *pd, void *addr,
				   size_t len, uint64_t iova, int access)
{
	return ibv_reg_mr_iova(pd, addr, len, iova, access);
}

struct ibv_mr *dl_deep_reg_mr_iova2(struct ibv_pd *pd, void *addr,
				    size_t len, uint64_t iova,
				    unsigned int access)
{
	return ibv_reg_mr_iova2(pd, addr, len, iova, access);
}

int dl_deep_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
		     void *addr, size_t len, int access)
{
	return ibv_rereg_mr(mr, flags, pd, addr, len, access);
}

int dl_deep_dereg_mr(struct ibv_mr *mr)
{
	return ibv_dereg_mr(mr);
}
