// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Host unit test (no RDMA device, no DAX): classification of the source
 * and the range and access checks.  A tmpfs file and a file on the host's
 * root file system are page-cache files; /dev/null, a directory, a fifo,
 * a socket and a symlink loop are refused with their documented errno.
 * Each case also goes through the public API with a pd that has no
 * context, which fails only after the source was opened and mapped, and
 * the test asserts that no fd or mapping is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <infiniband/verbs_dax.h>

#include "errmsg.h"
#include "request.h"
#include "source.h"
#include "unit.h"
#include "unit_source.h"

static struct ibv_pd fake_pd;

/* Internal open + classify; returns errno (0 ok) and the kind. */
static int classify(const struct ibv_dax_mr_init_attr *attr,
		    enum ibv_dax_file_kind *kind)
{
	struct dl_request req;
	struct dl_source src;

	*kind = IBV_DAX_FILE_UNKNOWN;
	if (unit_open_source(attr, &req, &src))
		return errno;
	*kind = src.kind;
	dl_source_close(&src);
	return 0;
}

/*
 * Public API with a context-less pd: a good source fails with EINVAL
 * ("context is NULL") after open and map; a bad one with its own errno.
 * Either way fds and mappings must be as before.
 */
static void api_case(const char *name, const struct ibv_dax_mr_init_attr *a,
		     int want)
{
	int fds = unit_count_fds(), maps = unit_count_maps();
	struct ibv_mr *mr;
	int err, fds2, maps2;

	errno = 0;
	mr = ibv_reg_dax_mr(&fake_pd, a);
	err = errno;
	fds2 = unit_count_fds();
	maps2 = unit_count_maps();
	dtest_check(name,
		    !mr && err == want && *ibv_dax_errmsg() && fds == fds2 &&
			    maps == maps2,
		    "want errno %d got %d (%s); fds %d->%d maps %d->%d", want,
		    err, ibv_dax_errmsg(), fds, fds2, maps, maps2);
}

static void kind_case(const char *name, const struct ibv_dax_mr_init_attr *a,
		      int want_err, enum ibv_dax_file_kind want_kind)
{
	enum ibv_dax_file_kind kind;
	char n[128];
	int err;

	err = classify(a, &kind);
	snprintf(n, sizeof(n), "classify/%s", name);
	dtest_check(n, err == want_err && (err || kind == want_kind),
		    "want errno %d kind %s, got errno %d kind %s (%s)",
		    want_err, dl_kind_name(want_kind), err,
		    dl_kind_name(kind), err ? ibv_dax_errmsg() : "");
	snprintf(n, sizeof(n), "api/%s", name);
	/* a good source gets as far as the missing context */
	api_case(n, a, want_err ? want_err : EINVAL);
}

