// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Helpers of the guest kernel suites; see kt.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_verbs.h>

#include "cmd_mr.h"
#include "kt.h"

struct kt_env kt_env;

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

static bool is_mounted_dir(const char *dir)
{
	struct stat st, up;
	char parent[4096];

	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return false;
	snprintf(parent, sizeof(parent), "%s/..", dir);
	if (stat(parent, &up))
		return false;
	return st.st_dev != up.st_dev;
}

void kt_env_init(void)
{
	static const struct {
		const char *name, *dir_var, *dir, *dev_var, *dev;
	} fss[] = {
		{ "ext4", "DAXLEASE_EXT4", "/mnt/ext4", "DAXLEASE_EXT4_DEV",
		  "/dev/pmem0" },
		{ "xfs", "DAXLEASE_XFS", "/mnt/xfs", "DAXLEASE_XFS_DEV",
		  "/dev/pmem1" },
	};
	size_t i;

	memset(&kt_env, 0, sizeof(kt_env));
	for (i = 0; i < sizeof(fss) / sizeof(fss[0]); i++) {
		struct kt_fs *fs = &kt_env.fs[kt_env.nfs];

		fs->name = fss[i].name;
		fs->dir = env_or(fss[i].dir_var, fss[i].dir);
		fs->dev = env_or(fss[i].dev_var, fss[i].dev);
		if (is_mounted_dir(fs->dir))
			kt_env.nfs++;
		else
			printf("note: %s (%s) is not a mount point: its tests are skipped\n",
			       fs->dir, fs->name);
	}
	kt_env.devdax = env_or("DAXLEASE_DEVDAX", NULL);
	kt_env.rdma_dev = env_or("DAXLEASE_RDMA_DEV", "rxe0");
	kt_env.gid_index = atoi(env_or("DAXLEASE_GID_INDEX", "0"));
	kt_env.patched = !strcmp(env_or("DAXLEASE_KERNEL", "stock"),
				 "patched");
}

int kt_dev_open(struct kt_dev *d, bool with_loop)
{
	struct ibv_device **list;
	int i, n, err = ENODEV;

	memset(d, 0, sizeof(*d));
	list = ibv_get_device_list(&n);
	if (!list)
		return errno ? errno : ENODEV;
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), kt_env.rdma_dev))
			continue;
		d->ctx = ibv_open_device(list[i]);
		err = d->ctx ? 0 : (errno ? errno : EIO);
		break;
	}
	ibv_free_device_list(list);
	if (err)
		return err;
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		err = errno ? errno : EIO;
		ibv_close_device(d->ctx);
		d->ctx = NULL;
		return err;
	}
	if (with_loop) {
		d->loop = rcloop_create(d->ctx, d->pd, kt_env.gid_index);
		if (!d->loop)
			snprintf(d->loop_err, sizeof(d->loop_err),
				 "rcloop_create: %s", rcloop_errmsg());
	}
	return 0;
}

void kt_dev_close(struct kt_dev *d)
{
	if (d->loop)
		rcloop_destroy(d->loop);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	memset(d, 0, sizeof(*d));
}

void kt_pattern(void *buf, size_t len, uint64_t off, uint8_t seed)
{
	uint8_t *p = buf;
	uint64_t w;
	size_t i = 0;

	/* word-aligned middle part fast, the ragged ends byte by byte */
	for (; i < len && ((off + i) & 7); i++) {
		w = kt_pattern_word((off + i) >> 3, seed);
		p[i] = (uint8_t)(w >> (8 * ((off + i) & 7)));
	}
	for (; i + 8 <= len; i += 8) {
		w = kt_pattern_word((off + i) >> 3, seed);
		memcpy(p + i, &w, 8);
	}
	for (; i < len; i++) {
		w = kt_pattern_word((off + i) >> 3, seed);
		p[i] = (uint8_t)(w >> (8 * ((off + i) & 7)));
	}
}

const char *kt_path(const struct kt_fs *fs, const char *tag)
{
	static char path[4][4096];
	static int slot;

	slot = (slot + 1) % 4;
	snprintf(path[slot], sizeof(path[slot]), "%s/kt-%s.dat", fs->dir, tag);
	return path[slot];
}

int kt_fill_pattern(int fd, size_t size, uint8_t seed)
{
	size_t chunk = KT_MIB, done;
	uint8_t *buf;
	int err = 0;

	buf = malloc(chunk);
	if (!buf)
		return ENOMEM;
	for (done = 0; done < size && !err; done += chunk) {
		size_t n = size - done < chunk ? size - done : chunk;

		kt_pattern(buf, n, done, seed);
		if (pwrite(fd, buf, n, done) != (ssize_t)n)
			err = errno ? errno : EIO;
	}
	if (!err && fsync(fd))
		err = errno;
	free(buf);
	return err;
}

