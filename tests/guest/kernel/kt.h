/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers shared by the guest kernel suites (kernel, leasepath, faults):
 * the VM environment, an rxe context with an RC loopback pair, pmem test
 * files with a known pattern, raw "lease + mmap + ibv_reg_mr" pins, layout
 * changes run in a child under a time bound (a hang is a result), exact
 * /proc/<pid>/file_pins expectations and a dmesg scan.
 *
 * Everything here talks to the kernel directly (fcntl, mmap, truncate,
 * fallocate, ibv_reg_mr, and the extended REG_MR through the library's
 * command builder alone); the rest of the library is only used by the
 * tests that say so.  Functions return 0 or a positive errno value unless
 * noted.
 */
#ifndef DAXLEASE_KT_H
#define DAXLEASE_KT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include "rcloop.h"

#define KT_MIB (1UL << 20)

/* Test file geometry: pins cover the head, "tail" ranges lie past 4 MiB */
#define KT_FILE_SIZE (8 * KT_MIB)
#define KT_PIN_LEN KT_MIB
#define KT_TAIL_OFF (4 * KT_MIB)
#define KT_OP_LEN (64UL << 10)

/* Bound for one layout change: anything slower counts as a hang */
#define KT_OP_TIMEOUT 20

struct kt_fs {
	const char *name;	/* "ext4" or "xfs": test name suffix */
	const char *dir;	/* mount point */
	const char *dev;	/* block device, for remount */
};

struct kt_env {
	struct kt_fs fs[2];
	int nfs;
	const char *devdax;
	const char *rdma_dev;
	int gid_index;
	bool patched;
};

extern struct kt_env kt_env;

/* Reads DAXLEASE_* (see tests/vm/suites/kernel.sh); keeps absent fs out. */
void kt_env_init(void);

struct kt_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct rcloop *loop;	/* NULL when the loopback pair failed */
	char loop_err[256];
};

/* Opens DAXLEASE_RDMA_DEV and a PD; with_loop also the RC pair. */
int kt_dev_open(struct kt_dev *d, bool with_loop);
void kt_dev_close(struct kt_dev *d);

/*
 * The test pattern: 64-bit word w of a file (bytes [8w, 8w + 8)) holds a
 * mix of w and the seed, so any misplaced or stale block shows.
 */
static inline uint64_t kt_pattern_word(uint64_t w, uint8_t seed)
{
	uint64_t x = (w + 1) * 0x9e3779b97f4a7c15ull ^ seed;

	x ^= x >> 31;
	return x * 0xbf58476d1ce4e5b9ull;
}
void kt_pattern(void *buf, size_t len, uint64_t off, uint8_t seed);

/* snprintf into a static per-test path: "<dir>/kt-<tag>.dat" */
const char *kt_path(const struct kt_fs *fs, const char *tag);

/* Creates (or replaces) path with size bytes of pattern seed, fsynced. */
int kt_make_file(const char *path, size_t size, uint8_t seed);
/* Writes size bytes of pattern seed from offset 0 of fd, then fsync. */
int kt_fill_pattern(int fd, size_t size, uint8_t seed);

/*
 * Reads [off, off + len) of path through a new O_RDONLY descriptor and
 * compares it with expect.  0 if equal; else why says where it differs.
 */
int kt_verify_file(const char *path, off_t off, const void *expect,
		   size_t len, char *why, size_t whylen);
/* Same, against the pattern. */
int kt_verify_pattern(const char *path, off_t off, size_t len, uint8_t seed,
		      char *why, size_t whylen);

/*
 * Writes s to path in one write(2) (a sysfs or /proc/sys file takes one
 * value per write): 0, errno, or EIO for a short write.
 */
int kt_write_str(const char *path, const char *s);
/* Reads up to len - 1 bytes of path into buf, NUL-terminated; 0 or errno */
int kt_read_str(const char *path, char *buf, size_t len);

/* st_size of path, or -errno */
long long kt_file_size(const char *path);

