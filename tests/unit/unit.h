/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers of the host unit tests: scratch files and leak counters.  The
 * host has no RDMA device; what needs a device or DAX runs in the guest.
 */
#ifndef DAXLEASE_UNIT_H
#define DAXLEASE_UNIT_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtest.h"

/* Open fds of this process (/proc/self/fd, minus the dir's own fd) */
static inline int unit_count_fds(void)
{
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n - 1;
}

/* Mappings of this process (lines of /proc/self/maps) */
static inline int unit_count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Mappings of files whose path contains what (e.g. a scratch dir) */
static inline int unit_count_maps_of(const char *what)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

/* Leases this process holds (/proc/locks lines with LEASE and our pid) */
static inline int unit_count_leases(void)
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

/* mkdtemp under base (or $TMPDIR, /tmp); returns a malloc'd path */
static inline char *unit_tmpdir(const char *base)
{
	char buf[512];
	char *p;

	if (!base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(buf, sizeof(buf), "%s/daxlease-unit-XXXXXX", base);
	p = mkdtemp(buf);
	return p ? strdup(p) : NULL;
}

/* Create dir/name of size bytes (content: byte i = i & 0xff) */
static inline char *unit_file(const char *dir, const char *name, size_t size)
{
	char buf[4096];
	size_t i, done = 0;
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)i;
	while (done < size) {
		size_t n = size - done < sizeof(buf) ? size - done : sizeof(buf);

		if (write(fd, buf, n) != (ssize_t)n)
			break;
		done += n;
	}
	close(fd);
	return path;
}

static inline void unit_rmtree(const char *dir)
{
	char cmd[600];

	if (!dir || strncmp(dir, "/", 1))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

#endif /* DAXLEASE_UNIT_H */
