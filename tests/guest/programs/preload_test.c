// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dl-preload-test: a program written as RDMA programs are, with
 * ibv_reg_mr() and ibv_dereg_mr() of libibverbs only (no libdaxlease),
 * run by the guest suite "programs" under `daxlease run` on the patched
 * kernel: its registrations of FS-DAX mappings must take the layout lease
 * path, carry RDMA into the file, and leave nothing behind; the other
 * registrations must stay libibverbs' own.  Also: a dlopen()ed libibverbs,
 * ibv_rereg_mr() of a DAX MR, fork(), threads, many MRs of one file.
 *
 * usage: dl-preload-test DIR [DIR...]   (the DAX mounts; reports suite
 *        "programs_preload", test names suffixed with the mount's base
 *        name)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "dtest.h"
#include "rcloop.h"

#define MIB (1UL << 20)
#define FILE_LEN (8 * MIB)
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ)
#define THREADS 4
#define PER_THREAD 16

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct rcloop *loop;
static char name[256];

static const char *tname(const char *base, const char *fs)
{
	snprintf(name, sizeof(name), "%s_%s", base, fs);
	return name;
}

/* leases of this process in /proc/locks */
static int count_leases(void)
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

/* does /proc/self/file_pins list path? */
static int pinned(const char *path)
{
	char buf[8192];
	ssize_t n;
	int fd = open("/proc/self/file_pins", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return strstr(buf, path) != NULL;
}

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 12));
}

/* a file of len bytes with pattern seed, mapped shared read-write */
static uint8_t *map_file(const char *path, size_t len, uint8_t seed,
			 int *fdp)
{
	uint8_t *p;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)len)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	fill(p, len, seed);
	msync(p, len, MS_SYNC);
	*fdp = fd;
	return p;
}

