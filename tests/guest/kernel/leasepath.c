// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dl-leasepath-test: ibv_reg_dax_mr() on the patched kernel takes the
 * lease path (exclusive layout lease + extended REG_MR), and what the
 * library reports matches what the kernel does: RDMA WRITE over rxe into
 * the MR is read back from the file through a new descriptor, the lease
 * blocks truncate, IBV_DAX_MR_RELEASE_LEASE keeps only the pins, and
 * /proc/self/file_pins lists the file under the context's uverbs fd.
 *
 * usage: dl-leasepath-test
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <infiniband/verbs_dax.h>

#include "dtest.h"
#include "kt.h"
#include "kt_lib.h"
#include "kt_suite.h"

static struct kt_dev dev;
static char why[512];

static struct ibv_mr *reg_access(const char *path, uint64_t off, size_t len,
				 uint32_t flags, unsigned int access)
{
	struct ibv_mr *mr = kt_reg_dax_mr(dev.pd, path, off, len, flags,
					  access);

	if (!mr)
		snprintf(why, sizeof(why), "ibv_reg_dax_mr(%s, %llu, %zu): %s: %s",
			 path, (unsigned long long)off, len, strerror(errno),
			 ibv_dax_errmsg());
	return mr;
}

static struct ibv_mr *reg(const char *path, uint64_t off, size_t len,
			  uint32_t flags)
{
	return reg_access(path, off, len, flags, KT_ACCESS);
}

static const char *strategy_name(enum ibv_dax_mr_strategy s)
{
	switch (s) {
	case IBV_DAX_MR_STRATEGY_LEASE_PIN:
		return "LEASE_PIN";
	case IBV_DAX_MR_STRATEGY_PLAIN:
		return "PLAIN";
	case IBV_DAX_MR_STRATEGY_ODP:
		return "ODP";
	default:
		return "NONE";
	}
}

static void t_caps(void)
{
	struct ibv_dax_caps caps;
	int ret;

	memset(&caps, 0, sizeof(caps));
	ret = ibv_dax_query_caps(dev.ctx, &caps, sizeof(caps));
	if (ret) {
		dtest_fail("lp_caps_layout_lease", "ibv_dax_query_caps: %s: %s",
			   strerror(errno), ibv_dax_errmsg());
		return;
	}
	dtest_check("lp_caps_layout_lease",
		    caps.cap_flags & IBV_DAX_CAP_LAYOUT_LEASE,
		    "cap_flags 0x%llx, want IBV_DAX_CAP_LAYOUT_LEASE",
		    (unsigned long long)caps.cap_flags);
	dtest_check("lp_caps_ext_reg_mr",
		    caps.cap_flags & IBV_DAX_CAP_EXT_REG_MR,
		    "cap_flags 0x%llx, want IBV_DAX_CAP_EXT_REG_MR",
		    (unsigned long long)caps.cap_flags);
	dtest_check("lp_caps_strategy_fsdax",
		    caps.strategy_fsdax == IBV_DAX_MR_STRATEGY_LEASE_PIN,
		    "strategy_fsdax = %s, want LEASE_PIN",
		    strategy_name(caps.strategy_fsdax));
	dtest_check("lp_caps_strategy_devdax",
		    caps.strategy_devdax == IBV_DAX_MR_STRATEGY_PLAIN,
		    "strategy_devdax = %s, want PLAIN",
		    strategy_name(caps.strategy_devdax));
}

/* RDMA WRITE of the pattern into mr at mr offset moff, persist, read file */
static int write_and_check(struct ibv_mr *mr, const char *path, uint64_t moff,
			   uint64_t foff, size_t len, uint8_t seed)
{
	int ret;

	ret = kt_rdma_write_pattern(&dev, (uintptr_t)mr->addr + moff,
				    mr->rkey, len, foff, seed, why,
				    sizeof(why));
	if (ret)
		return ret;
	if (ibv_dax_mr_persist(mr, moff, len)) {
		ret = errno;
		snprintf(why, sizeof(why), "ibv_dax_mr_persist: %s: %s",
			 strerror(ret), ibv_dax_errmsg());
		return ret;
	}
	return kt_verify_pattern(path, foff, len, seed, why, sizeof(why));
}

