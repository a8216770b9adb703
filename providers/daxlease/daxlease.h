/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * daxlease internals.  The library is compiled once (daxlease_objs) and
 * linked as libdaxlease.so or as the daxlease_static archive of the tool
 * and the host tests; the public functions are defined where their work
 * is done and marked DL_EXPORT.
 *
 * Conventions:
 * - Functions named dl_*_parse, dl_validate_*, dl_strategy_choose are pure:
 *   no file, device or global state; they return 0 or a positive errno
 *   value and write a one-line reason into a caller buffer.
 * - Everything else that can fail returns -1 (or NULL), sets errno and the
 *   thread-local message read by ibv_dax_errmsg() (errmsg.c), and releases
 *   what it acquired before returning.
 */
#ifndef DAXLEASE_INTERNAL_H
#define DAXLEASE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <pthread.h>

#include <libpmem2.h>
#include <infiniband/verbs.h>
#include <infiniband/verbs_dax.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#define DL_EXPORT __attribute__((visibility("default")))

/* errmsg.c ------------------------------------------------------------ */

#define DL_ERRMSG_MAX 512

/*
 * What a message tells a user whose kernel lacks the series: what to
 * install and where to read on, never a path of the source tree.
 */
#define DL_KERNEL_REMEDY "package daxlease-kernel-patches, see daxlease(7)"

/* Set errno = err and the thread-local message; returns -1. */
int dl_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Same, returning NULL, for pointer-returning paths. */
void *dl_err_null(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Keep errno and message across cleanup calls that may clobber them. */
struct dl_err_save {
	int err;
	char msg[DL_ERRMSG_MAX];
};
void dl_err_save(struct dl_err_save *s);
void dl_err_restore(const struct dl_err_save *s);

/* validate.c ---------------------------------------------------------- */

#define DL_INIT_ATTR_COMP_MASK (IBV_DAX_MR_INIT_IOVA | IBV_DAX_MR_INIT_FLAGS)
#define DL_MR_FLAGS_ALL                                                       \
	(IBV_DAX_MR_RELEASE_LEASE | IBV_DAX_MR_ALLOW_ODP |                    \
	 IBV_DAX_MR_NO_FALLBACK | IBV_DAX_MR_CREATE)
/* Access bits that need a writable file and mapping */
#define DL_ACCESS_WRITE                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                   \
	 IBV_ACCESS_REMOTE_ATOMIC)

/*
 * Pure check of an init attr: no device or file access, no global state,
 * so the fuzz target can call it on arbitrary bytes.  Returns 0 or:
 *   EINVAL      attr NULL; length 0; neither path nor fd >= 0 (EBADF for a
 *               negative fd); flags or iova set without their comp_mask
 *               bit; ALLOW_ODP with NO_FALLBACK; unknown or contradictory
 *               IBV_ACCESS_* bits (ON_DEMAND: use IBV_DAX_MR_ALLOW_ODP;
 *               REMOTE_WRITE/ATOMIC without LOCAL_WRITE)
 *   EOPNOTSUPP  unknown comp_mask or IBV_DAX_MR_* flag bits
 *   EOVERFLOW   offset + length wraps or exceeds the off_t range
 * msg (may be NULL) receives a one-line reason.
 */
int dl_validate_init_attr(const struct ibv_dax_mr_init_attr *attr, char *msg,
			  size_t msglen);
/* The effective policy flags (0 unless IBV_DAX_MR_INIT_FLAGS). */
uint32_t dl_init_attr_flags(const struct ibv_dax_mr_init_attr *attr);

/* source.c ------------------------------------------------------------ */

struct dl_source {
	int fd;				/* ours, O_CLOEXEC */
	enum ibv_dax_file_kind kind;
	char *path;			/* for messages and query; malloc'd */
	bool writable;			/* opened for write */
	uint64_t size;			/* file or device size */
	size_t align;			/* libpmem2 mapping alignment */
	bool nonblock;			/* our O_NONBLOCK open, to clear */
	dev_t dev;			/* st_dev of the file */
	ino_t ino;
	unsigned int dev_major, dev_minor;	/* devdax: st_rdev */
	char align_attr[64];		/* devdax: sysfs file of the alignment */
	bool created;			/* IBV_DAX_MR_CREATE made the file */
	bool extended;			/* ... or extended it */
	uint64_t orig_size;		/* size before the extension */
};