int kt_make_file(const char *path, size_t size, uint8_t seed)
{
	int fd, err;

	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	err = kt_fill_pattern(fd, size, seed);
	close(fd);
	return err;
}

int kt_write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = write(fd, s, len);
	close(fd);
	if (n < 0)
		return errno;
	return (size_t)n == len ? 0 : EIO;
}

int kt_read_str(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	return 0;
}

int kt_verify_file(const char *path, off_t off, const void *expect,
		   size_t len, char *why, size_t whylen)
{
	const uint8_t *e = expect;
	uint8_t *got;
	ssize_t n;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "open %s: %s", path, strerror(errno));
		return errno;
	}
	got = malloc(len);
	if (!got) {
		close(fd);
		snprintf(why, whylen, "out of memory");
		return ENOMEM;
	}
	n = pread(fd, got, len, off);
	close(fd);
	if (n != (ssize_t)len) {
		snprintf(why, whylen, "pread %s at %lld: %zd of %zu bytes (%s)",
			 path, (long long)off, n, len,
			 n < 0 ? strerror(errno) : "short");
		free(got);
		return EIO;
	}
	for (i = 0; i < len && got[i] == e[i]; i++)
		;
	free(got);
	if (i < len) {
		snprintf(why, whylen,
			 "file %s differs at offset %lld (byte %zu of %zu)",
			 path, (long long)(off + i), i, len);
		return EILSEQ;
	}
	snprintf(why, whylen, "%zu bytes at %lld read back through a new fd",
		 len, (long long)off);
	return 0;
}

int kt_verify_pattern(const char *path, off_t off, size_t len, uint8_t seed,
		      char *why, size_t whylen)
{
	uint8_t *e = malloc(len);
	int ret;

	if (!e) {
		snprintf(why, whylen, "out of memory");
		return ENOMEM;
	}
	kt_pattern(e, len, off, seed);
	ret = kt_verify_file(path, off, e, len, why, whylen);
	free(e);
	return ret;
}

long long kt_file_size(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	return st.st_size;
}

int kt_reg_mr_ioctl(struct kt_dev *d, void *addr, size_t len,
		    unsigned int access, int dax_fd, uint64_t dax_off,
		    struct ibv_mr *mr)
{
	/* the suites run on rxe only */
	return dl_cmd_reg_dax_mr(d->pd, RDMA_DRIVER_RXE, addr, len,
				 (uintptr_t)addr, access, dax_fd, dax_off, mr);
}

int kt_destroy_mr(struct kt_dev *d, uint32_t handle)
{
	return dl_cmd_destroy_mr(d->ctx->cmd_fd, RDMA_DRIVER_RXE, handle);
}

int kt_pin(struct kt_dev *d, const char *path, off_t off, size_t len,
	   int lease, enum kt_pin_how how, struct kt_pin *p,
	   const char **step)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->dev = d;
	p->how = how;
	p->fd = -1;
	p->addr = MAP_FAILED;
	p->off = off;
	p->len = len;

	*step = "open";
	p->fd = open(path, O_RDWR | O_CLOEXEC);
	if (p->fd < 0)
		goto err;
	*step = "lease";
	if (lease && fcntl(p->fd, F_SETLEASE, lease))
		goto err;
	*step = "mmap";
	p->addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd,
		       off);
	if (p->addr == MAP_FAILED)
		goto err;
	*step = "reg_mr";
	p->iova = (uintptr_t)p->addr;
	if (how == KT_PIN_LEGACY) {
		p->mr = ibv_reg_mr(d->pd, p->addr, len, KT_ACCESS);
		if (!p->mr)
			goto err;
		p->rkey = p->mr->rkey;
	} else {
		err = kt_reg_mr_ioctl(d, p->addr, len, KT_ACCESS, p->fd, off,
				      &p->raw);
		if (err) {
			errno = err;
			goto err;
		}
		p->rkey = p->raw.rkey;
	}
	p->registered = true;
	*step = NULL;
	return 0;
err:
	err = errno ? errno : EIO;
	kt_unpin(p);
	return err;
}