/* RDMA READ of the whole MR returns the pattern seed of the file at 0 */
static int read_and_check(struct ibv_mr *mr, uint8_t seed)
{
	uint8_t *buf = malloc(mr->length), *expect = malloc(mr->length);
	struct ibv_mr *lmr = NULL;
	int ret = 0;

	if (!buf || !expect || !dev.loop) {
		snprintf(why, sizeof(why), "%s", dev.loop ? "out of memory" :
			 dev.loop_err);
		ret = ENOMEM;
		goto out;
	}
	lmr = ibv_reg_mr(dev.pd, buf, mr->length, IBV_ACCESS_LOCAL_WRITE);
	if (!lmr || rcloop_read(dev.loop, buf, lmr->lkey, (uintptr_t)mr->addr,
				mr->rkey, mr->length)) {
		ret = errno ? errno : EIO;
		snprintf(why, sizeof(why), "%s: %s",
			 lmr ? "RDMA READ" : "ibv_reg_mr of the buffer",
			 lmr ? rcloop_errmsg() : strerror(ret));
		goto out;
	}
	kt_pattern(expect, mr->length, 0, seed);
	if (memcmp(buf, expect, mr->length)) {
		snprintf(why, sizeof(why), "RDMA READ differs from the file");
		ret = EIO;
	} else {
		snprintf(why, sizeof(why), "RDMA READ of %zu KiB returns the file's data",
			 mr->length >> 10);
	}
out:
	if (lmr)
		ibv_dereg_mr(lmr);
	free(buf);
	free(expect);
	return ret;
}

/*
 * file_pins must hold the block "<fd>: <uverbs path>\n\t<file>\n" (§1.7)
 * for every descriptor of the context's uverbs file, in fd order: the
 * context's cmd_fd and the library's duplicate of it.
 */
static void check_pins(const char *name, const char *path)
{
	char got[4096], want[8192], rp[4096];
	const char *paths[1] = { rp };
	int ret;

	ret = kt_read_file_pins(getpid(), got, sizeof(got));
	if (ret) {
		dtest_fail(name, "/proc/self/file_pins: %s", strerror(ret));
		return;
	}
	if (!realpath(path, rp))
		snprintf(rp, sizeof(rp), "%s", path);
	kt_expect_pins(want, sizeof(want), dev.ctx->cmd_fd, paths, 1);
	dtest_check(name, !strcmp(got, want), "file_pins \"%s\", want \"%s\"",
		    kt_oneline(got), kt_oneline(want));
}