/*
 * Open (path) or take (fd) the source, classify it and check the range
 * [offset, offset + length) against it; with IBV_DAX_MR_CREATE create or
 * extend the file.  errno on failure:
 *   ENOENT, ELOOP, EACCES, EROFS, ...  from open(2), passed through
 *   EBADF       caller fd not open, or O_PATH
 *   EACCES      write access requested on a read-only fd (or O_WRONLY fd)
 *   EISDIR      a directory
 *   ENODEV      fifo, socket, block device, char device other than dax
 *   ERANGE      range past end of file or device (without CREATE)
 *   EINVAL      devdax offset or length not aligned to the device alignment
 */
int dl_source_open(const struct ibv_dax_mr_init_attr *attr,
		   struct dl_source *src);
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

/* map.c --------------------------------------------------------------- */

struct dl_map {
	void *base;			/* aligned-down start of the mapping */
	size_t map_len;
	void *addr;			/* the requested file offset */
	size_t length;
	pmem2_persist_fn persist;
	enum pmem2_granularity granularity;
};

/*
 * Map [offset, offset + length) of src shared, read-only unless writable.
 * The mapping covers the range widened to pmem2_source_alignment (device
 * DAX: its page size) and addr points at the requested offset.
 */
int dl_map_range(struct dl_source *src, uint64_t offset, size_t length,
		 struct dl_map *map);
void dl_map_unmap(struct dl_map *map);
/* Make [addr, addr + len) inside the map persistent; 0 or -1/errno. */
int dl_map_persist(struct dl_map *map, void *addr, size_t len);
enum ibv_dax_persist_granularity dl_map_granularity(const struct dl_map *map);

/* lease.c ------------------------------------------------------------- */

/*
 * Take the exclusive layout lease (doc/design.md §1.1) on fd.  errno:
 *   EAGAIN   another open file or lease conflicts (message names the pid
 *            from /proc/locks when it can)
 *   EACCES   not the file's owner and no CAP_LEASE (EPERM mapped to EACCES)
 *   EINVAL   kernel without F_LAYOUT (stock), leases disabled
 *            (fs.leases-enable = 0) or not a regular file
 */
int dl_lease_take(int fd, const char *path);
int dl_lease_release(int fd, const char *path);
/*
 * The process's layout lease on one file, shared by all its lease-pin MRs
 * of that file: one lease per (process, inode) however many MRs, so that
 * registering the N-th MR of a file does not walk N leases in open() and
 * F_SETLEASE.  The lease sits on an open file of its own (a duplicate of
 * the first MR's descriptor), which is the DAX_FD of every registration.
 * dl_lease_get() takes the lease or a reference to the one held (errno as
 * dl_lease_take()); dl_lease_put() drops a reference and releases the
 * lease with the last one (0, or -1/errno and the reference stays when
 * the kernel refuses F_UNLCK; with force the reference goes anyway).
 * A forked child never sees the parent's shares (dl_lease_atfork_*).
 */
struct dl_lease_share;
struct dl_lease_share *dl_lease_get(int fd, const char *path, dev_t dev,
				    ino_t ino);
int dl_lease_put(struct dl_lease_share *sh, const char *path, bool force);
int dl_lease_share_fd(const struct dl_lease_share *sh);
void dl_lease_atfork_prepare(void);
void dl_lease_atfork_parent(void);
void dl_lease_atfork_child(void);
/* pid of another process holding a lease on the file (/proc/locks), or 0 */
pid_t dl_lease_holder(dev_t dev, ino_t ino);
/* F_GETLEASE == F_LAYOUT | F_EXCLUSIVE on fd */
bool dl_lease_held(int fd);
/*
 * Process-wide probe (pthread_once): does the kernel accept
 * F_SETLEASE(F_LAYOUT | F_EXCLUSIVE)?  *err gets the fcntl errno (0 when
 * supported).
 */
bool dl_lease_supported(int *err);
/* Uncached probe on a memfd/O_TMPFILE; 1 supported, 0 not, errno in *err */
int dl_lease_probe_now(int *err);

/* ioctl.c ------------------------------------------------------------- */

#define DL_IOCTL_MAX_ATTRS 16

/* A small uverbs ioctl command: one header, attributes in id order. */
struct dl_ioctl {
	/* struct ib_uverbs_ioctl_hdr + DL_IOCTL_MAX_ATTRS attributes */
	uint64_t buf[(sizeof(struct ib_uverbs_ioctl_hdr) +
		      DL_IOCTL_MAX_ATTRS * sizeof(struct ib_uverbs_attr)) /
		     sizeof(uint64_t)];
	struct ib_uverbs_attr scratch;	/* target of attrs past the end */
	bool overflow;
};