int kt_pin_dereg(struct kt_pin *p)
{
	int ret = 0;

	if (!p->registered)
		return 0;
	if (p->how == KT_PIN_LEGACY)
		ret = ibv_dereg_mr(p->mr);
	else
		ret = kt_destroy_mr(p->dev, p->raw.handle);
	if (!ret) {
		p->registered = false;
		p->mr = NULL;
	}
	return ret;
}

void kt_unpin(struct kt_pin *p)
{
	kt_pin_dereg(p);
	if (p->addr != MAP_FAILED && p->addr)
		munmap(p->addr, p->len);
	p->addr = MAP_FAILED;
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

int kt_rdma_write_pattern(struct kt_dev *d, uint64_t remote_addr,
			  uint32_t rkey, size_t len, uint64_t foff,
			  uint8_t seed, char *why, size_t whylen)
{
	char first[256] = "";
	struct ibv_mr *lmr;
	uint64_t mark;
	uint8_t *src;
	int ret, n;

	if (!d->loop) {
		snprintf(why, whylen, "no RC loopback: %s", d->loop_err);
		return ENODEV;
	}
	src = malloc(len);
	if (!src) {
		snprintf(why, whylen, "out of memory");
		return ENOMEM;
	}
	kt_pattern(src, len, foff, seed);
	lmr = ibv_reg_mr(d->pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	if (!lmr) {
		ret = errno ? errno : EIO;
		snprintf(why, whylen, "ibv_reg_mr of the source buffer: %s",
			 strerror(ret));
		free(src);
		return ret;
	}
	mark = kt_kmsg_mark();
	ret = rcloop_write(d->loop, src, lmr->lkey, remote_addr, rkey, len);
	/* a KASAN or WARN report while rxe copied counts as a failure */
	n = ret ? 0 : kt_kmsg_scan(mark, first, sizeof(first));
	if (n > 0) {
		snprintf(why, whylen,
			 "the RDMA WRITE completed but the kernel logged %d report line(s): %s",
			 n, first);
		kt_kmsg_dump(mark, 40);
		ret = EFAULT;
	} else if (ret) {
		ret = errno ? errno : EIO;
		snprintf(why, whylen, "RDMA WRITE of %zu bytes failed: %s", len,
			 rcloop_errmsg());
		/* a failed completion leaves the pair in the error state */
		rcloop_destroy(d->loop);
		d->loop = rcloop_create(d->ctx, d->pd, kt_env.gid_index);
		if (!d->loop)
			snprintf(d->loop_err, sizeof(d->loop_err),
				 "rcloop_create after a failed write: %s",
				 rcloop_errmsg());
	}
	ibv_dereg_mr(lmr);
	free(src);
	return ret;
}

const char *kt_op_name(enum kt_op op)
{
	static const char *const names[KT_OP_NUM] = {
		[KT_OP_TRUNCATE] = "truncate",
		[KT_OP_FTRUNCATE] = "ftruncate",
		[KT_OP_PUNCH_HOLE] = "punch_hole",
		[KT_OP_COLLAPSE_RANGE] = "collapse_range",
		[KT_OP_INSERT_RANGE] = "insert_range",
		[KT_OP_ZERO_RANGE] = "zero_range",
	};

	return op < KT_OP_NUM ? names[op] : "?";
}

int kt_do_op(const char *path, int fd, enum kt_op op, off_t off)
{
	static const int modes[KT_OP_NUM] = {
		[KT_OP_PUNCH_HOLE] = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		[KT_OP_COLLAPSE_RANGE] = FALLOC_FL_COLLAPSE_RANGE,
		[KT_OP_INSERT_RANGE] = FALLOC_FL_INSERT_RANGE,
		[KT_OP_ZERO_RANGE] = FALLOC_FL_ZERO_RANGE,
	};
	int own = -1, ret;

	if (op == KT_OP_TRUNCATE)
		return truncate(path, off) ? errno : 0;
	if (fd < 0) {
		own = open(path, O_RDWR | O_CLOEXEC);
		if (own < 0)
			return errno;
		fd = own;
	}
	if (op == KT_OP_FTRUNCATE)
		ret = ftruncate(fd, off) ? errno : 0;
	else
		ret = fallocate(fd, modes[op], off, KT_OP_LEN) ? errno : 0;
	if (own >= 0)
		close(own);
	return ret;
}

int kt_child(int (*fn)(void *), void *arg, int timeout)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	int status, waited_ms = 0;
	pid_t pid, r;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return KT_CRASH;
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(timeout);
		_exit(fn(arg) & 0xff);
	}
	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0)
			return KT_CRASH;
		if (waited_ms > (timeout + 5) * 1000) {
			/* not even SIGALRM ended it: uninterruptible */
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return KT_HANG;
		}
		nanosleep(&tick, NULL);
		waited_ms += 20;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		return KT_HANG;
	return KT_CRASH;
}

