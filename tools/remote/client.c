// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * daxlease-remote-client: the client side of `daxlease serve` (the protocol
 * of dlr_proto.h).  It links verbs and the RDMA CM only: a client host
 * needs nothing of daxlease.
 *
 *   put    RDMA-WRITE records and have them made durable, printing
 *          "acked SEQ" once every record up to SEQ is durable
 *   check  RDMA-READ records back and check that they are intact
 *   lat    latency of a durable write: WRITE, then PERSIST + ACK or FLUSH
 *
 * A range is made durable one of two ways (--persist): a PERSIST message
 * that the server answers with an ACK once it has persisted the range,
 * or, where the server registered its region for it and this client's
 * libibverbs and device can post it, an IBTA RDMA FLUSH of placement type
 * persistent, whose completion says the same without the server's CPU.
 *
 * Every wait is bounded (--timeout): a server that vanishes ends the
 * client with an error, never a hang.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "remote/dlr_proto.h"

#define PROG "daxlease-remote-client"
#define NRECV 72		/* > the server's most credits, plus REGION */
#define NSEND 8
#define MAX_IO (1UL << 20)	/* bytes of one WRITE or READ */
/* wr_id of the RDMA FLUSH, told apart from the SENDs and READs (0) */
#define WR_FLUSH 1

enum persist_mode {
	PERSIST_AUTO,		/* FLUSH where it can be posted, else PERSIST */
	PERSIST_SEND,		/* PERSIST + ACK */
	PERSIST_FLUSH,		/* RDMA FLUSH, or an error */
};

struct opts {
	const char *addr;
	const char *port;
	const char *cmd;
	unsigned int timeout_ms;
	unsigned int retry_s;
	uint32_t client;
	uint64_t count;
	uint64_t size;
	uint64_t base;
	uint64_t start;
	uint64_t batch;
	uint64_t slots;		/* 0: no wrap */
	uint64_t iters;
	enum persist_mode persist;
	bool quiet;
};

