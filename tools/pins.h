/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * /proc/<pid>/file_pins (doc/design.md §1.7), for daxlease pins:
 *
 *	4: /dev/infiniband/uverbs0	an owner: fd number and its path
 *		/mnt/pmem/foo		tab-indented: files pinned through it
 *	/mnt/pmem/bar			bare path: pinned through the mm
 *
 * Empty lines are ignored; the last line may lack its newline.  Malformed:
 * a tab line before any owner, an empty path, an owner line whose fd
 * number overflows, a NUL byte.
 */
#ifndef DAXLEASE_TOOL_PINS_H
#define DAXLEASE_TOOL_PINS_H

#include <stddef.h>

/* The most the tool reads of one /proc file */
#define DT_PINS_MAX_FILE (16u << 20)

struct dt_pin_owner {
	int fd;
	char *path;			/* e.g. /dev/infiniband/uverbs0 */
	size_t nfiles;
	char **files;
};

struct dt_pins {
	size_t nowners;
	struct dt_pin_owner *owners;
	size_t nmm;			/* mm-owned pins */
	char **mm_files;
	size_t err_line;		/* 1-based line of a parse error */
};

/*
 * Pure: parse len bytes of buf into out (zeroed first).  Returns 0,
 * EINVAL (malformed; out->err_line says where) or ENOMEM.  On error out
 * holds nothing to free beyond what dt_pins_free() handles.
 */
int dt_pins_parse(const char *buf, size_t len, struct dt_pins *out);
void dt_pins_free(struct dt_pins *pins);
/*
 * Read a whole file of /proc (up to DT_PINS_MAX_FILE, else EFBIG) into a
 * NUL-terminated malloc'd *buf of *len bytes; 0 or errno.
 */
int dt_read_file(const char *path, char **buf, size_t *len);
/* Read and parse a file_pins file; 0 or errno (ENOENT: no file_pins). */
int dt_pins_read(const char *path, struct dt_pins *out);
/* Number of pins (owner or mm) on exactly path. */
size_t dt_pins_count(const struct dt_pins *pins, const char *path);
size_t dt_pins_total(const struct dt_pins *pins);

#endif /* DAXLEASE_TOOL_PINS_H */
