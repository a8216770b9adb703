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
#include <unistd.h>

#include "daxlease.h"

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

/*
 * /sys/dev/char/M:m, opened once: the subsystem link and the device DAX
 * attributes are then read relative to it, instead of resolving the
 * device's deep sysfs path (platform, bus, region, device) for each.
 */
static int chr_sysfs_dir(unsigned int maj, unsigned int min)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u", maj, min);
	return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* subsystem -> .../class/dax or .../bus/dax */
static bool chr_is_dax(int dir)
{
	char link[PATH_MAX];
	const char *base;
	ssize_t n;

	n = readlinkat(dir, "subsystem", link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	return !strcmp(base, "dax");
}

/*
 * A device DAX attribute (decimal or 0x hex) in dir (/sys/dev/char/M:m):
 * NAME of the dax bus device itself (Linux 5.1 and later), or device/NAME
 * (the older dax class).  libpmem2 reads the same values through libndctl,
 * which builds a context of every NVDIMM bus, region and namespace on each
 * call: milliseconds per registration for two numbers.
 */
static int devdax_attr(struct dl_source *src, const char *path, int dir,
		       const char *name, uint64_t *val, char *used,
		       size_t used_len)
{
	static const char *const sub[] = { "", "device/" };
	char buf[32], rel[32], *end;
	unsigned int i;
	ssize_t n;
	int fd, err = ENOENT;

	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(rel, sizeof(rel), "%s%s", sub[i], name);
		snprintf(used, used_len, "/sys/dev/char/%u:%u/%s",
			 src->dev_major, src->dev_minor, rel);
		fd = openat(dir, rel, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = errno;
			continue;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		err = n < 0 ? errno : 0;
		close(fd);
		if (n < 0)
			break;
		buf[n] = 0;
		errno = 0;
		*val = strtoull(buf, &end, 0);
		if (errno || end == buf || (*end && *end != '\n'))
			return dl_err(EINVAL, "cannot parse %s (\"%.*s\") of %s",
				      used, (int)strcspn(buf, "\n"), buf,
				      path);
		return 0;
	}
	snprintf(used, used_len, "/sys/dev/char/%u:%u/%s", src->dev_major,
		 src->dev_minor, name);
	return dl_err(err, "cannot read the %s of device DAX %s from %s: %s",
		      name, path, used, strerror(err));
}

static int devdax_geometry(struct dl_source *src, const char *path, int dir)
{
	uint64_t size, align;

	if (devdax_attr(src, path, dir, "size", &size, src->align_attr,
			sizeof(src->align_attr)))
		return -1;
	if (devdax_attr(src, path, dir, "align", &align, src->align_attr,
			sizeof(src->align_attr)))
		return -1;
	if (!align || (align & (align - 1)) || align > SIZE_MAX)
		return dl_err(EINVAL, "%s: alignment %llu of %s is not a power of two",
			      src->align_attr, (unsigned long long)align,
			      path);
	src->size = size;
	src->align = align;
	return 0;
}

int dl_source_classify(int fd, const char *path, struct dl_source *src)
{
	struct statx stx;
	int dir, ret;

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
		    (stx.stx_attributes & STATX_ATTR_DAX))
			src->kind = IBV_DAX_FILE_FSDAX;
		else
			src->kind = IBV_DAX_FILE_PAGECACHE;
		return 0;
	case S_IFCHR:
		src->dev_major = stx.stx_rdev_major;
		src->dev_minor = stx.stx_rdev_minor;
		dir = chr_sysfs_dir(src->dev_major, src->dev_minor);
		if (dir >= 0 && chr_is_dax(dir)) {
			/* the same size and alignment libpmem2 would find */
			src->kind = IBV_DAX_FILE_DEVDAX;
			ret = devdax_geometry(src, path, dir);
			close(dir);
			return ret;
		}
		if (dir >= 0)
			close(dir);
		return dl_err(ENODEV,
			      "%s is character device %u:%u, not a device-DAX /dev/daxX.Y: pass a pmem file or a devdax device",
			      path, src->dev_major, src->dev_minor);
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

static bool wants_write(const struct ibv_dax_mr_init_attr *attr)
{
	return attr->access & DL_ACCESS_WRITE;
}

static int open_err(const struct ibv_dax_mr_init_attr *attr,
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
		holder = stat(attr->path, &st) ? 0 :
			 dl_lease_holder(st.st_dev, st.st_ino);
		if (holder)
			return dl_err(EAGAIN,
				      "cannot open %s: process %d holds a lease on it that this open would break; retry once it has released the lease",
				      attr->path, (int)holder);
		return dl_err(EAGAIN,
			      "cannot open %s: another process holds a lease on it that this open would break; retry once it is released",
			      attr->path);
	case ENXIO:
		return dl_err(ENODEV,
			      "cannot open %s: it is a socket or a device without a driver; only regular files and /dev/daxX.Y can back a DAX MR",
			      attr->path);
	case EROFS:
		return dl_err(EROFS,
			      "cannot open %s for writing: read-only file system; register with read-only access (no IBV_ACCESS_*_WRITE/ATOMIC, no IBV_DAX_MR_CREATE)",
			      attr->path);
	case EACCES:
		return dl_err(EACCES, "cannot open %s %s: permission denied",
			      attr->path,
			      src->writable ? "read-write" : "read-only");
	case EISDIR:
		return dl_err(EISDIR,
			      "%s is a directory: pass a file on a DAX mount or /dev/daxX.Y",
			      attr->path);
	case ELOOP:
		return dl_err(ELOOP,
			      "cannot open %s: too many levels of symbolic links",
			      attr->path);
	case ENOENT:
		return dl_err(ENOENT,
			      "%s does not exist (IBV_DAX_MR_CREATE creates it)",
			      attr->path);
	default:
		return dl_err(err, "cannot open %s: %s", attr->path,
			      strerror(err));
	}
}