struct conn {
	struct rdma_cm_id *id;
	struct rdma_event_channel *ch;	/* the id's, asynchronous */
	struct dlr_msg recv[NRECV];
	struct dlr_msg send[NSEND];
	struct ibv_mr *msg_mr;
	struct ibv_mr *data_mr;
	char *data;
	size_t data_len;
	uint64_t raddr;
	uint64_t rlen;
	uint32_t rkey;
	uint32_t credits;
	uint32_t flags;
	unsigned int next_send;
	unsigned int timeout_ms;
	/* the QP can post RDMA FLUSH (NULL: it cannot; why_no_flush says why) */
	struct ibv_qp_ex *qpx;
	const char *why_no_flush;
	char why_buf[160];
	bool use_flush;		/* ranges are made durable with FLUSH */
	bool fatal;		/* the connect failed for good: no retry */
	/*
	 * A client that makes its ranges durable with RDMA FLUSH sends the
	 * server nothing, and a server drops a client silent for its
	 * REGION's idle_ms: so every keepalive_us (a third of it; 0: never)
	 * a range is made durable with PERSIST instead.
	 */
	double keepalive_us;
	double last_persist_us;	/* when the last PERSIST was sent */
	uint64_t nflush;	/* ranges made durable with FLUSH */
	uint64_t npersist;	/* and with PERSIST */
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " -a ADDR [-p PORT] [-t MS] [-R SEC] COMMAND [options]\n"
		"  put   --id C --count N --size B [--base OFF] [--start SEQ] [--batch K]\n"
		"        [--slots W]\n"
		"        write records START..START+N-1 of client C, record SEQ at\n"
		"        BASE + (SEQ mod W) * B of the served region (W: no wrap by\n"
		"        default); K records are made durable at once; prints\n"
		"        \"acked SEQ\" when they are\n"
		"  check --id C --count N --size B [--base OFF] [--start SEQ] [--slots W]\n"
		"        read the same records back; exit 0 only if all are intact\n"
		"  lat   --size B [--iters N] [--base OFF]\n"
		"        WRITE B bytes and make them durable, N times (default\n"
		"        1000); prints min, median, p99 and max in microseconds\n"
		"  --persist M    how a range is made durable: send (PERSIST, then\n"
		"                 the server's ACK), flush (RDMA FLUSH, persistent;\n"
		"                 an error where it cannot be posted) or auto (the\n"
		"                 default: flush where it can be posted, else send)\n"
		"  -a ADDR        server address\n"
		"  -p PORT        port (default " DLR_DEFAULT_PORT ")\n"
		"  -t MS          bound of every wait (default 10000)\n"
		"  -R SEC         keep trying to connect for SEC seconds (default 0)\n"
		"  -q             put: print only the last acked\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	int shift = 0;

	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || v > (ULLONG_MAX >> shift))
		return -1;
	v <<= shift;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "base", required_argument, NULL, 'b' },
		{ "start", required_argument, NULL, 'S' },
		{ "batch", required_argument, NULL, 'k' },
		{ "slots", required_argument, NULL, 'w' },
		{ "iters", required_argument, NULL, 'N' },
		{ "persist", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t v;
	int c;

	o->port = DLR_DEFAULT_PORT;
	o->timeout_ms = 10000;
	o->batch = 1;
	o->iters = 1000;
	/* options before and after the command */
	while ((c = getopt_long(argc, argv, "+a:p:t:R:qh", lo, NULL)) != -1 ||
	       (optind < argc && !o->cmd)) {
		if (c == -1) {
			o->cmd = argv[optind++];
			continue;
		}
		switch (c) {
		case 'a': o->addr = optarg; break;
		case 'p': o->port = optarg; break;
		case 'q': o->quiet = true; break;
		case 't':
			if (parse_u64(optarg, &v) || !v || v > 3600000)
				goto bad;
			o->timeout_ms = v;
			break;
		case 'R':
			if (parse_u64(optarg, &v) || v > 86400)
				goto bad;
			o->retry_s = v;
			break;
		case 'i':
			if (parse_u64(optarg, &v) || v > UINT32_MAX)
				goto bad;
			o->client = v;
			break;
		case 'n': if (parse_u64(optarg, &o->count)) goto bad; break;
		case 's': if (parse_u64(optarg, &o->size)) goto bad; break;
		case 'b': if (parse_u64(optarg, &o->base)) goto bad; break;
		case 'S': if (parse_u64(optarg, &o->start)) goto bad; break;
		case 'k': if (parse_u64(optarg, &o->batch) || !o->batch) goto bad; break;
		case 'w': if (parse_u64(optarg, &o->slots) || !o->slots) goto bad; break;
		case 'N': if (parse_u64(optarg, &o->iters) || !o->iters) goto bad; break;
		case 'P':
			if (!strcmp(optarg, "auto"))
				o->persist = PERSIST_AUTO;
			else if (!strcmp(optarg, "send"))
				o->persist = PERSIST_SEND;
			else if (!strcmp(optarg, "flush"))
				o->persist = PERSIST_FLUSH;
			else
				goto bad;
			break;
		case 'h': usage(stdout); exit(0);
		default: goto usage;
		}
	}
	if (optind != argc || !o->addr || !o->cmd)
		goto usage;
	if (strcmp(o->cmd, "put") && strcmp(o->cmd, "check") &&
	    strcmp(o->cmd, "lat")) {
		fprintf(stderr, PROG ": unknown command '%s'\n", o->cmd);
		goto usage;
	}
	/* check makes nothing durable: --persist does not apply */
	if (!strcmp(o->cmd, "check"))
		o->persist = PERSIST_SEND;
	if (!strcmp(o->cmd, "lat")) {
		if (!o->size || o->size > MAX_IO) {
			fprintf(stderr, PROG ": lat: --size 1..%lu\n", MAX_IO);
			return 2;
		}
		return 0;
	}
	{
		uint64_t last, bytes;

		/* every record's place is a 64-bit offset */
		if (__builtin_add_overflow(o->start, o->count, &last) ||
		    (!o->slots &&
		     (__builtin_mul_overflow(last, o->size, &bytes) ||
		      __builtin_add_overflow(bytes, o->base, &bytes))) ||
		    (o->slots &&
		     (__builtin_mul_overflow(o->slots, o->size, &bytes) ||
		      __builtin_add_overflow(bytes, o->base, &bytes)))) {
			fprintf(stderr, PROG ": %s: the records end beyond 2^64 bytes\n",
				o->cmd);
			return 2;
		}
	}
	if (o->slots && o->count > o->slots) {
		fprintf(stderr, PROG ": %s: --count at most --slots, or records overwrite each other\n",
			o->cmd);
		return 2;
	}
	if (o->size < 64 || o->size % 8 || o->size > MAX_IO || !o->count ||
	    o->count > (1ULL << 40) || o->batch > MAX_IO / 64 ||
	    o->batch * o->size > MAX_IO) {
		fprintf(stderr, PROG ": %s: --size a multiple of 8 in 64..%lu, --count at least 1, --batch x --size at most %lu\n",
			o->cmd, MAX_IO, MAX_IO);
		return 2;
	}
	return 0;
bad:
	fprintf(stderr, PROG ": bad value '%s'\n", optarg);
usage:
	usage(stderr);
	return 2;
}