/*
 * The extended REG_MR of doc/design.md §4.1 (DAXLEASE_UVERBS_METHOD_REG_MR
 * with DAX_FD / DAX_FD_OFFSET) of [addr, addr + len) on d's PD, iova =
 * addr, issued with the library's command builder (cmd_mr.h) so that the
 * kernel is tested without the rest of the library.  dax_fd < 0 leaves
 * the daxlease attributes out (a plain REG_MR).  0 or errno; mr's handle,
 * lkey and rkey are set, and the MR is destroyed with kt_destroy_mr()
 * (UVERBS_METHOD_MR_DESTROY) or with the context.  Tests that send their
 * own attribute sets use the builder of ioctl.h directly.
 */
int kt_reg_mr_ioctl(struct kt_dev *d, void *addr, size_t len,
		    unsigned int access, int dax_fd, uint64_t dax_off,
		    struct ibv_mr *mr);
int kt_destroy_mr(struct kt_dev *d, uint32_t handle);

/*
 * A raw pin: open O_RDWR, optional F_SETLEASE(lease) (0: none), mmap
 * MAP_SHARED of [off, off + len), then register it with local/remote
 * read/write: KT_PIN_DAXFD through the extended REG_MR naming the file
 * (the path that records file pins), KT_PIN_LEGACY through ibv_reg_mr.
 * On failure *step names the failing step ("open", "lease", "mmap",
 * "reg_mr") and nothing is left behind.
 */
enum kt_pin_how {
	KT_PIN_DAXFD,
	KT_PIN_LEGACY,
};
struct kt_pin {
	struct kt_dev *dev;
	enum kt_pin_how how;
	int fd;
	void *addr;
	uint64_t iova;		/* remote address of the MR */
	size_t len;
	off_t off;
	bool registered;
	struct ibv_mr *mr;	/* KT_PIN_LEGACY */
	struct ibv_mr raw;	/* KT_PIN_DAXFD: handle, lkey, rkey */
	uint32_t rkey;
};
#define KT_PIN_INIT { .fd = -1, .addr = (void *)-1 }
#define KT_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ)
int kt_pin(struct kt_dev *d, const char *path, off_t off, size_t len,
	   int lease, enum kt_pin_how how, struct kt_pin *p,
	   const char **step);
/* Deregisters only; 0 or errno */
int kt_pin_dereg(struct kt_pin *p);
/* Deregisters, unmaps and closes whatever is still held. */
void kt_unpin(struct kt_pin *p);

/*
 * RDMA WRITE len bytes of pattern (file offset foff, seed) through the
 * loopback pair into [remote_addr, +len) of rkey.  0 or errno; why says
 * what failed.
 */
int kt_rdma_write_pattern(struct kt_dev *d, uint64_t remote_addr,
			  uint32_t rkey, size_t len, uint64_t foff,
			  uint8_t seed, char *why, size_t whylen);

/* Layout changes of doc/design.md §1.3 and §1.9 */
enum kt_op {
	KT_OP_TRUNCATE,		/* truncate(path, off) */
	KT_OP_FTRUNCATE,	/* ftruncate(open(path), off) */
	KT_OP_PUNCH_HOLE,	/* FALLOC_FL_PUNCH_HOLE | KEEP_SIZE */
	KT_OP_COLLAPSE_RANGE,
	KT_OP_INSERT_RANGE,
	KT_OP_ZERO_RANGE,
	KT_OP_NUM,
};
const char *kt_op_name(enum kt_op op);
/*
 * The op over a range starting at off: truncates cut the file to off,
 * the fallocate modes cover [off, off + KT_OP_LEN).  0 or errno.
 */
int kt_do_op(const char *path, int fd, enum kt_op op, off_t off);

/*
 * Runs fn(arg) in a forked child with alarm(timeout); fn returns an errno
 * value (0 = success) that becomes the exit status.  Returns that value,
 * KT_HANG if the child had to be killed (SIGALRM, or still alive after
 * timeout + 5 s: SIGKILL), or KT_CRASH for any other death.
 */
#define KT_HANG (-1)
#define KT_CRASH (-2)
int kt_child(int (*fn)(void *), void *arg, int timeout);
/* "ETXTBSY", "hang", "crash", "success" for reports */
const char *kt_res_name(int res);