static inline struct ib_uverbs_ioctl_hdr *dl_ioctl_hdr(struct dl_ioctl *cmd)
{
	return (struct ib_uverbs_ioctl_hdr *)cmd->buf;
}

void dl_ioctl_init(struct dl_ioctl *cmd, uint16_t object_id,
		   uint16_t method_id, uint32_t driver_id);
struct ib_uverbs_attr *dl_ioctl_attr(struct dl_ioctl *cmd, uint16_t attr_id);
void dl_ioctl_in_obj(struct dl_ioctl *cmd, uint16_t attr_id, uint32_t handle);
struct ib_uverbs_attr *dl_ioctl_new_obj(struct dl_ioctl *cmd,
					uint16_t attr_id);
void dl_ioctl_in_u64(struct dl_ioctl *cmd, uint16_t attr_id, uint64_t val);
void dl_ioctl_in_s32(struct dl_ioctl *cmd, uint16_t attr_id, int32_t val);
void dl_ioctl_in_fd(struct dl_ioctl *cmd, uint16_t attr_id, int fd);
void dl_ioctl_out(struct dl_ioctl *cmd, uint16_t attr_id, void *ptr,
		  uint16_t len);
/* Issue on cmd_fd; returns 0 or the positive errno. */
int dl_ioctl_exec(int cmd_fd, struct dl_ioctl *cmd);

/*
 * The kernel rejects an ioctl whose driver_id differs from the device's
 * (EINVAL) before it looks at the method; libibverbs does not export the
 * id, so find it by asking for a method that cannot exist: the right id
 * answers EPROTONOSUPPORT.  Returns 0 and *driver_id, or the errno.
 */
int dl_ioctl_find_driver_id(int cmd_fd, uint32_t *driver_id);
/*
 * Is DAXLEASE_UVERBS_METHOD_REG_MR with DAX_FD known?  Sent with only the
 * DAX_FD attribute: an unknown method (stock 6.1) or attribute (upstream
 * REG_MR) answers EPROTONOSUPPORT, the daxlease kernel fails its
 * mandatory-attribute check (EINVAL).  1 present, 0 absent, -errno if the
 * probe itself failed (ENOTTY: not a uverbs fd).
 */
int dl_ioctl_probe_reg_mr(int cmd_fd, uint32_t driver_id);

struct dl_reg_mr_args {
	uint32_t pd_handle;
	uint64_t addr;
	uint64_t length;
	uint64_t iova;
	uint64_t access;
	int dax_fd;
	uint64_t dax_offset;
};
struct dl_reg_mr_resp {
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};
/* Extended REG_MR (doc/design.md §4.1); 0 or positive errno. */
int dl_ioctl_reg_mr(int cmd_fd, uint32_t driver_id,
		    const struct dl_reg_mr_args *args,
		    struct dl_reg_mr_resp *resp);
/* UVERBS_METHOD_MR_DESTROY; 0 or positive errno. */
int dl_ioctl_destroy_mr(int cmd_fd, uint32_t driver_id, uint32_t handle);

/* probe.c ------------------------------------------------------------- */

/* What one context offers; cached per (context, uverbs device). */
struct dl_ctx {
	struct dl_ctx *next;
	struct ibv_context *context;
	int cmd_fd;			/* context->cmd_fd at probe time */
	dev_t cmd_rdev;
	uint32_t driver_id;
	bool driver_id_known;
	int lease_err;			/* fcntl errno of the lease probe */
	int reg_mr_err;			/* errno of the REG_MR probe */
	struct ibv_dax_caps caps;
	int async_fd;			/* context->async_fd at probe time */
	/*
	 * While MRs of this context live the library holds a dup of the
	 * context's async event fd: kcmp() against the application's fd
	 * number tells a live context from one closed by ibv_close_device()
	 * (whose MRs the kernel destroyed with the uverbs file).  Not a dup
	 * of cmd_fd: that would keep the kernel objects alive after close
	 * and list every file pin twice in /proc/<pid>/file_pins.
	 */
	int ref_fd;
	unsigned int nmrs;
	bool dead;			/* the application closed the context */
};

/* Find or create the probed entry of context; NULL/errno on failure. */
struct dl_ctx *dl_ctx_get(struct ibv_context *context);
/* Take/drop an MR's reference (opens/closes ref_fd). */
int dl_ctx_ref(struct dl_ctx *ctx);
void dl_ctx_unref(struct dl_ctx *ctx);
/* Is the context still open (ref_fd is the application's async fd)? */
bool dl_ctx_alive(struct dl_ctx *ctx);

