/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The caller's own mapping of a range (IBV_DAX_MR_INIT_ADDR): which file
 * it maps, where, and how, read from /proc/self/smaps.  Pure functions
 * only (no global state, no errmsg.h): the preload library uses them too.  A process that is
 * not privileged cannot open /proc/self/map_files, so the file is reopened
 * by the path the kernel shows and checked by device and inode number.
 */
#ifndef DAXLEASE_VMA_H
#define DAXLEASE_VMA_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct dl_vma {
	uintptr_t start, end;		/* [start, end) */
	char perms[5];			/* "rw-s" */
	uint64_t offset;		/* file offset of start */
	unsigned int major, minor;	/* device of the file's inode */
	uint64_t ino;			/* 0: no file */
	bool sync;			/* VmFlags "sf": MAP_SYNC */
	bool deleted;			/* path ended in " (deleted)" */
	char path[PATH_MAX];		/* unescaped, without " (deleted)" */
};

/*
 * Pure: parse a header line of /proc/PID/maps or smaps ("start-end perms
 * offset maj:min inode [path]").  0, or EINVAL if the line is not one.
 */
int dl_vma_parse(const char *line, struct dl_vma *v);

/*
 * Pure on a stream: find in smaps (or maps) text the mapping that holds
 * addr, with its VmFlags.  0, or an errno value with a reason in msg:
 *   EFAULT   nothing is mapped at addr
 *   EINVAL   [addr, addr + len) passes the end of that mapping
 *   EIO      the text could not be parsed
 */
int dl_vma_find(FILE *f, uintptr_t addr, size_t len, struct dl_vma *v,
		char *msg, size_t msglen);

/*
 * Pure: may [addr, addr + len) of v be registered in place?  0, or:
 *   EINVAL   anonymous memory or a pseudo mapping ([heap], [anon:...]);
 *            a private mapping (its written pages are copies in DRAM)
 *   EACCES   write access asked of a mapping without PROT_WRITE
 *   ENOENT   the mapped file has been deleted
 */
int dl_vma_check(const struct dl_vma *v, bool write, char *msg,
		 size_t msglen);

#endif /* DAXLEASE_VMA_H */