/* Wait for one completion of cq, at most timeout_ms; 0, or -1 (errno). */
static int wait_wc(struct ibv_cq *cq, struct ibv_comp_channel *ch,
		   unsigned int timeout_ms, struct ibv_wc *wc)
{
	double deadline = now_us() + timeout_ms * 1000.0;
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ecq;
	void *ctx;
	int n, left;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return errno = EIO, -1;
		if (n == 1)
			break;
		if (ibv_req_notify_cq(cq, 0))
			return -1;
		n = ibv_poll_cq(cq, 1, wc);
		if (n == 1)
			break;
		left = (deadline - now_us()) / 1000;
		if (left <= 0)
			return errno = ETIMEDOUT, -1;
		n = poll(&pfd, 1, left);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0 && !ibv_get_cq_event(ch, &ecq, &ctx))
			ibv_ack_cq_events(ecq, 1);
	}
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, PROG ": completion: %s\n",
			ibv_wc_status_str(wc->status));
		return errno = EIO, -1;
	}
	return 0;
}

static int wait_send(struct conn *c, const char *what)
{
	struct ibv_wc wc;

	if (wait_wc(c->id->send_cq, c->id->send_cq_channel, c->timeout_ms,
		    &wc)) {
		fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
		return -1;
	}
	return 0;
}

/* The next message from the server, of type; its receive reposted. */
static struct dlr_msg *wait_msg(struct conn *c, uint16_t type)
{
	struct dlr_msg *m;
	struct ibv_wc wc;

	if (wait_wc(c->id->recv_cq, c->id->recv_cq_channel, c->timeout_ms,
		    &wc)) {
		fprintf(stderr, PROG ": waiting for the server: %s\n",
			strerror(errno));
		return NULL;
	}
	m = (struct dlr_msg *)(uintptr_t)wc.wr_id;
	if (wc.byte_len != sizeof(*m) || be32toh(m->magic) != DLR_MAGIC ||
	    be16toh(m->version) != DLR_VERSION || be16toh(m->type) != type) {
		fprintf(stderr, PROG ": protocol error: want message type %u, got %u\n",
			type, be16toh(m->type));
		return NULL;
	}
	/* copied out before the buffer is reposted */
	c->send[NSEND - 1] = *m;
	if (rdma_post_recv(c->id, m, m, sizeof(*m), c->msg_mr)) {
		perror(PROG ": rdma_post_recv");
		return NULL;
	}
	return &c->send[NSEND - 1];
}

