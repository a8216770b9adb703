// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no RDMA device, no DAX): reading the caller's mapping
 * for IBV_DAX_MR_INIT_ADDR (vma.h) from smaps text, the checks that
 * refuse a mapping, and the lookup in this process's own /proc/self/smaps
 * of a shared and a private mapping of a scratch file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "errmsg.h"
#include "unit.h"
#include "vma.h"

static const char smaps[] =
	"55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]\n"
	"Size:                132 kB\n"
	"VmFlags: rd wr mr mw me ac sd \n"
	"7f0000000000-7f0000400000 rw-s 00200000 103:01 12345                      /mnt/ext4/a file\n"
	"Size:               4096 kB\n"
	"VmFlags: rd wr sh mr mw me ms sf dd \n"
	"7f0000400000-7f0000600000 rw-s 00600000 103:01 12345                      /mnt/ext4/a file\n"
	"VmFlags: rd wr sh mr mw me ms \n"
	"7f0000600000-7f0000601000 r--s 00000000 fd:00 77                         /x/new\\012line (deleted)\n"
	"VmFlags: rd sh mr me ms \n"
	"7f0000700000-7f0000701000 rw-p 00000000 fd:00 78                         /x/private\n"
	"VmFlags: rd wr mr mw me \n"
	"7f0000800000-7f0000801000 rw-p 00000000 00:00 0 \n"
	"VmFlags: rd wr mr mw me ac \n";

static int find(uintptr_t addr, size_t len, struct dl_vma *v, char *msg)
{
	FILE *f = fmemopen((void *)smaps, sizeof(smaps) - 1, "r");
	int ret;

	if (!f)
		return -1;
	ret = dl_vma_find(f, addr, len, v, msg, DL_ERRMSG_MAX);
	fclose(f);
	return ret;
}

static void test_parse(void)
{
	struct dl_vma v;
	int ret;

	ret = dl_vma_parse("7f0000000000-7f0000400000 rw-s 00200000 103:01 12345   /mnt/ext4/a file\n",
			   &v);
	dtest_check("parse/file", !ret && v.start == 0x7f0000000000 &&
		    v.end == 0x7f0000400000 && !strcmp(v.perms, "rw-s") &&
		    v.offset == 0x200000 && v.major == 0x103 &&
		    v.minor == 1 && v.ino == 12345 &&
		    !strcmp(v.path, "/mnt/ext4/a file") && !v.deleted,
		    "ret %d path '%s'", ret, v.path);
	ret = dl_vma_parse("7f0000600000-7f0000601000 r--s 00000000 fd:00 77 /x/new\\012line (deleted)\n",
			   &v);
	dtest_check("parse/escaped-deleted",
		    !ret && !strcmp(v.path, "/x/new\nline") && v.deleted,
		    "ret %d path '%s'", ret, v.path);
	ret = dl_vma_parse("7f0000800000-7f0000801000 rw-p 00000000 00:00 0 \n",
			   &v);
	dtest_check("parse/anonymous", !ret && !v.ino && !v.path[0],
		    "ret %d", ret);
	dtest_check("parse/attribute-line",
		    dl_vma_parse("Size:               4096 kB\n", &v) == EINVAL,
		    "an attribute line taken for a mapping");
	dtest_check("parse/vmflags-line",
		    dl_vma_parse("VmFlags: rd wr sh mr mw me ms sf dd \n", &v) ==
			    EINVAL,
		    "a VmFlags line taken for a mapping");
	dtest_check("parse/empty-range",
		    dl_vma_parse("1000-1000 rw-s 0 00:01 1 /x\n", &v) == EINVAL,
		    "start == end accepted");
}

static void test_find(void)
{
	char msg[DL_ERRMSG_MAX];
	struct dl_vma v;
	int ret;

	ret = find(0x7f0000001000, 0x3ff000, &v, msg);
	dtest_check("find/inside-sync",
		    !ret && v.start == 0x7f0000000000 && v.sync &&
			    v.offset == 0x200000,
		    "ret %d sync %d: %s", ret, v.sync, msg);
	ret = find(0x7f0000400000, 0x1000, &v, msg);
	dtest_check("find/next-not-sync",
		    !ret && v.start == 0x7f0000400000 && !v.sync,
		    "ret %d sync %d: %s", ret, v.sync, msg);
	ret = find(0x7f00003ff000, 0x2000, &v, msg);
	dtest_check("find/spans-two-mappings",
		    ret == EINVAL && strstr(msg, "passes the end"),
		    "ret %d: %s", ret, msg);
	ret = find(0x7f0000650000, 1, &v, msg);
	dtest_check("find/hole", ret == EFAULT && strstr(msg, "nothing"),
		    "ret %d: %s", ret, msg);
	ret = find(0x10, 1, &v, msg);
	dtest_check("find/below-all", ret == EFAULT, "ret %d", ret);
	ret = find(0x7f0000900000, 1, &v, msg);
	dtest_check("find/above-all", ret == EFAULT, "ret %d", ret);
}

