// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Guest suite "stock": daxlease on an unpatched Debian kernel (6.1 or
 * 6.12), on rxe and emulated NVDIMMs (tests/vm/suites/stock.sh runs it).
 *
 * What the stock kernel must give (doc/design.md §3.1, stock columns),
 * decided by the running kernel's release:
 *  - ibv_dax_query_caps(): no layout lease, no extended REG_MR, no ODP
 *    (rxe on 6.1 and 6.12), so FS-DAX gets strategy NONE, devdax PLAIN;
 *    writable page-cache pins before 6.5 only (page cache PLAIN, else
 *    NONE); ATOMIC WRITE on rxe from 6.2;
 *  - device DAX and tmpfs files register with strategy PLAIN; an RC QP
 *    pair over rxe RDMA-WRITEs into the MR and
 *    RDMA-READs back, and the bytes are those of the file, seen through a
 *    separate open() + pread() (device DAX has no read(2): a separate
 *    mmap() of the device);
 *  - a file on non-DAX ext4 does the same before 6.5; from 6.5 its
 *    registration with write access fails with EOPNOTSUPP and a reason
 *    naming what to do (the kernel itself refuses a writable ibv_reg_mr
 *    of the mapping with EFAULT), and a read-only one works (RDMA READ);
 *  - FS-DAX files on ext4 and xfs fail with EOPNOTSUPP and the library's
 *    reason naming the missing kernel support (the kernel itself refuses a
 *    plain ibv_reg_mr of the same mapping: mm/gup.c check_vma_flags);
 *  - 1,000 register/deregister cycles (and 1,000 refused FS-DAX attempts)
 *    leave the fd count, the /proc/self/maps lines and the device's MR
 *    count (rdma resource show) as they were.
 *
 * Environment (tests/vm): DAXLEASE_DEVDAX, DAXLEASE_EXT4, DAXLEASE_XFS,
 * DAXLEASE_RDMA_DEV, DAXLEASE_GID_INDEX, DAXLEASE_RESULTS;
 * DAXLEASE_NODAX_EXT4 a non-DAX ext4 mount (stock.sh loop-mounts one);
 * DAXLEASE_TMPFS a tmpfs directory (default /tmp); DAXLEASE_CYCLES
 * overrides the 1,000 cycles.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/verbs_dax.h>

#include "dtest.h"
#include "rcloop.h"

#define KiB (1UL << 10)
#define MiB (1UL << 20)
#define TMPFS_MAGIC_ 0x01021994
#define EXT4_MAGIC_ 0xEF53

#define MR_LEN (2 * MiB)	/* devdax alignment; also the file ranges */
#define FILE_OFF (64 * KiB)	/* range offset inside regular files */
#define IO_OFF (12 * KiB)	/* RDMA target inside the MR */
#define IO_LEN (256 * KiB)
#define REG_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ)

struct suite {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct rcloop *loop;
	char loop_err[256];
	struct ibv_dax_caps caps;
	bool have_caps;
	struct ibv_mr *buf_mr;	/* local RDMA buffer */
	uint8_t *buf;
	uint8_t *expect;
	int cycles;
};

static struct suite S;