/*
 * rdma_destroy_ep() destroys the QP and the id; the kernel then sends the
 * DREQ without waiting for the server, which may be gone.
 */
static void conn_close(struct conn *c)
{
	if (c->id) {
		if (c->data_mr)
			rdma_dereg_mr(c->data_mr);
		if (c->msg_mr)
			rdma_dereg_mr(c->msg_mr);
		rdma_destroy_ep(c->id);
	}
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	c->data_mr = c->msg_mr = NULL;
	c->id = NULL;
	c->ch = NULL;
	c->qpx = NULL;
	c->use_flush = false;
}

/* The next CM event, of type want, within timeout_ms; 0 or -1 (errno). */
static int wait_cm(struct conn *c, enum rdma_cm_event_type want,
		   unsigned int timeout_ms)
{
	struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	int n;

	do
		n = poll(&pfd, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return errno = n ? errno : ETIMEDOUT, -1;
	if (rdma_get_cm_event(c->ch, &ev))
		return -1;
	type = ev->event;
	rdma_ack_cm_event(ev);
	if (type == want)
		return 0;
	errno = type == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED :
		type == RDMA_CM_EVENT_UNREACHABLE ? EHOSTUNREACH : ECONNRESET;
	return -1;
}

/*
 * This kernel's device can execute RDMA FLUSH of placement type
 * persistent (IB_UVERBS_DEVICE_FLUSH_PERSISTENT, Linux 6.2); rxe sends
 * FLUSH on a device that has it.
 */
#define DEVICE_FLUSH_PERSISTENT (1ULL << 39)

/*
 * The QP of the connection: unless --persist send, one that can post RDMA
 * FLUSH where this libibverbs, the device and its provider can (c->qpx),
 * else a plain one, with the reason in c->why_no_flush.  0, or -1 (errno).
 */
static int create_qp(struct conn *c, const struct opts *o,
		     struct ibv_qp_init_attr *qa)
{
	if (o->persist == PERSIST_SEND) {
		c->why_no_flush = strcmp(o->cmd, "check") ?
				  "--persist send" : "check makes nothing durable";
		return rdma_create_qp(c->id, NULL, qa);
	}
	c->why_no_flush = c->why_buf;
#ifdef DL_HAVE_IBV_FLUSH
	{
		struct ibv_qp_init_attr_ex qx = {
			.cap = qa->cap,
			.qp_type = IBV_QPT_RC,
			.sq_sig_all = 0,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = c->id->pd,
			.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
					  IBV_QP_EX_WITH_RDMA_READ |
					  IBV_QP_EX_WITH_SEND |
					  IBV_QP_EX_WITH_FLUSH,
		};
		struct ibv_device_attr_ex da;

		if (ibv_query_device_ex(c->id->verbs, NULL, &da))
			snprintf(c->why_buf, sizeof(c->why_buf),
				 "querying %s: %s",
				 ibv_get_device_name(c->id->verbs->device),
				 strerror(errno));
		else if (!(da.device_cap_flags_ex & DEVICE_FLUSH_PERSISTENT))
			snprintf(c->why_buf, sizeof(c->why_buf),
				 "%s on this kernel has no RDMA FLUSH (rxe: Linux 6.2 and later)",
				 ibv_get_device_name(c->id->verbs->device));
		else if (rdma_create_qp_ex(c->id, &qx))
			snprintf(c->why_buf, sizeof(c->why_buf),
				 "a queue pair that posts RDMA FLUSH on %s: %s",
				 ibv_get_device_name(c->id->verbs->device),
				 strerror(errno));
		else if (!(c->qpx = ibv_qp_to_qp_ex(c->id->qp)))
			return errno = EPROTO, -1;
		else
			return 0;
	}
#else
	snprintf(c->why_buf, sizeof(c->why_buf),
		 "this client's libibverbs cannot post RDMA FLUSH (rdma-core 45 and later can)");
#endif
	if (o->persist == PERSIST_FLUSH) {
		/* no retry: it would not change */
		c->fatal = true;
		return errno = EOPNOTSUPP, -1;
	}
	return rdma_create_qp(c->id, NULL, qa);
}

static int try_connect(struct conn *c, const struct opts *o)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr qa = {
		.cap = {
			.max_send_wr = NSEND + 4,
			.max_recv_wr = NRECV,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};
	struct rdma_conn_param cp = {
		.initiator_depth = 1,
		.responder_resources = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	int ret, i;

	ret = rdma_getaddrinfo(o->addr, o->port, &hints, &res);
	if (ret) {
		fprintf(stderr, PROG ": %s port %s: %s\n", o->addr, o->port,
			gai_strerror(ret));
		return errno = EINVAL, -1;
	}
	/* address and route resolution: bounded by librdmacm (2 s each) */
	ret = rdma_create_ep(&c->id, res, NULL, NULL);
	rdma_freeaddrinfo(res);
	if (ret) {
		c->id = NULL;
		return -1;
	}
	c->qpx = NULL;
	c->why_no_flush = NULL;
	if (create_qp(c, o, &qa))
		goto fail;
	/* asynchronous from here: the connect is waited for, bounded */
	c->ch = rdma_create_event_channel();
	if (!c->ch || rdma_migrate_id(c->id, c->ch))
		goto fail;
	c->msg_mr = rdma_reg_msgs(c->id, c->recv, sizeof(c->recv) +
				  sizeof(c->send));
	c->data_mr = rdma_reg_msgs(c->id, c->data, c->data_len);
	if (!c->msg_mr || !c->data_mr)
		goto fail;
	for (i = 0; i < NRECV; i++)
		if (rdma_post_recv(c->id, &c->recv[i], &c->recv[i],
				   sizeof(c->recv[i]), c->msg_mr))
			goto fail;
	if (rdma_connect(c->id, &cp) ||
	    wait_cm(c, RDMA_CM_EVENT_ESTABLISHED, o->timeout_ms))
		goto fail;
	return 0;
fail:
	ret = errno;
	conn_close(c);
	errno = ret;
	return -1;
}

/* Connect (retrying up to -R seconds) and take the REGION message. */
static int conn_open(struct conn *c, const struct opts *o)
{
	double deadline = now_us() + o->retry_s * 1e6;
	const struct dlr_msg *m;
	int tries = 0;

	c->timeout_ms = o->timeout_ms;
	for (;;) {
		tries++;
		if (!try_connect(c, o))
			break;
		if (c->fatal) {
			fprintf(stderr, PROG ": --persist flush: %s\n",
				c->why_no_flush);
			return -1;
		}
		if (now_us() >= deadline) {
			fprintf(stderr, PROG ": connecting to %s port %s: %s (%d attempts)\n",
				o->addr, o->port, strerror(errno), tries);
			return -1;
		}
		usleep(500000);
	}
	m = wait_msg(c, DLR_MSG_REGION);
	if (!m) {
		conn_close(c);
		return -1;
	}
	c->raddr = be64toh(m->addr);
	c->rlen = be64toh(m->length);
	c->rkey = be32toh(m->rkey);
	c->credits = be32toh(m->credits);
	c->flags = be32toh(m->flags);
	c->keepalive_us = be32toh(m->idle_ms) * 1000.0 / 3;
	c->last_persist_us = now_us();
	/*
	 * RDMA FLUSH where the server registered its region for it (only
	 * persistent memory can be) and this QP can post it; PERSIST, which
	 * every server answers, otherwise.
	 */
	if (c->qpx && !(c->flags & DLR_REGION_FLUSH))
		c->why_no_flush = "the server did not register its region for RDMA FLUSH (daxlease serve --flush)";
	c->use_flush = c->qpx && (c->flags & DLR_REGION_FLUSH);
	if (o->persist == PERSIST_FLUSH && !c->use_flush) {
		fprintf(stderr, PROG ": --persist flush: %s\n", c->why_no_flush);
		conn_close(c);
		return -1;
	}
	printf("connected to %s port %s after %d attempt(s): region of %" PRIu64 " bytes, rkey 0x%x, %u credits%s%s; durable by %s%s%s%s\n",
	       o->addr, o->port, tries, c->rlen, c->rkey, c->credits,
	       c->flags & DLR_REGION_CACHE_FLUSH ? ", cache flush" : "",
	       c->flags & DLR_REGION_FLUSH ? ", RDMA FLUSH target" : "",
	       c->use_flush ? "RDMA FLUSH" : "PERSIST and ACK",
	       c->use_flush ? "" : " (no FLUSH: ",
	       c->use_flush ? "" : c->why_no_flush,
	       c->use_flush ? "" : ")");
	fflush(stdout);
	return 0;
}

/* [off, +len) lies in the served region; else says so, errno EINVAL */
static bool in_region(const struct conn *c, uint64_t off, uint64_t len)
{
	if (off <= c->rlen && len <= c->rlen - off)
		return true;
	fprintf(stderr, PROG ": [%" PRIu64 ", +%" PRIu64 ") is outside the region of %" PRIu64 " bytes\n",
		off, len, c->rlen);
	errno = EINVAL;
	return false;
}

static int rdma_io(struct conn *c, bool write, size_t loff, uint64_t roff,
		   size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->data + loff,
		.length = len,
		.lkey = c->data_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.send_flags = write ? 0 : IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = c->raddr + roff, .rkey = c->rkey },
	}, *bad;

	if (!in_region(c, roff, len))
		return -1;
	errno = ibv_post_send(c->id->qp, &wr, &bad);
	if (errno) {
		perror(PROG ": ibv_post_send");
		return -1;
	}
	return write ? 0 : wait_send(c, "RDMA READ");
}