/* strategy.c ---------------------------------------------------------- */

/*
 * The table of doc/design.md §3.1, pure.  Returns 0 and *out, or EOPNOTSUPP with a reason
 * naming the missing kernel support (or ENOTSUP-like refusal of
 * IBV_DAX_MR_NO_FALLBACK on page cache).
 */
int dl_strategy_choose(enum ibv_dax_file_kind kind, uint32_t flags,
		       const struct ibv_dax_caps *caps,
		       enum ibv_dax_mr_strategy *out, char *msg,
		       size_t msglen);
const char *dl_strategy_name(enum ibv_dax_mr_strategy s);

/* pins.c -------------------------------------------------------------- */

/*
 * /proc/<pid>/file_pins (doc/design.md §1.7):
 *
 *	4: /dev/infiniband/uverbs0	an owner: fd number and its path
 *		/mnt/pmem/foo		tab-indented: files pinned through it
 *	/mnt/pmem/bar			bare path: pinned through the mm
 *
 * Empty lines are ignored; the last line may lack its newline.  Malformed:
 * a tab line before any owner, an empty path, an owner line whose fd
 * number overflows, a NUL byte.
 */
struct dl_pin_owner {
	int fd;
	char *path;			/* e.g. /dev/infiniband/uverbs0 */
	size_t nfiles;
	char **files;
};

struct dl_pins {
	size_t nowners;
	struct dl_pin_owner *owners;
	size_t nmm;			/* mm-owned pins */
	char **mm_files;
	size_t err_line;		/* 1-based line of a parse error */
};

/*
 * Pure: parse len bytes of buf into out (zeroed first).  Returns 0,
 * EINVAL (malformed; out->err_line says where) or ENOMEM.  On error out
 * holds nothing to free beyond what dl_pins_free() handles.
 */
int dl_pins_parse(const char *buf, size_t len, struct dl_pins *out);
void dl_pins_free(struct dl_pins *pins);
/* Read and parse /proc/<pid>/file_pins (pid 0: self); 0 or errno
 * (ENOENT: kernel without file_pins). */
int dl_pins_read(pid_t pid, struct dl_pins *out);
/* Number of pins (owner or mm) on exactly path. */
size_t dl_pins_count(const struct dl_pins *pins, const char *path);
size_t dl_pins_total(const struct dl_pins *pins);

/* mr.c ---------------------------------------------------------------- */

#define DL_MR_MAGIC 0x64786c656173654dULL	/* "Mesaelxd" */

struct dl_mr {
	struct ibv_mr ibv;		/* returned to the application */
	uint64_t magic;
	struct dl_mr *hnext;		/* registry bucket chain */
	pid_t owner_pid;		/* fork(): the child gets no MR */
	struct dl_ctx *ctx;
	struct ibv_mr *provider_mr;	/* PLAIN / ODP */
	struct dl_source src;
	struct dl_map map;
	enum ibv_dax_mr_strategy strategy;
	bool lease_held;		/* holds a reference on lease */
	struct dl_lease_share *lease;
	uint64_t offset;
	size_t length;
	unsigned int access;
	uint32_t flags;
};

/* Live MRs in the registry (tests). */
size_t dl_mr_live_count(void);

/* teststop.c (test builds only) --------------------------------------- */

/*
 * Stop points for the guest fault tests: in a build with
 * DAXLEASE_TEST_STOP defined (the daxlease_teststop archive the guest
 * test programs link, never libdaxlease.so), dl_test_stop(STAGE) stops
 * the calling process with SIGSTOP when the environment variable
 * DAXLEASE_TEST_STOP names STAGE, so that a test can kill -9 it there.
 * The stage names are an interface of the tests: keep them stable.
 *   reg_opened       dl_source_open() done, nothing mapped
 *   reg_mapped       the file range is mapped
 *   reg_leased       the layout lease is held, the pin not yet asked for
 *   reg_ioctl        just before the extended REG_MR ioctl
 *   reg_registered   the MR exists in the kernel, not yet in the registry
 *   dereg_destroyed  MR destroyed, lease, mapping and fd still held
 * reg_leased, reg_ioctl and reg_registered are on the lease-pin path
 * (FS-DAX) only.  Elsewhere it compiles to nothing.
 */
#ifdef DAXLEASE_TEST_STOP
void dl_test_stop(const char *stage);
#else
#define dl_test_stop(stage) ((void)0)
#endif

#endif /* DAXLEASE_INTERNAL_H */
