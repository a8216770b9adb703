/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What a failed (or finished) registration must leave exactly as it found:
 * the process's open fds, its file-backed mappings, its leases and locks in
 * /proc/locks and its /proc/self/file_pins.  doc/design.md §3.3: every
 * failure leaves nothing behind (fd, mapping, lease, MR).
 *
 * Anonymous mappings are compared by total size with a 1 MiB slack, since
 * malloc may keep or drop an arena; the ranges registered by the tests are
 * 2 MiB or more, so a leaked mapping of one of them is still seen.
 * Under valgrind (its preload in LD_PRELOAD) they are not compared.
 */
#ifndef DL_SNAPSHOT_H
#define DL_SNAPSHOT_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DL_SNAP_ANON_SLACK (1UL << 20)

struct dl_snap {
	char *fds;		/* "N -> target\n" sorted by N */
	char *maps;		/* "perms offset path\n" of named mappings */
	char *locks;		/* /proc/locks lines of this pid, id stripped */
	char *pins;		/* /proc/self/file_pins, "" if absent */
	unsigned long anon;	/* bytes of anonymous mappings */
};

struct dl_strbuf {
	char *s;
	size_t len, cap;
};

static inline void dl_sb_add(struct dl_strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->s = realloc(b->s, cap);
		if (!b->s)
			abort();
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

static inline char *dl_sb_done(struct dl_strbuf *b)
{
	if (!b->s)
		dl_sb_add(b, "", 0);
	return b->s;
}

static inline int dl_fdcmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static inline char *dl_snap_fds(void)
{
	struct dl_strbuf b = {};
	int fds[4096], n = 0, i, self;
	struct dirent *de;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return strdup("(no /proc/self/fd)\n");
	self = dirfd(d);
	while ((de = readdir(d)) && n < 4096) {
		if (de->d_name[0] == '.')
			continue;
		if (atoi(de->d_name) != self)
			fds[n++] = atoi(de->d_name);
	}
	closedir(d);
	qsort(fds, n, sizeof(fds[0]), dl_fdcmp);
	for (i = 0; i < n; i++) {
		char proc[64], target[PATH_MAX], line[PATH_MAX + 32];
		ssize_t l;

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fds[i]);
		l = readlink(proc, target, sizeof(target) - 1);
		if (l < 0)
			continue;	/* closed meanwhile (another thread) */
		target[l] = 0;
		l = snprintf(line, sizeof(line), "%d -> %s\n", fds[i], target);
		dl_sb_add(&b, line, l);
	}
	return dl_sb_done(&b);
}

static inline void dl_snap_maps(struct dl_snap *s)
{
	struct dl_strbuf b = {};
	char line[PATH_MAX + 128];
	FILE *f;

	s->anon = 0;
	f = fopen("/proc/self/maps", "re");
	if (!f) {
		s->maps = strdup("(no /proc/self/maps)\n");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8], off[32], dev[16], path[PATH_MAX] = "";
		unsigned long ino;
		char out[PATH_MAX + 64];
		int n;

		n = sscanf(line, "%lx-%lx %7s %31s %15s %lu %4095[^\n]", &lo,
			   &hi, perms, off, dev, &ino, path);
		if (n < 6)
			continue;
		if (!path[0] || !strcmp(path, "[heap]") ||
		    !strcmp(path, "[stack]")) {
			s->anon += hi - lo;
			continue;
		}
		if (path[0] == '[')	/* vdso, vvar, vsyscall */
			continue;
		/* addresses may differ run to run; the set of files may not */
		n = snprintf(out, sizeof(out), "%lx %s %s %s\n", hi - lo, perms,
			     off, path);
		dl_sb_add(&b, out, n);
	}
	fclose(f);
	s->maps = dl_sb_done(&b);
}

/*
 * /proc/locks: "1: LEASE  ACTIVE    READ  1234 fd:01:56 0 EOF" or, for a
 * blocked waiter, "1: -> POSIX ...".  Keep our pid's lines minus the id.
 */