/*
 * RDMA FLUSH [off, +len) of the region, placement type persistent, and
 * wait for its completion: the responder executes it after the WRITEs
 * posted before it on this QP, and completes it once the range is
 * persistent.  0 or -1.
 */
static int persist_flush(struct conn *c, uint64_t off, uint64_t len)
{
#ifdef DL_HAVE_IBV_FLUSH
	struct ibv_wc wc;

	if (!in_region(c, off, len))
		return -1;
	ibv_wr_start(c->qpx);
	c->qpx->wr_id = WR_FLUSH;
	/* signaled: its completion frees the send queue of the WRITEs too */
	c->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(c->qpx, c->rkey, c->raddr + off, len,
		     IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE);
	errno = ibv_wr_complete(c->qpx);
	if (errno) {
		perror(PROG ": posting RDMA FLUSH");
		return -1;
	}
	if (wait_wc(c->id->send_cq, c->id->send_cq_channel, c->timeout_ms,
		    &wc)) {
		fprintf(stderr, PROG ": RDMA FLUSH: %s\n", strerror(errno));
		return -1;
	}
	/* the only signaled work request outstanding */
	if (wc.wr_id != WR_FLUSH || wc.opcode != IBV_WC_FLUSH) {
		fprintf(stderr, PROG ": RDMA FLUSH: a completion of wr_id %" PRIu64 ", opcode %d\n",
			(uint64_t)wc.wr_id, (int)wc.opcode);
		return errno = EPROTO, -1;
	}
	return 0;
#else
	(void)c;
	(void)off;
	(void)len;
	return errno = EOPNOTSUPP, -1;
#endif
}

