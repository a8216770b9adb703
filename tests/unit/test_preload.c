// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no RDMA device), run with libdaxlease-preload.so in
 * LD_PRELOAD: which function a program gets for each registration entry
 * point of libibverbs, however it finds it: linked (the PLT), dlsym() with
 * RTLD_DEFAULT or RTLD_NEXT, or dlsym() in a handle of a dlopen()ed
 * libibverbs; and that dlsym() still finds everything else where glibc
 * would.  Registering needs a device: the guest suite "programs" does.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "dtest.h"

static const char *const names[] = {
	"ibv_reg_mr", "ibv_reg_mr_iova", "ibv_reg_mr_iova2",
	"ibv_rereg_mr", "ibv_dereg_mr",
};

/* the file name of the object that defines p */
static const char *object_of(void *p)
{
	Dl_info info;

	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "(none)";
	return info.dli_fname;
}

static int in_preload(void *p)
{
	return strstr(object_of(p), "libdaxlease-preload.so") != NULL;
}

int main(void)
{
	void *h, *p, *q;
	char name[96];
	size_t i;

	dtest_begin("unit-preload");
	if (!in_preload(dlsym(RTLD_DEFAULT, "ibv_dereg_mr"))) {
		dtest_fail("preloaded", "run with libdaxlease-preload.so in LD_PRELOAD (ibv_dereg_mr is in %s)",
			   object_of(dlsym(RTLD_DEFAULT, "ibv_dereg_mr")));
		return dtest_end();
	}
	h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	dtest_check("dlopen-libibverbs", h != NULL, "%s", dlerror());
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		p = dlsym(RTLD_DEFAULT, names[i]);
		snprintf(name, sizeof(name), "default/%s", names[i]);
		dtest_check(name, in_preload(p), "in %s", object_of(p));
		/* the object after this program is the preload library */
		p = dlsym(RTLD_NEXT, names[i]);
		snprintf(name, sizeof(name), "next/%s", names[i]);
		dtest_check(name, in_preload(p), "in %s", object_of(p));
		if (!h)
			continue;
		p = dlsym(h, names[i]);
		snprintf(name, sizeof(name), "handle/%s", names[i]);
		dtest_check(name, in_preload(p) && p == dlsym(RTLD_DEFAULT,
							      names[i]),
			    "in %s", object_of(p));
	}
	/* the linked references are the preload's too */
	dtest_check("linked/ibv_dereg_mr",
		    in_preload((void *)ibv_dereg_mr), "in %s",
		    object_of((void *)ibv_dereg_mr));
	/* everything else is where glibc puts it */
	if (h) {
		p = dlsym(h, "ibv_get_device_list");
		dtest_check("handle/other-symbol",
			    p && strstr(object_of(p), "libibverbs"), "in %s",
			    object_of(p));
		p = dlvsym(h, "ibv_dereg_mr", "IBVERBS_1.1");
		dtest_check("dlvsym-not-interposed",
			    p && strstr(object_of(p), "libibverbs"), "in %s",
			    object_of(p));
		p = dlsym(h, "no_such_symbol_here");
		dtest_check("handle/missing", !p && dlerror() != NULL,
			    "found %p", p);
	}
	p = dlsym(RTLD_NEXT, "malloc");
	q = dlsym(RTLD_DEFAULT, "malloc");
	dtest_check("next/malloc", p && p == q, "%p %p", p, q);
	if (h)
		dlclose(h);
	return dtest_end();
}