static void t_fs(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "lp");
	struct ibv_dax_mr_attr qa;
	struct ibv_mr *mr;
	char buf[4096];
	int ret, qret;

	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	if (ret) {
		dtest_fail(kt_name("lp_reg_lease_pin", fs), "creating %s: %s",
			   path, strerror(ret));
		return;
	}

	/* default flags: lease kept */
	mr = reg(path, 0, KT_PIN_LEN, 0);
	memset(&qa, 0, sizeof(qa));
	ret = mr ? ibv_query_dax_mr(mr, &qa, sizeof(qa)) : -1;
	dtest_check(kt_name("lp_reg_lease_pin", fs),
		    !ret && qa.kind == IBV_DAX_FILE_FSDAX &&
			    qa.strategy == IBV_DAX_MR_STRATEGY_LEASE_PIN &&
			    qa.lease_held == 1,
		    "%s%s kind %d, strategy %s, lease_held %d (want FSDAX, LEASE_PIN, 1)",
		    mr ? "" : why, mr ? "" : ";", qa.kind,
		    strategy_name(qa.strategy), qa.lease_held);
	if (mr) {
		ret = write_and_check(mr, path, 0, 0, KT_PIN_LEN, 0x21);
		dtest_check(kt_name("lp_rdma_write_lands", fs), ret == 0,
			    "RDMA WRITE of 1 MiB + ibv_dax_mr_persist: %s", why);
		ret = kt_child_op(path, KT_OP_TRUNCATE, 6 * KT_MIB);
		dtest_check(kt_name("lp_lease_blocks_truncate", fs),
			    ret == ETXTBSY,
			    "truncate of the unpinned tail by another process while the library holds the lease: %s (want ETXTBSY)",
			    kt_res_name(ret));
		check_pins(kt_name("lp_file_pins", fs), path);

		ret = ibv_dax_mr_release_lease(mr);
		/*
		 * lease_held 0 counts only from a query that succeeded: the
		 * memset's 0 would pass for it otherwise.  Start from a
		 * value the query must overwrite.
		 */
		memset(&qa, 0, sizeof(qa));
		qa.lease_held = -1;
		qret = ibv_query_dax_mr(mr, &qa, sizeof(qa));
		dtest_check(kt_name("lp_release_lease_call", fs),
			    ret == 0 && qret == 0 && qa.lease_held == 0 &&
				    ibv_dax_mr_release_lease(mr) == 0,
			    "ibv_dax_mr_release_lease: %s, query: %s, lease_held %d, second call idempotent",
			    ret ? strerror(errno) : "ok",
			    qret ? ibv_dax_errmsg() : "ok", qa.lease_held);
		ret = kt_child_op(path, KT_OP_TRUNCATE, KT_PIN_LEN / 2);
		dtest_check(kt_name("lp_pins_block_truncate", fs),
			    ret == ETXTBSY,
			    "truncate into the pinned head after the release: %s (want ETXTBSY)",
			    kt_res_name(ret));
		ret = ibv_dereg_dax_mr(mr);
		dtest_check(kt_name("lp_dereg", fs), ret == 0,
			    "ibv_dereg_dax_mr: %s",
			    ret ? strerror(errno) : "ok");
		ret = kt_read_file_pins(getpid(), buf, sizeof(buf));
		dtest_check(kt_name("lp_dereg_file_pins_empty", fs),
			    ret == 0 && buf[0] == '\0',
			    "file_pins after dereg: %s\"%s\"",
			    ret ? strerror(ret) : "", ret ? "" : kt_oneline(buf));
		ret = kt_child_op(path, KT_OP_TRUNCATE, KT_PIN_LEN / 2);
		dtest_check(kt_name("lp_dereg_truncate_ok", fs), ret == 0,
			    "truncate into the former MR after dereg: %s",
			    kt_res_name(ret));
	}

	/* IBV_DAX_MR_RELEASE_LEASE, at an offset: pins only */
	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	mr = ret ? NULL : reg(path, 2 * KT_MIB, KT_PIN_LEN,
			      IBV_DAX_MR_RELEASE_LEASE);
	memset(&qa, 0, sizeof(qa));
	ret = mr ? ibv_query_dax_mr(mr, &qa, sizeof(qa)) : -1;
	dtest_check(kt_name("lp_release_lease_flag", fs),
		    !ret && qa.strategy == IBV_DAX_MR_STRATEGY_LEASE_PIN &&
			    qa.lease_held == 0 && qa.offset == 2 * KT_MIB,
		    "%s%s strategy %s, lease_held %d, offset %llu (want LEASE_PIN, 0, 2 MiB)",
		    mr ? "" : why, mr ? "" : ";", strategy_name(qa.strategy),
		    qa.lease_held, (unsigned long long)qa.offset);
	if (mr) {
		ret = write_and_check(mr, path, 4096, 2 * KT_MIB + 4096,
				      64 << 10, 0x23);
		dtest_check(kt_name("lp_release_lease_rdma_write", fs),
			    ret == 0,
			    "RDMA WRITE at MR offset 4 KiB lands at file offset 2 MiB + 4 KiB: %s",
			    why);
		ret = kt_verify_pattern(path, 0, 2 * KT_MIB, 0x11, why,
					sizeof(why));
		dtest_check(kt_name("lp_release_lease_rest_untouched", fs),
			    ret == 0, "file before the MR: %s", why);
		ret = kt_child_op(path, KT_OP_PUNCH_HOLE, 2 * KT_MIB);
		dtest_check(kt_name("lp_release_lease_punch_pinned", fs),
			    ret == ETXTBSY,
			    "punch hole over the pinned range: %s (want ETXTBSY)",
			    kt_res_name(ret));
		ret = kt_child_op(path, KT_OP_PUNCH_HOLE, 0);
		dtest_check(kt_name("lp_release_lease_punch_unpinned", fs),
			    ret == 0,
			    "punch hole at 0 (unpinned, no lease): %s",
			    kt_res_name(ret));
		ibv_dereg_dax_mr(mr);
	}

	/*
	 * A range that starts 4 KiB into a 2 MiB block is mapped congruent
	 * to its file offset modulo 2 MiB, so that its whole blocks can be
	 * PMD-mapped; the MR's address is the mapped offset.
	 */
	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	mr = ret ? NULL : reg(path, 2 * KT_MIB + 4096, 4 * KT_MIB, 0);
	dtest_check(kt_name("lp_map_congruent_2m", fs),
		    mr && (((uintptr_t)mr->addr - (2 * KT_MIB + 4096)) &
			   (2 * KT_MIB - 1)) == 0,
		    "%s%s MR of [2 MiB + 4 KiB, +4 MiB) at %p (want address = offset mod 2 MiB)",
		    mr ? "" : why, mr ? "" : ";", mr ? mr->addr : NULL);
	if (mr) {
		ret = write_and_check(mr, path, 0, 2 * KT_MIB + 4096,
				      64 << 10, 0x25);
		dtest_check(kt_name("lp_map_congruent_rdma_write", fs),
			    ret == 0,
			    "RDMA WRITE at MR offset 0 lands at file offset 2 MiB + 4 KiB: %s",
			    why);
		ibv_dereg_dax_mr(mr);
	}

	/*
	 * Read-only access: the library opens the file O_RDONLY and maps it
	 * PROT_READ; the kernel pins the pages as they are (no forced write
	 * fault), so a hole has nothing to pin.
	 */
	ret = kt_make_file(path, KT_FILE_SIZE, 0x11);
	mr = ret ? NULL : reg_access(path, 0, KT_PIN_LEN, 0,
				     IBV_ACCESS_REMOTE_READ);
	memset(&qa, 0, sizeof(qa));
	ret = mr ? ibv_query_dax_mr(mr, &qa, sizeof(qa)) : -1;
	if (!ret)
		ret = read_and_check(mr, 0x11);
	dtest_check(kt_name("lp_readonly_reg", fs),
		    !ret && qa.strategy == IBV_DAX_MR_STRATEGY_LEASE_PIN,
		    "REMOTE_READ-only ibv_reg_dax_mr (file opened O_RDONLY, mapped PROT_READ): %s%sstrategy %s (want LEASE_PIN)",
		    why, "; ", strategy_name(qa.strategy));
	if (mr)
		ibv_dereg_dax_mr(mr);
	ret = truncate(path, 0) || truncate(path, KT_FILE_SIZE) ? errno : 0;
	mr = ret ? NULL : reg_access(path, 0, KT_PIN_LEN, 0,
				     IBV_ACCESS_REMOTE_READ);
	ret = mr ? 0 : errno;
	dtest_check(kt_name("lp_readonly_hole_enodata", fs),
		    !mr && ret == ENODATA && strstr(why, "hole"),
		    "REMOTE_READ-only ibv_reg_dax_mr of a hole: %s (want ENODATA, a message naming the hole)",
		    mr ? "registered" : why);
	if (mr)
		ibv_dereg_dax_mr(mr);
	unlink(path);
}

