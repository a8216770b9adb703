// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no RDMA device), run with libdaxlease-preload.so in
 * LD_PRELOAD: which function a program gets for each registration entry
 * point of libibverbs, however it finds it: linked (the PLT), dlsym() or
 * dlvsym() with its default version, with RTLD_DEFAULT or RTLD_NEXT or
 * in a handle of a dlopen()ed libibverbs, and from inside an object
 * loaded with RTLD_DEEPBIND (its PLT, dlsym(), dlvsym()); and that
 * everything else, the IBVERBS_1.0 versions included, is still where
 * glibc would find it.  Registering needs a device: the guest suite
 * "programs" does.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "dtest.h"
#include "preload_deep.h"

/* the sanitizer runtimes refuse dlopen() with RTLD_DEEPBIND */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DL_SANITIZED 1
#endif
#endif

#if defined(__x86_64__)
#define DL_JUMP_SLOT R_X86_64_JUMP_SLOT
#elif defined(__aarch64__)
#define DL_JUMP_SLOT R_AARCH64_JUMP_SLOT
#endif

#define PRELOAD_SO "libdaxlease-preload.so"
#define IBVERBS_SO "libibverbs.so.1"

/* what the preload library interposes: these names at these versions */
static const struct {
	const char *name, *version;
} entries[] = {
	{ "ibv_reg_mr", "IBVERBS_1.1" },
	{ "ibv_reg_mr_iova", "IBVERBS_1.7" },
	{ "ibv_reg_mr_iova2", "IBVERBS_1.8" },
	{ "ibv_rereg_mr", "IBVERBS_1.1" },
	{ "ibv_dereg_mr", "IBVERBS_1.1" },
};

#define N_ENTRIES (sizeof(entries) / sizeof(entries[0]))

static const char *const deep_ways[DL_DEEP_WAYS] = {
	[DL_DEEP_DLSYM_DEFAULT] = "dlsym-default",
	[DL_DEEP_DLSYM_NEXT] = "dlsym-next",
	[DL_DEEP_DLSYM_HANDLE] = "dlsym-handle",
	[DL_DEEP_DLVSYM_DEFAULT] = "dlvsym-default",
	[DL_DEEP_DLVSYM_NEXT] = "dlvsym-next",
	[DL_DEEP_DLVSYM_HANDLE] = "dlvsym-handle",
};

typedef void (*deep_lookup_fn)(const char *, const char *,
			       void *[DL_DEEP_WAYS]);

/* the file name of the object that defines p */
static const char *object_of(void *p)
{
	Dl_info info;

	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "(none)";
	return info.dli_fname;
}

/* the symbol dladdr() names at p */
static const char *symbol_of(void *p)
{
	Dl_info info;

	if (!p || !dladdr(p, &info) || !info.dli_sname)
		return "(none)";
	return info.dli_sname;
}

/* is p defined in the object of this file name (its last component)? */
static int in_object(void *p, const char *file)
{
	const char *path = object_of(p), *slash = strrchr(path, '/');

	return !strcmp(slash ? slash + 1 : path, file);
}

static int in_preload(void *p)
{
	return in_object(p, PRELOAD_SO);
}

static int in_ibverbs(void *p)
{
	return in_object(p, IBVERBS_SO);
}

/*
 * Where the calls to name from the object of handle (loaded with
 * RTLD_NOW, so bound) go: its PLT slot for name.  NULL if it has none.
 */
static void *plt_target(void *handle, const char *name)
{
#ifdef DL_JUMP_SLOT
	const ElfW(Rela) *jmprel = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	struct link_map *lm;
	const ElfW(Dyn) *d;
	size_t n = 0, i;

	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm->l_ld)
		return NULL;
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		/* relocated in place by ld.so, or still an offset */
		ElfW(Addr) p = d->d_un.d_ptr;

		if (p < lm->l_addr)
			p += lm->l_addr;
		switch (d->d_tag) {
		case DT_JMPREL:
			jmprel = (const void *)p;
			break;
		case DT_PLTRELSZ:
			n = d->d_un.d_val / sizeof(*jmprel);
			break;
		case DT_SYMTAB:
			symtab = (const void *)p;
			break;
		case DT_STRTAB:
			strtab = (const void *)p;
			break;
		}
	}
	if (!jmprel || !symtab || !strtab)
		return NULL;
	for (i = 0; i < n; i++) {
		const ElfW(Rela) *r = &jmprel[i];

		if (ELF64_R_TYPE(r->r_info) == DL_JUMP_SLOT &&
		    !strcmp(strtab + symtab[ELF64_R_SYM(r->r_info)].st_name,
			    name))
			return *(void **)(lm->l_addr + r->r_offset);
	}