int main(void)
{
	char *dir, *shmdir, *f_root, *f_shm, *fifo, *sock, *loop, *p;
	struct ibv_dax_mr_init_attr a = { .length = 4096 };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	enum ibv_dax_file_kind kind;
	struct stat st;
	int fd, sfd, err;

	dtest_begin("unit-source");
	/* the build tree lives on the host's root file system (ext4 here) */
	dir = unit_tmpdir(getenv("DAXLEASE_UNIT_TMP") ?
			  getenv("DAXLEASE_UNIT_TMP") : "/var/tmp");
	shmdir = unit_tmpdir("/dev/shm");
	if (!dir || !shmdir) {
		dtest_fail("setup", "cannot create scratch dirs: %s",
			   strerror(errno));
		return dtest_end();
	}
	f_root = unit_file(dir, "file", 65536);
	f_shm = unit_file(shmdir, "file", 65536);

	/* first use initializes libpmem2 and the sanitizers' state */
	a.path = f_shm;
	if (ibv_reg_dax_mr(&fake_pd, &a))
		dtest_fail("warm-up", "registered without a context");

	a.path = f_root;
	kind_case("rootfs-file", &a, 0, IBV_DAX_FILE_PAGECACHE);
	a.path = f_shm;
	kind_case("tmpfs-file", &a, 0, IBV_DAX_FILE_PAGECACHE);
	a.path = "/dev/null";
	kind_case("dev-null", &a, ENODEV, 0);
	a.path = dir;
	kind_case("directory", &a, EISDIR, 0);
	a.access = IBV_ACCESS_LOCAL_WRITE;
	kind_case("directory-rw", &a, EISDIR, 0);
	a.access = 0;

	if (asprintf(&fifo, "%s/fifo", dir) < 0 || mkfifo(fifo, 0600))
		dtest_fail("setup-fifo", "%s", strerror(errno));
	a.path = fifo;
	kind_case("fifo", &a, ENODEV, 0);

	if (asprintf(&sock, "%s/sock", dir) < 0)
		return 1;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	sfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sfd < 0 || bind(sfd, (struct sockaddr *)&sun, sizeof(sun)))
		dtest_fail("setup-socket", "%s", strerror(errno));
	a.path = sock;
	kind_case("socket", &a, ENODEV, 0);

	if (asprintf(&loop, "%s/loop", dir) < 0 || symlink(loop, loop))
		dtest_fail("setup-loop", "%s", strerror(errno));
	a.path = loop;
	kind_case("symlink-loop", &a, ELOOP, 0);
	a.path = "/nonexistent/daxlease";
	kind_case("missing", &a, ENOENT, 0);

	/* block device: the first one this process may open */
	{
		static const char *const blk[] = { "/dev/vda", "/dev/sda",
						   "/dev/nvme0n1",
						   "/dev/loop0" };
		const char *found = NULL;
		size_t i;

		for (i = 0; i < sizeof(blk) / sizeof(blk[0]) && !found; i++) {
			if (stat(blk[i], &st) || !S_ISBLK(st.st_mode))
				continue;
			fd = open(blk[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (fd >= 0) {
				close(fd);
				found = blk[i];
			}
		}
		if (found) {
			a.path = found;
			kind_case("block-device", &a, ENODEV, 0);
		} else {
			dtest_skip("classify/block-device",
				   "no block device this process may open");
		}
	}

	/* ranges */
	a.path = f_root;
	a.offset = 65536;
	a.length = 1;
	kind_case("past-eof", &a, ERANGE, 0);
	a.offset = 4096;
	a.length = 65536;
	kind_case("straddles-eof", &a, ERANGE, 0);
	a.offset = 100;			/* unaligned: mapped from 0 */
	a.length = 200;
	kind_case("unaligned-offset-file", &a, 0, IBV_DAX_FILE_PAGECACHE);

	/* CREATE: new file, and extension of a short one */
	if (asprintf(&p, "%s/created", dir) < 0)
		return 1;
	a.path = p;
	a.offset = 8192;
	a.length = 10000;
	a.comp_mask = IBV_DAX_MR_INIT_FLAGS;
	a.flags = IBV_DAX_MR_CREATE;
	err = classify(&a, &kind);
	dtest_check("create/new-file",
		    !err && stat(p, &st) == 0 && st.st_size >= 18192 &&
			    st.st_blocks * 512 >= 18192 - 8192,
		    "errno %d size %lld blocks %lld (%s)", err,
		    (long long)st.st_size, (long long)st.st_blocks,
		    err ? ibv_dax_errmsg() : "");
	a.path = f_shm;
	a.offset = 65536;
	a.length = 4096;
	err = classify(&a, &kind);
	dtest_check("create/extend",
		    !err && stat(f_shm, &st) == 0 && st.st_size == 69632,
		    "errno %d size %lld", err, (long long)st.st_size);
	/* a failed registration removes the file it created ... */
	free(p);
	if (asprintf(&p, "%s/created-then-failed", dir) < 0)
		return 1;
	a.path = p;
	a.offset = 0;
	a.length = 8192;
	api_case("create/undo-api", &a, EINVAL);
	dtest_check("create/undo-unlinked", stat(p, &st) && errno == ENOENT,
		    "%s left behind", p);
	/* ... and shrinks the file it extended */
	a.path = f_root;
	a.offset = 65536;
	api_case("extend/undo-api", &a, EINVAL);
	dtest_check("extend/undo-shrunk", !stat(f_root, &st) &&
		    st.st_size == 65536, "size %lld", (long long)st.st_size);
	/* a range no file system can hold fails and leaves nothing */
	a.path = p;
	a.offset = 0;
	a.length = 1ULL << 50;
	api_case("create/huge-efbig-or-enospc", &a,
		 ibv_reg_dax_mr(&fake_pd, &a) ? 0 : errno);
	dtest_check("create/huge-errno", errno == EFBIG || errno == ENOSPC,
		    "errno %d: %s", errno, ibv_dax_errmsg());
	dtest_check("create/huge-unlinked", stat(p, &st) && errno == ENOENT,
		    "%s left behind", p);
	a.comp_mask = 0;
	a.flags = 0;
	a.offset = 0;
	a.length = 4096;

	/* caller fd: read-only with write access, closed, O_PATH */
	fd = open(f_root, O_RDONLY | O_CLOEXEC);
	a.path = NULL;
	a.fd = fd;
	kind_case("fd-readonly-read", &a, 0, IBV_DAX_FILE_PAGECACHE);
	a.access = IBV_ACCESS_LOCAL_WRITE;
	kind_case("fd-readonly-write", &a, EACCES, 0);
	a.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	kind_case("fd-readonly-remote-write", &a, EACCES, 0);
	a.access = 0;
	dtest_check("fd-not-closed", fcntl(fd, F_GETFD) >= 0,
		    "the caller's fd was closed");
	close(fd);
	kind_case("fd-closed", &a, EBADF, 0);
	fd = open(f_root, O_PATH | O_CLOEXEC);
	a.fd = fd;
	kind_case("fd-o-path", &a, EBADF, 0);
	close(fd);
	fd = open(f_root, O_WRONLY | O_CLOEXEC);
	a.fd = fd;
	kind_case("fd-write-only", &a, EACCES, 0);
	close(fd);
	fd = open(f_shm, O_RDWR | O_CLOEXEC);
	a.fd = fd;
	a.access = IBV_ACCESS_LOCAL_WRITE;
	kind_case("fd-rdwr", &a, 0, IBV_DAX_FILE_PAGECACHE);
	a.access = 0;
	close(fd);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	a.fd = fd;
	kind_case("fd-dev-null", &a, ENODEV, 0);
	close(fd);
	a.fd = sfd;
	kind_case("fd-socket", &a, ENODEV, 0);
	close(sfd);

	/* read-only file opened by path with write access */
	a.path = f_root;
	a.fd = -1;
	chmod(f_root, 0400);
	if (geteuid() == 0) {
		dtest_skip("classify/readonly-mode-write",
			   "root bypasses file modes");
	} else {
		a.access = IBV_ACCESS_LOCAL_WRITE;
		kind_case("readonly-mode-write", &a, EACCES, 0);
		a.access = 0;
	}

	unit_rmtree(dir);
	unit_rmtree(shmdir);
	free(p);
	free(loop);
	free(sock);
	free(fifo);
	free(f_shm);
	free(f_root);
	free(shmdir);
	free(dir);
	return dtest_end();
}