static void t_devdax(void)
{
	struct ibv_dax_mr_attr qa;
	struct ibv_mr *mr;
	size_t len = 2 * KT_MIB;
	uint8_t *map, *expect;
	int ret, fd;

	if (!kt_env.devdax) {
		dtest_skip("lp_devdax_plain", "DAXLEASE_DEVDAX not set");
		return;
	}
	mr = reg(kt_env.devdax, 0, len, 0);
	memset(&qa, 0, sizeof(qa));
	ret = mr ? ibv_query_dax_mr(mr, &qa, sizeof(qa)) : -1;
	dtest_check("lp_devdax_plain",
		    !ret && qa.kind == IBV_DAX_FILE_DEVDAX &&
			    qa.strategy == IBV_DAX_MR_STRATEGY_PLAIN &&
			    !qa.lease_held,
		    "%s%s kind %d, strategy %s, lease_held %d (want DEVDAX, PLAIN, 0)",
		    mr ? "" : why, mr ? "" : ";", qa.kind,
		    strategy_name(qa.strategy), qa.lease_held);
	if (!mr)
		return;
	dtest_check("lp_devdax_map_aligned",
		    ((uintptr_t)mr->addr & (2 * KT_MIB - 1)) == 0,
		    "devdax MR at %p (want a 2 MiB-aligned address)", mr->addr);
	ret = kt_rdma_write_pattern(&dev, (uintptr_t)mr->addr, mr->rkey, len,
				    0, 0x24, why, sizeof(why));
	if (!ret && ibv_dax_mr_persist(mr, 0, len))
		ret = errno;
	fd = open(kt_env.devdax, O_RDWR | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED :
		       mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	expect = malloc(len);
	if (!ret && map != MAP_FAILED && expect) {
		kt_pattern(expect, len, 0, 0x24);
		ret = memcmp(map, expect, len) ? EILSEQ : 0;
		snprintf(why, sizeof(why), "%s",
			 ret ? "device content differs" : "read back through a new mapping");
	} else if (!ret) {
		ret = EIO;
		snprintf(why, sizeof(why), "cannot map %s again", kt_env.devdax);
	}
	dtest_check("lp_devdax_rdma_write", ret == 0, "%s", why);
	if (map != MAP_FAILED)
		munmap(map, len);
	if (fd >= 0)
		close(fd);
	free(expect);
	ibv_dereg_dax_mr(mr);
}

/* IBV_DAX_MR_INIT_ADDR: a range of a mapping the test made itself */
static struct ibv_mr *reg_addr(void *addr, size_t len, const char *path,
			       int fd, uint64_t off)
{
	struct ibv_dax_mr_init_attr attr = {
		.comp_mask = IBV_DAX_MR_INIT_ADDR,
		.path = path,
		.fd = fd,
		.offset = off,
		.length = len,
		.access = KT_ACCESS,
		.addr = addr,
	};
	struct ibv_mr *mr = ibv_reg_dax_mr(dev.pd, &attr);

	if (!mr)
		snprintf(why, sizeof(why), "ibv_reg_dax_mr(addr %p, %zu): %s: %s",
			 addr, len, strerror(errno), ibv_dax_errmsg());
	return mr;
}

static int count_fds(void)
{
	char p[64];
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n += access(p, F_OK) == 0;
	}
	return n;
}

