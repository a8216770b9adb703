// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The file behind a DAX MR: open or take it, tell FS-DAX, device DAX and
 * page-cache files apart, and check the requested range against it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "errmsg.h"
#include "lease.h"
#include "source.h"
#include "vma.h"

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

const char *dl_kind_name(enum ibv_dax_file_kind kind)
{
	switch (kind) {
	case IBV_DAX_FILE_FSDAX:
		return "fsdax";
	case IBV_DAX_FILE_DEVDAX:
		return "devdax";
	case IBV_DAX_FILE_PAGECACHE:
		return "pagecache";
	default:
		return "unknown";
	}
}

int dl_source_classify(int fd, const char *path, struct dl_source *src)
{
	unsigned int maj, min;
	struct statfs sfs;
	struct statx stx;
	int ret;

	/*
	 * One statx() gives the type, identity, size and the DAX state
	 * (glibc emulates it with fstatat() on kernels before 4.11, with no
	 * attributes: no FS-DAX either).
	 */
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx))
		return dl_err(errno, "statx of %s failed: %s", path,
			      strerror(errno));
	src->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	src->ino = stx.stx_ino;
	src->size = stx.stx_size;

	switch (stx.stx_mode & S_IFMT) {
	case S_IFREG:
		/*
		 * STATX_ATTR_DAX is the per-inode DAX state (ext4 -o dax,
		 * xfs dax=always/inode flag); a kernel or fs that does not
		 * report it has no FS-DAX for this file either.
		 */
		if ((stx.stx_attributes_mask & STATX_ATTR_DAX) &&
		    (stx.stx_attributes & STATX_ATTR_DAX)) {
			src->kind = IBV_DAX_FILE_FSDAX;
			return 0;
		}
		src->kind = IBV_DAX_FILE_PAGECACHE;
		/*
		 * shmem and hugetlbfs pages need no writeback, and the
		 * kernel pins them for writing on every version; any other
		 * file system (or one fstatfs cannot name) is taken as
		 * needing it.
		 */
		src->no_writeback = !fstatfs(fd, &sfs) &&
				    ((uint32_t)sfs.f_type == TMPFS_MAGIC ||
				     (uint32_t)sfs.f_type == HUGETLBFS_MAGIC);
		return 0;
	case S_IFCHR:
		maj = stx.stx_rdev_major;
		min = stx.stx_rdev_minor;
		/* the same size and alignment libpmem2 would find */
		ret = dl_devdax_probe(maj, min, path, &src->devdax);
		if (ret < 0)
			return -1;
		if (ret) {
			src->kind = IBV_DAX_FILE_DEVDAX;
			src->size = src->devdax.size;
			src->align = src->devdax.align;
			return 0;
		}
		return dl_err(ENODEV,
			      "%s is character device %u:%u, not a device-DAX /dev/daxX.Y: pass a pmem file or a devdax device",
			      path, maj, min);
	case S_IFDIR:
		return dl_err(EISDIR,
			      "%s is a directory: pass a file on a DAX mount or /dev/daxX.Y",
			      path);
	case S_IFBLK:
		return dl_err(ENODEV,
			      "%s is a block device: put a DAX file system on it (mount -o dax) and register a file, or use devdax mode",
			      path);
	case S_IFIFO:
		return dl_err(ENODEV,
			      "%s is a fifo: only regular files and /dev/daxX.Y can back a DAX MR",
			      path);
	case S_IFSOCK:
		return dl_err(ENODEV,
			      "%s is a socket: only regular files and /dev/daxX.Y can back a DAX MR",
			      path);
	default:
		return dl_err(ENODEV, "%s is not a regular file or dax device",
			      path);
	}
}

