// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Reading the caller's mapping of a range from /proc/self/smaps (vma.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "vma.h"

#define DELETED_SUFFIX " (deleted)"

static int reason(char *msg, size_t msglen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int reason(char *msg, size_t msglen, int err, const char *fmt, ...)
{
	va_list ap;

	if (msg && msglen) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* seq_file_path() shows a newline in a name as "\012" */
static void unescape(const char *s, char *out, size_t outlen)
{
	size_t n = 0;

	while (*s && n + 1 < outlen) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			out[n++] = (char)(((s[1] - '0') << 6) |
					  ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
			continue;
		}
		out[n++] = *s++;
	}
	out[n] = 0;
}

int dl_vma_parse(const char *line, struct dl_vma *v)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[5], raw[PATH_MAX];
	size_t len;
	int pos = 0;

	memset(v, 0, sizeof(*v));
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu%n", &start, &end,
		   perms, &off, &maj, &min, &ino, &pos) != 7 || !pos ||
	    start >= end || end > UINTPTR_MAX || strlen(perms) != 4 ||
	    (line[pos] && line[pos] != ' ' && line[pos] != '\n'))
		return EINVAL;
	v->start = (uintptr_t)start;
	v->end = (uintptr_t)end;
	memcpy(v->perms, perms, sizeof(perms));
	v->offset = off;
	v->major = maj;
	v->minor = min;
	v->ino = ino;

	line += pos;
	while (*line == ' ')
		line++;
	/* the escaped name: the line's end and the suffix are not a name's */
	len = strcspn(line, "\n");
	if (len >= sizeof(raw))
		len = sizeof(raw) - 1;
	memcpy(raw, line, len);
	raw[len] = 0;
	if (len > strlen(DELETED_SUFFIX) &&
	    !strcmp(raw + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
		v->deleted = true;
		raw[len - strlen(DELETED_SUFFIX)] = 0;
	}
	unescape(raw, v->path, sizeof(v->path));
	return 0;
}

/* " sf" among the two-letter flags of a VmFlags line */
static bool vmflags_sync(const char *line)
{
	const char *p = line + strlen("VmFlags:");

	for (;;) {
		while (*p == ' ')
			p++;
		if (!p[0] || p[0] == '\n')
			return false;
		if (p[0] == 's' && p[1] == 'f' &&
		    (p[2] == ' ' || p[2] == '\n' || !p[2]))
			return true;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
}

int dl_vma_find(FILE *f, uintptr_t addr, size_t len, struct dl_vma *v,
		char *msg, size_t msglen)
{
	struct dl_vma cur;
	bool found = false;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	memset(v, 0, sizeof(*v));
	if (msg && msglen)
		msg[0] = 0;
	while (getline(&line, &cap, f) >= 0) {
		if (!dl_vma_parse(line, &cur)) {
			if (found)
				break;	/* the next mapping: done */
			if (cur.start > addr)
				break;	/* sorted: passed addr */
			if (addr < cur.end) {
				*v = cur;
				found = true;
			}
			continue;
		}
		if (found && !strncmp(line, "VmFlags:", 8))
			v->sync = vmflags_sync(line);
	}
	if (ferror(f))
		ret = reason(msg, msglen, EIO,
			     "cannot read the process's mappings");
	else if (!found)
		ret = reason(msg, msglen, EFAULT,
			     "nothing is mapped at addr 0x%" PRIxPTR, addr);
	else if (len > v->end - addr)
		ret = reason(msg, msglen, EINVAL,
			     "range [0x%" PRIxPTR ", +0x%zx) passes the end of the mapping [0x%" PRIxPTR ", 0x%" PRIxPTR ") that holds its start: register one mapping at a time",
			     addr, len, v->start, v->end);
	free(line);
	return ret;
}

int dl_vma_check(const struct dl_vma *v, bool write, char *msg,
		 size_t msglen)
{
	if (!v->ino || v->path[0] != '/')
		return reason(msg, msglen, EINVAL,
			      "[0x%" PRIxPTR ", 0x%" PRIxPTR ") %s is not a file mapping: register anonymous memory with ibv_reg_mr()",
			      v->start, v->end,
			      v->path[0] ? v->path : "(anonymous)");
	if (v->perms[3] != 's')
		return reason(msg, msglen, EINVAL,
			      "%s is mapped MAP_PRIVATE at 0x%" PRIxPTR ": written pages of a private mapping are copies in DRAM, not the file; map it MAP_SHARED",
			      v->path, v->start);
	if (write && v->perms[1] != 'w')
		return reason(msg, msglen, EACCES,
			      "%s is mapped without PROT_WRITE at 0x%" PRIxPTR " but access asks for write (IBV_ACCESS_LOCAL_WRITE/REMOTE_WRITE/REMOTE_ATOMIC)",
			      v->path, v->start);
	if (v->deleted)
		return reason(msg, msglen, ENOENT,
			      "%s, mapped at 0x%" PRIxPTR ", has been deleted: the library cannot open it again to lease it; register before unlinking, or use ibv_reg_dax_mr() with the fd",
			      v->path, v->start);
	return 0;
}