/* The running kernel is at least major.minor */
static bool kernel_at_least(unsigned int major, unsigned int minor)
{
	static unsigned int ma, mi;
	struct utsname u;

	if (!ma && !uname(&u) && sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		ma = mi = 0;
	return ma > major || (ma == major && mi >= minor);
}

/* Linux 6.5 mm/gup.c: no writable long-term pins of page-cache files */
static bool pagecache_write_pin(void)
{
	return !kernel_at_least(6, 5);
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static void pattern(uint8_t *p, size_t len, unsigned int seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = x >> 16;
	}
}

/* First differing offset, or -1. */
static long first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

static const char *diff_text(char *buf, size_t len, long d)
{
	if (d < 0)
		snprintf(buf, len, "identical");
	else
		snprintf(buf, len, "differs from byte %ld on", d);
	return buf;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* The device's MR count from `rdma resource show`, or -1. */
static int count_mrs(void)
{
	const char *dev = ibv_get_device_name(S.ctx->device);
	char line[512], *p;
	int n = -1;
	FILE *f;

	f = popen("rdma resource show 2>/dev/null", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, dev);
		if (!p || p[strlen(dev)] != ':')
			continue;
		p = strstr(line, " mr ");
		if (p)
			n = atoi(p + 4);
	}
	if (pclose(f))
		return -1;
	return n;
}

struct counts {
	int fds, maps, mrs;
};

static void snapshot(struct counts *c)
{
	c->fds = count_fds();
	c->maps = count_maps();
	c->mrs = count_mrs();
}

static bool setup_device(void)
{
	S.ctx = rcloop_open_device(NULL);
	if (!dtest_check("open-device", S.ctx, "%s",
			 S.ctx ? ibv_get_device_name(S.ctx->device) :
				 rcloop_errmsg()))
		return false;
	S.pd = ibv_alloc_pd(S.ctx);
	if (!dtest_check("alloc-pd", S.pd, "%s", S.pd ? "" : strerror(errno)))
		return false;
	S.loop = rcloop_create(S.ctx, S.pd, rcloop_env_gid_index());
	if (!S.loop)
		snprintf(S.loop_err, sizeof(S.loop_err), "%s", rcloop_errmsg());
	dtest_check("rc-qp-pair", S.loop, "two RC QPs over GID index %d%s%s",
		    rcloop_env_gid_index(), S.loop ? "" : ": ", S.loop_err);
	if (posix_memalign((void **)&S.buf, 4096, IO_LEN) ||
	    posix_memalign((void **)&S.expect, 4096, IO_LEN))
		return false;
	S.buf_mr = ibv_reg_mr(S.pd, S.buf, IO_LEN, IBV_ACCESS_LOCAL_WRITE);
	return dtest_check("local-buffer-mr", S.buf_mr, "%s",
			   S.buf_mr ? "anonymous 256 KiB" : strerror(errno));
}

static void test_caps(void)
{
	struct ibv_dax_caps *c = &S.caps;

	memset(c, 0, sizeof(*c));
	if (ibv_dax_query_caps(S.ctx, c, sizeof(*c))) {
		dtest_fail("caps", "ibv_dax_query_caps: %s: %s",
			   strerror(errno), ibv_dax_errmsg());
		return;
	}
	S.have_caps = true;
	dtest_check("caps-no-layout-lease",
		    !(c->cap_flags & IBV_DAX_CAP_LAYOUT_LEASE),
		    "cap_flags 0x%llx: no LAYOUT_LEASE (a stock kernel has no F_LAYOUT)",
		    (unsigned long long)c->cap_flags);
	dtest_check("caps-no-ext-reg-mr",
		    !(c->cap_flags & IBV_DAX_CAP_EXT_REG_MR),
		    "cap_flags 0x%llx: no EXT_REG_MR (a stock kernel has no extended REG_MR)",
		    (unsigned long long)c->cap_flags);
	dtest_check("caps-no-odp", !(c->cap_flags & IBV_DAX_CAP_ODP),
		    "cap_flags 0x%llx: no ODP (rxe on 6.1 and 6.12 has none)",
		    (unsigned long long)c->cap_flags);
	dtest_check("caps-pagecache-write-pin",
		    !(c->cap_flags & IBV_DAX_CAP_PAGECACHE_WRITE_PIN) ==
			    !pagecache_write_pin(),
		    "cap_flags 0x%llx: PAGECACHE_WRITE_PIN %s, want %s (writable page-cache pins %s)",
		    (unsigned long long)c->cap_flags,
		    c->cap_flags & IBV_DAX_CAP_PAGECACHE_WRITE_PIN ? "set" :
								      "clear",
		    pagecache_write_pin() ? "set" : "clear",
		    pagecache_write_pin() ? "work before Linux 6.5" :
					    "refused from Linux 6.5");
	dtest_check("caps-atomic-write",
		    !(c->cap_flags & IBV_DAX_CAP_ATOMIC_WRITE) ==
			    !kernel_at_least(6, 2),
		    "cap_flags 0x%llx: ATOMIC_WRITE %s, want %s (rxe has RDMA ATOMIC WRITE from Linux 6.2)",
		    (unsigned long long)c->cap_flags,
		    c->cap_flags & IBV_DAX_CAP_ATOMIC_WRITE ? "set" : "clear",
		    kernel_at_least(6, 2) ? "set" : "clear");
	dtest_check("caps-strategies",
		    c->strategy_fsdax == IBV_DAX_MR_STRATEGY_NONE &&
		    c->strategy_devdax == IBV_DAX_MR_STRATEGY_PLAIN &&
		    c->strategy_pagecache ==
			    (pagecache_write_pin() ?
				     IBV_DAX_MR_STRATEGY_PLAIN :
				     IBV_DAX_MR_STRATEGY_NONE),
		    "fsdax %d (want NONE=0), devdax %d (want PLAIN=2), pagecache %d (want %s)",
		    c->strategy_fsdax, c->strategy_devdax,
		    c->strategy_pagecache,
		    pagecache_write_pin() ? "PLAIN=2" : "NONE=0, Linux 6.5+");
}

/* A source of the data-path tests: a devdax device or a regular file. */
struct source {
	const char *name;	/* test name prefix */
	char path[512];
	bool devdax;
	uint64_t off;		/* of the registered range */
	enum ibv_dax_file_kind kind;
};

static int make_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	if (posix_fallocate(fd, 0, size) && ftruncate(fd, size)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/*
 * Reads (or, writing, writes) [off, off+len) of the source through a
 * separate open file.
 */
static int source_io(const struct source *s, uint64_t off, void *buf,
		     size_t len, bool writing)
{
	int fd = open(s->path, (writing ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	uint8_t *map;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (!s->devdax) {
		n = writing ? pwrite(fd, buf, len, off) :
			      pread(fd, buf, len, off);
		close(fd);
		return n == (ssize_t)len ? 0 : -1;
	}
	/* device DAX has no read(2) or write(2); map it a second time */
	map = mmap(NULL, MR_LEN, writing ? PROT_READ | PROT_WRITE : PROT_READ,
		   MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	if (writing)
		memcpy(map + off, buf, len);
	else
		memcpy(buf, map + off, len);
	munmap(map, MR_LEN);
	return 0;
}

static struct ibv_mr *reg_access(const struct source *s, uint32_t flags,
				  unsigned int access)
{
	struct ibv_dax_mr_init_attr a = {
		.path = s->path,
		.offset = s->off,
		.length = MR_LEN,
		.access = access,
	};

	if (flags) {
		a.comp_mask = IBV_DAX_MR_INIT_FLAGS;
		a.flags = flags;
	}
	return ibv_reg_dax_mr(S.pd, &a);
}

static struct ibv_mr *reg(const struct source *s, uint32_t flags)
{
	return reg_access(s, flags, REG_ACCESS);
}

static void tname(char *buf, size_t len, const struct source *s,
		  const char *what)
{
	snprintf(buf, len, "%s-%s", s->name, what);
}

static void test_source(const struct source *s)
{
	struct ibv_dax_mr_attr qa = {};
	char name[64], how[64];
	struct ibv_mr *mr;
	uint64_t raddr;
	long d;
	int ret;

	tname(name, sizeof(name), s, "register");
	mr = reg(s, 0);
	if (!mr) {
		dtest_fail(name, "ibv_reg_dax_mr(%s): %s: %s", s->path,
			   strerror(errno), ibv_dax_errmsg());
		return;
	}
	if (ibv_query_dax_mr(mr, &qa, sizeof(qa))) {
		dtest_fail(name, "ibv_query_dax_mr: %s", strerror(errno));
	} else {
		dtest_check(name, qa.kind == s->kind &&
			    qa.strategy == IBV_DAX_MR_STRATEGY_PLAIN &&
			    !qa.lease_held && qa.length == MR_LEN &&
			    qa.offset == s->off && mr->length == MR_LEN,
			    "%s: kind %d (want %d), strategy %d (want PLAIN), lease %d, offset %llu, length %zu, gran %d",
			    s->path, qa.kind, s->kind, qa.strategy,
			    qa.lease_held, (unsigned long long)qa.offset,
			    qa.length, qa.granularity);
	}

	raddr = (uintptr_t)mr->addr + IO_OFF;
	tname(name, sizeof(name), s, "rdma-write");
	if (!S.loop) {
		dtest_skip(name, "no RC QP pair: %s", S.loop_err);
		goto dereg;
	}
	pattern(S.buf, IO_LEN, 1 + s->kind);
	if (rcloop_write(S.loop, S.buf, S.buf_mr->lkey, raddr, mr->rkey,
			 IO_LEN)) {
		dtest_fail(name, "%s", rcloop_errmsg());
		goto dereg;
	}
	if (source_io(s, s->off + IO_OFF, S.expect, IO_LEN, false)) {
		dtest_fail(name, "reading %s back: %s", s->path,
			   strerror(errno));
	} else {
		d = first_diff(S.buf, S.expect, IO_LEN);
		dtest_check(name, d < 0,
			    "256 KiB RDMA WRITE over %s into %s at %llu, read back by a separate %s: %s",
			    ibv_get_device_name(S.ctx->device), s->path,
			    (unsigned long long)(s->off + IO_OFF),
			    s->devdax ? "mmap" : "pread",
			    diff_text(how, sizeof(how), d));
	}

	tname(name, sizeof(name), s, "rdma-read");
	pattern(S.expect, IO_LEN, 100 + s->kind);
	if (source_io(s, s->off + IO_OFF, S.expect, IO_LEN, true)) {
		dtest_fail(name, "writing %s: %s", s->path, strerror(errno));
		goto dereg;
	}
	memset(S.buf, 0, IO_LEN);
	if (rcloop_read(S.loop, S.buf, S.buf_mr->lkey, raddr, mr->rkey,
			IO_LEN)) {
		dtest_fail(name, "%s", rcloop_errmsg());
		goto dereg;
	}
	d = first_diff(S.buf, S.expect, IO_LEN);
	dtest_check(name, d < 0,
		    "256 KiB written by a separate %s, RDMA READ back: %s",
		    s->devdax ? "mmap" : "pwrite",
		    diff_text(how, sizeof(how), d));

	tname(name, sizeof(name), s, "persist");
	errno = 0;
	dtest_check(name, !ibv_dax_mr_persist(mr, IO_OFF, IO_LEN),
		    "ibv_dax_mr_persist of the written range%s%s",
		    errno ? ": " : "", errno ? ibv_dax_errmsg() : "");
dereg:
	tname(name, sizeof(name), s, "deregister");
	ret = ibv_dereg_dax_mr(mr);
	dtest_check(name, !ret, "ibv_dereg_dax_mr%s%s", ret ? ": " : "",
		    ret ? strerror(ret) : "");
}

/*
 * The kernel's own answer, without the library, to a plain writable
 * ibv_reg_mr of a MAP_SHARED mapping of s's range: 0 if it registered
 * (the MR is deregistered again), else the errno; -1, with tn failed, if
 * the range could not be mapped.
 */
static int plain_reg_mr(const struct source *s, const char *tn)
{
	struct ibv_mr *mr;
	void *map;
	int fd, ret;

	fd = open(s->path, O_RDWR | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED :
		mmap(NULL, MR_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		     s->off);
	if (map == MAP_FAILED) {
		dtest_fail(tn, "mapping %s: %s", s->path, strerror(errno));
		ret = -1;
	} else {
		errno = 0;
		mr = ibv_reg_mr(S.pd, map, MR_LEN, REG_ACCESS);
		ret = mr ? 0 : errno ? errno : EIO;
		if (mr)
			ibv_dereg_mr(mr);
		munmap(map, MR_LEN);
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * IBV_DAX_MR_ALLOW_ODP on a device without ODP: still refused with
 * EOPNOTSUPP, and the reason contains phrase.
 */
static void check_odp_refused(const struct source *s, const char *what,
			      const char *phrase)
{
	struct ibv_mr *mr;
	char tn[64];
	int err;

	tname(tn, sizeof(tn), s, what);
	errno = 0;
	mr = reg(s, IBV_DAX_MR_ALLOW_ODP);
	err = errno;
	if (mr) {
		dtest_fail(tn, "registered with ODP on a device without ODP");
		ibv_dereg_dax_mr(mr);
	} else {
		dtest_check(tn, err == EOPNOTSUPP &&
			    strstr(ibv_dax_errmsg(), phrase),
			    "errno %s: %s", strerrorname_np(err) ?: "?",
			    ibv_dax_errmsg());
	}
}

/* Every key phrase must be in the message. */
static const char *missing_phrase(const char *msg, const char *const *ph)
{
	for (; *ph; ph++)
		if (!strstr(msg, *ph))
			return *ph;
	return NULL;
}

/*
 * A registration of s that must be refused: mr NULL (else it is
 * deregistered), errno err EOPNOTSUPP and the reason msg containing every
 * phrase.  True if so; else tn fails, saying which ("<what> <path>" if it
 * registered).
 */
static bool refused(const char *tn, const struct source *s,
		    struct ibv_mr *mr, const char *what, int err,
		    const char *msg, const char *const *phrases)
{
	const char *miss;

	if (mr) {
		dtest_fail(tn, "%s %s", what, s->path);
		ibv_dereg_dax_mr(mr);
	} else if (err != EOPNOTSUPP) {
		dtest_fail(tn, "errno %s (want EOPNOTSUPP): %s",
			   strerrorname_np(err) ?: "?", msg);
	} else if ((miss = missing_phrase(msg, phrases))) {
		dtest_fail(tn, "EOPNOTSUPP, but the reason lacks \"%s\": %s",
			   miss, msg);
	} else {
		return true;
	}
	return false;
}

static void test_fsdax(const char *name, const char *dir)
{
	static const char *const phrases[] = {
		"FS-DAX", "layout lease", "REG_MR",
		"daxlease-kernel-patches", "daxlease(7)", "no ODP", NULL
	};
	struct source s = { .name = name, .off = 0 };
	struct ibv_mr *mr;
	char tn[64], msg[512];
	int err;

	tname(tn, sizeof(tn), &s, "refused");
	if (!dir) {
		dtest_skip(tn, "no %s mount in the environment", name);
		return;
	}
	snprintf(s.path, sizeof(s.path), "%s/stock-%d.dat", dir, getpid());
	if (make_file(s.path, MR_LEN)) {
		dtest_fail(tn, "creating %s: %s", s.path, strerror(errno));
		return;
	}
	errno = 0;
	mr = reg(&s, 0);
	err = errno;
	snprintf(msg, sizeof(msg), "%s", ibv_dax_errmsg());
	if (refused(tn, &s, mr, "stock kernel registered FS-DAX", err, msg,
		    phrases))
		dtest_pass(tn, "EOPNOTSUPP: %s", msg);

	/* ALLOW_ODP changes nothing on a device without ODP */
	check_odp_refused(&s, "refused-allow-odp", "FS-DAX");

	/* The reason is the kernel's: a plain pin of the mapping fails too. */
	tname(tn, sizeof(tn), &s, "kernel-refuses-plain-reg-mr");
	err = plain_reg_mr(&s, tn);
	if (err >= 0)
		dtest_check(tn, err == EOPNOTSUPP,
			    "ibv_reg_mr of a MAP_SHARED FS-DAX mapping: %s",
			    err ? strerror(err) : "succeeded");
	unlink(s.path);
}

/*
 * The kernel's own rule, without the library: a writable ibv_reg_mr of a
 * MAP_SHARED mapping of the page-cache file works before Linux 6.5 and
 * fails with EFAULT from 6.5 (mm/gup.c writable_file_mapping_allowed).
 */
static void test_kernel_write_pin(const struct source *s)
{
	char tn[64];
	int err;

	tname(tn, sizeof(tn), s, "kernel-write-pin");
	err = plain_reg_mr(s, tn);
	if (err < 0)
		return;
	if (pagecache_write_pin())
		dtest_check(tn, !err,
			    "before Linux 6.5 a writable ibv_reg_mr of a MAP_SHARED page-cache mapping works: %s",
			    err ? strerror(err) : "registered");
	else
		dtest_check(tn, err == EFAULT,
			    "from Linux 6.5 the kernel refuses a writable ibv_reg_mr of a MAP_SHARED page-cache mapping with EFAULT: %s",
			    err ? strerror(err) : "registered");
}

/*
 * Linux 6.5+: the library refuses a page-cache registration with write
 * access (strategy NONE) before any pin, with a reason saying what to
 * do, and leaves nothing behind; ALLOW_ODP does not help without ODP.
 */
static void test_write_refused(const struct source *s)
{
	static const char *const phrases[] = {
		"page-cache", "-o dax", "read-only", "IBV_DAX_MR_ALLOW_ODP",
		"ODP", NULL
	};
	struct counts before, after;
	char tn[64], msg[512];
	struct ibv_mr *mr;
	int err;

	tname(tn, sizeof(tn), s, "write-refused");
	snapshot(&before);
	errno = 0;
	mr = reg(s, 0);
	err = errno;
	snprintf(msg, sizeof(msg), "%s", ibv_dax_errmsg());
	snapshot(&after);
	if (refused(tn, s, mr, "registered with write access:", err, msg,
		    phrases))
		dtest_check(tn, after.fds == before.fds &&
			    after.maps == before.maps &&
			    after.mrs == before.mrs,
			    "EOPNOTSUPP, nothing left (fds %d -> %d, maps %d -> %d, MRs %d -> %d): %s",
			    before.fds, after.fds, before.maps, after.maps,
			    before.mrs, after.mrs, msg);

	check_odp_refused(s, "write-refused-allow-odp", "has none");
}

/*
 * Every kernel: a read-only registration of the page-cache file is a
 * plain pin (through an O_RDWR fd: Linux before 6.2 pins read-only MRs
 * for writing, which a read-only mapping refuses), and RDMA READ returns
 * what a separate pwrite() put in the file.
 */
static void test_read_only(const struct source *s)
{
	struct ibv_dax_mr_init_attr a = {
		.offset = s->off,
		.length = MR_LEN,
		.access = IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_dax_mr_attr qa = {};
	char tn[64], how[64];
	struct ibv_mr *mr;
	long d;
	int ret;

	tname(tn, sizeof(tn), s, "read-only-register");
	a.fd = open(s->path, O_RDWR | O_CLOEXEC);
	if (a.fd < 0) {
		dtest_fail(tn, "opening %s: %s", s->path, strerror(errno));
		return;
	}
	mr = ibv_reg_dax_mr(S.pd, &a);
	if (!mr) {
		dtest_fail(tn, "ibv_reg_dax_mr(%s, read-only): %s: %s",
			   s->path, strerror(errno), ibv_dax_errmsg());
		close(a.fd);
		return;
	}
	if (ibv_query_dax_mr(mr, &qa, sizeof(qa)))
		dtest_fail(tn, "ibv_query_dax_mr: %s", strerror(errno));
	else
		dtest_check(tn, qa.kind == s->kind &&
			    qa.strategy == IBV_DAX_MR_STRATEGY_PLAIN,
			    "%s read-only: kind %d (want %d), strategy %d (want PLAIN)",
			    s->path, qa.kind, s->kind, qa.strategy);

	tname(tn, sizeof(tn), s, "read-only-rdma-read");
	pattern(S.expect, IO_LEN, 200 + s->kind);
	if (!S.loop) {
		dtest_fail(tn, "no RC QP pair: %s", S.loop_err);
	} else if (source_io(s, s->off + IO_OFF, S.expect, IO_LEN, true)) {
		dtest_fail(tn, "writing %s: %s", s->path, strerror(errno));
	} else {
		memset(S.buf, 0, IO_LEN);
		if (rcloop_read(S.loop, S.buf, S.buf_mr->lkey,
				(uintptr_t)mr->addr + IO_OFF, mr->rkey,
				IO_LEN)) {
			dtest_fail(tn, "%s", rcloop_errmsg());
		} else {
			d = first_diff(S.buf, S.expect, IO_LEN);
			dtest_check(tn, d < 0,
				    "256 KiB written by a separate pwrite, RDMA READ of the read-only MR: %s",
				    diff_text(how, sizeof(how), d));
		}
	}

	tname(tn, sizeof(tn), s, "read-only-deregister");
	ret = ibv_dereg_dax_mr(mr);
	dtest_check(tn, !ret, "ibv_dereg_dax_mr%s%s", ret ? ": " : "",
		    ret ? strerror(ret) : "");
	close(a.fd);
}

/* A page-cache file on a file system with writeback (non-DAX ext4) */
static void test_pagecache(const struct source *s)
{
	if (pagecache_write_pin())
		test_source(s);
	else
		test_write_refused(s);
	test_kernel_write_pin(s);
	test_read_only(s);
}

static void check_counts(const char *tn, const struct counts *b,
			 const struct counts *a, int n, const char *what,
			 double secs)
{
	if (a->mrs < 0 || b->mrs < 0) {
		dtest_check(tn, a->fds == b->fds && a->maps == b->maps,
			    "%d %s in %.1fs: fds %d -> %d, maps %d -> %d (MR count unavailable: rdma resource show failed)",
			    n, what, secs, b->fds, a->fds, b->maps, a->maps);
		return;
	}
	dtest_check(tn, a->fds == b->fds && a->maps == b->maps &&
		    a->mrs == b->mrs,
		    "%d %s in %.1fs: fds %d -> %d, maps lines %d -> %d, MRs %d -> %d",
		    n, what, secs, b->fds, a->fds, b->maps, a->maps, b->mrs,
		    a->mrs);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_leaks(const struct source *s, const char *fsdax_dir)
{
	struct counts before, mid, after;
	struct ibv_mr *mr;
	char tn[64];
	double t0;
	int i, ret;

	tname(tn, sizeof(tn), s, "leak-cycles");
	snapshot(&before);
	/* the counters must see a live MR, or before == after proves nothing */
	mr = reg(s, 0);
	if (!mr) {
		dtest_fail(tn, "ibv_reg_dax_mr: %s", ibv_dax_errmsg());
		return;
	}
	snapshot(&mid);
	ibv_dereg_dax_mr(mr);
	if (!(mid.fds > before.fds && mid.maps > before.maps &&
	      (before.mrs < 0 || mid.mrs == before.mrs + 1))) {
		dtest_fail(tn, "one live MR not seen by the counters: fds %d -> %d, maps %d -> %d, MRs %d -> %d",
			   before.fds, mid.fds, before.maps, mid.maps,
			   before.mrs, mid.mrs);
		return;
	}
	t0 = now();
	for (i = 0; i < S.cycles; i++) {
		mr = reg(s, 0);
		if (!mr) {
			dtest_fail(tn, "cycle %d: ibv_reg_dax_mr: %s", i,
				   ibv_dax_errmsg());
			return;
		}
		ret = ibv_dereg_dax_mr(mr);
		if (ret) {
			dtest_fail(tn, "cycle %d: ibv_dereg_dax_mr: %s", i,
				   strerror(ret));
			return;
		}
	}
	snapshot(&after);
	check_counts(tn, &before, &after, S.cycles,
		     "register/deregister cycles", now() - t0);

	if (!fsdax_dir)
		return;
	snprintf(tn, sizeof(tn), "fsdax-refused-leak-cycles");
	{
		struct source f = { .name = "fsdax" };

		snprintf(f.path, sizeof(f.path), "%s/stock-leak-%d.dat",
			 fsdax_dir, getpid());
		if (make_file(f.path, MR_LEN)) {
			dtest_fail(tn, "creating %s: %s", f.path,
				   strerror(errno));
			return;
		}
		snapshot(&before);
		t0 = now();
		for (i = 0; i < S.cycles; i++) {
			mr = reg(&f, 0);
			if (mr || errno != EOPNOTSUPP) {
				dtest_fail(tn, "attempt %d: %s", i,
					   mr ? "registered" : strerror(errno));
				if (mr)
					ibv_dereg_dax_mr(mr);
				unlink(f.path);
				return;
			}
		}
		snapshot(&after);
		unlink(f.path);
		check_counts(tn, &before, &after, S.cycles,
			     "refused FS-DAX registrations", now() - t0);
	}
}

int main(int argc, char **argv)
{
	const char *devdax = env("DAXLEASE_DEVDAX");
	const char *ext4 = env("DAXLEASE_EXT4");
	const char *xfs = env("DAXLEASE_XFS");
	const char *nodax = env("DAXLEASE_NODAX_EXT4");
	const char *tmp = env("DAXLEASE_TMPFS") ?: "/tmp";
	struct source dd = { .name = "devdax", .devdax = true,
			     .kind = IBV_DAX_FILE_DEVDAX };
	struct source tf = { .name = "tmpfs", .off = FILE_OFF,
			     .kind = IBV_DAX_FILE_PAGECACHE };
	struct source ef = { .name = "ext4-nodax", .off = FILE_OFF,
			     .kind = IBV_DAX_FILE_PAGECACHE };
	struct statfs sf;

	if (argc > 1) {
		printf("usage: %s   (guest suite \"stock\"; see the source for the environment)\n",
		       argv[0]);
		return strcmp(argv[1], "--help") ? 2 : 0;
	}
	S.cycles = env("DAXLEASE_CYCLES") ? atoi(env("DAXLEASE_CYCLES")) : 1000;
	dtest_begin("stock");
	if (!setup_device())
		return dtest_end();
	test_caps();

	if (devdax) {
		snprintf(dd.path, sizeof(dd.path), "%s", devdax);
		test_source(&dd);
	} else {
		dtest_skip("devdax-register", "DAXLEASE_DEVDAX not set");
	}

	snprintf(tf.path, sizeof(tf.path), "%s/stock-%d.dat", tmp, getpid());
	if (statfs(tmp, &sf) || sf.f_type != TMPFS_MAGIC_) {
		dtest_fail("tmpfs-register", "%s is not tmpfs", tmp);
	} else if (make_file(tf.path, FILE_OFF + MR_LEN)) {
		dtest_fail("tmpfs-register", "creating %s: %s", tf.path,
			   strerror(errno));
	} else {
		test_source(&tf);
	}

	if (!nodax) {
		dtest_skip("ext4-nodax-register",
			   "no non-DAX ext4 mount (DAXLEASE_NODAX_EXT4 unset: %s)",
			   env("DAXLEASE_NODAX_WHY") ?: "not provided");
	} else {
		snprintf(ef.path, sizeof(ef.path), "%s/stock-%d.dat", nodax,
			 getpid());
		if (statfs(nodax, &sf) || sf.f_type != EXT4_MAGIC_)
			dtest_fail("ext4-nodax-register", "%s is not ext4",
				   nodax);
		else if (make_file(ef.path, FILE_OFF + MR_LEN))
			dtest_fail("ext4-nodax-register", "creating %s: %s",
				   ef.path, strerror(errno));
		else
			test_pagecache(&ef);
	}

	test_fsdax("ext4-fsdax", ext4);
	test_fsdax("xfs-fsdax", xfs);

	if (devdax)
		test_leaks(&dd, NULL);
	test_leaks(&tf, ext4);

	unlink(tf.path);
	if (nodax)
		unlink(ef.path);
	rcloop_destroy(S.loop);
	ibv_dereg_mr(S.buf_mr);
	ibv_dealloc_pd(S.pd);
	ibv_close_device(S.ctx);
	free(S.buf);
	free(S.expect);
	return dtest_end();
}
