// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libdaxlease-preload.so: what `daxlease run -- PROGRAM` puts in
 * LD_PRELOAD, so that a program that registers memory with ibv_reg_mr()
 * can register FS-DAX mappings it made itself, unmodified.
 *
 * The registration entry points of libibverbs are interposed:
 * ibv_reg_mr (IBVERBS_1.1), ibv_reg_mr_iova (1.7), ibv_reg_mr_iova2 (1.8),
 * ibv_rereg_mr and ibv_dereg_mr (1.1), however a program finds them:
 *
 * - By name: this library comes first in the global scope, so the
 *   program's references and its libraries' bind here, and so does
 *   dlsym() with RTLD_DEFAULT.  Inside libibverbs the first three all call
 *   ibv_reg_mr_iova2 through its PLT, so they arrive here too.
 * - In libibverbs itself: once the constructor has found the real
 *   functions, libibverbs' own .dynsym entries of these five (the default
 *   versions above; the IBVERBS_1.0 ones stay libibverbs') are pointed at
 *   the functions here (redirect.c).  Every lookup that ends in
 *   libibverbs finds them from then on: dlvsym() with those versions in a
 *   handle, with RTLD_DEFAULT or RTLD_NEXT (glibc's dlvsym() never takes
 *   this library's unversioned definitions), and all that an object
 *   loaded with RTLD_DEEPBIND binds or looks up.  Where that cannot be
 *   done DAXLEASE_DEBUG says why, and the rest works as before.
 * - dlsym() itself (x86-64), for a lookup in a handle of libibverbs made
 *   by a constructor that runs before this library's: it does the
 *   constructor's work (the above included) first.
 *
 * What still finds libibverbs' own functions: dlvsym() in a constructor
 * that runs before this library's (and before any dlsym() in a handle),
 * a second copy of libibverbs (another path, a dlmopen() namespace).
 *
 * A registration first goes to libibverbs untouched.  Only when the kernel
 * refuses it with EOPNOTSUPP (a stock kernel: no long-term pin of FS-DAX)
 * or EPERM (the daxlease kernel: no layout lease) and the range lies in a
 * shared mapping of a file on a DAX mount is it registered again through
 * ibv_reg_dax_mr() with IBV_DAX_MR_INIT_ADDR: the layout lease (shared by
 * the process's MRs of the file) and a recorded pin.  Its deregistration
 * releases the lease share.  Every other registration, and every error of
 * one, is libibverbs' own.  Where the kernel cannot pin FS-DAX, the reason
 * goes to stderr once and the program sees its own error.
 *
 * Environment (set by `daxlease run`): DAXLEASE_DEBUG=1 logs each
 * decision on stderr; DAXLEASE_ALLOW_ODP=1 lets such a registration use
 * ODP where the kernel cannot pin (IBV_DAX_MR_ALLOW_ODP).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/verbs_dax.h>

#include "redirect.h"
#include "vma.h"

/* the functions themselves, not verbs.h's inline dispatch */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#define EXPORT __attribute__((visibility("default")))

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

typedef struct ibv_mr *(*reg_mr_fn)(struct ibv_pd *, void *, size_t, int);
typedef struct ibv_mr *(*reg_mr_iova_fn)(struct ibv_pd *, void *, size_t,
					 uint64_t, int);
typedef struct ibv_mr *(*reg_mr_iova2_fn)(struct ibv_pd *, void *, size_t,
					  uint64_t, unsigned int);
typedef int (*rereg_mr_fn)(struct ibv_mr *, int, struct ibv_pd *, void *,
			   size_t, int);
typedef int (*dereg_mr_fn)(struct ibv_mr *);
typedef void *(*dlsym_fn)(void *, const char *);

/*
 * The functions below by names no other object can define: what
 * libibverbs' entries are pointed at and what dlsym() hands out, even if
 * a library in LD_PRELOAD in front of this one defines the same names.
 */
#define PRELOAD_ALIAS(fn)						\
	extern __typeof__(fn) preload_##fn				\
		__attribute__((alias(#fn), visibility("hidden")))
PRELOAD_ALIAS(ibv_reg_mr);
PRELOAD_ALIAS(ibv_reg_mr_iova);
PRELOAD_ALIAS(ibv_reg_mr_iova2);
PRELOAD_ALIAS(ibv_rereg_mr);
PRELOAD_ALIAS(ibv_dereg_mr);

/* libibverbs' own functions, found at init (NULL if libibverbs lacks one) */
static struct real_verbs {
	reg_mr_fn reg_mr;
	reg_mr_iova_fn reg_mr_iova;
	reg_mr_iova2_fn reg_mr_iova2;
	rereg_mr_fn rereg_mr;
	dereg_mr_fn dereg_mr;
} real;

/*
 * The functions replaced, named once: libibverbs' symbol and version,
 * where real keeps libibverbs' function, and the replacement here.
 */
static const struct replaced {
	const char *name, *version;
	size_t real_off;
	void *fn;
} replaced[] = {
	{ "ibv_reg_mr", "IBVERBS_1.1", offsetof(struct real_verbs, reg_mr),
	  (void *)preload_ibv_reg_mr },
	{ "ibv_reg_mr_iova", "IBVERBS_1.7",
	  offsetof(struct real_verbs, reg_mr_iova),
	  (void *)preload_ibv_reg_mr_iova },
	{ "ibv_reg_mr_iova2", "IBVERBS_1.8",
	  offsetof(struct real_verbs, reg_mr_iova2),
	  (void *)preload_ibv_reg_mr_iova2 },
	{ "ibv_rereg_mr", "IBVERBS_1.1", offsetof(struct real_verbs, rereg_mr),
	  (void *)preload_ibv_rereg_mr },
	{ "ibv_dereg_mr", "IBVERBS_1.1", offsetof(struct real_verbs, dereg_mr),
	  (void *)preload_ibv_dereg_mr },
};
#define NREPLACED (sizeof(replaced) / sizeof(replaced[0]))

/* libibverbs' function that replaced[i] replaces (a function pointer) */
static void *real_of(const struct replaced *r)
{
	void *f;

	memcpy(&f, (const char *)&real + r->real_off, sizeof(f));
	return f;
}

/* used by the assembly of dlsym() below */
__attribute__((visibility("hidden"))) dlsym_fn dl_preload_real_dlsym;
__attribute__((visibility("hidden"))) dlsym_fn dl_preload_init_dlsym(void);
__attribute__((visibility("hidden"))) void *
dl_preload_dlsym_handle(void *handle, const char *name);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool debug, allow_odp;
static bool warned;
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
/* inside a wrapper: libdaxlease's own verbs calls go straight through */
static __thread int depth;

static void __attribute__((format(printf, 1, 2))) dbg(const char *fmt, ...)
{
	va_list ap;

	if (!debug)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "daxlease-preload[%d]: ", (int)getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

__attribute__((visibility("hidden"))) dlsym_fn dl_preload_init_dlsym(void)
{
	dlsym_fn f;

	if (dl_preload_real_dlsym)
		return dl_preload_real_dlsym;
	f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!f)
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	__atomic_store_n(&dl_preload_real_dlsym, f, __ATOMIC_RELEASE);
	return f;
}

/*
 * Point libibverbs' own entries at the functions here.  Only after all of
 * real is known: from here on, dlvsym(RTLD_NEXT) finds them too.
 */
static void redirect_all(void)
{
	unsigned int i, done = 0;
	char why[256];

	for (i = 0; i < NREPLACED; i++) {
		const struct replaced *r = &replaced[i];

		if (!real_of(r))
			continue;
		if (dl_redirect_symbol(real_of(r), r->name, r->version, r->fn,
				       why, sizeof(why)))
			dbg("%s@@%s: %s", r->name, r->version, why);
		else
			done++;
	}
	if (done == NREPLACED)
		dbg("libibverbs' entries point here: dlvsym() and RTLD_DEEPBIND objects get these functions");
	else
		dbg("dlvsym() and RTLD_DEEPBIND objects get libibverbs' own functions where they are not redirected");
}

static void fork_handlers(void);

static void init(void)
{
	const struct replaced *missing;
	unsigned int i;

	debug = env_on("DAXLEASE_DEBUG");
	allow_odp = env_on("DAXLEASE_ALLOW_ODP");
	dl_preload_init_dlsym();
	missing = NULL;
	for (i = 0; i < NREPLACED; i++) {
		void *f = dlvsym(RTLD_NEXT, replaced[i].name,
				 replaced[i].version);

		memcpy((char *)&real + replaced[i].real_off, &f, sizeof(f));
		if (!f && !missing)
			missing = &replaced[i];
	}
	if (missing)
		fprintf(stderr,
			"daxlease-preload: libibverbs lacks %s@%s of rdma-core 28 or later: registrations will fail\n",
			missing->name, missing->version);
	dbg("loaded%s%s", allow_odp ? ", ODP allowed" : "",
	    dl_preload_real_dlsym ? "" : ", dlsym() not interposed");
	redirect_all();
	fork_handlers();
}

static void __attribute__((constructor)) preload_ctor(void)
{
	pthread_once(&init_once, init);
}

/*
 * Does [addr, addr + len) lie in a shared mapping of a file on a DAX
 * mount?  Read from /proc/self/smaps and statx() of the path shown there;
 * a path that names another file now is answered by ibv_reg_dax_mr().
 * The path (malloc()ed) if so, else NULL.  Only on a refused
 * registration, and off the stack: a thread's stack may be small.
 */
static char *fsdax_range(void *addr, size_t len)
{
	struct dl_vma *v = malloc(sizeof(*v));
	struct statx stx;
	char msg[256], *path = NULL;
	FILE *f;
	int ret;

	if (!v)
		return NULL;
	f = fopen("/proc/self/smaps", "re");
	if (!f)
		goto out;
	ret = dl_vma_find(f, (uintptr_t)addr, len, v, msg, sizeof(msg));
	fclose(f);
	if (ret) {
		dbg("%p +%zu: %s", addr, len, msg);
		goto out;
	}
	if (!v->ino || v->path[0] != '/' ||
	    statx(AT_FDCWD, v->path, 0, STATX_BASIC_STATS, &stx) ||
	    !S_ISREG(stx.stx_mode) ||
	    !(stx.stx_attributes_mask & STATX_ATTR_DAX) ||
	    !(stx.stx_attributes & STATX_ATTR_DAX)) {
		dbg("%p +%zu: not a shared mapping of a file on a DAX mount (%s)",
		    addr, len, v->path[0] ? v->path : "anonymous");
		goto out;
	}
	path = strdup(v->path);
out:
	free(v);
	return path;
}

static void warn_once(const char *path, int kernel_err)
{
	pthread_mutex_lock(&warn_lock);
	if (!warned && !debug)
		fprintf(stderr,
			"daxlease: cannot register the FS-DAX mapping of %s: %s; the program gets the kernel's error (%s)\n",
			path, ibv_dax_errmsg(), strerror(kernel_err));
	warned = true;
	pthread_mutex_unlock(&warn_lock);
}

/*
 * The MRs registered here through libdaxlease, so that ibv_dereg_mr() and
 * ibv_rereg_mr() of every other MR cost one lookup and no library call.
 */
#define DAX_MR_BUCKETS 256

struct dax_mr_node {
	struct ibv_mr *mr;
	struct dax_mr_node *next;
};

static struct dax_mr_node *dax_mrs[DAX_MR_BUCKETS];
static pthread_mutex_t dax_mrs_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned int dax_mr_bucket(const struct ibv_mr *mr)
{
	return (unsigned int)(((uintptr_t)mr >> 4) * 2654435761u >> 8) %
	       DAX_MR_BUCKETS;
}

static int dax_mr_add(struct ibv_mr *mr)
{
	struct dax_mr_node *n = malloc(sizeof(*n));
	unsigned int b = dax_mr_bucket(mr);

	if (!n)
		return -1;
	n->mr = mr;
	pthread_mutex_lock(&dax_mrs_lock);
	n->next = dax_mrs[b];
	dax_mrs[b] = n;
	pthread_mutex_unlock(&dax_mrs_lock);
	return 0;
}

/* remove: take mr out of the set; else only look */
static bool dax_mr_find(struct ibv_mr *mr, bool remove)
{
	struct dax_mr_node **pp, *n = NULL;

	if (!mr)
		return false;
	pthread_mutex_lock(&dax_mrs_lock);
	for (pp = &dax_mrs[dax_mr_bucket(mr)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->mr != mr)
			continue;
		n = *pp;
		if (remove)
			*pp = n->next;
		break;
	}
	pthread_mutex_unlock(&dax_mrs_lock);
	if (n && remove)
		free(n);
	return n != NULL;
}

/*
 * A fork() while another thread holds one of these locks would leave it
 * held in the child for good: hold both across fork().  The child keeps
 * the set (its dereg of a parent's MR is answered from it, see below).
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&warn_lock);
	pthread_mutex_lock(&dax_mrs_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&dax_mrs_lock);
	pthread_mutex_unlock(&warn_lock);
}

static void fork_child(void)
{
	pthread_mutex_init(&dax_mrs_lock, NULL);
	pthread_mutex_init(&warn_lock, NULL);
}

static void fork_handlers(void)
{
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		dbg("pthread_atfork failed: a fork() racing a registration may leave the child's locks held");
}

static struct ibv_mr *reg(const char *fn, struct ibv_pd *pd, void *addr,
			  size_t len, uint64_t iova, unsigned int access)
{
	struct ibv_dax_mr_init_attr attr = {
		.comp_mask = IBV_DAX_MR_INIT_ADDR | IBV_DAX_MR_INIT_IOVA |
			     IBV_DAX_MR_INIT_FLAGS,
		.fd = -1,
		.length = len,
		.access = access,
		.flags = allow_odp ? IBV_DAX_MR_ALLOW_ODP :
				     IBV_DAX_MR_NO_FALLBACK,
		.iova = iova,
		.addr = addr,
	};
	struct ibv_mr *mr;
	char *path;
	int err;

	pthread_once(&init_once, init);
	if (!real.reg_mr_iova2) {
		errno = ENOSYS;
		return NULL;
	}
	if (depth)
		return real.reg_mr_iova2(pd, addr, len, iova, access);

	depth++;
	errno = 0;
	mr = real.reg_mr_iova2(pd, addr, len, iova, access);
	err = errno;
	if (mr || !pd || (err != EOPNOTSUPP && err != EPERM) ||
	    (access & IBV_ACCESS_ON_DEMAND) ||
	    !(path = fsdax_range(addr, len))) {
		dbg("%s(%p, %zu): %s", fn, addr, len,
		    mr ? "registered by libibverbs" : strerror(err));
		depth--;
		errno = err;
		return mr;
	}

	mr = ibv_reg_dax_mr(pd, &attr);
	if (mr && dax_mr_add(mr)) {
		ibv_dereg_dax_mr(mr);
		mr = NULL;
		dbg("%s(%p, %zu): out of memory", fn, addr, len);
		free(path);
		depth--;
		errno = ENOMEM;
		return NULL;
	}
	if (mr) {
		dbg("%s(%p, %zu): FS-DAX %s: registered with the layout lease (libibverbs: %s)",
		    fn, addr, len, path, strerror(err));
	} else {
		dbg("%s(%p, %zu): FS-DAX %s: %s (libibverbs: %s)", fn, addr,
		    len, path, ibv_dax_errmsg(), strerror(err));
		warn_once(path, err);
	}
	free(path);
	depth--;
	if (!mr)
		errno = err;
	return mr;
}

EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				 int access)
{
	return reg("ibv_reg_mr", pd, addr, length, (uintptr_t)addr,
		   (unsigned int)access);
}

EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
				      size_t length, uint64_t iova, int access)
{
	return reg("ibv_reg_mr_iova", pd, addr, length, iova,
		   (unsigned int)access);
}

EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
				       size_t length, uint64_t iova,
				       unsigned int access)
{
	return reg("ibv_reg_mr_iova2", pd, addr, length, iova, access);
}

EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	int ret;

	pthread_once(&init_once, init);
	if (!real.dereg_mr)
		return ENOSYS;
	if (depth || !dax_mr_find(mr, false))
		return real.dereg_mr(mr);
	depth++;
	ret = ibv_dereg_dax_mr(mr);
	dbg("ibv_dereg_mr(%p): DAX MR: %s", (void *)mr,
	    ret ? ibv_dax_errmsg() : "deregistered, lease share dropped");
	/* a failed dereg keeps the MR, as libibverbs' does */
	if (!ret)
		dax_mr_find(mr, true);
	depth--;
	return ret;
}

/*
 * A DAX MR keeps its pages, its file and its lease: rereg would move the
 * pin somewhere the lease does not cover.  Refused, the MR unchanged.
 */
EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access)
{
	pthread_once(&init_once, init);
	if (!real.rereg_mr) {
		errno = ENOSYS;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (depth || !dax_mr_find(mr, false))
		return real.rereg_mr(mr, flags, pd, addr, length, access);
	dbg("ibv_rereg_mr(%p): refused: a DAX MR cannot be reregistered, deregister it and register again",
	    (void *)mr);
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

#if defined(__x86_64__)
/*
 * dlsym(handle, name) in a handle of an object (dlopen()): the result
 * with libibverbs' registration functions replaced by the ones above.
 */
__attribute__((visibility("hidden"))) void *
dl_preload_dlsym_handle(void *handle, const char *name)
{
	void *p = dl_preload_real_dlsym ?
			  dl_preload_real_dlsym(handle, name) : NULL;
	unsigned int i;

	if (!p)
		return NULL;
	pthread_once(&init_once, init);
	for (i = 0; i < NREPLACED; i++)
		if (p == real_of(&replaced[i]))
			return replaced[i].fn;
	return p;
}

/*
 * dlsym() itself.  RTLD_DEFAULT and RTLD_NEXT are resolved relative to
 * the caller, which glibc finds from the return address: those calls jump
 * to glibc's dlsym() with the caller's return address untouched (and the
 * global scope finds the functions above first anyway).  A handle goes to
 * dl_preload_dlsym_handle().  Until the real dlsym is known (a constructor
 * of a library loaded before this one's) it is looked up first, with the
 * arguments saved.
 */
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	movq dl_preload_real_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jne 1f\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"
	"	call dl_preload_init_dlsym\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testq %rax, %rax\n"
	"	je 3f\n"
	"1:	testq %rdi, %rdi\n"
	"	je 2f\n"
	"	cmpq $-1, %rdi\n"
	"	je 2f\n"
	"	jmp dl_preload_dlsym_handle\n"
	"2:	jmp *%rax\n"
	"3:	ret\n"
	".size dlsym, .-dlsym\n");
#endif