/* leases of this process in /proc/locks */
static int count_leases(void)
{
	char line[256];
	FILE *f = fopen("/proc/locks", "re");
	int n = 0, pid;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "LEASE") &&
		    sscanf(line, "%*d: %*s %*s %*s %d", &pid) == 1 &&
		    pid == getpid())
			n++;
	fclose(f);
	return n;
}

/*
 * A refused registration of a mapping: errno want, a message that says
 * so (has), and nothing left behind (no fd, lease or pin).
 */
static void expect_refused(const char *name, void *addr, size_t len,
			   const char *path, int fd, uint64_t off, int want,
			   const char *has)
{
	int fds = count_fds(), leases = count_leases();
	struct ibv_mr *mr;
	char pins[256];
	int err;

	errno = 0;
	mr = reg_addr(addr, len, path, fd, off);
	err = errno;
	if (mr) {
		dtest_fail(name, "registered (want %s)", strerror(want));
		ibv_dereg_dax_mr(mr);
		return;
	}
	pins[0] = 0;
	kt_read_file_pins(getpid(), pins, sizeof(pins));
	dtest_check(name,
		    err == want && strstr(ibv_dax_errmsg(), has) &&
			    count_fds() == fds && count_leases() == leases &&
			    !pins[0],
		    "%s (want %s, a message with \"%s\"); fds %d -> %d, leases %d -> %d, file_pins \"%s\"",
		    why, strerror(want), has, fds, count_fds(), leases,
		    count_leases(), kt_oneline(pins));
}

