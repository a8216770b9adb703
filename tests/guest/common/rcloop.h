/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * rcloop: a connected pair of RC queue pairs on one device context, for
 * guest tests that need real RDMA traffic into a memory region.
 *
 * Both QPs live on the caller's context and protection domain and are
 * connected to each other over one RoCE GID of port 1 (on rxe over a dummy
 * netdev the traffic loops back inside the kernel).  QP "a" is the
 * requester: rcloop_write() and rcloop_read() post one signalled RDMA WRITE
 * or READ on it and wait for its completion; QP "b" is the responder whose
 * side the remote MR must be registered on (the same PD, with
 * IBV_ACCESS_REMOTE_WRITE or IBV_ACCESS_REMOTE_READ).
 *
 * Every function returns 0 (or a pointer) on success and -1 (or NULL) on
 * failure with errno set and a one-line reason in rcloop_errmsg()
 * (thread-local, valid until the thread's next rcloop call).
 *
 * Link with the CMake target dtest_rcloop, which exports this directory.
 */
#ifndef DAXLEASE_RCLOOP_H
#define DAXLEASE_RCLOOP_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rcloop;

/*
 * rcloop_open_device - open the RDMA device named @name, or when @name is
 * NULL the one named by $DAXLEASE_RDMA_DEV, or when that is unset the
 * first device.  Returns the context or NULL (ENODEV: no such device).
 */
struct ibv_context *rcloop_open_device(const char *name);

/*
 * rcloop_env_gid_index - $DAXLEASE_GID_INDEX (the RoCE v2 GID index the
 * test VM found), or 0 when unset or not a number.
 */
int rcloop_env_gid_index(void);

/*
 * rcloop_create - create a CQ and two RC QPs on @ctx/@pd and bring them to
 * RTS connected to each other through GID @gid_index of port 1.  Each QP
 * allows remote read, write and atomic access and one outstanding RDMA
 * READ, and retransmits after about a second, six times at most.
 * Returns the pair, or NULL with errno (EINVAL: bad arguments or GID
 * entry empty; else the verbs error).
 */
struct rcloop *rcloop_create(struct ibv_context *ctx, struct ibv_pd *pd,
			     int gid_index);

/*
 * rcloop_write - RDMA WRITE @len bytes from @local (inside an MR of the
 * pair's PD with key @lkey) to @remote_addr of the MR with @rkey, and wait
 * for the completion (at most $RCLOOP_TIMEOUT seconds, default 30).
 * When none comes in that time, or it says the retries were exhausted
 * (IBV_WC_RETRY_EXC_ERR: rxe can stall a pair or lose its responder for
 * reasons of its own; see rcloop.c), the pair is replaced by a new one
 * and the operation is posted once more, with a line on stderr;
 * rcloop_redone_total() counts these.
 * Returns 0, or -1 with errno: EIO (completion with an error status, named
 * in the message), ETIMEDOUT (no completion on either pair), or the
 * ibv_post_send() error.  After a failed completion the QP is in the
 * error state and the pair must be destroyed.
 */
int rcloop_write(struct rcloop *l, void *local, uint32_t lkey,
		 uint64_t remote_addr, uint32_t rkey, size_t len);

/* rcloop_read - as rcloop_write(), but RDMA READ from remote into @local. */
int rcloop_read(struct rcloop *l, void *local, uint32_t lkey,
		uint64_t remote_addr, uint32_t rkey, size_t len);

/*
 * rcloop_bind_mw - bind the type 1 memory window @mw to [@addr, +@len) of
 * @mr with @access through the requester QP, and wait for the completion.
 * Returns 0 or -1 with errno, as rcloop_write(), but a bind is never redone.
 */
int rcloop_bind_mw(struct rcloop *l, struct ibv_mw *mw, struct ibv_mr *mr,
		   uint64_t addr, size_t len, unsigned int access);

/*
 * rcloop_redone_total - how many READs and WRITEs this process redid on a
 * new QP pair after a stall, over all pairs: for tests to report.
 */
unsigned int rcloop_redone_total(void);

/* rcloop_destroy - destroy the QPs and the CQ; NULL is a no-op. */
void rcloop_destroy(struct rcloop *l);

/* rcloop_errmsg - reason of the calling thread's last rcloop failure. */
const char *rcloop_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif /* DAXLEASE_RCLOOP_H */