static int open_err(const struct dl_request *req,
		    const struct dl_source *src, int err)
{
	struct stat st;
	pid_t holder;

	switch (err) {
	case EWOULDBLOCK:
		/*
		 * O_NONBLOCK open of a file with another process's lease
		 * that the open would break (write lease; read lease and
		 * O_RDWR): refused at once instead of a lease-break-time
		 * wait.
		 */
		holder = stat(req->path, &st) ? 0 :
			 dl_lease_holder(st.st_dev, st.st_ino);
		if (holder)
			return dl_err(EAGAIN,
				      "cannot open %s: process %d holds a lease on it that this open would break; retry once it has released the lease",
				      req->path, (int)holder);
		return dl_err(EAGAIN,
			      "cannot open %s: another process holds a lease on it that this open would break; retry once it is released",
			      req->path);
	case ENXIO:
		return dl_err(ENODEV,
			      "cannot open %s: it is a socket or a device without a driver; only regular files and /dev/daxX.Y can back a DAX MR",
			      req->path);
	case EROFS:
		return dl_err(EROFS,
			      "cannot open %s for writing: read-only file system; register with read-only access (no IBV_ACCESS_*_WRITE/ATOMIC, no IBV_DAX_MR_CREATE)",
			      req->path);
	case EACCES:
		return dl_err(EACCES, "cannot open %s %s: permission denied",
			      req->path,
			      src->writable ? "read-write" : "read-only");
	case EISDIR:
		return dl_err(EISDIR,
			      "%s is a directory: pass a file on a DAX mount or /dev/daxX.Y",
			      req->path);
	case ELOOP:
		return dl_err(ELOOP,
			      "cannot open %s: too many levels of symbolic links",
			      req->path);
	case ENOENT:
		return dl_err(ENOENT,
			      "%s does not exist (IBV_DAX_MR_CREATE creates it)",
			      req->path);
	default:
		return dl_err(err, "cannot open %s: %s", req->path,
			      strerror(err));
	}
}