/* The op in a child (opens path itself: another process) */
int kt_child_op(const char *path, enum kt_op op, off_t off);
/* Same, bounded by timeout seconds instead of KT_OP_TIMEOUT */
int kt_child_op_within(const char *path, enum kt_op op, off_t off,
		       int timeout);

/*
 * Another process holding a lease: a forked child opens path with oflags,
 * takes F_SETLEASE lease (ignoring SIGIO, so that a lease break signal
 * does not end it) and holds it until kt_lease_holder_stop(), or for
 * timeout seconds.  0 once the lease is held; else errno (EAGAIN: the
 * child could not take it) and nothing is left.
 */
struct kt_lease_holder {
	pid_t pid;
	int ready, done;	/* our ends of the pipes */
};
int kt_lease_holder_start(struct kt_lease_holder *h, const char *path,
			  int oflags, int lease, int timeout);
/* Lets the child exit and reaps it */
void kt_lease_holder_stop(struct kt_lease_holder *h);

/*
 * Reads /proc/<pid>/file_pins into buf (NUL-terminated).  0, or errno
 * (ENOENT: the kernel has no file_pins).
 */
int kt_read_file_pins(pid_t pid, char *buf, size_t size);
/*
 * The expected text (doc/design.md §1.7): one block "<fd>: <uverbs path>\n"
 * plus "\t<path>\n" per pinned file for every descriptor of this process that
 * refers to the same device node as uverbs_fd, in fd order (a dup'ed
 * uverbs fd shows the same block again).  Valid while the process has
 * one context open per device.
 */
int kt_expect_pins(char *buf, size_t size, int uverbs_fd,
		   const char *const *paths, int npaths);
/* Same for another process pid whose uverbs fd is fd (no dup assumed) */
int kt_expect_pins_of(char *buf, size_t size, pid_t pid, int fd,
		      const char *const *paths, int npaths);

/*
 * The leases on path's inode (LEASE lines of /proc/locks, not the openers
 * blocked on a break), and in *of_pid (if not NULL) how many pid holds.
 * -errno if unreadable.
 */
int kt_count_leases_of(const char *path, pid_t pid, int *of_pid);
int kt_count_leases(const char *path);

/* Escapes \n and \t so that reports stay on one line */
const char *kt_oneline(const char *s);

/*
 * kt_kmsg_mark: the sequence number of the last kernel log record.
 * kt_kmsg_scan: number of WARN, BUG, Oops, lockdep, KASAN/UBSAN,
 * hung-task or RCU report lines logged after mark (since boot if mark is
 * 0), the first copied to first; -errno if /dev/kmsg cannot be read.
 */
uint64_t kt_kmsg_mark(void);
int kt_kmsg_scan(uint64_t mark, char *first, size_t len);
/* Prints up to max kernel log records from the first report after mark */
void kt_kmsg_dump(uint64_t mark, int max);

/*
 * Runs argv (looked up in PATH) with stdout and stderr into out (its last
 * outlen - 1 bytes, NUL-terminated), bounded by timeout seconds.  The exit
 * status (127: it could not be started), or KT_HANG (killed at the
 * bound), KT_CRASH (killed by a signal, or no fork: out says why).
 */
int kt_run(const char *const argv[], char *out, size_t outlen, int timeout);

/*
 * The file system checker on fs: unmounts fs->dir (retrying for a few
 * seconds while it is busy), runs "e2fsck -fn" (ext2, ext3, ext4) or
 * "xfs_repair -n" (xfs) on fs->dev and, with remount, mounts it again with
 * the type and the dax option it had.  0 if the checker found nothing;
 * EUCLEAN if it did (out: its last lines); else the errno of the step
 * that failed, named in out.  Every file of the file system must be
 * closed, unmapped and unpinned.
 */
int kt_fsck(const struct kt_fs *fs, bool remount, char *out, size_t outlen);

/* test name with fs suffix: "<base>_<fs>" in a static buffer */
const char *kt_name(const char *base, const struct kt_fs *fs);

#endif /* DAXLEASE_KT_H */
