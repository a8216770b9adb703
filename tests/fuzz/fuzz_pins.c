// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libFuzzer target for dt_pins_parse(), the /proc/<pid>/file_pins parser.
 *
 * The input bytes are used twice:
 * - as file_pins text, parsed for ASan/UBSan findings and the error
 *   contract (on failure the result is empty and err_line is a real line;
 *   on success every path is non-empty, without newline or NUL);
 * - as a program that generates the expected structure (owners with
 *   their fds, paths and pinned files, mm-owned paths, in kernel order,
 *   with blank lines and an optional missing last newline), formats it
 *   as the kernel does and parses the text: the result must equal what
 *   was generated.  One byte may ask for one fault of a known line (a
 *   tab line right after an mm path, a tab line first, an empty pinned
 *   path, an empty owner path, an fd that overflows, a NUL): the parse
 *   must fail with EINVAL at exactly that line.
 * Comparing with the generated structure, not with a re-parse of the
 * parser's own output, is what catches a parser that files a line under
 * the wrong owner: the re-parse would agree with the first parse.
 *
 * Built with -DDL_FUZZ_STANDALONE it is a plain program instead (host
 * ctest, no clang): it runs the corpus files given as arguments and a
 * fixed number of pseudo-random inputs, and reports through dtest.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pins.h"

/* not assert(): release builds define NDEBUG */
#define FUZZ_CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #c);		\
			abort();					\
		}							\
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* --- the input as text ----------------------------------------------- */

static void check_path(const char *p)
{
	FUZZ_CHECK(p && *p);
	FUZZ_CHECK(!strchr(p, '\n'));
}

static void raw_parse(const uint8_t *data, size_t size)
{
	size_t i, j, n = 0, lines = 1;
	struct dt_pins p;
	int ret;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	ret = dt_pins_parse((const char *)data, size, &p);
	if (ret) {
		FUZZ_CHECK(ret == EINVAL || ret == ENOMEM);
		FUZZ_CHECK(!p.nowners && !p.nmm && !p.owners && !p.mm_files);
		FUZZ_CHECK(ret == ENOMEM ||
			   (p.err_line >= 1 && p.err_line <= lines));
		dt_pins_free(&p);
		return;
	}
	for (i = 0; i < p.nowners; i++) {
		FUZZ_CHECK(p.owners[i].fd >= 0);
		check_path(p.owners[i].path);
		for (j = 0; j < p.owners[i].nfiles; j++)
			check_path(p.owners[i].files[j]);
		n += p.owners[i].nfiles;
	}
	for (i = 0; i < p.nmm; i++)
		check_path(p.mm_files[i]);
	FUZZ_CHECK(dt_pins_total(&p) == n + p.nmm);
	if (p.nmm)
		FUZZ_CHECK(dt_pins_count(&p, p.mm_files[0]) >= 1);
	dt_pins_free(&p);
}

/* --- the input as a program ------------------------------------------ */

#define GEN_ITEMS 8
#define GEN_FILES 4
#define GEN_PATH 32

struct gen {
	const uint8_t *d;
	size_t n, i;
};

/* the next input byte, 0 once the input is used up */
static unsigned int take(struct gen *g)
{
	return g->i < g->n ? g->d[g->i++] : 0;
}

struct gen_item {
	bool owner;		/* else an mm-owned path */
	bool blank_before;
	int fd;
	char path[GEN_PATH + 1];
	int nfiles;
	char files[GEN_FILES][GEN_PATH + 1];
};

enum gen_fault {
	F_NONE,
	F_TAB_AFTER_MM,		/* "\t/f" right after an mm path line */
	F_TAB_FIRST,		/* "\t/f" before every other line */
	F_EMPTY_FILE,		/* "\t" in an owner's block */
	F_EMPTY_OWNER,		/* "N: " */
	F_FD_OVERFLOW,		/* "99999999999: path" */
	F_NUL,			/* a NUL inside an owner or mm line */
};

