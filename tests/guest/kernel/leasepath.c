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
#include <sys/stat.h>
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
	return kt_suite_end(&dev, "lp_dmesg_clean", mark);
}