static int open_path(const struct ibv_dax_mr_init_attr *attr,
		     struct dl_source *src)
{
	uint32_t flags = dl_init_attr_flags(attr);
	bool create = flags & IBV_DAX_MR_CREATE;
	int oflags, fd;

	src->writable = wants_write(attr) || create;
	/*
	 * O_NONBLOCK so that a fifo cannot hang the open and a lease break
	 * fails at once; it is cleared once the file is known to be a
	 * regular file or device.
	 */
	oflags = (src->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK;
	fd = open(attr->path, oflags);
	if (fd < 0 && errno == ENOENT && create) {
		/* O_EXCL: only a file made here is removed on failure */
		fd = open(attr->path, oflags | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			src->created = true;
		else if (errno == EEXIST)
			fd = open(attr->path, oflags);
	}
	if (fd < 0)
		return open_err(attr, src, errno);
	src->fd = fd;
	src->nonblock = true;
	return 0;
}

/*
 * A caller fd: reopen it through /proc/self/fd so this MR gets its own
 * open file description.  A lease belongs to the open file description
 * (struct file), so a dup() would share one lease between all MRs of the
 * fd and the first deregistration would drop it for the others.  Without
 * /proc, fall back to F_DUPFD_CLOEXEC.  The caller's fd is never closed.
 */
static int take_fd(const struct ibv_dax_mr_init_attr *attr,
		   struct dl_source *src)
{
	char proc[64];
	int fl, acc, fd;

	fl = fcntl(attr->fd, F_GETFL);
	if (fl < 0)
		return dl_err(EBADF, "fd %d is not an open file descriptor",
			      attr->fd);
#ifdef O_PATH
	if (fl & O_PATH)
		return dl_err(EBADF,
			      "fd %d is an O_PATH descriptor: open the file for reading or writing",
			      attr->fd);
#endif
	acc = fl & O_ACCMODE;
	if (acc == O_WRONLY)
		return dl_err(EACCES,
			      "fd %d is write-only: mapping needs read access, open it O_RDWR or O_RDONLY",
			      attr->fd);
	if (wants_write(attr) && acc != O_RDWR)
		return dl_err(EACCES,
			      "fd %d is read-only but access asks for write (IBV_ACCESS_LOCAL_WRITE/REMOTE_WRITE/REMOTE_ATOMIC): open it O_RDWR or drop the write access",
			      attr->fd);
	src->writable = acc == O_RDWR;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", attr->fd);
	fd = open(proc, acc | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0)
		src->nonblock = true;
	else
		fd = fcntl(attr->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return dl_err(errno, "cannot duplicate fd %d: %s", attr->fd,
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

static int check_range(const struct ibv_dax_mr_init_attr *attr,
		       struct dl_source *src)
{
	uint64_t end = attr->offset + attr->length;	/* validated */
	uint32_t flags = dl_init_attr_flags(attr);
	size_t a = src->align ? src->align : 1;
	uint64_t map_end = (end + a - 1) / a * a;
	int ret;

	if (src->kind == IBV_DAX_FILE_DEVDAX) {
		/* libpmem2 and the device fault in align-sized pages */
		if (attr->offset % a)
			return dl_err(EINVAL,
				      "offset 0x%llx of device DAX %s is not aligned to the device alignment of %zu bytes (see %s)",
				      (unsigned long long)attr->offset,
				      src->path, a, src->align_attr);
		if (map_end > src->size)
			return dl_err(ERANGE,
				      "range [0x%llx, 0x%llx) rounded to the %zu-byte alignment passes the end of %s (%llu bytes)",
				      (unsigned long long)attr->offset,
				      (unsigned long long)end, a, src->path,
				      (unsigned long long)src->size);
		return 0;
	}

	if (map_end <= src->size)
		return 0;
	if (!(flags & IBV_DAX_MR_CREATE))
		return dl_err(ERANGE,
			      "range [0x%llx, 0x%llx) passes the end of %s (%llu bytes, mapped in %zu-byte units): extend the file or set IBV_DAX_MR_CREATE",
			      (unsigned long long)attr->offset,
			      (unsigned long long)end, src->path,
			      (unsigned long long)src->size, a);
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

int dl_source_open(const struct ibv_dax_mr_init_attr *attr,
		   struct dl_source *src)
{
	int ret;

	memset(src, 0, sizeof(*src));
	src->fd = -1;

	if (attr->path)
		ret = open_path(attr, src);
	else
		ret = take_fd(attr, src);
	if (ret)
		return ret;

	src->path = attr->path ? strdup(attr->path) : fd_path(src->fd);
	if (!src->path) {
		dl_err(ENOMEM, "out of memory");
		goto err_close;
	}
	if (dl_source_classify(src->fd, src->path, src))
		goto err_close;

	/*
	 * Our own open file description, opened O_NONBLOCK and with no other
	 * status flag: clear it.  A description shared with the caller (the
	 * F_DUPFD_CLOEXEC fallback of take_fd()) keeps the caller's flags.
	 */
	if (src->nonblock)
		fcntl(src->fd, F_SETFL, 0);

	/* pmem2_source_alignment() of a regular file: the page size */
	if (src->kind != IBV_DAX_FILE_DEVDAX)
		src->align = (size_t)sysconf(_SC_PAGESIZE);
	if (check_range(attr, src))
		goto err_close;
	return 0;

err_close:
	{
		struct dl_err_save s;

		dl_err_save(&s);
		dl_source_undo(src);
		close(src->fd);
		free(src->path);
		src->fd = -1;
		src->path = NULL;
		dl_err_restore(&s);
	}
	return -1;
}

void dl_source_close(struct dl_source *src)
{
	if (src->fd >= 0)
		close(src->fd);
	free(src->path);
	src->fd = -1;
	src->path = NULL;
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