const char *kt_res_name(int res)
{
	static char bufs[4][64];
	static int slot;
	char *buf = bufs[slot = (slot + 1) % 4];

	if (res == KT_HANG)
		return "hang (killed after the time bound)";
	if (res == KT_CRASH)
		return "child crashed";
	if (res == 0)
		return "success";
	snprintf(buf, sizeof(bufs[0]), "%s (%s)", strerrorname_np(res) ?
		 strerrorname_np(res) : "?", strerror(res));
	return buf;
}

struct child_op {
	const char *path;
	enum kt_op op;
	off_t off;
};

static int child_op_fn(void *arg)
{
	struct child_op *c = arg;

	return kt_do_op(c->path, -1, c->op, c->off);
}

int kt_child_op_within(const char *path, enum kt_op op, off_t off,
		       int timeout)
{
	struct child_op c = { path, op, off };

	return kt_child(child_op_fn, &c, timeout);
}

int kt_child_op(const char *path, enum kt_op op, off_t off)
{
	return kt_child_op_within(path, op, off, KT_OP_TIMEOUT);
}

int kt_lease_holder_start(struct kt_lease_holder *h, const char *path,
			  int oflags, int lease, int timeout)
{
	int ready[2], done[2];
	char c = 0;

	if (pipe(ready))
		return errno;
	if (pipe(done)) {
		int err = errno;

		close(ready[0]);
		close(ready[1]);
		return err;
	}
	fflush(NULL);
	h->pid = fork();
	if (h->pid == 0) {
		int fd;

		signal(SIGIO, SIG_IGN);
		close(ready[0]);
		close(done[1]);
		fd = open(path, oflags);
		c = fd >= 0 && !fcntl(fd, F_SETLEASE, lease) ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		alarm(timeout);
		if (read(done[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(done[0]);
	h->ready = ready[0];
	h->done = done[1];
	if (h->pid < 0 || read(h->ready, &c, 1) != 1 || c != 'y') {
		kt_lease_holder_stop(h);
		return EAGAIN;
	}
	return 0;
}

void kt_lease_holder_stop(struct kt_lease_holder *h)
{
	close(h->done);
	close(h->ready);
	if (h->pid > 0)
		waitpid(h->pid, NULL, 0);
	h->pid = -1;
}

int kt_read_file_pins(pid_t pid, char *buf, size_t size)
{
	char path[64];
	size_t len = 0;
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/file_pins", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	while (len + 1 < size &&
	       (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	n = n < 0 ? errno : 0;
	close(fd);
	return (int)n;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int expect_pins(char *buf, size_t size, pid_t pid, int fd,
		       bool all_fds, const char *const *paths, int npaths)
{
	char link[64], target[4096], other[4096];
	int fds[256], nfds = 0, i, j;
	struct dirent *de;
	size_t len = 0;
	ssize_t n;
	DIR *dir;

	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return errno;
	target[n] = '\0';
	if (all_fds) {
		snprintf(link, sizeof(link), "/proc/%d/fd", (int)pid);
		dir = opendir(link);
		if (!dir)
			return errno;
		while ((de = readdir(dir)) && nfds < 256) {
			char *end;
			long v = strtol(de->d_name, &end, 10);

			if (*end || end == de->d_name)
				continue;
			snprintf(link, sizeof(link), "/proc/%d/fd/%ld",
				 (int)pid, v);
			n = readlink(link, other, sizeof(other) - 1);
			if (n < 0)
				continue;
			other[n] = '\0';
			if (!strcmp(other, target))
				fds[nfds++] = (int)v;
		}
		closedir(dir);
		qsort(fds, nfds, sizeof(fds[0]), cmp_int);
	} else {
		fds[nfds++] = fd;
	}
	buf[0] = '\0';
	for (i = 0; i < nfds && len < size; i++) {
		len += snprintf(buf + len, size - len, "%d: %s\n", fds[i],
				target);
		for (j = 0; j < npaths && len < size; j++)
			len += snprintf(buf + len, size - len, "\t%s\n",
					paths[j]);
	}
	return len < size ? 0 : ENOSPC;
}

int kt_expect_pins(char *buf, size_t size, int uverbs_fd,
		   const char *const *paths, int npaths)
{
	return expect_pins(buf, size, getpid(), uverbs_fd, true, paths,
			   npaths);
}

int kt_expect_pins_of(char *buf, size_t size, pid_t pid, int fd,
		      const char *const *paths, int npaths)
{
	return expect_pins(buf, size, pid, fd, false, paths, npaths);
}

int kt_count_leases_of(const char *path, pid_t pid, int *of_pid)
{
	char line[512], want[64];
	struct stat st;
	int n = 0, p;
	FILE *f;

	if (of_pid)
		*of_pid = 0;
	if (stat(path, &st))
		return -errno;
	/*
	 * lock_get_status(): "1: LEASE  ACTIVE    READ  123 fd:00:12 0 EOF",
	 * with BREAKING and the type the break goes to while a break is
	 * pending; "1: -> LEASE ..." lines are openers blocked on the break.
	 */
	snprintf(want, sizeof(want), " %02x:%02x:%llu ", major(st.st_dev),
		 minor(st.st_dev), (unsigned long long)st.st_ino);
	f = fopen("/proc/locks", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "LEASE") || !strstr(line, want) ||
		    strstr(line, "->"))
			continue;
		n++;
		if (of_pid && sscanf(line, "%*d: %*s %*s %*s %d", &p) == 1 &&
		    p == pid)
			(*of_pid)++;
	}
	fclose(f);
	return n;
}

int kt_count_leases(const char *path)
{
	return kt_count_leases_of(path, 0, NULL);
}

const char *kt_oneline(const char *s)
{
	static char buf[2][1024];
	static int slot;
	size_t o = 0;

	slot ^= 1;
	for (; *s && o + 3 < sizeof(buf[slot]); s++) {
		if (*s == '\n' || *s == '\t') {
			buf[slot][o++] = '\\';
			buf[slot][o++] = *s == '\n' ? 'n' : 't';
		} else {
			buf[slot][o++] = *s;
		}
	}
	buf[slot][o] = '\0';
	return buf[slot];
}

/* /dev/kmsg records: "prio,seq,usec,flags;text\n" */
static const char *const kmsg_reports[] = {
	"WARNING:", "BUG:", "kernel BUG", "Oops", "general protection",
	"possible circular locking", "possible recursive locking",
	"inconsistent lock state", "INFO: ", "UBSAN:",
	"suspicious RCU", "blocked for more than", "Call Trace:",
	"list_add corruption", "list_del corruption",
};


static int kmsg_scan(uint64_t mark, uint64_t *last, char *bad, size_t badlen,
		     int *nbad)
{
	char rec[8192];
	ssize_t n;
	int fd;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	*nbad = 0;
	*last = mark;
	for (;;) {
		unsigned long long seq;
		const char *text;
		size_t i;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (sscanf(rec, "%*u,%llu,", &seq) != 1)
			continue;
		*last = seq;
		if (mark && seq <= mark)
			continue;
		text = strchr(rec, ';');
		text = text ? text + 1 : rec;
		for (i = 0; i < sizeof(kmsg_reports) / sizeof(kmsg_reports[0]);
		     i++) {
			if (!strstr(text, kmsg_reports[i]))
				continue;
			if (!*nbad && bad) {
				snprintf(bad, badlen, "%s", text);
				bad[strcspn(bad, "\n")] = '\0';
			}
			(*nbad)++;
			break;
		}
	}
	close(fd);
	return 0;
}

void kt_kmsg_dump(uint64_t mark, int max)
{
	char rec[8192];
	int fd, shown = 0;
	bool started = false;
	ssize_t n;
	size_t i;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	printf("---- kernel log from the first report after #%llu:\n",
	       (unsigned long long)mark);
	while (shown < max) {
		unsigned long long seq;
		char *text;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (sscanf(rec, "%*u,%llu,", &seq) != 1 || seq <= mark)
			continue;
		text = strchr(rec, ';');
		text = text ? text + 1 : rec;
		text[strcspn(text, "\n")] = '\0';
		for (i = 0; !started && i < sizeof(kmsg_reports) /
					       sizeof(kmsg_reports[0]); i++)
			started = strstr(text, kmsg_reports[i]) != NULL;
		if (!started)
			continue;
		printf("  | %s\n", text);
		shown++;
	}
	printf("----\n");
	close(fd);
}

uint64_t kt_kmsg_mark(void)
{
	uint64_t last = 0;
	int nbad;

	if (kmsg_scan(0, &last, NULL, 0, &nbad))
		return 0;
	return last;
}

int kt_kmsg_scan(uint64_t mark, char *first, size_t len)
{
	uint64_t last;
	int ret, nbad;

	ret = kmsg_scan(mark, &last, first, len, &nbad);
	return ret ? -ret : nbad;
}

int kt_run(const char *const argv[], char *out, size_t outlen, int timeout)
{
	struct timespec t0, t1;
	int pfd[2], status = 0;
	size_t len = 0;
	bool done = false;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(out, outlen, "pipe: %s", strerror(errno));
		return KT_CRASH;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(out, outlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return KT_CRASH;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		/* execvp() does not modify argv; its type is historical */
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "exec %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		char buf[1024];
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > timeout)
			break;
		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(pfd[0], buf, sizeof(buf));
		if (n <= 0) {
			done = true;
			break;
		}
		/* keep the tail: the checkers say what is wrong last */
		if (len + n >= outlen) {
			size_t drop = len + n - (outlen - 1);

			if (drop > len)
				drop = len;
			memmove(out, out + drop, len - drop);
			len -= drop;
		}
		if ((size_t)n > outlen - 1 - len)
			n = outlen - 1 - len;
		memcpy(out + len, buf, n);
		len += n;
		out[len] = '\0';
	}
	close(pfd[0]);
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return KT_HANG;
	}
	if (waitpid(pid, &status, 0) != pid)
		return KT_CRASH;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return KT_CRASH;
}

/* Type and dax option of the file system mounted on dir */
static int mounted_as(const char *dir, char *type, size_t tlen, char *opt,
		      size_t olen)
{
	char line[1024], mdir[512], mtype[64], opts[512], *tok, *save;
	bool found = false;
	FILE *f;

	f = fopen("/proc/mounts", "re");
	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %511s %63s %511s", mdir, mtype, opts) != 3 ||
		    strcmp(mdir, dir))
			continue;
		/* the last mount on dir is the visible one */
		found = true;
		snprintf(type, tlen, "%s", mtype);
		opt[0] = '\0';
		for (tok = strtok_r(opts, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save))
			if (!strncmp(tok, "dax", 3))
				snprintf(opt, olen, "%s", tok);
	}
	fclose(f);
	return found ? 0 : ENOENT;
}

