// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libFuzzer target for dl_pins_parse(), the /proc/<pid>/file_pins parser.
 *
 * Besides ASan/UBSan findings it checks the parser's contract: on success
 * every path is non-empty and free of newlines and NULs, and printing the
 * result back in the file_pins format and parsing that gives the same
 * structure; on failure the result is empty and err_line is a real line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daxlease.h"

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

static void check_path(const char *p)
{
	FUZZ_CHECK(p && *p);
	FUZZ_CHECK(!strchr(p, '\n'));
}

static char *print_pins(const struct dl_pins *p, size_t *len)
{
	char *buf = NULL;
	size_t i, j;
	FILE *f;

	f = open_memstream(&buf, len);
	FUZZ_CHECK(f);
	for (i = 0; i < p->nowners; i++) {
		fprintf(f, "%d: %s\n", p->owners[i].fd, p->owners[i].path);
		for (j = 0; j < p->owners[i].nfiles; j++)
			fprintf(f, "\t%s\n", p->owners[i].files[j]);
	}
	for (i = 0; i < p->nmm; i++)
		fprintf(f, "%s\n", p->mm_files[i]);
	fclose(f);
	return buf;
}

static void same_pins(const struct dl_pins *a, const struct dl_pins *b)
{
	size_t i, j;

	FUZZ_CHECK(a->nowners == b->nowners && a->nmm == b->nmm);
	for (i = 0; i < a->nowners; i++) {
		FUZZ_CHECK(a->owners[i].fd == b->owners[i].fd);
		FUZZ_CHECK(!strcmp(a->owners[i].path, b->owners[i].path));
		FUZZ_CHECK(a->owners[i].nfiles == b->owners[i].nfiles);
		for (j = 0; j < a->owners[i].nfiles; j++)
			FUZZ_CHECK(!strcmp(a->owners[i].files[j],
				       b->owners[i].files[j]));
	}
	for (i = 0; i < a->nmm; i++)
		FUZZ_CHECK(!strcmp(a->mm_files[i], b->mm_files[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dl_pins p, q;
	size_t i, j, n = 0, lines = 1, len;
	char *text;
	int ret;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	ret = dl_pins_parse((const char *)data, size, &p);
	if (ret) {
		FUZZ_CHECK(ret == EINVAL || ret == ENOMEM);
		FUZZ_CHECK(!p.nowners && !p.nmm && !p.owners && !p.mm_files);
		FUZZ_CHECK(ret == ENOMEM || (p.err_line >= 1 && p.err_line <= lines));
		dl_pins_free(&p);
		return 0;
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
	FUZZ_CHECK(dl_pins_total(&p) == n + p.nmm);
	if (p.nmm)
		FUZZ_CHECK(dl_pins_count(&p, p.mm_files[0]) >= 1);

	/*
	 * Round trip.  A bare path that itself looks like "N: x" would be
	 * read back as an owner, and an owner printed after mm lines is
	 * fine; but mm lines print last, so the structure is comparable
	 * only when no mm path looks like an owner line.
	 */
	text = print_pins(&p, &len);
	ret = dl_pins_parse(text, len, &q);
	if (!ret) {
		bool owner_like = false;

		for (i = 0; i < p.nmm; i++) {
			const char *s = p.mm_files[i];

			while (*s >= '0' && *s <= '9')
				s++;
			owner_like |= s != p.mm_files[i] && s[0] == ':' &&
				      s[1] == ' ';
			owner_like |= p.mm_files[i][0] == '\t';
		}
		if (!owner_like)
			same_pins(&p, &q);
		dl_pins_free(&q);
	} else {
		/* only an mm path that reads back as a bad owner line */
		FUZZ_CHECK(p.nmm > 0);
	}
	free(text);
	dl_pins_free(&p);
	return 0;
}