#else
	(void)handle;
	(void)name;
#endif
	return NULL;
}

/* dlsym() of each entry point, in the three places a program looks */
static void check_dlsym(void *h)
{
	char name[96];
	size_t i;
	void *p;

	for (i = 0; i < N_ENTRIES; i++) {
		p = dlsym(RTLD_DEFAULT, entries[i].name);
		snprintf(name, sizeof(name), "default/%s", entries[i].name);
		dtest_check(name, in_preload(p), "in %s", object_of(p));
		/* the object after this program is the preload library */
		p = dlsym(RTLD_NEXT, entries[i].name);
		snprintf(name, sizeof(name), "next/%s", entries[i].name);
		dtest_check(name, in_preload(p), "in %s", object_of(p));
		if (!h)
			continue;
		p = dlsym(h, entries[i].name);
		snprintf(name, sizeof(name), "handle/%s", entries[i].name);
		dtest_check(name, in_preload(p) &&
				  p == dlsym(RTLD_DEFAULT, entries[i].name),
			    "in %s", object_of(p));
	}
}

/*
 * dlvsym() with the default version: glibc never takes the preload's
 * unversioned definitions for it, so this finds libibverbs' own entries,
 * which point at the preload's functions.
 */
static void check_dlvsym(void *h)
{
	char name[96];
	size_t i;
	void *p, *want;

	for (i = 0; i < N_ENTRIES; i++) {
		want = dlsym(RTLD_DEFAULT, entries[i].name);
		p = dlvsym(RTLD_DEFAULT, entries[i].name, entries[i].version);
		snprintf(name, sizeof(name), "dlvsym-default/%s@%s",
			 entries[i].name, entries[i].version);
		dtest_check(name, in_preload(p) && p == want, "%p in %s", p,
			    object_of(p));
		p = dlvsym(RTLD_NEXT, entries[i].name, entries[i].version);
		snprintf(name, sizeof(name), "dlvsym-next/%s@%s",
			 entries[i].name, entries[i].version);
		dtest_check(name, in_preload(p) && p == want, "%p in %s", p,
			    object_of(p));
		if (!h)
			continue;
		p = dlvsym(h, entries[i].name, entries[i].version);
		snprintf(name, sizeof(name), "dlvsym-handle/%s@%s",
			 entries[i].name, entries[i].version);
		dtest_check(name, in_preload(p) && p == want, "%p in %s", p,
			    object_of(p));
	}
}

/* everything else in libibverbs is libibverbs' own, and named so */
static void check_others(void *h)
{
	static const char *const compat[] = { "ibv_reg_mr", "ibv_dereg_mr" };
	char name[96];
	size_t i;
	void *p;

	p = dlsym(h, "ibv_get_device_list");
	dtest_check("handle/other-symbol", in_ibverbs(p), "in %s",
		    object_of(p));
	p = dlvsym(h, "ibv_get_device_list", "IBVERBS_1.1");
	dtest_check("dlvsym-handle/other-symbol",
		    in_ibverbs(p) && !strcmp(symbol_of(p),
					     "ibv_get_device_list"),
		    "%s in %s", symbol_of(p), object_of(p));
	/*
	 * The 1.0 versions take a struct ibv_mr_1_0 the preload never made;
	 * they call the 1.1 functions, which are the preload's.
	 */
	for (i = 0; i < sizeof(compat) / sizeof(compat[0]); i++) {
		snprintf(name, sizeof(name), "dlvsym-handle/%s@IBVERBS_1.0",
			 compat[i]);
		p = dlvsym(h, compat[i], "IBVERBS_1.0");
		if (!p) {
			dtest_skip(name, "no IBVERBS_1.0 %s in this libibverbs",
				   compat[i]);
			continue;
		}
		dtest_check(name,
			    in_ibverbs(p) && !strcmp(symbol_of(p), compat[i]),
			    "%s in %s", symbol_of(p), object_of(p));
	}
	p = dlvsym(h, "ibv_dereg_mr", "IBVERBS_0.9");
	dtest_check("dlvsym-handle/no-such-version", !p && dlerror() != NULL,
		    "found %p in %s", p, object_of(p));
	p = dlsym(h, "no_such_symbol_here");
	dtest_check("handle/missing", !p && dlerror() != NULL, "found %p", p);
	/* dladdr() still names the preload's functions */
	for (i = 0; i < N_ENTRIES; i++) {
		p = dlsym(RTLD_DEFAULT, entries[i].name);
		snprintf(name, sizeof(name), "dladdr/%s", entries[i].name);
		dtest_check(name, in_preload(p) &&
				  !strcmp(symbol_of(p), entries[i].name),
			    "%s in %s", symbol_of(p), object_of(p));
	}
}

