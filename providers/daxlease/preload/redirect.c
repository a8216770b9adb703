// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ld.so resolves a name by walking a scope's objects and reading each
 * one's .dynsym where it is mapped; the address it hands out is l_addr +
 * st_value of the definition it matched.  Every kind of lookup does:
 * dlsym() and dlvsym() in a handle, with RTLD_DEFAULT or RTLD_NEXT, the
 * local scope of an object loaded with RTLD_DEEPBIND, lazy PLT fixups and
 * the relocations of every object loaded later.  ld.so keeps no copy of
 * st_value (at most a pointer to the Sym), so setting it to fn - l_addr
 * makes all of those find fn, while the code at the old address stays
 * where it is for whoever already holds it.  Lookups made before, and
 * copies of the object elsewhere (dlmopen() namespaces, another path),
 * are not affected.
 *
 * .dynsym is read only, in a PT_LOAD of its own (GNU ld's default
 * -z separate-code): its page is made writable for one aligned store and
 * read only again, and becomes a private copy.  Whatever does not fit
 * (an entry in an executable or writable segment, a page shared with
 * another segment, an IFUNC, a sealed mapping) is left alone and said so.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "redirect.h"

/*
 * Where st_value alone is the entry point that callers use: not ppc64
 * (ELFv2 keeps a local entry offset in st_other, ELFv1 points at a
 * function descriptor), and not the arches where ld.so leaves .dynamic
 * unrelocated (DL_RO_DYN_SECTION), which this file was not checked on.
 */
#if defined(__x86_64__) || defined(__aarch64__)
#define DL_REDIRECT_ARCH_OK 1
#else
#define DL_REDIRECT_ARCH_OK 0
#endif

/* .gnu.version entries: the version index, and "not the default one" */
#define DL_VERSYM_VERSION 0x7fff
#define DL_VERSYM_HIDDEN 0x8000

/* what a symbol lookup in one loaded object needs, from its .dynamic */
struct dl_dynobj {
	ElfW(Addr) base;		/* l_addr */
	const char *path;		/* l_name */
	const ElfW(Phdr) *phdr;
	ElfW(Half) phnum;
	ElfW(Sym) *symtab;
	const char *strtab;
	size_t strsz;
	const uint32_t *gnu_hash;
	const ElfW(Versym) *versym;
	const ElfW(Verdef) *verdef;
	size_t verdefnum;
};

static int __attribute__((format(printf, 3, 4)))
fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct dl_dynobj *o = arg;

	(void)size;
	if (info->dlpi_addr != o->base || !info->dlpi_name ||
	    strcmp(info->dlpi_name, o->path))
		return 0;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	return 1;
}

/* the PT_LOAD of o that holds all of [addr, addr + len), or NULL */
static const ElfW(Phdr) *load_of(const struct dl_dynobj *o, ElfW(Addr) addr,
				 size_t len)
{
	ElfW(Half) i;

	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *ph = &o->phdr[i];
		ElfW(Addr) lo = o->base + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && addr >= lo &&
		    addr - lo <= ph->p_memsz &&
		    len <= ph->p_memsz - (addr - lo))
			return ph;
	}
	return NULL;
}

/*
 * ld.so relocates some d_ptr values in place where .dynamic is writable
 * (DT_SYMTAB, DT_STRTAB, DT_GNU_HASH, DT_VERSYM) and never others
 * (DT_VERDEF): a value below l_addr is still an offset.
 */
static void *dyn_ptr(const struct dl_dynobj *o, const ElfW(Dyn) *d)
{
	ElfW(Addr) p = d->d_un.d_ptr;

	return (void *)(p < o->base ? o->base + p : p);
}

static int dynobj_init(struct dl_dynobj *o, const struct link_map *lm,
		       char *why, size_t whylen)
{
	const ElfW(Dyn) *d;

	memset(o, 0, sizeof(*o));
	o->base = lm->l_addr;
	o->path = lm->l_name ? lm->l_name : "";
	dl_iterate_phdr(phdr_cb, o);
	if (!o->phdr || !lm->l_ld)
		return fail(why, whylen,
			    "not redirected: no program headers for %s",
			    o->path);
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			o->symtab = dyn_ptr(o, d);
			break;
		case DT_STRTAB:
			o->strtab = dyn_ptr(o, d);
			break;
		case DT_STRSZ:
			o->strsz = d->d_un.d_val;
			break;
		case DT_GNU_HASH:
			o->gnu_hash = dyn_ptr(o, d);
			break;
		case DT_VERSYM:
			o->versym = dyn_ptr(o, d);
			break;
		case DT_VERDEF:
			o->verdef = dyn_ptr(o, d);
			break;
		case DT_VERDEFNUM:
			o->verdefnum = d->d_un.d_val;
			break;
		}
	}
	if (!o->symtab || !o->strtab || !o->strsz || !o->versym ||
	    !o->verdef || !o->verdefnum)
		return fail(why, whylen,
			    "not redirected: %s has no versioned dynamic symbols",
			    o->path);
	if (!o->gnu_hash)
		return fail(why, whylen,
			    "not redirected: %s has no GNU hash table",
			    o->path);
	if (!load_of(o, (ElfW(Addr))o->strtab, o->strsz) ||
	    !load_of(o, (ElfW(Addr))o->gnu_hash, 4 * sizeof(uint32_t)) ||
	    !load_of(o, (ElfW(Addr))o->symtab, sizeof(ElfW(Sym))) ||
	    !load_of(o, (ElfW(Addr))o->verdef, sizeof(ElfW(Verdef))))
		return fail(why, whylen,
			    "not redirected: the dynamic section of %s points outside it",
			    o->path);
	return 0;
}

