// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Parser for /proc/<pid>/file_pins (doc/design.md §1.7): an owner line
 * "N: /dev/infiniband/uverbsX" for pins held through an open file (RDMA:
 * the uverbs context), followed by its pinned files indented by a tab;
 * bare paths are pins owned by the process mm.
 *
 * dt_pins_parse() is pure (no global state, every allocation owned by the
 * result) so that a libFuzzer target can drive it directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pins.h"

/*
 * A line of the buffer as a string.  The buffer is not NUL-terminated,
 * so the bytes are copied as bytes: strndup() would be correct, but a
 * checker that takes its argument for a string (ASan's
 * strict_string_checks) reads past the buffer's end.
 */
static char *line_dup(const char *s, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	return copy;
}

static int push_str(char ***arr, size_t *n, const char *s, size_t len)
{
	char **na;
	char *copy;

	copy = line_dup(s, len);
	if (!copy)
		return ENOMEM;
	na = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!na) {
		free(copy);
		return ENOMEM;
	}
	na[*n] = copy;
	*arr = na;
	(*n)++;
	return 0;
}

static int push_owner(struct dt_pins *p, int fd, const char *s, size_t len)
{
	struct dt_pin_owner *no;
	char *copy;

	copy = line_dup(s, len);
	if (!copy)
		return ENOMEM;
	no = realloc(p->owners, (p->nowners + 1) * sizeof(*no));
	if (!no) {
		free(copy);
		return ENOMEM;
	}
	no[p->nowners] = (struct dt_pin_owner){ .fd = fd, .path = copy };
	p->owners = no;
	p->nowners++;
	return 0;
}

/*
 * "N: path" with N a decimal fd: returns 1 and the parts, 0 if the line is
 * not an owner line, -1 for an owner line whose N overflows an int.
 */
static int owner_line(const char *s, size_t len, int *fd, size_t *path_at)
{
	bool overflow = false;
	size_t i = 0;
	long v = 0;

	while (i < len && s[i] >= '0' && s[i] <= '9') {
		if (!overflow) {
			v = v * 10 + (s[i] - '0');
			overflow = v > INT_MAX;
		}
		i++;
	}
	if (i == 0 || i + 1 >= len || s[i] != ':' || s[i + 1] != ' ')
		return 0;
	if (overflow)
		return -1;
	*fd = (int)v;
	*path_at = i + 2;
	return 1;
}

int dt_pins_parse(const char *buf, size_t len, struct dt_pins *out)
{
	struct dt_pin_owner *cur = NULL;
	size_t pos = 0, line = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!buf && len)
		return EINVAL;

	while (pos < len) {
		const char *s = buf + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - s) : len - pos;
		size_t path_at;
		int fd, kind;

		line++;
		pos += l + (nl ? 1 : 0);
		if (memchr(s, '\0', l))
			goto malformed;
		if (l == 0)
			continue;

		if (s[0] == '\t') {
			/* a file pinned through the last owner */
			if (!cur || l == 1)
				goto malformed;
			ret = push_str(&cur->files, &cur->nfiles, s + 1, l - 1);
			if (ret)
				goto err;
			continue;
		}

		kind = owner_line(s, l, &fd, &path_at);
		if (kind < 0)
			goto malformed;
		if (kind) {
			if (path_at >= l)
				goto malformed;
			ret = push_owner(out, fd, s + path_at, l - path_at);
			if (ret)
				goto err;
			cur = &out->owners[out->nowners - 1];
			continue;
		}

		/* bare path: a pin owned by the mm; ends any owner block */
		cur = NULL;
		ret = push_str(&out->mm_files, &out->nmm, s, l);
		if (ret)
			goto err;
	}
	return 0;

malformed:
	ret = EINVAL;
err:
	dt_pins_free(out);
	out->err_line = line;
	return ret;
}

void dt_pins_free(struct dt_pins *pins)
{
	size_t i, j;

	for (i = 0; i < pins->nowners; i++) {
		for (j = 0; j < pins->owners[i].nfiles; j++)
			free(pins->owners[i].files[j]);
		free(pins->owners[i].files);
		free(pins->owners[i].path);
	}
	free(pins->owners);
	for (i = 0; i < pins->nmm; i++)
		free(pins->mm_files[i]);
	free(pins->mm_files);
	memset(pins, 0, sizeof(*pins));
}

int dt_read_file(const char *path, char **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = NULL, *nb;
	ssize_t r;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	for (;;) {
		if (!b || cap - n < 1024) {
			if (b)
				cap *= 2;
			if (cap > DT_PINS_MAX_FILE) {
				err = EFBIG;
				break;
			}
			nb = realloc(b, cap);
			if (!nb) {
				err = ENOMEM;
				break;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			break;
		}
		if (!r)
			break;
		n += r;
	}
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

int dt_pins_read(const char *path, struct dt_pins *out)
{
	size_t len;
	char *buf;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = dt_read_file(path, &buf, &len);
	if (ret)
		return ret;
	ret = dt_pins_parse(buf, len, out);
	free(buf);
	return ret;
}

size_t dt_pins_count(const struct dt_pins *pins, const char *path)
{
	size_t i, j, n = 0;

	for (i = 0; i < pins->nowners; i++)
		for (j = 0; j < pins->owners[i].nfiles; j++)
			n += !strcmp(pins->owners[i].files[j], path);
	for (i = 0; i < pins->nmm; i++)
		n += !strcmp(pins->mm_files[i], path);
	return n;
}

size_t dt_pins_total(const struct dt_pins *pins)
{
	size_t i, n = pins->nmm;

	for (i = 0; i < pins->nowners; i++)
		n += pins->owners[i].nfiles;
	return n;
}