/*
 * Make [off, +len) durable as seq: RDMA FLUSH, or PERSIST and wait for its
 * ACK; 0 or -1.
 */
static int persist(struct conn *c, uint64_t seq, uint64_t off, uint64_t len)
{
	struct dlr_msg *m = &c->send[c->next_send++ % (NSEND - 1)];
	const struct dlr_msg *ack;
	uint32_t status;

	if (c->use_flush && (!c->keepalive_us ||
			     now_us() - c->last_persist_us < c->keepalive_us)) {
		c->nflush++;
		return persist_flush(c, off, len);
	}
	c->npersist++;
	c->last_persist_us = now_us();

	*m = (struct dlr_msg){
		.magic = htobe32(DLR_MAGIC),
		.version = htobe16(DLR_VERSION),
		.type = htobe16(DLR_MSG_PERSIST),
		.seq = htobe64(seq),
		.addr = htobe64(off),
		.length = htobe64(len),
	};
	/* signaled: its completion frees the send queue of the WRITEs too */
	if (rdma_post_send(c->id, NULL, m, sizeof(*m), c->msg_mr,
			   IBV_SEND_SIGNALED)) {
		perror(PROG ": rdma_post_send");
		return -1;
	}
	if (wait_send(c, "SEND PERSIST"))
		return -1;
	ack = wait_msg(c, DLR_MSG_ACK);
	if (!ack)
		return -1;
	if (be64toh(ack->seq) != seq) {
		fprintf(stderr, PROG ": ACK of seq %" PRIu64 ", want %" PRIu64 "\n",
			(uint64_t)be64toh(ack->seq), seq);
		return errno = EPROTO, -1;
	}
	status = be32toh(ack->status);
	if (status) {
		fprintf(stderr, PROG ": the server failed PERSIST %" PRIu64 ": %s\n",
			seq, strerror(status));
		return errno = status, -1;
	}
	return 0;
}