static const char *dynstr(const struct dl_dynobj *o, ElfW(Word) off)
{
	return off < o->strsz ? o->strtab + off : NULL;
}

static const char *vername(const struct dl_dynobj *o, ElfW(Versym) ndx)
{
	const ElfW(Verdef) *d = o->verdef;
	size_t n;

	for (n = 0; n < o->verdefnum; n++) {
		if (d->vd_ndx == ndx && d->vd_cnt) {
			const ElfW(Verdaux) *a = (const void *)
				((const char *)d + d->vd_aux);

			return dynstr(o, a->vda_name);
		}
		if (!d->vd_next)
			break;
		d = (const void *)((const char *)d + d->vd_next);
	}
	return NULL;
}

static uint32_t gnu_hash(const char *name)
{
	const unsigned char *c = (const unsigned char *)name;
	uint32_t h = 5381;

	while (*c)
		h = h * 33 + *c++;
	return h;
}

/* name@@version, the default version's definition, through the GNU hash */
static ElfW(Sym) *lookup(const struct dl_dynobj *o, const char *name,
			 const char *version)
{
	const uint32_t *gh = o->gnu_hash;
	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
	const uint32_t *buckets = (const uint32_t *)
		((const ElfW(Addr) *)(gh + 4) + bloom_size);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t h = gnu_hash(name), i;

	if (!nbuckets)
		return NULL;
	i = buckets[h % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		ElfW(Sym) *s = &o->symtab[i];
		uint32_t h2 = chain[i - symoffset];
		ElfW(Versym) v = o->versym[i];
		const char *n, *vn;

		if ((h | 1) == (h2 | 1) && s->st_shndx != SHN_UNDEF &&
		    !(v & DL_VERSYM_HIDDEN) && (n = dynstr(o, s->st_name)) &&
		    !strcmp(n, name) &&
		    (vn = vername(o, v & DL_VERSYM_VERSION)) &&
		    !strcmp(vn, version))
			return s;
		if (h2 & 1)
			return NULL;
	}
}

/* does a PT_LOAD other than seg map part of the page at page? */
static int page_shared(const struct dl_dynobj *o, const ElfW(Phdr) *seg,
		       ElfW(Addr) page, ElfW(Addr) pagesize)
{
	ElfW(Half) i;

	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *ph = &o->phdr[i];
		ElfW(Addr) lo = o->base + ph->p_vaddr;

		if (ph == seg || ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		if (lo < page + pagesize && lo + ph->p_memsz > page)
			return 1;
	}
	return 0;
}

int dl_redirect_symbol(void *real, const char *name, const char *version,
		       void *fn, char *why, size_t whylen)
{
	ElfW(Addr) pagesize = (ElfW(Addr))sysconf(_SC_PAGESIZE);
	struct link_map *lm = NULL;
	const ElfW(Phdr) *seg;
	struct dl_dynobj o;
	ElfW(Addr) page;
	ElfW(Sym) *sym;
	Dl_info info;

	if (!DL_REDIRECT_ARCH_OK)
		return fail(why, whylen,
			    "not redirected: not known to be right on this architecture");
	if (!real || !fn ||
	    !dladdr1(real, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return fail(why, whylen,
			    "not redirected: %p is in no loaded object", real);
	if (dynobj_init(&o, lm, why, whylen))
		return -1;
	sym = lookup(&o, name, version);
	if (!sym)
		return fail(why, whylen, "not redirected: %s has no %s@@%s",
			    o.path, name, version);
	if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
		return fail(why, whylen,
			    "not redirected: %s@@%s in %s is not a plain function",
			    name, version, o.path);
	if (o.base + sym->st_value != (ElfW(Addr))real)
		return fail(why, whylen,
			    "not redirected: %s@@%s in %s is not the one found at %p",
			    name, version, o.path, real);

	/* the 8 aligned bytes of st_value: in one page, stored at once */
	seg = load_of(&o, (ElfW(Addr))&sym->st_value, sizeof(sym->st_value));
	page = (ElfW(Addr))&sym->st_value & ~(pagesize - 1);
	if (!seg || seg->p_flags != PF_R ||
	    page_shared(&o, seg, page, pagesize))
		return fail(why, whylen,
			    "not redirected: the .dynsym of %s is not in a read-only segment of its own",
			    o.path);
	if (mprotect((void *)page, pagesize, PROT_READ | PROT_WRITE))
		return fail(why, whylen,
			    "not redirected: the .dynsym of %s cannot be written: %s",
			    o.path, strerror(errno));
	__atomic_store_n(&sym->st_value, (ElfW(Addr))fn - o.base,
			 __ATOMIC_RELEASE);
	if (mprotect((void *)page, pagesize, PROT_READ))
		return fail(why, whylen,
			    "redirected, but a page of the .dynsym of %s stays writable: %s",
			    o.path, strerror(errno));
	return 0;
}
