// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A loopback pair of RC QPs for the guest tests; see rcloop.h.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rcloop.h"

#define RCLOOP_PORT	1
#define RCLOOP_DEPTH	16
#define RCLOOP_PSN	0x1234

struct rcloop {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];	/* [0] requester, [1] responder */
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
	uint64_t next_wr_id;
	unsigned int kicks;	/* rcloop_kick() calls, for the record */
	unsigned int redone;	/* operations redone on a new QP pair */
	enum ibv_wc_status status;	/* of the last failed completion */
};

static atomic_uint rcloop_redone_all;

static __thread char rcloop_msg[256];

const char *rcloop_errmsg(void)
{
	return rcloop_msg;
}

/* Records the reason and sets errno; always returns -1. */
static int __attribute__((format(printf, 2, 3)))
rcloop_err(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rcloop_msg, sizeof(rcloop_msg), fmt, ap);
	va_end(ap);
	if (err && n >= 0 && (size_t)n < sizeof(rcloop_msg))
		snprintf(rcloop_msg + n, sizeof(rcloop_msg) - n, ": %s",
			 strerror(err));
	errno = err;
	return -1;
}

struct ibv_context *rcloop_open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n, err = ENODEV;

	if (!name)
		name = getenv("DAXLEASE_RDMA_DEV");
	list = ibv_get_device_list(&n);
	if (!list) {
		rcloop_err(errno, "ibv_get_device_list");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (name && *name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			err = errno;
		break;
	}
	ibv_free_device_list(list);
	if (!ctx) {
		if (i == n)
			rcloop_err(ENODEV, "no RDMA device %s",
				   name && *name ? name : "at all");
		else
			rcloop_err(err, "ibv_open_device(%s)", name);
		return NULL;
	}
	return ctx;
}

int rcloop_env_gid_index(void)
{
	const char *s = getenv("DAXLEASE_GID_INDEX");
	char *end;
	long v;

	if (!s || !*s)
		return 0;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > 255)
		return 0;
	return v;
}

static struct ibv_qp *rcloop_qp(struct rcloop *l)
{
	struct ibv_qp_init_attr init = {
		.send_cq = l->cq,
		.recv_cq = l->cq,
		.cap = {
			.max_send_wr = RCLOOP_DEPTH,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};