/* RDMA WRITE of len bytes of pattern seed to remote; 0 or errno */
static int rdma_write(uint64_t remote, uint32_t rkey, size_t len,
		      uint8_t seed, char *why, size_t whylen)
{
	uint8_t *src = malloc(len);
	struct ibv_mr *lmr = NULL;
	int ret = 0;

	if (!src)
		return ENOMEM;
	fill(src, len, seed);
	lmr = ibv_reg_mr(pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	if (!lmr) {
		ret = errno;
		snprintf(why, whylen, "ibv_reg_mr of a malloc'd buffer: %s",
			 strerror(ret));
	} else if (rcloop_write(loop, src, lmr->lkey, remote, rkey, len)) {
		ret = errno ? errno : EIO;
		snprintf(why, whylen, "RDMA WRITE: %s", rcloop_errmsg());
	}
	if (lmr)
		ibv_dereg_mr(lmr);
	free(src);
	return ret;
}

/* the file, read through a new descriptor, holds pattern seed at off */
static int file_has(const char *path, off_t off, size_t len, uint8_t seed)
{
	uint8_t *want = malloc(len), *got = malloc(len);
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok = 0;

	if (want && got && fd >= 0 && pread(fd, got, len, off) == (ssize_t)len) {
		fill(want, len, seed);
		ok = !memcmp(want, got, len);
	}
	if (fd >= 0)
		close(fd);
	free(want);
	free(got);
	return ok;
}

/* memory at p holds pattern seed */
static int mem_has(const uint8_t *p, size_t len, uint8_t seed)
{
	uint8_t *want = malloc(len);
	int ok;

	if (!want)
		return 0;
	fill(want, len, seed);
	ok = !memcmp(p, want, len);
	free(want);
	return ok;
}

static void t_basic(const char *dir, const char *fs)
{
	char path[512], why[512] = "";
	struct ibv_mr *mr, *anon_mr;
	uint8_t *map, *anon;
	int fd, ret, pins, leases, err;

	snprintf(path, sizeof(path), "%s/dl-preload.dat", dir);
	map = map_file(path, FILE_LEN, 0x41, &fd);
	if (!map) {
		dtest_fail(tname("pre_reg", fs), "mapping %s: %s", path,
			   strerror(errno));
		return;
	}
	errno = 0;
	mr = ibv_reg_mr(pd, map + MIB, 2 * MIB, ACCESS);
	leases = count_leases();
	pins = pinned(path);
	dtest_check(tname("pre_reg", fs),
		    mr && mr->addr == map + MIB && mr->length == 2 * MIB &&
			    leases == 1 && pins == 1,
		    "ibv_reg_mr: %s; addr %p (want %p); leases %d (want 1); file_pins lists it: %d",
		    mr ? "registered" : strerror(errno),
		    mr ? mr->addr : NULL, (void *)(map + MIB), leases, pins);
	if (!mr)
		goto out;

	ret = rdma_write((uintptr_t)mr->addr + 4096, mr->rkey, MIB, 0x42, why,
			 sizeof(why));
	dtest_check(tname("pre_rdma_write", fs),
		    !ret && file_has(path, MIB + 4096, MIB, 0x42) &&
			    mem_has(map + MIB + 4096, MIB, 0x42),
		    "%s", ret ? why :
				   file_has(path, MIB + 4096, MIB, 0x42) &&
				   mem_has(map + MIB + 4096, MIB, 0x42) ?
				   "1 MiB of RDMA WRITE read back from the file and the program's mapping" :
				   "the file or the program's mapping does not hold what was written");

	/* a truncate over the pinned range fails */
	ret = truncate(path, MIB) ? errno : 0;
	dtest_check(tname("pre_truncate_refused", fs),
		    ret == ETXTBSY || ret == EDEADLOCK,
		    "truncate: %s (want ETXTBSY or EDEADLOCK)",
		    ret ? strerror(ret) : "success");

	/* rereg of a DAX MR is refused and the MR keeps working */
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE);
	err = errno;
	snprintf(why, sizeof(why), "RDMA WRITE afterwards lands in the file");
	dtest_check(tname("pre_rereg_refused", fs),
		    ret == IBV_REREG_MR_ERR_INPUT && err == EOPNOTSUPP &&
			    !rdma_write((uintptr_t)mr->addr, mr->rkey, 4096,
					0x43, why, sizeof(why)) &&
			    file_has(path, MIB, 4096, 0x43),
		    "ibv_rereg_mr: %d errno %s (want %d, EOPNOTSUPP); %s",
		    ret, strerror(err), IBV_REREG_MR_ERR_INPUT, why);

	/* anonymous memory beside it is libibverbs' own */
	anon = mmap(NULL, MIB, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	anon_mr = anon == MAP_FAILED ? NULL :
				       ibv_reg_mr(pd, anon, MIB, ACCESS);
	dtest_check(tname("pre_anonymous_untouched", fs),
		    anon_mr && count_leases() == 1,
		    "anonymous: %s, leases %d (want 1)",
		    anon_mr ? "registered" : strerror(errno), count_leases());
	if (anon_mr)
		ibv_dereg_mr(anon_mr);
	if (anon != MAP_FAILED)
		munmap(anon, MIB);

	ret = ibv_dereg_mr(mr);
	dtest_check(tname("pre_dereg", fs),
		    !ret && count_leases() == 0 && pinned(path) == 0 &&
			    fcntl(fd, F_GETFD) >= 0 && map[MIB] == 0x43,
		    "ibv_dereg_mr %d; leases %d (want 0); still pinned: %d; own fd %s; own mapping %s",
		    ret, count_leases(), pinned(path),
		    fcntl(fd, F_GETFD) >= 0 ? "open" : "closed",
		    map[MIB] == 0x43 ? "intact" : "differs");
	ret = truncate(path, FILE_LEN / 2) ? errno : 0;
	dtest_check(tname("pre_truncate_after_dereg", fs), !ret,
		    "truncate: %s", strerror(ret));
out:
	munmap(map, FILE_LEN);
	close(fd);
	unlink(path);
}

/* through a dlopen()ed libibverbs, as a plugin would */
static void t_dlopen(const char *dir, const char *fs)
{
	struct ibv_mr *(*reg)(struct ibv_pd *, void *, size_t, int);
	int (*dereg)(struct ibv_mr *);
	char path[512];
	struct ibv_mr *mr;
	uint8_t *map;
	void *h;
	int fd, ret = -1, leases = -1;

	snprintf(path, sizeof(path), "%s/dl-preload-dl.dat", dir);
	h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	reg = h ? (struct ibv_mr *(*)(struct ibv_pd *, void *, size_t,
				      int))dlsym(h, "ibv_reg_mr") : NULL;
	dereg = h ? (int (*)(struct ibv_mr *))dlsym(h, "ibv_dereg_mr") :
		    NULL;
	map = map_file(path, MIB, 0x51, &fd);
	mr = reg && dereg && map ? reg(pd, map, MIB, ACCESS) : NULL;
	if (mr) {
		leases = count_leases();
		ret = dereg(mr);
	}
	dtest_check(tname("pre_dlopen", fs),
		    mr && leases == 1 && !ret && count_leases() == 0 &&
			    pinned(path) == 0,
		    "dlopen %s, dlsym %s; reg %s; leases %d then %d; dereg %d",
		    h ? "ok" : dlerror(), reg && dereg ? "ok" : "missing",
		    mr ? "ok" : strerror(errno), leases, count_leases(), ret);
	if (map) {
		munmap(map, MIB);
		close(fd);
	}
	unlink(path);
	if (h)
		dlclose(h);
}

/* a forked child's dereg leaves the parent's MR registered */
static void t_fork(const char *dir, const char *fs)
{
	char path[512], why[512] = "";
	struct ibv_mr *mr;
	int fd, status = -1, ret;
	uint8_t *map;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/dl-preload-fork.dat", dir);
	map = map_file(path, MIB, 0x61, &fd);
	mr = map ? ibv_reg_mr(pd, map, MIB, ACCESS) : NULL;
	if (!mr) {
		dtest_fail(tname("pre_fork", fs), "ibv_reg_mr: %s",
			   strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid == 0)
		_exit(ibv_dereg_mr(mr) ? 1 : 0);
	if (pid > 0)
		waitpid(pid, &status, 0);
	ret = rdma_write((uintptr_t)mr->addr, mr->rkey, 65536, 0x62, why,
			 sizeof(why));
	dtest_check(tname("pre_fork", fs),
		    pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status) &&
			    !ret && file_has(path, 0, 65536, 0x62) &&
			    count_leases() == 1,
		    "child dereg exit %d; parent's RDMA WRITE %s; leases %d",
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		    ret ? why : "ok", count_leases());
	ibv_dereg_mr(mr);
out:
	if (map) {
		munmap(map, MIB);
		close(fd);
	}
	unlink(path);
}

struct worker {
	uint8_t *map;
	int fails;
	int err;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	struct ibv_mr *mrs[PER_THREAD];
	int i, round;

	for (round = 0; round < 3; round++) {
		for (i = 0; i < PER_THREAD; i++) {
			mrs[i] = ibv_reg_mr(pd, w->map + (size_t)i * 65536,
					    65536, ACCESS);
			if (!mrs[i]) {
				w->fails++;
				w->err = errno;
			}
		}
		for (i = 0; i < PER_THREAD; i++)
			if (mrs[i] && ibv_dereg_mr(mrs[i]))
				w->fails++;
	}
	return NULL;
}

/* threads registering many MRs of one file: one lease, none after */
static void t_threads(const char *dir, const char *fs)
{
	struct worker w[THREADS] = {};
	pthread_t th[THREADS];
	int fd, i, fails = 0, err = 0, started = 0;
	char path[512];
	uint8_t *map;

	snprintf(path, sizeof(path), "%s/dl-preload-th.dat", dir);
	map = map_file(path, PER_THREAD * 65536, 0x71, &fd);
	if (!map) {
		dtest_fail(tname("pre_threads", fs), "mapping %s: %s", path,
			   strerror(errno));
		return;
	}
	for (i = 0; i < THREADS; i++) {
		w[i].map = map;
		if (!pthread_create(&th[i], NULL, worker, &w[i]))
			started |= 1 << i;
	}
	for (i = 0; i < THREADS; i++) {
		if (started & (1 << i))
			pthread_join(th[i], NULL);
		fails += w[i].fails;
		err = w[i].err ? w[i].err : err;
	}
	dtest_check(tname("pre_threads", fs),
		    started == (1 << THREADS) - 1 && !fails &&
			    count_leases() == 0 && pinned(path) == 0,
		    "%d threads x %d MRs x 3 rounds: %d failures%s%s; leases after %d, still pinned %d",
		    THREADS, PER_THREAD, fails, err ? ", the last " : "",
		    err ? strerror(err) : "", count_leases(), pinned(path));
	munmap(map, PER_THREAD * 65536);
	close(fd);
	unlink(path);
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2 || !strcmp(argv[1], "--help")) {
		printf("usage: %s DIR...\nRuns in the test VM under `daxlease run`; see tests/vm/suites/programs.sh.\n",
		       argv[0]);
		return argc < 2 ? 2 : 0;
	}
	dtest_begin("programs_preload");
	/* the preload library must be there, else nothing here is tested */
	{
		Dl_info info;
		void *f = dlsym(RTLD_DEFAULT, "ibv_dereg_mr");

		if (!f || !dladdr(f, &info) || !info.dli_fname ||
		    !strstr(info.dli_fname, "libdaxlease-preload")) {
			dtest_fail("pre_preloaded",
				   "ibv_dereg_mr comes from %s: run under `daxlease run`",
				   f && dladdr(f, &info) ? info.dli_fname : "nowhere");
			return dtest_end();
		}
	}
	ctx = rcloop_open_device(NULL);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	loop = pd ? rcloop_create(ctx, pd, rcloop_env_gid_index()) : NULL;
	if (!loop) {
		dtest_fail("pre_device", "RDMA device, PD or RC pair: %s",
			   ctx ? rcloop_errmsg() : strerror(errno));
		return dtest_end();
	}
	for (i = 1; i < argc; i++) {
		char dir[512];
		const char *fs;

		snprintf(dir, sizeof(dir), "%s", argv[i]);
		fs = basename(dir);
		t_basic(argv[i], fs);
		t_dlopen(argv[i], fs);
		t_fork(argv[i], fs);
		t_threads(argv[i], fs);
	}
	rcloop_destroy(loop);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return dtest_end();
}