static void t_addr_fs(const struct kt_fs *fs)
{
	const char *path = kt_path(fs, "lpaddr");
	char other[4096], sub[4200];
	uint8_t tmp[4096], *subm;
	int fd2;
	int fds, leases, fd, ret;
	struct ibv_dax_mr_attr qa;
	uint8_t *map, *priv;
	struct ibv_mr *mr;
	char pins[256];

	ret = kt_make_file(path, KT_FILE_SIZE, 0x31);
	fd = ret ? -1 : open(path, O_RDWR | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED :
		       mmap(NULL, 2 * KT_MIB, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, KT_MIB);
	if (map == MAP_FAILED) {
		dtest_fail(kt_name("lp_addr_reg", fs), "creating and mapping %s: %s",
			   path, strerror(ret ? ret : errno));
		if (fd >= 0)
			close(fd);
		unlink(path);
		return;
	}
	fds = count_fds();
	leases = count_leases();

	/* the library finds the file: file offset 1 MiB + 4 KiB */
	mr = reg_addr(map + 4096, KT_PIN_LEN, NULL, -1, 0);
	memset(&qa, 0, sizeof(qa));
	ret = mr ? ibv_query_dax_mr(mr, &qa, sizeof(qa)) : -1;
	dtest_check(kt_name("lp_addr_reg", fs),
		    !ret && mr->addr == map + 4096 &&
			    qa.kind == IBV_DAX_FILE_FSDAX &&
			    qa.strategy == IBV_DAX_MR_STRATEGY_LEASE_PIN &&
			    qa.lease_held == 1 && qa.offset == KT_MIB + 4096 &&
			    qa.path && !strcmp(qa.path, path) &&
			    qa.granularity == IBV_DAX_GRAN_PAGE,
		    "%s%s addr %p (want %p), kind %d, strategy %s, lease_held %d, offset %#llx, path %s, granularity %d (want FSDAX, LEASE_PIN, 1, %#lx, %s, PAGE: no MAP_SYNC)",
		    mr ? "" : why, mr ? "" : ";", mr ? mr->addr : NULL,
		    (void *)(map + 4096), qa.kind, strategy_name(qa.strategy),
		    qa.lease_held, (unsigned long long)qa.offset,
		    qa.path ? qa.path : "-", qa.granularity,
		    (unsigned long)(KT_MIB + 4096), path);
	if (mr) {
		ret = write_and_check(mr, path, 0, KT_MIB + 4096, KT_PIN_LEN,
				      0x32);
		dtest_check(kt_name("lp_addr_rdma_write", fs), !ret,
			    "%s", why);
		check_pins(kt_name("lp_addr_file_pins", fs), path);
		ret = ibv_dereg_dax_mr(mr);
		kt_pattern(tmp, sizeof(tmp), KT_MIB + 4096, 0x32);
		pins[0] = 0;
		kt_read_file_pins(getpid(), pins, sizeof(pins));
		/* the caller's mapping and fd are still there */
		dtest_check(kt_name("lp_addr_dereg_leaves_mapping", fs),
			    !ret && !memcmp(map + 4096, tmp, sizeof(tmp)) &&
				    fcntl(fd, F_GETFD) >= 0 &&
				    count_fds() == fds &&
				    count_leases() == leases && !pins[0],
			    "dereg %d; mapping %s; fd %s; fds %d -> %d, leases %d -> %d; file_pins \"%s\"",
			    ret,
			    memcmp(map + 4096, tmp, sizeof(tmp)) ?
				    "differs from what was written" : "intact",
			    fcntl(fd, F_GETFD) >= 0 ? "open" : "closed", fds,
			    count_fds(), leases, count_leases(),
			    kt_oneline(pins));
	}

	/* a caller that names the file must name the right one and offset */
	mr = reg_addr(map, 4096, path, -1, KT_MIB);
	dtest_check(kt_name("lp_addr_reg_named", fs), mr != NULL, "%s", why);
	if (mr)
		ibv_dereg_dax_mr(mr);
	expect_refused(kt_name("lp_addr_wrong_offset", fs), map, 4096, path,
		       -1, 0, EINVAL, "not the offset");
	expect_refused(kt_name("lp_addr_spans_mappings", fs),
		       map + 2 * KT_MIB - 4096, 8192, NULL, -1, 0, EINVAL,
		       "passes the end of the mapping");

	priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (priv != MAP_FAILED) {
		expect_refused(kt_name("lp_addr_private", fs), priv, 4096,
			       NULL, -1, 0, EINVAL, "MAP_PRIVATE");
		munmap(priv, 4096);
	} else {
		dtest_fail(kt_name("lp_addr_private", fs), "mmap: %s",
			   strerror(errno));
	}

	/*
	 * Another file at the mapped file's path: smaps shows the path of
	 * the mapped file, a file system mounted over its directory since
	 * then makes the path open another file.
	 */
	snprintf(other, sizeof(other), "%s.d", path);
	snprintf(sub, sizeof(sub), "%s/f", other);
	rmdir(other);
	ret = mkdir(other, 0700) ? errno : kt_make_file(sub, 4096, 0x33);
	fd2 = ret ? -1 : open(sub, O_RDWR | O_CLOEXEC);
	subm = fd2 < 0 ? MAP_FAILED :
			 mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			      fd2, 0);
	if (subm != MAP_FAILED && !mount("none", other, "tmpfs", 0, NULL)) {
		ret = kt_make_file(sub, 4096, 0x34);
		if (!ret)
			expect_refused(kt_name("lp_addr_replaced", fs), subm,
				       4096, NULL, -1, 0, ESTALE, "replaced");
		else
			dtest_fail(kt_name("lp_addr_replaced", fs),
				   "creating %s on the tmpfs: %s", sub,
				   strerror(ret));
		umount2(other, MNT_DETACH);
	} else {
		dtest_fail(kt_name("lp_addr_replaced", fs),
			   "mapping %s and mounting a tmpfs over %s: %s", sub,
			   other, strerror(ret ? ret : errno));
	}
	if (subm != MAP_FAILED)
		munmap(subm, 4096);
	if (fd2 >= 0)
		close(fd2);
	unlink(sub);
	rmdir(other);
	/* ... and removed */
	unlink(path);
	expect_refused(kt_name("lp_addr_deleted", fs), map, 4096, NULL, -1, 0,
		       ENOENT, "deleted");
	munmap(map, 2 * KT_MIB);
	close(fd);
}