	return ibv_create_qp(l->pd, &init);
}

/* Walks @qp through INIT, RTR and RTS towards QP number @dest_qpn. */
static int rcloop_connect(struct rcloop *l, struct ibv_qp *qp,
			  uint32_t dest_qpn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RCLOOP_PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return rcloop_err(ret, "modify QP %u to INIT", qp->qp_num);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = l->mtu;
	attr.dest_qp_num = dest_qpn;
	attr.rq_psn = RCLOOP_PSN;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = l->gid;
	attr.ah_attr.grh.sgid_index = l->gid_index;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.port_num = RCLOOP_PORT;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return rcloop_err(ret, "modify QP %u to RTR (GID index %d)",
				  qp->qp_num, l->gid_index);

	/*
	 * A retransmit timeout near a second, not rxe's usual 67 ms: under
	 * TCG a 256 KiB READ reply can take longer than that, and the READ
	 * is then sent again.  rxe's responder replays such a duplicate
	 * even after the READ completed and its MR was deregistered, fails
	 * the lookup and goes to the error state, with a NAK the requester
	 * drops as old.  Six retries, not seven, which rxe takes for
	 * "retry forever": a responder lost that way then shows as
	 * IBV_WC_RETRY_EXC_ERR instead of a silent hang.
	 */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 18;
	attr.retry_cnt = 6;
	attr.rnr_retry = 7;
	attr.sq_psn = RCLOOP_PSN;
	attr.max_rd_atomic = 1;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		return rcloop_err(ret, "modify QP %u to RTS", qp->qp_num);
	return 0;
}

/* Destroys the QP pair, if any. */
static void rcloop_drop_qps(struct rcloop *l)
{
	int i;

	for (i = 1; i >= 0; i--) {
		if (l->qp[i])
			ibv_destroy_qp(l->qp[i]);
		l->qp[i] = NULL;
	}
}

/*
 * Creates the QP pair on l->cq and connects it, the one before dropped:
 * 0, or -1 with errno and l->qp[] NULL.
 */
static int rcloop_new_qps(struct rcloop *l)
{
	int i, ret;

	rcloop_drop_qps(l);
	for (i = 0; i < 2; i++) {
		l->qp[i] = rcloop_qp(l);
		if (!l->qp[i]) {
			rcloop_err(errno, "ibv_create_qp(RC)");
			goto err;
		}
	}
	if (!rcloop_connect(l, l->qp[0], l->qp[1]->qp_num) &&
	    !rcloop_connect(l, l->qp[1], l->qp[0]->qp_num))
		return 0;
err:
	ret = errno;
	rcloop_drop_qps(l);
	errno = ret;
	return -1;
}

struct rcloop *rcloop_create(struct ibv_context *ctx, struct ibv_pd *pd,
			     int gid_index)
{
	struct ibv_port_attr port;
	struct rcloop *l;
	int ret, i;

	if (!ctx || !pd || gid_index < 0) {
		rcloop_err(EINVAL, "rcloop_create: NULL context/PD or GID index < 0");
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		rcloop_err(ENOMEM, "rcloop_create");
		return NULL;
	}
	l->ctx = ctx;
	l->pd = pd;
	l->gid_index = gid_index;

	ret = ibv_query_port(ctx, RCLOOP_PORT, &port);
	if (ret) {
		rcloop_err(ret, "ibv_query_port(%d)", RCLOOP_PORT);
		goto err_free;
	}
	l->mtu = port.active_mtu;
	if (ibv_query_gid(ctx, RCLOOP_PORT, gid_index, &l->gid)) {
		rcloop_err(errno ? errno : EINVAL, "ibv_query_gid(index %d)",
			   gid_index);
		goto err_free;
	}
	for (i = 0; i < 16 && !l->gid.raw[i]; i++)
		;
	if (i == 16) {
		rcloop_err(EINVAL, "GID index %d of %s is empty", gid_index,
			   ibv_get_device_name(ctx->device));
		goto err_free;
	}

	l->cq = ibv_create_cq(ctx, 2 * RCLOOP_DEPTH, NULL, NULL, 0);
	if (!l->cq) {
		rcloop_err(errno, "ibv_create_cq");
		goto err_free;
	}
	if (rcloop_new_qps(l)) {
		ret = errno;
		ibv_destroy_cq(l->cq);
		errno = ret;
		goto err_free;
	}
	return l;

err_free:
	ret = errno;
	free(l);
	errno = ret;
	return NULL;
}

static double rcloop_timeout(void)
{
	const char *s = getenv("RCLOOP_TIMEOUT");
	double v = s ? atof(s) : 0;

	return v > 0 ? v : 30;
}

static double rcloop_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int rcloop_wait(struct rcloop *l, uint64_t wr_id, const char *what,
		       size_t len, uint32_t rkey);

/* The state of @qp as a word, for the record of a stall. */
static const char *rcloop_qp_state(struct ibv_qp *qp)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return "?";
	if ((unsigned int)attr.qp_state >= sizeof(names) / sizeof(names[0]) ||
	    !names[attr.qp_state])
		return "?";
	return names[attr.qp_state];
}

static int rcloop_post(struct rcloop *l, enum ibv_wr_opcode op,
		       const char *what, void *local, uint32_t lkey,
		       uint64_t remote_addr, uint32_t rkey, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local,
		.length = len,
		.lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = ++l->next_wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = remote_addr,
			.rkey = rkey,
		},
	};
	struct ibv_send_wr *bad;
	char first[sizeof(rcloop_msg)];
	int ret, n;

	if (!l || (!local && len) || len > UINT32_MAX)
		return rcloop_err(EINVAL, "rcloop %s: bad arguments", what);
	for (n = 0;; n++) {
		if (!l->qp[0])
			return rcloop_err(EIO, "rcloop %s: no QP pair (renewing it failed)",
					  what);
		ret = ibv_post_send(l->qp[0], &wr, &bad);
		if (ret)
			return rcloop_err(ret, "ibv_post_send(%s, %zu bytes)",
					  what, len);
		ret = rcloop_wait(l, wr.wr_id, what, len, rkey);
		if (!ret || n || !(errno == ETIMEDOUT ||
				   (errno == EIO &&
				    l->status == IBV_WC_RETRY_EXC_ERR)))
			break;
		/*
		 * The pair stalled, or the responder is gone (see
		 * rcloop_connect()): nothing the responder's side refused.
		 * The same READ or WRITE once more on a new pair of QPs
		 * (both are idempotent; the old pair is destroyed first, so
		 * that nothing of it lands later).
		 */
		snprintf(first, sizeof(first), "%s", rcloop_msg);
		fprintf(stderr, "rcloop: %s; QP states %s/%s; redoing it on a new QP pair\n",
			first, rcloop_qp_state(l->qp[0]),
			rcloop_qp_state(l->qp[1]));
		if (rcloop_new_qps(l))
			return -1;
		l->redone++;
		atomic_fetch_add(&rcloop_redone_all, 1);
		wr.wr_id = ++l->next_wr_id;
	}
	if (ret && n) {
		char again[sizeof(rcloop_msg)];
		int err = errno;

		snprintf(again, sizeof(again), "%s", rcloop_msg);
		rcloop_err(0, "%s; on a new QP pair: %s", first, again);
		errno = err;
	}
	return ret;
}