static void test_check(void)
{
	char msg[DL_ERRMSG_MAX];
	struct dl_vma v;
	int ret;

	find(0x7f0000000000, 1, &v, msg);
	dtest_check("check/shared-file", !dl_vma_check(&v, true, msg,
						       sizeof(msg)),
		    "%s", msg);
	find(0x55d0c0000000, 1, &v, msg);
	ret = dl_vma_check(&v, false, msg, sizeof(msg));
	dtest_check("check/heap", ret == EINVAL && strstr(msg, "[heap]"),
		    "ret %d: %s", ret, msg);
	find(0x7f0000800000, 1, &v, msg);
	ret = dl_vma_check(&v, false, msg, sizeof(msg));
	dtest_check("check/anonymous",
		    ret == EINVAL && strstr(msg, "anonymous"),
		    "ret %d: %s", ret, msg);
	find(0x7f0000700000, 1, &v, msg);
	ret = dl_vma_check(&v, false, msg, sizeof(msg));
	dtest_check("check/private",
		    ret == EINVAL && strstr(msg, "MAP_PRIVATE"),
		    "ret %d: %s", ret, msg);
	find(0x7f0000600000, 1, &v, msg);
	ret = dl_vma_check(&v, true, msg, sizeof(msg));
	dtest_check("check/read-only-for-write",
		    ret == EACCES && strstr(msg, "PROT_WRITE"),
		    "ret %d: %s", ret, msg);
	ret = dl_vma_check(&v, false, msg, sizeof(msg));
	dtest_check("check/deleted",
		    ret == ENOENT && strstr(msg, "deleted"),
		    "ret %d: %s", ret, msg);
}

static int lookup(const void *addr, size_t len, struct dl_vma *v)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	int ret;

	if (!f)
		return errno;
	ret = dl_vma_find(f, (uintptr_t)addr, len, v, NULL, 0);
	fclose(f);
	return ret;
}

/* this process's own smaps: a shared and a private mapping of a file */
static void test_lookup(void)
{
	char dir[] = "/tmp/dl-vma-XXXXXX", path[64];
	struct dl_vma v;
	struct stat st;
	char *sh, *pr;
	int fd, ret;

	if (!mkdtemp(dir)) {
		dtest_check("lookup/scratch", 0, "mkdtemp: %s",
			    strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 4 * 4096) || fstat(fd, &st)) {
		dtest_check("lookup/scratch", 0, "%s", strerror(errno));
		return;
	}
	sh = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  2 * 4096);
	pr = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (sh == MAP_FAILED || pr == MAP_FAILED) {
		dtest_check("lookup/scratch", 0, "mmap: %s", strerror(errno));
		return;
	}
	ret = lookup(sh + 4096 + 16, 100, &v);
	dtest_check("lookup/shared",
		    !ret && v.start == (uintptr_t)sh &&
			    v.offset == 2 * 4096 && v.ino == st.st_ino &&
			    makedev(v.major, v.minor) == st.st_dev &&
			    !strcmp(v.path, path) && v.perms[3] == 's' &&
			    !v.sync,
		    "ret %d", ret);
	ret = lookup(sh + 4096, 2 * 4096, &v);
	dtest_check("lookup/past-end", ret == EINVAL, "ret %d", ret);
	ret = lookup(pr, 1, &v);
	dtest_check("lookup/private",
		    !ret && v.perms[3] == 'p' &&
			    dl_vma_check(&v, false, NULL, 0) == EINVAL,
		    "ret %d", ret);
	munmap(sh, 2 * 4096);
	munmap(pr, 4096);
	close(fd);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	dtest_begin("unit-vma");
	test_parse();
	test_find();
	test_check();
	test_lookup();
	return dtest_end();
}