static void t_addr_other(void)
{
	char path[] = "/tmp/dl-lpaddr-XXXXXX";
	struct ibv_dax_mr_attr qa;
	struct ibv_mr *mr;
	uint8_t *map;
	int fd, ret;

	map = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map != MAP_FAILED) {
		expect_refused("lp_addr_anonymous", map, 4096, NULL, -1, 0,
			       EINVAL, "anonymous");
		munmap(map, 8192);
	}
	expect_refused("lp_addr_unmapped", (void *)0x1000, 4096, NULL, -1, 0,
		       EFAULT, "nothing is mapped");

	/* page cache: a shared mapping of a tmpfs file registers PLAIN */
	fd = mkstemp(path);
	map = fd < 0 || ftruncate(fd, 65536) ? MAP_FAILED :
		mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	mr = map == MAP_FAILED ? NULL : reg_addr(map, 65536, NULL, -1, 0);
	memset(&qa, 0, sizeof(qa));
	ret = mr ? ibv_query_dax_mr(mr, &qa, sizeof(qa)) : -1;
	dtest_check("lp_addr_pagecache",
		    !ret && qa.kind == IBV_DAX_FILE_PAGECACHE &&
			    qa.strategy == IBV_DAX_MR_STRATEGY_PLAIN,
		    "%s kind %d strategy %s", mr ? "" : why, qa.kind,
		    strategy_name(qa.strategy));
	if (mr)
		ibv_dereg_dax_mr(mr);
	if (map != MAP_FAILED)
		munmap(map, 65536);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}

	if (!kt_env.devdax) {
		dtest_skip("lp_addr_devdax", "DAXLEASE_DEVDAX not set");
		return;
	}
	fd = open(kt_env.devdax, O_RDWR | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED :
		       mmap(NULL, 2 * KT_MIB, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, 0);
	mr = map == MAP_FAILED ? NULL : reg_addr(map, 2 * KT_MIB, NULL, -1, 0);
	memset(&qa, 0, sizeof(qa));
	ret = mr ? ibv_query_dax_mr(mr, &qa, sizeof(qa)) : -1;
	if (!ret)
		ret = kt_rdma_write_pattern(&dev, (uintptr_t)mr->addr,
					    mr->rkey, 65536, 0, 0x34, why,
					    sizeof(why));
	if (!ret) {
		uint8_t expect[4096];

		kt_pattern(expect, sizeof(expect), 0, 0x34);
		ret = memcmp(map, expect, sizeof(expect)) ? EILSEQ : 0;
		snprintf(why, sizeof(why), "%s", ret ? "the device differs" :
			 "written into the caller's mapping");
	}
	dtest_check("lp_addr_devdax",
		    !ret && qa.kind == IBV_DAX_FILE_DEVDAX &&
			    qa.strategy == IBV_DAX_MR_STRATEGY_PLAIN &&
			    qa.granularity != IBV_DAX_GRAN_PAGE,
		    "%s; kind %d strategy %s granularity %d", why, qa.kind,
		    strategy_name(qa.strategy), qa.granularity);
	if (mr)
		ibv_dereg_dax_mr(mr);
	if (map != MAP_FAILED)
		munmap(map, 2 * KT_MIB);
	if (fd >= 0)
		close(fd);
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * flush_reg NAME PATH ACCESS WANT: register PATH with ACCESS; WANT 0: it
 * must succeed, else fail with errno WANT (EOPNOTSUPP: the library's
 * refusal, which names FLUSH).
 */
static void flush_reg(const char *name, const char *path, unsigned int access,
		      int want, const char *what)
{
	struct ibv_mr *mr = reg_access(path, 0, KT_PIN_LEN, 0, access);
	int err = mr ? 0 : errno;

	if (mr)
		ibv_dereg_dax_mr(mr);
	if (want == EOPNOTSUPP && err == want &&
	    !strstr(ibv_dax_errmsg(), "FLUSH")) {
		dtest_fail(name, "%s: EOPNOTSUPP, but the reason does not name FLUSH: %s",
			   what, ibv_dax_errmsg());
		return;
	}
	dtest_check(name, err == want, "%s: %s (want %s)%s%s", what,
		    err ? strerror(err) : "registered",
		    want ? strerror(want) : "registered", err ? ": " : "",
		    err ? why : "");
}

/*
 * IBTA RDMA FLUSH (Linux 6.2+): the kernel takes FLUSH access bits on an
 * FS-DAX MR, and on page cache FLUSH_GLOBAL but not FLUSH_PERSISTENT: the
 * refusal shows that the kernel looked at the pages (rxe: persistent
 * memory only).  Before 6.2 the library refuses the bits itself.
 */
static void t_flush(const struct kt_fs *fs)
{
	const unsigned int both = IBV_DAX_ACCESS_FLUSH_GLOBAL |
				  IBV_DAX_ACCESS_FLUSH_PERSISTENT;
	bool has = kernel_at_least(6, 2);
	const char *path = kt_path(fs, "lpflush");
	char shm[] = "/dev/shm/dl-lpflush-XXXXXX";
	struct ibv_dax_caps caps;
	bool post = false;
	int fd, ret;

#ifdef DL_HAVE_IBV_FLUSH
	post = true;
#endif
	if (fs == &kt_env.fs[0]) {
		memset(&caps, 0, sizeof(caps));
		ret = ibv_dax_query_caps(dev.ctx, &caps, sizeof(caps));
		dtest_check("lp_flush_caps",
			    !ret && !!(caps.cap_flags & IBV_DAX_CAP_FLUSH) == has &&
				    !!(caps.cap_flags & IBV_DAX_CAP_FLUSH_POST) == post,
			    "cap_flags 0x%llx: FLUSH %d (want %d: Linux %s 6.2), FLUSH_POST %d (want %d: this build's libibverbs %s ibv_wr_flush)",
			    (unsigned long long)caps.cap_flags,
			    !!(caps.cap_flags & IBV_DAX_CAP_FLUSH), has,
			    has ? ">=" : "<",
			    !!(caps.cap_flags & IBV_DAX_CAP_FLUSH_POST), post,
			    post ? "has" : "has no");
	}
	ret = kt_make_file(path, KT_FILE_SIZE, 0x5f);
	if (ret) {
		dtest_fail(kt_name("lp_flush_fsdax", fs), "creating %s: %s", path,
			   strerror(ret));
	} else {
		flush_reg(kt_name("lp_flush_fsdax", fs), path, KT_ACCESS | both,
			  has ? 0 : EOPNOTSUPP,
			  "FS-DAX file with FLUSH_GLOBAL | FLUSH_PERSISTENT");
		unlink(path);
	}
	if (fs != &kt_env.fs[0])
		return;
	fd = mkstemp(shm);
	if (fd < 0 || ftruncate(fd, KT_FILE_SIZE)) {
		dtest_fail("lp_flush_pagecache", "tmpfs file %s: %s", shm,
			   strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	flush_reg("lp_flush_pagecache_persistent", shm,
		  KT_ACCESS | IBV_DAX_ACCESS_FLUSH_PERSISTENT,
		  has ? EINVAL : EOPNOTSUPP,
		  "tmpfs file (DRAM) with FLUSH_PERSISTENT");
	flush_reg("lp_flush_pagecache_global", shm,
		  KT_ACCESS | IBV_DAX_ACCESS_FLUSH_GLOBAL,
		  has ? 0 : EOPNOTSUPP, "tmpfs file (DRAM) with FLUSH_GLOBAL");
	unlink(shm);
}

int main(int argc, char **argv)
{
	uint64_t mark;
	int i;

	if (argc > 1) {
		printf("usage: %s\nRuns the leasepath suite in the test VM; see tests/vm/suites/leasepath.sh.\n",
		       argv[0]);
		return strcmp(argv[1], "--help") ? 2 : 0;
	}
	kt_env_init();
	mark = kt_kmsg_mark();
	if (kt_suite_begin("leasepath", &dev, 1))
		return dtest_end();
	t_caps();
	for (i = 0; i < kt_env.nfs; i++)
		t_fs(&kt_env.fs[i]);
	t_devdax();
	for (i = 0; i < kt_env.nfs; i++)
		t_addr_fs(&kt_env.fs[i]);
	t_addr_other();
	for (i = 0; i < kt_env.nfs; i++)
		t_flush(&kt_env.fs[i]);
	return kt_suite_end(&dev, "lp_dmesg_clean", mark);
}
