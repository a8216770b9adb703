// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no device): the /proc/<pid>/file_pins parser on the
 * examples of doc/design.md §1.7 and on malformed input
 * (a bare path ends the owner block above it), and the reader on the host kernel (no file_pins: ENOENT).
 */
#include <errno.h>

#include "pins.h"
#include "unit.h"

static const char ex1[] = "3: /dev/infiniband/uverbs0\n\t/mnt/pmem/foo\n";
static const char ex2[] =
	"4: /dev/infiniband/uverbs0\n"
	"\t/mnt/pmem/foo\n\t/mnt/pmem/bar\n\t/mnt/pmem/another\n"
	"\t/mnt/pmem/one\n";
static const char ex3[] = "/mnt/pmem/foo\n";
static const char ex4[] =
	"4: /dev/infiniband/uverbs0\n"
	"\t/mnt/pmem/foo\n\t/mnt/pmem/bar\n\t/mnt/pmem/another\n"
	"\t/mnt/pmem/one\n"
	"/mnt/pmem/foo\n/mnt/pmem/another\n/mnt/pmem/mm_mapped_file\n";

static int parse(const char *s, size_t len, struct dt_pins *p)
{
	return dt_pins_parse(s, len, p);
}

int main(void)
{
	struct dt_pins p;
	int ret;

	dtest_begin("unit-pins");

	ret = parse(ex1, sizeof(ex1) - 1, &p);
	dtest_check("cover/single", !ret && p.nowners == 1 &&
		    p.owners[0].fd == 3 &&
		    !strcmp(p.owners[0].path, "/dev/infiniband/uverbs0") &&
		    p.owners[0].nfiles == 1 &&
		    !strcmp(p.owners[0].files[0], "/mnt/pmem/foo") && !p.nmm,
		    "ret %d owners %zu", ret, p.nowners);
	dt_pins_free(&p);

	ret = parse(ex2, sizeof(ex2) - 1, &p);
	dtest_check("cover/four-files", !ret && p.nowners == 1 &&
		    p.owners[0].fd == 4 && p.owners[0].nfiles == 4 &&
		    !strcmp(p.owners[0].files[3], "/mnt/pmem/one") &&
		    dt_pins_total(&p) == 4,
		    "ret %d total %zu", ret, dt_pins_total(&p));
	dt_pins_free(&p);

	ret = parse(ex3, sizeof(ex3) - 1, &p);
	dtest_check("cover/mm-only", !ret && !p.nowners && p.nmm == 1 &&
		    !strcmp(p.mm_files[0], "/mnt/pmem/foo"), "ret %d", ret);
	dt_pins_free(&p);

	ret = parse(ex4, sizeof(ex4) - 1, &p);
	dtest_check("cover/mixed", !ret && p.nowners == 1 &&
		    p.owners[0].nfiles == 4 && p.nmm == 3 &&
		    dt_pins_count(&p, "/mnt/pmem/foo") == 2 &&
		    dt_pins_count(&p, "/mnt/pmem/mm_mapped_file") == 1 &&
		    dt_pins_count(&p, "/mnt/pmem/none") == 0 &&
		    dt_pins_total(&p) == 7,
		    "ret %d owners %zu mm %zu", ret, p.nowners, p.nmm);
	dt_pins_free(&p);

	/* no trailing newline, several owners, blank lines */
	{
		static const char two[] = "4: /dev/infiniband/uverbs0\n\t/a\n\n"
					  "7: /dev/infiniband/uverbs1\n\t/b\n\t/c";

		ret = parse(two, sizeof(two) - 1, &p);
	}
	dtest_check("two-owners-no-newline", !ret && p.nowners == 2 &&
		    p.owners[1].fd == 7 && p.owners[1].nfiles == 2 &&
		    !strcmp(p.owners[1].files[1], "/c"),
		    "ret %d owners %zu", ret, p.nowners);
	dt_pins_free(&p);

	ret = parse("", 0, &p);
	dtest_check("empty", !ret && !dt_pins_total(&p) && !p.nowners,
		    "ret %d", ret);
	dt_pins_free(&p);
	ret = parse(NULL, 0, &p);
	dtest_check("null-empty", !ret, "ret %d", ret);

	/* an owner with no files yet is valid (context with no pins) */
	ret = parse("5: /dev/infiniband/uverbs0\n", 27, &p);
	dtest_check("owner-without-files", !ret && p.nowners == 1 &&
		    !p.owners[0].nfiles, "ret %d", ret);
	dt_pins_free(&p);

	/* malformed */
	ret = parse("\t/mnt/pmem/foo\n", 15, &p);
	dtest_check("bad/tab-before-owner", ret == EINVAL && p.err_line == 1,
		    "ret %d line %zu", ret, p.err_line);
	ret = parse("3: /dev/infiniband/uverbs0\n\t\n", 29, &p);
	dtest_check("bad/empty-pinned-path", ret == EINVAL && p.err_line == 2,
		    "ret %d line %zu", ret, p.err_line);
	ret = parse("3: \n", 4, &p);
	dtest_check("bad/empty-owner-path", ret == EINVAL, "ret %d", ret);
	ret = parse("99999999999: /dev/infiniband/uverbs0\n", 37, &p);
	dtest_check("bad/fd-overflow", ret == EINVAL, "ret %d", ret);
	ret = parse("3: /dev/x\n\t/a\0b\n", 16, &p);
	dtest_check("bad/nul-byte", ret == EINVAL && p.err_line == 2 &&
		    !p.nowners, "ret %d line %zu owners %zu", ret, p.err_line,
		    p.nowners);
	ret = parse("/a\n\t/b\n", 7, &p);
	dtest_check("bad/tab-after-mm-path", ret == EINVAL && p.err_line == 2,
		    "ret %d line %zu", ret, p.err_line);
	/*
	 * A bare path ends the owner block before it: a tab line after it
	 * has no owner, and must not be filed under the fd above.
	 */
	{
		static const char ended[] = "4: /dev/x\n/a\n\t/b";

		ret = parse(ended, sizeof(ended) - 1, &p);
	}
	dtest_check("bad/tab-after-mm-path-ends-owner",
		    ret == EINVAL && p.err_line == 3 && !p.nowners && !p.nmm,
		    "ret %d line %zu owners %zu (files of the first: %zu)",
		    ret, p.err_line, p.nowners,
		    p.nowners ? p.owners[0].nfiles : 0);
	if (!ret)
		dt_pins_free(&p);
	/* ... while an owner line after it starts a new block */
	{
		static const char again[] =
			"4: /dev/x\n\t/a\n/m\n5: /dev/y\n\t/b\n";

		ret = parse(again, sizeof(again) - 1, &p);
	}
	dtest_check("mm-path-between-owners",
		    !ret && p.nowners == 2 && p.nmm == 1 &&
			    p.owners[0].fd == 4 && p.owners[0].nfiles == 1 &&
			    !strcmp(p.owners[0].files[0], "/a") &&
			    p.owners[1].fd == 5 && p.owners[1].nfiles == 1 &&
			    !strcmp(p.owners[1].files[0], "/b") &&
			    !strcmp(p.mm_files[0], "/m"),
		    "ret %d owners %zu mm %zu", ret, p.nowners, p.nmm);
	dt_pins_free(&p);
	ret = parse(NULL, 5, &p);
	dtest_check("bad/null-buffer", ret == EINVAL, "ret %d", ret);

	/* "12:x" and "12:" are not owner lines: bare (odd) paths */
	ret = parse("12:x\n", 5, &p);
	dtest_check("colon-without-space-is-path", !ret && p.nmm == 1 &&
		    !strcmp(p.mm_files[0], "12:x"), "ret %d", ret);
	dt_pins_free(&p);

	/* the host kernel has no file_pins */
	ret = dt_pins_read("/proc/self/file_pins", &p);
	if (ret == 0) {
		dtest_check("read/self", dt_pins_total(&p) == 0,
			    "pins in a process without MRs: %zu",
			    dt_pins_total(&p));
		dt_pins_free(&p);
	} else {
		dtest_check("read/self-enoent", ret == ENOENT,
			    "ret %d (%s)", ret, strerror(ret));
	}
	return dtest_end();
}