int rcloop_bind_mw(struct rcloop *l, struct ibv_mw *mw, struct ibv_mr *mr,
		   uint64_t addr, size_t len, unsigned int access)
{
	struct ibv_mw_bind bind = {
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = mr,
			.addr = addr,
			.length = len,
			.mw_access_flags = access,
		},
	};
	int ret;

	if (!l || !mw || !mr)
		return rcloop_err(EINVAL, "rcloop bind MW: bad arguments");
	if (!l->qp[0])
		return rcloop_err(EIO, "rcloop bind MW: no QP pair (renewing it failed)");
	bind.wr_id = ++l->next_wr_id;
	ret = ibv_bind_mw(l->qp[0], mw, &bind);
	if (ret)
		return rcloop_err(ret, "ibv_bind_mw: %s", strerror(ret));
	return rcloop_wait(l, bind.wr_id, "bind MW", len, mr->rkey);
}

/*
 * rxe's requester stops when more than RXE_INFLIGHT_SKBS_PER_QP_HIGH of
 * its packets are in flight and is woken by the skb destructor; the flag
 * it sets is not checked again after setting it, so a destructor that
 * runs in between loses the wakeup, and with every packet acknowledged
 * no timer is left to restart it (seen on 6.12's rxe: a 1 MiB RDMA WRITE
 * that never completes).  Posting another work request schedules the
 * requester again: a zero-length RDMA WRITE (no address, no rkey: IBTA
 * C9-88), whose completion later waits skip.
 */
#define RCLOOP_KICK_AFTER	2.0	/* seconds without a completion */
#define RCLOOP_KICKS		4

static void rcloop_kick(struct rcloop *l)
{
	struct ibv_send_wr wr = {
		.wr_id = ++l->next_wr_id,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (!ibv_post_send(l->qp[0], &wr, &bad))
		l->kicks++;
}

static int rcloop_wait(struct rcloop *l, uint64_t wr_id, const char *what,
		       size_t len, uint32_t rkey)
{
	double deadline, now, kick;
	struct ibv_wc wc;
	int n, kicks = 0;

	now = rcloop_now();
	deadline = now + rcloop_timeout();
	kick = now + RCLOOP_KICK_AFTER;
	for (;;) {
		n = ibv_poll_cq(l->cq, 1, &wc);
		if (n < 0)
			return rcloop_err(EIO, "ibv_poll_cq failed");
		if (n == 0) {
			now = rcloop_now();
			if (now > deadline)
				return rcloop_err(ETIMEDOUT,
						  "no completion of the %s of %zu bytes (the send queue kicked %d time(s))",
						  what, len, kicks);
			if (now > kick && kicks < RCLOOP_KICKS) {
				rcloop_kick(l);
				kicks++;
				kick = now + RCLOOP_KICK_AFTER;
			}
			continue;
		}
		if (wc.wr_id != wr_id)
			continue;	/* flushed leftover of an older WR */
		l->status = wc.status;
		if (wc.status != IBV_WC_SUCCESS)
			return rcloop_err(EIO, "%s of %zu bytes to rkey 0x%x completed with %s (%d)",
					  what, len, rkey,
					  ibv_wc_status_str(wc.status),
					  wc.status);
		return 0;
	}
}

int rcloop_write(struct rcloop *l, void *local, uint32_t lkey,
		 uint64_t remote_addr, uint32_t rkey, size_t len)
{
	return rcloop_post(l, IBV_WR_RDMA_WRITE, "RDMA WRITE", local, lkey,
			   remote_addr, rkey, len);
}

int rcloop_read(struct rcloop *l, void *local, uint32_t lkey,
		uint64_t remote_addr, uint32_t rkey, size_t len)
{
	return rcloop_post(l, IBV_WR_RDMA_READ, "RDMA READ", local, lkey,
			   remote_addr, rkey, len);
}

void rcloop_destroy(struct rcloop *l)
{
	if (!l)
		return;
	if (l->kicks)
		fprintf(stderr, "rcloop: the send queue was kicked %u time(s) (rxe requester stall)\n",
			l->kicks);
	if (l->redone)
		fprintf(stderr, "rcloop: %u operation(s) redone on a new QP pair after a stall\n",
			l->redone);
	rcloop_drop_qps(l);
	ibv_destroy_cq(l->cq);
	free(l);
}

unsigned int rcloop_redone_total(void)
{
	return atomic_load(&rcloop_redone_all);
}