/*
 * An object loaded with RTLD_DEEPBIND searches itself and its own
 * dependencies (libibverbs, glibc) before the global scope: its PLT, its
 * dlsym() (glibc's, not the preload's) and what it looks up end in
 * libibverbs' entries first.
 */
static void check_deepbind(void)
{
	deep_lookup_fn lookup;
	void *h, *p, *want, *out[DL_DEEP_WAYS];
	char name[128];
	size_t i;
	int w;

#ifdef DL_SANITIZED
	dtest_skip("deepbind", "the sanitizer runtime refuses RTLD_DEEPBIND");
	return;
#endif
	h = dlopen(DL_PRELOAD_DEEP, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	if (!dtest_check("deepbind/dlopen", h != NULL, "%s",
			 h ? DL_PRELOAD_DEEP : dlerror()))
		return;
	lookup = (deep_lookup_fn)dlsym(h, "dl_deep_lookup");
	if (!dtest_check("deepbind/lookup", lookup != NULL, "%s",
			 lookup ? "dl_deep_lookup" : dlerror())) {
		dlclose(h);
		return;
	}
#ifdef DL_JUMP_SLOT
	p = plt_target(h, "dlsym");
	dtest_check("deepbind/its-dlsym", p && !in_preload(p),
		    "bound to %s", object_of(p));
#endif
	for (i = 0; i < N_ENTRIES; i++) {
		want = dlsym(RTLD_DEFAULT, entries[i].name);
#ifdef DL_JUMP_SLOT
		p = plt_target(h, entries[i].name);
		snprintf(name, sizeof(name), "deepbind/plt/%s",
			 entries[i].name);
		dtest_check(name, in_preload(p) && p == want,
			    "bound to %p in %s", p, object_of(p));
#endif
		memset(out, 0, sizeof(out));
		lookup(entries[i].name, entries[i].version, out);
		for (w = 0; w < DL_DEEP_WAYS; w++) {
			snprintf(name, sizeof(name), "deepbind/%s/%s@%s",
				 deep_ways[w], entries[i].name,
				 entries[i].version);
			dtest_check(name, in_preload(out[w]) && out[w] == want,
				    "%p in %s", out[w], object_of(out[w]));
		}
	}
	/* the order is libibverbs first: the rest of it is its own */
	memset(out, 0, sizeof(out));
	lookup("ibv_get_device_list", "IBVERBS_1.1", out);
	dtest_check("deepbind/other-symbol",
		    in_ibverbs(out[DL_DEEP_DLSYM_HANDLE]) &&
			    in_ibverbs(out[DL_DEEP_DLVSYM_DEFAULT]),
		    "in %s and %s", object_of(out[DL_DEEP_DLSYM_HANDLE]),
		    object_of(out[DL_DEEP_DLVSYM_DEFAULT]));
	dlclose(h);
}

int main(void)
{
	void *h, *p, *q;

	dtest_begin("unit-preload");
	if (!in_preload(dlsym(RTLD_DEFAULT, "ibv_dereg_mr"))) {
		dtest_fail("preloaded", "run with " PRELOAD_SO " in LD_PRELOAD (ibv_dereg_mr is in %s)",
			   object_of(dlsym(RTLD_DEFAULT, "ibv_dereg_mr")));
		return dtest_end();
	}
	h = dlopen(IBVERBS_SO, RTLD_NOW | RTLD_LOCAL);
	dtest_check("dlopen-libibverbs", h != NULL, "%s",
		    h ? IBVERBS_SO : dlerror());
	check_dlsym(h);
	/* the linked references are the preload's too */
	dtest_check("linked/ibv_dereg_mr",
		    in_preload((void *)ibv_dereg_mr), "in %s",
		    object_of((void *)ibv_dereg_mr));
	check_dlvsym(h);
	if (h)
		check_others(h);
	check_deepbind();
	p = dlsym(RTLD_NEXT, "malloc");
	q = dlsym(RTLD_DEFAULT, "malloc");
	dtest_check("next/malloc", p && p == q, "%p %p", p, q);
	if (h)
		dlclose(h);
	return dtest_end();
}