static int open_path(const struct dl_request *req, struct dl_source *src,
		     bool *nonblock)
{
	bool create = req->flags & IBV_DAX_MR_CREATE;
	int oflags, fd;

	src->writable = req->write || create;
	/*
	 * O_NONBLOCK so that a fifo cannot hang the open and a lease break
	 * fails at once; it is cleared once the file is known to be a
	 * regular file or device.
	 */
	oflags = (src->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK;
	fd = open(req->path, oflags);
	if (fd < 0 && errno == ENOENT && create) {
		/* O_EXCL: only a file made here is removed on failure */
		fd = open(req->path, oflags | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			src->created = true;
		else if (errno == EEXIST)
			fd = open(req->path, oflags);
	}
	if (fd < 0)
		return open_err(req, src, errno);
	src->fd = fd;
	*nonblock = true;
	return 0;
}

/*
 * A caller fd: reopen it through /proc/self/fd so this MR gets its own
 * open file description.  A lease belongs to the open file description
 * (struct file), so a dup() would share one lease between all MRs of the
 * fd and the first deregistration would drop it for the others.  Without
 * /proc, fall back to F_DUPFD_CLOEXEC.  The caller's fd is never closed.
 */
static int take_fd(const struct dl_request *req, struct dl_source *src,
		   bool *nonblock)
{
	char proc[64];
	int fl, acc, fd;

	fl = fcntl(req->fd, F_GETFL);
	if (fl < 0)
		return dl_err(EBADF, "fd %d is not an open file descriptor",
			      req->fd);
#ifdef O_PATH
	if (fl & O_PATH)
		return dl_err(EBADF,
			      "fd %d is an O_PATH descriptor: open the file for reading or writing",
			      req->fd);
#endif
	acc = fl & O_ACCMODE;
	if (acc == O_WRONLY)
		return dl_err(EACCES,
			      "fd %d is write-only: mapping needs read access, open it O_RDWR or O_RDONLY",
			      req->fd);
	if (req->write && acc != O_RDWR)
		return dl_err(EACCES,
			      "fd %d is read-only but access asks for write (IBV_ACCESS_LOCAL_WRITE/REMOTE_WRITE/REMOTE_ATOMIC): open it O_RDWR or drop the write access",
			      req->fd);
	src->writable = acc == O_RDWR;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", req->fd);
	fd = open(proc, acc | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0)
		*nonblock = true;
	else
		fd = fcntl(req->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return dl_err(errno, "cannot duplicate fd %d: %s", req->fd,
			      strerror(errno));
	src->fd = fd;
	return 0;
}

static char *fd_path(int fd)
{
	char proc[64], link[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, link, sizeof(link) - 1);
	if (n < 0)
		snprintf(link, sizeof(link), "fd %d", fd);
	else
		link[n] = 0;
	return strdup(link);
}

/*
 * Fit [map_start, map_end) of the request to the source: a device must
 * hold it; a file must too, unless IBV_DAX_MR_CREATE asks to extend it.
 */
static int fit_or_extend_range(const struct dl_request *req,
			       struct dl_source *src)
{
	uint64_t end = req->offset + req->length;	/* validated */
	uint64_t map_end = req->map_end;
	int ret;

	if (src->kind == IBV_DAX_FILE_DEVDAX) {
		/*
		 * the device faults in align-sized pages: what the library
		 * maps must start at one (the caller's mapping did already)
		 */
		if (!req->addr && req->offset % src->align)
			return dl_err(EINVAL,
				      "offset 0x%llx of device DAX %s is not aligned to the device alignment of %zu bytes (see %s)",
				      (unsigned long long)req->offset,
				      src->path, src->align,
				      src->devdax.align_attr);
		if (map_end > src->size)
			return dl_err(ERANGE,
				      "range [0x%llx, 0x%llx) rounded to the %zu-byte alignment passes the end of %s (%llu bytes)",
				      (unsigned long long)req->offset,
				      (unsigned long long)end, src->align,
				      src->path,
				      (unsigned long long)src->size);
		return 0;
	}

	if (map_end <= src->size)
		return 0;
	if (!(req->flags & IBV_DAX_MR_CREATE))
		return dl_err(ERANGE,
			      "range [0x%llx, 0x%llx) passes the end of %s (%llu bytes, mapped in %zu-byte units): extend the file or set IBV_DAX_MR_CREATE",
			      (unsigned long long)req->offset,
			      (unsigned long long)end, src->path,
			      (unsigned long long)src->size, src->align);
	if (map_end > (uint64_t)INT64_MAX)
		return dl_err(EOVERFLOW, "range end overflows a file offset");
	/*
	 * Allocate the blocks (DAX faults must not need the allocator
	 * later).  fallocate() rather than posix_fallocate(): glibc's
	 * fallback would write zeros for hours on a huge range.
	 */
	src->orig_size = src->size;
	if (fallocate(src->fd, 0, (off_t)src->size,
		      (off_t)(map_end - src->size))) {
		ret = errno;
		if (ret == EOPNOTSUPP && ftruncate(src->fd, (off_t)map_end) == 0)
			goto extended;
		/* a partial allocation may have moved EOF */
		if (ftruncate(src->fd, (off_t)src->orig_size))
			ret = ret ? ret : errno;
		return dl_err(ret, "cannot extend %s to %llu bytes: %s",
			      src->path, (unsigned long long)map_end,
			      strerror(ret));
	}
extended:
	src->extended = true;
	src->size = map_end;
	return 0;
}

/* dl_vma_find() on /proc/self/smaps: 0, or -1 with errno and message */
static int vma_lookup(const void *addr, size_t len, struct dl_vma *v)
{
	char msg[DL_ERRMSG_MAX];
	FILE *f;
	int ret;

	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return dl_err(errno == ENOENT ? ENOSYS : errno,
			      "cannot open /proc/self/smaps to find the mapping at %p: %s (is /proc mounted?)",
			      addr, strerror(errno));
	ret = dl_vma_find(f, (uintptr_t)addr, len, v, msg, sizeof(msg));
	fclose(f);
	if (ret)
		return dl_err(ret, "%s", msg);
	return 0;
}

/*
 * IBV_DAX_MR_INIT_ADDR: the file mapped at req->addr, found in
 * /proc/self/smaps, opened by its path (or the caller's path or fd) and
 * checked to be the very file mapped there; req->offset becomes (or must
 * be) the file offset of addr.
 */
static int open_mapped(struct dl_request *req, struct dl_source *src,
		       bool *nonblock)
{
	char msg[DL_ERRMSG_MAX], deleted[PATH_MAX + 16];
	const char *path;
	struct dl_vma vma;
	uint64_t off;
	int ret;

	if (vma_lookup(req->addr, req->length, &vma))
		return -1;
	path = vma.path;
	/* a file named "... (deleted)" that is still there */
	if (vma.deleted && req->find_file) {
		snprintf(deleted, sizeof(deleted), "%s (deleted)", vma.path);
		req->path = deleted;
		if (!open_path(req, src, nonblock)) {
			struct stat st;

			if (!fstat(src->fd, &st) && st.st_ino == vma.ino &&
			    st.st_dev == makedev(vma.major, vma.minor)) {
				vma.deleted = false;
				path = deleted;
			}
			close(src->fd);
			src->fd = -1;
		}
		req->path = NULL;
	}
	ret = dl_vma_check(&vma, req->write, msg, sizeof(msg));
	if (ret)
		return dl_err(ret, "%s", msg);

	off = vma.offset + ((uintptr_t)req->addr - vma.start);
	if (req->find_file) {
		req->offset = off;
		req->path = strdup(path);
		if (!req->path)
			return dl_err(ENOMEM, "out of memory");
		ret = open_path(req, src, nonblock);
		if (ret) {
			free((char *)req->path);
			req->path = NULL;
			return ret;
		}
	} else {
		if (req->offset != off)
			return dl_err(EINVAL,
				      "addr %p maps file offset 0x%llx of %s, not the offset 0x%llx given: pass the offset the mapping has there",
				      req->addr, (unsigned long long)off, path,
				      (unsigned long long)req->offset);
		ret = req->path ? open_path(req, src, nonblock) :
				  take_fd(req, src, nonblock);
		if (ret)
			return ret;
	}
	src->mapped_dev = makedev(vma.major, vma.minor);
	src->mapped_ino = vma.ino;
	src->mapped_sync = vma.sync;
	src->mapped_path = strdup(path);
	if (!src->mapped_path)
		return dl_err(ENOMEM, "out of memory");
	return 0;
}

/* the file opened is the one mapped at addr (open_mapped()) */
static int check_mapped(const struct dl_request *req,
			const struct dl_source *src)
{
	if (src->dev == src->mapped_dev && src->ino == src->mapped_ino)
		return 0;
	if (req->find_file)
		return dl_err(ESTALE,
			      "%s is no longer the file mapped at %p (device %u:%u inode %llu there, %u:%u inode %llu at the path): it was replaced or renamed after it was mapped",
			      src->path, req->addr, major(src->mapped_dev),
			      minor(src->mapped_dev),
			      (unsigned long long)src->mapped_ino,
			      major(src->dev), minor(src->dev),
			      (unsigned long long)src->ino);
	return dl_err(EINVAL,
		      "%s is not the file mapped at %p, which is %s: name the mapped file, or pass path NULL and fd -1",
		      src->path, req->addr, src->mapped_path);
}

int dl_source_open(struct dl_request *req, struct dl_source *src)
{
	bool nonblock = false;
	int ret;

	memset(src, 0, sizeof(*src));
	src->fd = -1;

	if (req->addr)
		ret = open_mapped(req, src, &nonblock);
	else if (req->path)
		ret = open_path(req, src, &nonblock);
	else
		ret = take_fd(req, src, &nonblock);
	if (ret)
		goto err_close;

	src->path = req->path ? strdup(req->path) : fd_path(src->fd);
	if (!src->path) {
		dl_err(ENOMEM, "out of memory");
		goto err_close;
	}
	if (dl_source_classify(src->fd, src->path, src))
		goto err_close;
	if (req->addr && check_mapped(req, src))
		goto err_close;

	/*
	 * Our own open file description, opened O_NONBLOCK and with no other
	 * status flag: clear it.  A description shared with the caller (the
	 * F_DUPFD_CLOEXEC fallback of take_fd()) keeps the caller's flags.
	 */
	if (nonblock)
		fcntl(src->fd, F_SETFL, 0);

	/* pmem2_source_alignment() of a regular file: the page size */
	if (src->kind != IBV_DAX_FILE_DEVDAX)
		src->align = (size_t)sysconf(_SC_PAGESIZE);
	dl_request_align(req, src->align);
	if (fit_or_extend_range(req, src))
		goto err_close;
	if (req->find_file) {
		free((char *)req->path);
		req->path = NULL;
	}
	return 0;

err_close:
	{
		struct dl_err_save s;

		dl_err_save(&s);
		dl_source_undo(src);
		dl_source_close(src);
		if (req->find_file) {
			free((char *)req->path);
			req->path = NULL;
		}
		dl_err_restore(&s);
	}
	return -1;
}

void dl_source_close(struct dl_source *src)
{
	if (src->fd >= 0)
		close(src->fd);
	free(src->path);
	free(src->mapped_path);
	src->fd = -1;
	src->path = NULL;
	src->mapped_path = NULL;
}

void dl_source_undo(struct dl_source *src)
{
	struct stat st;

	if (src->created && src->path && stat(src->path, &st) == 0 &&
	    st.st_dev == src->dev && st.st_ino == src->ino)
		unlink(src->path);
	else if (src->extended && src->fd >= 0 && fstat(src->fd, &st) == 0 &&
		 (uint64_t)st.st_size == src->size &&
		 ftruncate(src->fd, (off_t)src->orig_size) == 0)
		src->size = src->orig_size;
	src->created = src->extended = false;
}