/*
 * A path of 1..GEN_PATH bytes without newline or NUL (the kernel escapes
 * a newline in a path as \012 and a path has no NUL); an mm path starts
 * with '/', as the kernel's absolute paths do, so that it cannot read as
 * an owner or a tab line.
 */
static void gen_path(struct gen *g, char *out, bool absolute)
{
	size_t len = 1 + take(g) % GEN_PATH, i = 0;

	if (absolute)
		out[i++] = '/';
	for (; i < len; i++) {
		unsigned int c = take(g);

		out[i] = c == 0 ? 'z' : c == '\n' ? 'y' : (char)c;
	}
	out[len] = '\0';
}

static int gen_fd(struct gen *g)
{
	unsigned int f = take(g);

	switch (f & 3) {
	case 0:
		return (int)(f >> 2);
	case 1:
		return (int)(take(g) << 8 | take(g));
	case 2:
		return INT_MAX;
	default:
		return 0;
	}
}

struct text {
	char *buf;
	size_t len, cap;
	size_t line;		/* lines started so far */
};

static void put(struct text *t, const char *s, size_t n)
{
	if (!n)
		return;
	if (t->len + n > t->cap) {
		t->cap = (t->len + n) * 2 + 64;
		t->buf = realloc(t->buf, t->cap);
		FUZZ_CHECK(t->buf);
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

/* one line; returns its 1-based number */
static size_t put_line(struct text *t, const char *a, const char *b,
		       size_t blen)
{
	put(t, a, strlen(a));
	if (b)
		put(t, b, blen);
	put(t, "\n", 1);
	return ++t->line;
}

static void gen_check(const uint8_t *data, size_t size)
{
	struct gen g = { .d = data, .n = size };
	struct gen_item items[GEN_ITEMS];
	size_t i, nitems, nowners = 0, nmm = 0, fault_line = 0;
	unsigned int head = take(&g), fault = (head >> 1) & 7, at;
	bool no_last_newline = head & 1;
	size_t cand[GEN_ITEMS], ncand = 0;
	struct text t = {};
	struct dt_pins p;
	size_t oi, mi;
	int j, ret;

	if (fault > F_NUL)
		fault = F_NONE;
	nitems = take(&g) % (GEN_ITEMS + 1);
	memset(items, 0, sizeof(items));
	for (i = 0; i < nitems; i++) {
		struct gen_item *it = &items[i];
		unsigned int b = take(&g);

		it->owner = !(b & 1);
		it->blank_before = b & 2;
		if (it->owner) {
			it->fd = gen_fd(&g);
			gen_path(&g, it->path, false);
			it->nfiles = (int)(take(&g) % (GEN_FILES + 1));
			for (j = 0; j < it->nfiles; j++)
				gen_path(&g, it->files[j], false);
			nowners++;
		} else {
			gen_path(&g, it->path, true);
			nmm++;
		}
	}

	/* the items a fault can apply to */
	for (i = 0; i < nitems; i++)
		if ((fault == F_TAB_AFTER_MM && !items[i].owner) ||
		    ((fault == F_EMPTY_FILE || fault == F_EMPTY_OWNER ||
		      fault == F_FD_OVERFLOW) && items[i].owner) ||
		    fault == F_NUL)
			cand[ncand++] = i;
	if (fault == F_TAB_FIRST)
		cand[ncand++] = 0;
	if (!ncand)
		fault = F_NONE;
	at = fault == F_NONE ? GEN_ITEMS : cand[take(&g) % ncand];

	/* format as the kernel does (plus blank lines the parser skips) */
	if (fault == F_TAB_FIRST) {
		if (head & 0x10)
			put_line(&t, "", NULL, 0);
		fault_line = put_line(&t, "\t/f", NULL, 0);
	}
	for (i = 0; i < nitems; i++) {
		struct gen_item *it = &items[i];
		char num[32];
		size_t l;

		if (it->blank_before)
			put_line(&t, "", NULL, 0);
		if (!it->owner) {
			if (fault == F_NUL && at == i) {
				char nul[GEN_PATH + 2];

				l = strlen(it->path);
				memcpy(nul, it->path, l);
				nul[l] = '\0';
				nul[l + 1] = 'x';
				fault_line = put_line(&t, "", nul, l + 2);
			} else {
				put_line(&t, "", it->path, strlen(it->path));
			}
			if (fault == F_TAB_AFTER_MM && at == i)
				fault_line = put_line(&t, "\t/f", NULL, 0);
			continue;
		}
		if (fault == F_FD_OVERFLOW && at == i)
			snprintf(num, sizeof(num), "99999999999: ");
		else
			snprintf(num, sizeof(num), "%d: ", it->fd);
		l = strlen(it->path);
		if (fault == F_EMPTY_OWNER && at == i) {
			fault_line = put_line(&t, num, NULL, 0);
		} else if (fault == F_NUL && at == i) {
			char nul[GEN_PATH + 2];

			memcpy(nul, it->path, l);
			nul[l] = '\0';
			nul[l + 1] = 'x';
			fault_line = put_line(&t, num, nul, l + 2);
		} else {
			l = put_line(&t, num, it->path, l);
			if (fault == F_FD_OVERFLOW && at == i)
				fault_line = l;
		}
		if (fault == F_EMPTY_FILE && at == i)
			fault_line = put_line(&t, "\t", NULL, 0);
		for (j = 0; j < it->nfiles; j++) {
			if (head & 0x20 && j == 1)
				put_line(&t, "", NULL, 0);
			put_line(&t, "\t", it->files[j], strlen(it->files[j]));
		}
	}
	if (no_last_newline && t.len)
		t.len--;

	ret = dt_pins_parse(t.buf, t.len, &p);
	if (fault != F_NONE) {
		if (ret != EINVAL || p.err_line != fault_line)
			fprintf(stderr, "fault %u at line %zu: ret %d line %zu\n",
				fault, fault_line, ret, p.err_line);
		FUZZ_CHECK(ret == EINVAL);
		FUZZ_CHECK(p.err_line == fault_line);
		FUZZ_CHECK(!p.nowners && !p.nmm);
		dt_pins_free(&p);
		free(t.buf);
		return;
	}
	FUZZ_CHECK(ret == 0);
	FUZZ_CHECK(p.nowners == nowners && p.nmm == nmm);
	for (i = 0, oi = 0, mi = 0; i < nitems; i++) {
		struct gen_item *it = &items[i];

		if (!it->owner) {
			FUZZ_CHECK(!strcmp(p.mm_files[mi], it->path));
			mi++;
			continue;
		}
		FUZZ_CHECK(p.owners[oi].fd == it->fd);
		FUZZ_CHECK(!strcmp(p.owners[oi].path, it->path));
		FUZZ_CHECK(p.owners[oi].nfiles == (size_t)it->nfiles);
		for (j = 0; j < it->nfiles; j++)
			FUZZ_CHECK(!strcmp(p.owners[oi].files[j],
					   it->files[j]));
		oi++;
	}
	dt_pins_free(&p);
	free(t.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	raw_parse(data, size);
	gen_check(data, size);
	return 0;
}

#ifdef DL_FUZZ_STANDALONE
#include "dtest.h"

/* xorshift64: the same inputs on every run */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	uint8_t buf[512];
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	long i, runs = 50000, files = 0;
	size_t n, k;
	int a;

	dtest_begin("fuzz-pins-replay");
	for (a = 1; a < argc; a++) {
		FILE *f = fopen(argv[a], "rb");

		if (!f) {
			dtest_fail("corpus", "%s: %s", argv[a], strerror(errno));
			return dtest_end();
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
		files++;
	}
	dtest_check("corpus", files > 0, "%ld files", files);
	for (i = 0; i < runs; i++) {
		n = rnd(&seed) % sizeof(buf);
		for (k = 0; k < n; k++)
			buf[k] = (uint8_t)rnd(&seed);
		LLVMFuzzerTestOneInput(buf, n);
	}
	dtest_pass("generated", "%ld inputs", runs);
	return dtest_end();
}
#endif
