/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The file behind a DAX MR: opened or taken, classified, its range fitted.
 */
#ifndef DAXLEASE_SOURCE_H
#define DAXLEASE_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs_dax.h>

#include "devdax.h"
#include "request.h"

struct dl_source {
	int fd;				/* ours, O_CLOEXEC */
	enum ibv_dax_file_kind kind;
	char *path;			/* for messages and query; malloc'd */
	bool writable;			/* opened for write */
	bool no_writeback;		/* page cache on tmpfs, hugetlbfs */
	uint64_t size;			/* file or device size */
	size_t align;			/* mapping alignment */
	dev_t dev;			/* st_dev of the file */
	ino_t ino;
	struct dl_devdax devdax;	/* kind IBV_DAX_FILE_DEVDAX */
	bool created;			/* IBV_DAX_MR_CREATE made the file */
	bool extended;			/* ... or extended it */
	uint64_t orig_size;		/* size before the extension */
	/* IBV_DAX_MR_INIT_ADDR: the caller's mapping of the range */
	dev_t mapped_dev;		/* the file it maps */
	ino_t mapped_ino;
	bool mapped_sync;		/* mapped MAP_SYNC */
	char *mapped_path;		/* as /proc/self/smaps shows it */
};

/*
 * Open (req->path) or take (req->fd) the source, or with req->addr find
 * the file mapped there (its path: req->path, malloc'd, when
 * req->find_file; see open_mapped()), classify it, align the
 * request's mapping to it and fit the range: with IBV_DAX_MR_CREATE
 * create or extend the file, else check it.  errno on failure:
 *   ENOENT, ELOOP, EACCES, EROFS, ...  from open(2), passed through
 *   EBADF       caller fd not open, or O_PATH
 *   EACCES      write access requested on a read-only fd (or O_WRONLY fd)
 *   EISDIR      a directory
 *   ENODEV      fifo, socket, block device, char device other than dax
 *   ERANGE      range past end of file or device (without CREATE)
 *   EINVAL      devdax offset not aligned to the device alignment
 * and with req->addr (vma.h): EFAULT nothing mapped at addr; EINVAL the
 * range passes the end of that mapping, a private or anonymous mapping,
 * another file than the one named, an offset that is not the mapping's;
 * EACCES write access to a read-only mapping; ENOENT the mapped file was
 * deleted; ESTALE another file is at the mapped file's path now.
 */
int dl_source_open(struct dl_request *req, struct dl_source *src);
void dl_source_close(struct dl_source *src);
/*
 * Undo what IBV_DAX_MR_CREATE did to the file (unlink a file it created,
 * shrink one it extended) when the registration fails later on.
 */
void dl_source_undo(struct dl_source *src);
/*
 * Classify an open fd, with size and (device DAX) alignment, no range
 * checks; 0 or -1 with errno/message.
 */
int dl_source_classify(int fd, const char *path, struct dl_source *src);
const char *dl_kind_name(enum ibv_dax_file_kind kind);

#endif /* DAXLEASE_SOURCE_H */