int kt_fsck(const struct kt_fs *fs, bool remount, char *out, size_t outlen)
{
	char type[64], opt[64], log[2048];
	const char *const e2[] = { "e2fsck", "-fn", fs->dev, NULL };
	const char *const xfs[] = { "xfs_repair", "-n", fs->dev, NULL };
	int i, ret;

	ret = mounted_as(fs->dir, type, sizeof(type), opt, sizeof(opt));
	if (ret) {
		snprintf(out, outlen, "%s is not mounted: %s", fs->dir,
			 strerror(ret));
		return ret;
	}
	sync();
	for (i = 0; i < 50; i++) {
		ret = umount2(fs->dir, 0) ? errno : 0;
		if (ret != EBUSY)
			break;
		/* the last fput of a killed child may be deferred */
		usleep(100 * 1000);
	}
	if (ret) {
		snprintf(out, outlen, "umount %s: %s", fs->dir, strerror(ret));
		return ret;
	}
	if (!strcmp(type, "xfs"))
		ret = kt_run(xfs, log, sizeof(log), 300);
	else
		ret = kt_run(e2, log, sizeof(log), 300);
	if (ret == 0)
		snprintf(out, outlen, "%s -n of %s (%s): clean", !strcmp(type, "xfs") ?
			 "xfs_repair" : "e2fsck -f", fs->dev, type);
	else
		snprintf(out, outlen, "%s of %s (%s) exited %d: %s",
			 !strcmp(type, "xfs") ? "xfs_repair -n" : "e2fsck -fn",
			 fs->dev, type, ret, kt_oneline(log));
	if (ret)
		ret = ret > 0 && ret != 8 && ret != 127 ? EUCLEAN : EIO;
	if (remount && mount(fs->dev, fs->dir, type, 0, opt[0] ? opt : NULL)) {
		int err = errno;
		size_t l = strlen(out);

		snprintf(out + l, outlen - l, "; mount -t %s -o %s %s %s: %s (left unmounted)",
			 type, opt, fs->dev, fs->dir, strerror(err));
		return ret ? ret : err;
	}
	return ret;
}

const char *kt_name(const char *base, const struct kt_fs *fs)
{
	static char buf[4][128];
	static int slot;

	slot = (slot + 1) % 4;
	snprintf(buf[slot], sizeof(buf[slot]), "%s_%s", base, fs->name);
	return buf[slot];
}