static void make_record(char *p, uint32_t client, uint64_t seq, uint64_t size)
{
	struct dlr_record *r = (struct dlr_record *)p;
	uint64_t *w = (uint64_t *)(p + sizeof(*r));
	uint64_t i, n = (size - sizeof(*r)) / 8, sum = DLR_FNV_INIT;

	for (i = 0; i < n; i++) {
		w[i] = dlr_word(client, seq, i);
		sum = dlr_fnv(sum, w[i]);
	}
	r->magic = DLR_RECORD_MAGIC;
	r->client = client;
	r->seq = seq;
	r->size = size;
	r->sum = sum;
}

/* NULL if intact, else what is wrong */
static const char *check_record(const char *p, uint32_t client, uint64_t seq,
				uint64_t size)
{
	const struct dlr_record *r = (const struct dlr_record *)p;
	const uint64_t *w = (const uint64_t *)(p + sizeof(*r));
	uint64_t i, n = (size - sizeof(*r)) / 8, sum = DLR_FNV_INIT;

	if (r->magic != DLR_RECORD_MAGIC)
		return "no record header";
	if (r->client != client || r->seq != seq || r->size != size)
		return "another record's header";
	for (i = 0; i < n; i++) {
		if (w[i] != dlr_word(client, seq, i))
			return "payload differs";
		sum = dlr_fnv(sum, w[i]);
	}
	return sum == r->sum ? NULL : "checksum differs";
}

/* offset of record seq in the region */
static uint64_t rec_off(const struct opts *o, uint64_t seq)
{
	return o->base + (o->slots ? seq % o->slots : seq) * o->size;
}

/* records from seq on that are contiguous in the region, at most max */
static uint64_t run_len(const struct opts *o, uint64_t seq, uint64_t max)
{
	uint64_t left = o->slots ? o->slots - seq % o->slots : max;

	return left < max ? left : max;
}