static inline char *dl_snap_locks(pid_t pid)
{
	struct dl_strbuf b = {};
	char line[512];
	FILE *f;

	f = fopen("/proc/locks", "re");
	if (!f)
		return strdup("");
	while (fgets(line, sizeof(line), f)) {
		char *tok[8], *save = NULL, *p, copy[512];
		int n = 0, k;

		snprintf(copy, sizeof(copy), "%s", line);
		for (p = strtok_r(copy, " \t\n", &save); p && n < 8;
		     p = strtok_r(NULL, " \t\n", &save))
			tok[n++] = p;
		k = (n > 1 && !strcmp(tok[1], "->")) ? 5 : 4;
		if (n <= k || atoi(tok[k]) != pid)
			continue;
		p = strchr(line, ':');
		p = p ? p + 1 : line;
		dl_sb_add(&b, p, strlen(p));
	}
	fclose(f);
	return dl_sb_done(&b);
}

static inline char *dl_snap_file(const char *path)
{
	struct dl_strbuf b = {};
	char buf[4096];
	size_t n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return strdup("");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		dl_sb_add(&b, buf, n);
	fclose(f);
	return dl_sb_done(&b);
}

static inline void dl_snap_take(struct dl_snap *s)
{
	s->fds = dl_snap_fds();
	dl_snap_maps(s);
	s->locks = dl_snap_locks(getpid());
	s->pins = dl_snap_file("/proc/self/file_pins");
}

static inline void dl_snap_free(struct dl_snap *s)
{
	free(s->fds);
	free(s->maps);
	free(s->locks);
	free(s->pins);
	memset(s, 0, sizeof(*s));
}

/* First line of b that a lacks, for the message. */
static inline void dl_snap_first_new(const char *a, const char *b, char *out,
				     size_t outlen)
{
	const char *p = b;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		char line[PATH_MAX + 64];

		snprintf(line, sizeof(line), "%.*s\n", (int)l, p);
		if (!strstr(a, line)) {
			snprintf(out, outlen, "%.*s", (int)l, p);
			return;
		}
		p += l + (nl ? 1 : 0);
	}
	snprintf(out, outlen, "(lines removed)");
}

/*
 * Compare two snapshots; returns true when equal, else false with a
 * readable difference in why.
 */
static inline bool dl_snap_same(const struct dl_snap *a,
				const struct dl_snap *b, char *why,
				size_t whylen)
{
	char d[PATH_MAX + 64];

	why[0] = 0;
	if (strcmp(a->fds, b->fds)) {
		dl_snap_first_new(a->fds, b->fds, d, sizeof(d));
		snprintf(why, whylen, "fds differ: new fd %.400s", d);
		return false;
	}
	if (strcmp(a->maps, b->maps)) {
		dl_snap_first_new(a->maps, b->maps, d, sizeof(d));
		snprintf(why, whylen, "mappings differ: new mapping %.400s", d);
		return false;
	}
	if (strcmp(a->locks, b->locks)) {
		dl_snap_first_new(a->locks, b->locks, d, sizeof(d));
		snprintf(why, whylen, "leases/locks differ: new %.400s", d);
		return false;
	}
	if (strcmp(a->pins, b->pins)) {
		dl_snap_first_new(a->pins, b->pins, d, sizeof(d));
		snprintf(why, whylen, "file_pins differ: new %.400s", d);
		return false;
	}
	/* under valgrind its own allocator's arenas show up as anonymous */
	if (b->anon > a->anon + DL_SNAP_ANON_SLACK &&
	    !getenv("DAXLEASE_UNDER_VALGRIND") &&
	    !(getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "vgpreload"))) {
		snprintf(why, whylen,
			 "anonymous mappings grew by %lu KiB", (b->anon - a->anon) >> 10);
		return false;
	}
	return true;
}

#endif /* DL_SNAPSHOT_H */