static int cmd_put(struct conn *c, const struct opts *o)
{
	uint64_t seq = o->start, end = o->start + o->count, k, n;
	double t0 = now_us();

	while (seq < end) {
		n = run_len(o, seq, end - seq < o->batch ? end - seq : o->batch);
		for (k = 0; k < n; k++)
			make_record(c->data + k * o->size, o->client, seq + k,
				    o->size);
		if (rdma_io(c, true, 0, rec_off(o, seq), n * o->size) ||
		    persist(c, seq + n - 1, rec_off(o, seq), n * o->size)) {
			fprintf(stderr, PROG ": put: record %" PRIu64 " not acknowledged; last acked %s\n",
				seq, seq > o->start ? "above" : "none");
			return 1;
		}
		seq += n;
		if (!o->quiet || seq == end) {
			printf("acked %" PRIu64 "\n", seq - 1);
			fflush(stdout);
		}
	}
	printf("put: %" PRIu64 " records of %" PRIu64 " bytes durable in %.0f us (%" PRIu64 " RDMA FLUSH, %" PRIu64 " PERSIST)\n",
	       o->count, o->size, now_us() - t0, c->nflush, c->npersist);
	return 0;
}

static int cmd_check(struct conn *c, const struct opts *o)
{
	uint64_t per = c->data_len / o->size, seq = o->start;
	uint64_t end = o->start + o->count, n, k;
	const char *why;

	while (seq < end) {
		n = run_len(o, seq, end - seq < per ? end - seq : per);
		if (rdma_io(c, false, 0, rec_off(o, seq), n * o->size))
			return 1;
		for (k = 0; k < n; k++) {
			why = check_record(c->data + k * o->size, o->client,
					   seq + k, o->size);
			if (why) {
				printf("check: record %" PRIu64 " (offset %" PRIu64 "): %s; %" PRIu64 " of %" PRIu64 " intact before it\n",
				       seq + k, rec_off(o, seq + k),
				       why, seq + k - o->start, o->count);
				return 1;
			}
		}
		seq += n;
	}
	printf("check: %" PRIu64 " of %" PRIu64 " records intact (seq %" PRIu64 "..%" PRIu64 ")\n",
	       o->count, o->count, o->start, end - 1);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmd_lat(struct conn *c, const struct opts *o)
{
	double *t = calloc(o->iters, sizeof(*t)), t0;
	uint64_t i;

	if (!t)
		return 1;
	memset(c->data, 0x5a, o->size);
	for (i = 0; i < o->iters; i++) {
		t0 = now_us();
		if (rdma_io(c, true, 0, o->base, o->size) ||
		    persist(c, i, o->base, o->size)) {
			free(t);
			return 1;
		}
		t[i] = now_us() - t0;
	}
	qsort(t, o->iters, sizeof(*t), cmp_double);
	printf("lat: %" PRIu64 " bytes x %" PRIu64 ": min %.1f median %.1f p99 %.1f max %.1f us (%" PRIu64 " WRITE + FLUSH, %" PRIu64 " WRITE + PERSIST + ACK)\n",
	       o->size, o->iters, t[0], t[o->iters / 2],
	       t[(o->iters * 99) / 100], t[o->iters - 1], c->nflush,
	       c->npersist);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {};
	struct conn c = {};
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	c.data_len = MAX_IO;
	c.data = aligned_alloc(4096, c.data_len);
	if (!c.data) {
		perror(PROG);
		return 1;
	}
	memset(c.data, 0, c.data_len);
	if (conn_open(&c, &o)) {
		free(c.data);
		return 1;
	}
	if (!strcmp(o.cmd, "put"))
		ret = cmd_put(&c, &o);
	else if (!strcmp(o.cmd, "check"))
		ret = cmd_check(&c, &o);
	else
		ret = cmd_lat(&c, &o);
	if (!ret) {
		/* BYE: the server disconnects; a lost BYE costs nothing */
		struct dlr_msg *m = &c.send[0];

		*m = (struct dlr_msg){ .magic = htobe32(DLR_MAGIC),
				       .version = htobe16(DLR_VERSION),
				       .type = htobe16(DLR_MSG_BYE) };
		if (!rdma_post_send(c.id, NULL, m, sizeof(*m), c.msg_mr,
				    IBV_SEND_SIGNALED))
			wait_send(&c, "SEND BYE");
	}
	conn_close(&c);
	free(c.data);
	return ret;
}
