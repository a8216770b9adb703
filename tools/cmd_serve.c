// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * daxlease serve: export a range of a pmem file (or /dev/daxX.Y) to RDMA
 * clients and make what they write durable on request: the server side of
 * the remote persistence protocol of tools/remote/dlr_proto.h.
 *
 * One DAX MR (ibv_reg_dax_mr()) on one protection domain, one RC QP per
 * client, one completion queue.  A single thread waits in poll() on the
 * connection manager's channel, the completion channel and a signalfd:
 * clients come and go (a disconnect, a failed completion, silence beyond
 * --idle-timeout) without disturbing the others or the MR.  SIGINT and
 * SIGTERM disconnect every client, deregister and exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include <infiniband/verbs.h>
#include <infiniband/verbs_dax.h>
#include <rdma/rdma_cma.h>

#include "daxlease_tool.h"
#include "remote/dlr_proto.h"

#define CMD "serve"
#define MAX_CLIENTS 64
#define MAX_CREDITS 64
/* SEND slots per client: REGION plus one ACK per credit, twice over */
#define SEND_SLOTS(credits) (2 * (credits) + 2)

struct serve_opts {
	const char *path;
	const char *bind_addr;
	const char *port;
	uint64_t offset;
	uint64_t length;
	unsigned int clients;
	unsigned int credits;
	unsigned int idle;	/* seconds, 0: never */
	unsigned int exit_after;	/* clients, 0: never */
	uint32_t flags;
	bool flush;
	bool unsafe;		/* the crash test's negative control */
	bool verbose;
};

struct conn {
	struct rdma_cm_id *id;
	struct ibv_mr *msg_mr;
	struct dlr_msg *recv;	/* credits */
	struct dlr_msg *send;	/* SEND_SLOTS(credits) */
	unsigned int next_send;
	unsigned int sends;	/* posted, not completed */
	uint32_t gen;
	bool established;
	bool closing;
	time_t last;
	uint64_t persists;
	uint64_t bytes;
	char peer[NI_MAXHOST + NI_MAXSERV + 1];
};

struct server {
	const struct serve_opts *o;
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *listen;
	struct ibv_context *verbs;
	struct ibv_device_attr dattr;
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp_ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_dax_mr_attr info;
	struct conn *conns[MAX_CLIENTS];
	uint32_t gen;
	unsigned int served;	/* clients that have gone */
	unsigned int nconns;
	uint64_t persists;
	int sfd;
	int fatal;		/* errno that stops the server */
	bool cq_pending;	/* completions may wait in the CQ */
	void *umap;		/* --unsafe-ack-first: our own mapping */
	size_t umap_len;
	int ufd;
};

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void serve_usage(FILE *f)
{
	fprintf(f,
		"usage: %s serve PATH [-l LENGTH] [-o OFFSET] [-b ADDR] [-p PORT]\n"
		"       [--create] [--release-lease] [--clients N] [--credits N]\n"
		"       [--idle-timeout SEC] [--exit-after N] [--flush] [-v]\n"
		"\n"
		"Register [offset, offset + length) of PATH (a file on a DAX mount,\n"
		"/dev/daxX.Y, or a page-cache file) with ibv_reg_dax_mr(3) and serve\n"
		"it to RDMA clients: each gets the region's address and rkey, RDMA-\n"
		"WRITEs into it and asks for a range to be made durable (PERSIST);\n"
		"the server persists it with ibv_dax_mr_persist(3) and acknowledges.\n"
		"See daxlease-serve(1) for the protocol.  Runs until SIGINT or SIGTERM.\n"
		"\n"
		"  -l, --length N       bytes to serve (default: to the end of PATH)\n"
		"  -o, --offset N       offset in PATH (default 0)\n"
		"  -b, --bind ADDR      address to listen on (default: all; an\n"
		"                       address registers before the first client)\n"
		"  -p, --port PORT      port (default " DLR_DEFAULT_PORT ")\n"
		"  -c, --create         IBV_DAX_MR_CREATE: create or extend PATH\n"
		"                       (needs --length)\n"
		"  -r, --release-lease  IBV_DAX_MR_RELEASE_LEASE\n"
		"      --clients N      clients at once (default 16, at most %d)\n"
		"      --credits N      PERSISTs outstanding per client (default 8,\n"
		"                       at most %d)\n"
		"      --idle-timeout S disconnect a client silent for S seconds\n"
		"                       (default 0: never)\n"
		"      --exit-after N   exit 0 once N clients have come and gone\n"
		"      --flush          register for RDMA FLUSH too (FLUSH_GLOBAL and\n"
		"                       FLUSH_PERSISTENT): needs a device and kernel\n"
		"                       with it (Linux 6.2+) and pmem, not page cache\n"
		"  -v, --verbose        one line per PERSIST\n"
		"  -h, --help           this text\n"
		"      --unsafe-ack-first  BROKEN ON PURPOSE, for crash tests: map PATH\n"
		"                       without MAP_SYNC, and acknowledge PERSIST\n"
		"                       without persisting\n",
		dt_prog, MAX_CLIENTS, MAX_CREDITS);
}

static int parse_uint(const char *s, unsigned int min, unsigned int max,
		      unsigned int *out)
{
	uint64_t v;

	if (dt_parse_size(s, &v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct serve_opts *o)
{
	static const struct option longopts[] = {
		{ "length", required_argument, NULL, 'l' },
		{ "offset", required_argument, NULL, 'o' },
		{ "bind", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "create", no_argument, NULL, 'c' },
		{ "release-lease", no_argument, NULL, 'r' },
		{ "clients", required_argument, NULL, 'C' },
		{ "credits", required_argument, NULL, 'K' },
		{ "idle-timeout", required_argument, NULL, 'I' },
		{ "exit-after", required_argument, NULL, 'E' },
		{ "flush", no_argument, NULL, 'F' },
		{ "unsafe-ack-first", no_argument, NULL, 'U' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	o->port = DLR_DEFAULT_PORT;
	o->clients = 16;
	o->credits = 8;
	optind = 1;
	while ((c = getopt_long(argc, argv, "l:o:b:p:crvh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'l':
			if (dt_parse_size(optarg, &o->length) || !o->length)
				return dt_usage_error(CMD, "bad --length '%s'", optarg);
			break;
		case 'o':
			if (dt_parse_size(optarg, &o->offset))
				return dt_usage_error(CMD, "bad --offset '%s'", optarg);
			break;
		case 'b':
			o->bind_addr = optarg;
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'c':
			o->flags |= IBV_DAX_MR_CREATE;
			break;
		case 'r':
			o->flags |= IBV_DAX_MR_RELEASE_LEASE;
			break;
		case 'C':
			if (parse_uint(optarg, 1, MAX_CLIENTS, &o->clients))
				return dt_usage_error(CMD, "--clients wants 1..%d, not '%s'",
						      MAX_CLIENTS, optarg);
			break;
		case 'K':
			if (parse_uint(optarg, 1, MAX_CREDITS, &o->credits))
				return dt_usage_error(CMD, "--credits wants 1..%d, not '%s'",
						      MAX_CREDITS, optarg);
			break;
		case 'I':
			if (parse_uint(optarg, 0, 86400, &o->idle))
				return dt_usage_error(CMD, "--idle-timeout wants 0..86400 seconds, not '%s'",
						      optarg);
			break;
		case 'E':
			if (parse_uint(optarg, 1, 1000000, &o->exit_after))
				return dt_usage_error(CMD, "--exit-after wants a client count, not '%s'",
						      optarg);
			break;
		case 'F':
			o->flush = true;
			break;
		case 'U':
			o->unsafe = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			serve_usage(stdout);
			exit(0);
		default:
			return dt_usage_error(CMD, "bad option");
		}
	}
	if (optind != argc - 1)
		return dt_usage_error(CMD, optind < argc ? "one PATH, please" :
				      "which file? (PATH)");
	o->path = argv[optind];
	if ((o->flags & IBV_DAX_MR_CREATE) && !o->length)
		return dt_usage_error(CMD, "--create needs --length");
	if (o->unsafe && (!o->length || (o->flags & IBV_DAX_MR_CREATE) ||
			  o->offset))
		return dt_usage_error(CMD, "--unsafe-ack-first wants an existing file, --length, no --offset or --create");
	/* its mapping has no MAP_SYNC: a FLUSH of the data would not do */
	if (o->unsafe && o->flush)
		return dt_usage_error(CMD, "--unsafe-ack-first and --flush exclude each other");
	return 0;
}

static uint64_t wr_id(const struct conn *c, unsigned int idx, bool recv,
		      unsigned int slot)
{
	return (uint64_t)c->gen << 32 | (uint64_t)idx << 16 |
	       (uint64_t)recv << 15 | slot;
}

static int post_recv(struct conn *c, unsigned int idx, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&c->recv[slot],
		.length = sizeof(struct dlr_msg),
		.lkey = c->msg_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id(c, idx, true, slot),
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

/* Post a message built by fill in the next send slot; 0 or an errno. */
static int post_msg(struct server *s, struct conn *c, unsigned int idx,
		    const struct dlr_msg *m)
{
	unsigned int slot = c->next_send % SEND_SLOTS(s->o->credits);
	struct ibv_sge sge = {
		.addr = (uintptr_t)&c->send[slot],
		.length = sizeof(struct dlr_msg),
		.lkey = c->msg_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id(c, idx, false, slot),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	int ret;

	/*
	 * Every slot busy: the client has not taken the ACKs of its
	 * credits (it withholds its receives); a slot is reused only
	 * after its SEND completed.
	 */
	if (c->sends >= SEND_SLOTS(s->o->credits))
		return ENOBUFS;
	c->send[slot] = *m;
	ret = ibv_post_send(c->id->qp, &wr, &bad);
	if (!ret) {
		c->next_send++;
		c->sends++;
	}
	return ret;
}

static void conn_close(struct conn *c, const char *why)
{
	if (c->closing)
		return;
	c->closing = true;
	printf("daxlease serve: client %s: disconnecting: %s\n", c->peer, why);
	rdma_disconnect(c->id);
}

/*
 * Free a client's QP and buffers, and its id unless keep_id (an id whose
 * connect request is not acked yet: it is destroyed after the ack).
 */
static void conn_free(struct server *s, unsigned int idx, bool keep_id)
{
	struct conn *c = s->conns[idx];

	if (!c)
		return;
	if (c->established) {
		printf("daxlease serve: client %s gone: %" PRIu64 " PERSIST, %" PRIu64 " bytes made durable\n",
		       c->peer, c->persists, c->bytes);
		s->served++;
	}
	if (c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->msg_mr)
		ibv_dereg_mr(c->msg_mr);
	if (!keep_id)
		rdma_destroy_id(c->id);
	free(c->recv);
	free(c);
	s->conns[idx] = NULL;
	s->nconns--;
	fflush(stdout);
}

/* The PD, the CQ and the DAX MR, on the first device seen. */
static int setup_device(struct server *s, struct ibv_context *verbs)
{
	const struct serve_opts *o = s->o;
	struct ibv_dax_mr_init_attr attr = {
		.path = o->path,
		.fd = -1,
		.offset = o->offset,
		.length = o->length,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
		.flags = o->flags,
		.comp_mask = IBV_DAX_MR_INIT_FLAGS,
	};
	unsigned int cqe;
	int err;

	if (o->flush)
		attr.access |= IBV_DAX_ACCESS_FLUSH_GLOBAL |
			       IBV_DAX_ACCESS_FLUSH_PERSISTENT;

	s->verbs = verbs;
	/* polled with the other descriptors: never block in reading it */
	fcntl(verbs->async_fd, F_SETFL,
	      fcntl(verbs->async_fd, F_GETFL) | O_NONBLOCK);
	s->pd = ibv_alloc_pd(verbs);
	if (!s->pd) {
		dt_error(CMD, "ibv_alloc_pd: %s", strerror(errno));
		return errno ? errno : ENOMEM;
	}
	s->comp_ch = ibv_create_comp_channel(verbs);
	if (!s->comp_ch) {
		dt_error(CMD, "ibv_create_comp_channel: %s", strerror(errno));
		return errno ? errno : ENOMEM;
	}
	if (ibv_query_device(verbs, &s->dattr)) {
		dt_error(CMD, "ibv_query_device: %s", strerror(errno));
		return errno ? errno : EIO;
	}
	/* every receive and every SEND of every client may complete at once */
	cqe = o->clients * (o->credits + SEND_SLOTS(o->credits));
	if (s->dattr.max_cqe < 0 || cqe > (unsigned int)s->dattr.max_cqe) {
		dt_error(CMD, "--clients %u x --credits %u need a completion queue of %u entries; %s has at most %d: fewer clients or credits",
			 o->clients, o->credits, cqe,
			 ibv_get_device_name(verbs->device), s->dattr.max_cqe);
		return EINVAL;
	}
	s->cq = ibv_create_cq(verbs, cqe, NULL, s->comp_ch, 0);
	if (!s->cq) {
		dt_error(CMD, "ibv_create_cq(%u): %s", cqe, strerror(errno));
		return errno ? errno : ENOMEM;
	}
	if (ibv_req_notify_cq(s->cq, 0)) {
		dt_error(CMD, "ibv_req_notify_cq: %s", strerror(errno));
		return EIO;
	}
	if (!o->length && !(o->flags & IBV_DAX_MR_CREATE)) {
		/* to the end of the file: the library wants a length */
		struct stat st;

		if (stat(o->path, &st)) {
			dt_error(CMD, "%s: %s", o->path, strerror(errno));
			return errno;
		}
		if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size <= o->offset) {
			dt_error(CMD, "%s: %s: pass --length", o->path,
				 S_ISREG(st.st_mode) ? "offset at or past the end" :
				 "not a regular file");
			return EINVAL;
		}
		attr.length = st.st_size - o->offset;
	}
	if (o->unsafe) {
		/*
		 * Broken on purpose: a shared mapping without MAP_SYNC, so
		 * that the blocks its faults allocate are durable only when
		 * the file system commits, and no persist before the ACK.
		 */
		s->ufd = open(o->path, O_RDWR | O_CLOEXEC);
		if (s->ufd < 0) {
			err = errno;
			dt_error(CMD, "%s: %s", o->path, strerror(err));
			return err;
		}
		s->umap_len = o->length;
		s->umap = mmap(NULL, s->umap_len, PROT_READ | PROT_WRITE,
			       MAP_SHARED, s->ufd, 0);
		if (s->umap == MAP_FAILED) {
			err = errno;
			s->umap = NULL;
			dt_error(CMD, "mmap %s: %s", o->path, strerror(err));
			return err;
		}
		attr.comp_mask |= IBV_DAX_MR_INIT_ADDR;
		attr.addr = s->umap;
		attr.path = NULL;
		attr.fd = s->ufd;
		printf("daxlease serve: UNSAFE: %s mapped without MAP_SYNC, PERSIST acknowledged without persisting\n",
		       o->path);
	}
	s->mr = ibv_reg_dax_mr(s->pd, &attr);
	if (!s->mr) {
		err = errno;
		dt_error(CMD, "ibv_reg_dax_mr(%s): %s: %s", o->path,
			 strerror(err), ibv_dax_errmsg());
		return err;
	}
	if (ibv_query_dax_mr(s->mr, &s->info, sizeof(s->info))) {
		err = errno;
		dt_error(CMD, "ibv_query_dax_mr: %s", strerror(err));
		return err;
	}
	return 0;
}

static const char *kind_name(enum ibv_dax_file_kind k)
{
	return k == IBV_DAX_FILE_FSDAX ? "fsdax" :
	       k == IBV_DAX_FILE_DEVDAX ? "devdax" :
	       k == IBV_DAX_FILE_PAGECACHE ? "page-cache" : "unknown";
}

static const char *strategy_name(enum ibv_dax_mr_strategy st)
{
	return st == IBV_DAX_MR_STRATEGY_LEASE_PIN ? "lease-pin" :
	       st == IBV_DAX_MR_STRATEGY_PLAIN ? "plain" :
	       st == IBV_DAX_MR_STRATEGY_ODP ? "odp" : "none";
}

static void print_serving(struct server *s)
{
	printf("daxlease serve: serving %s [%" PRIu64 ", +%zu) on %s port %s: kind %s, strategy %s, lease %s, rkey 0x%x, %u clients x %u credits, RDMA FLUSH target %s\n",
	       s->info.path ? s->info.path : s->o->path, s->info.offset,
	       s->info.length, s->o->bind_addr ? s->o->bind_addr : "*",
	       s->o->port, kind_name(s->info.kind),
	       strategy_name(s->info.strategy),
	       s->info.lease_held ? "held" : "released", s->mr->rkey,
	       s->o->clients, s->o->credits, s->o->flush ? "yes" : "no");
	fflush(stdout);
}

static int find_conn(struct server *s, struct rdma_cm_id *id)
{
	unsigned int i;

	for (i = 0; i < MAX_CLIENTS; i++)
		if (s->conns[i] && s->conns[i]->id == id)
			return i;
	return -1;
}

/*
 * A connect request: accept it with a QP and posted receives, or reject
 * it.  Returns true when the caller must destroy the request's id once
 * the event is acked (it cannot be destroyed before).
 */
static bool on_connect_request(struct server *s, struct rdma_cm_event *ev)
{
	const struct serve_opts *o = s->o;
	struct rdma_cm_id *id = ev->id;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = SEND_SLOTS(o->credits),
			.max_recv_wr = o->credits,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct rdma_conn_param cp = {
		.initiator_depth = 0,
		.rnr_retry_count = 7,
	};
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
	unsigned int i, idx = MAX_CLIENTS;
	struct conn *c;
	const char *why;
	size_t rlen, slen;
	int err;

	getnameinfo(sa, sizeof(struct sockaddr_storage), host, sizeof(host),
		    serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV);
	if (!s->pd) {
		err = setup_device(s, id->verbs);
		if (err) {
			/* the region cannot be served at all */
			s->fatal = err;
			rdma_reject(id, NULL, 0);
			return true;
		}
		print_serving(s);
	}
	if (id->verbs != s->verbs) {
		why = "another device than the region's";
		goto reject;
	}
	/* the RDMA READs the client may have outstanding, as the device allows */
	cp.responder_resources = ev->param.conn.initiator_depth;
	if (s->dattr.max_qp_rd_atom >= 0 &&
	    cp.responder_resources > s->dattr.max_qp_rd_atom)
		cp.responder_resources = s->dattr.max_qp_rd_atom;
	for (i = 0; i < o->clients; i++)
		if (!s->conns[i]) {
			idx = i;
			break;
		}
	if (idx == MAX_CLIENTS) {
		why = "all client slots taken";
		goto reject;
	}
	c = calloc(1, sizeof(*c));
	rlen = o->credits * sizeof(struct dlr_msg);
	slen = SEND_SLOTS(o->credits) * sizeof(struct dlr_msg);
	if (!c || !(c->recv = calloc(1, rlen + slen))) {
		free(c);
		why = "out of memory";
		goto reject;
	}
	c->send = c->recv + o->credits;
	c->id = id;
	c->gen = ++s->gen;
	c->last = now_s();
	snprintf(c->peer, sizeof(c->peer), "%s:%s", host, serv);
	s->conns[idx] = c;
	s->nconns++;
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	if (rdma_create_qp(id, s->pd, &qa)) {
		why = "rdma_create_qp failed";
		goto reject_free;
	}
	c->msg_mr = ibv_reg_mr(s->pd, c->recv, rlen + slen,
			       IBV_ACCESS_LOCAL_WRITE);
	if (!c->msg_mr) {
		why = "ibv_reg_mr of its messages failed";
		goto reject_free;
	}
	for (i = 0; i < o->credits; i++) {
		err = post_recv(c, idx, i);
		if (err) {
			errno = err;
			why = "ibv_post_recv failed";
			goto reject_free;
		}
	}
	if (rdma_accept(id, &cp)) {
		why = "rdma_accept failed";
		goto reject_free;
	}
	return false;

reject_free:
	printf("daxlease serve: client %s refused: %s (%s)\n", host, why,
	       strerror(errno));
	rdma_reject(id, NULL, 0);
	conn_free(s, idx, true);
	return true;
reject:
	printf("daxlease serve: client %s refused: %s\n", host, why);
	rdma_reject(id, NULL, 0);
	return true;
}

static void on_established(struct server *s, int idx)
{
	struct conn *c = s->conns[idx];
	struct dlr_msg m = {
		.magic = htobe32(DLR_MAGIC),
		.version = htobe16(DLR_VERSION),
		.type = htobe16(DLR_MSG_REGION),
		.addr = htobe64((uintptr_t)s->mr->addr),
		.length = htobe64(s->mr->length),
		.rkey = htobe32(s->mr->rkey),
		.credits = htobe32(s->o->credits),
		.idle_ms = htobe32(s->o->idle * 1000),
	};
	uint32_t flags = 0;

	if (s->info.granularity == IBV_DAX_GRAN_CACHE_LINE)
		flags |= DLR_REGION_CACHE_FLUSH;
	if (s->info.granularity == IBV_DAX_GRAN_PAGE)
		flags |= DLR_REGION_PAGECACHE;
	if (s->o->flush)
		flags |= DLR_REGION_FLUSH;
	m.flags = htobe32(flags);
	c->established = true;
	c->last = now_s();
	if (c->closing) {
		/*
		 * Closed before the connection was established (a bad first
		 * message can arrive before the RTU): the disconnect then
		 * found no connection; disconnect now.
		 */
		rdma_disconnect(c->id);
		return;
	}
	printf("daxlease serve: client %s connected (%u of %u)\n", c->peer,
	       s->nconns, s->o->clients);
	fflush(stdout);
	if (post_msg(s, c, idx, &m))
		conn_close(c, "posting REGION failed");
}

/* Returns false when the server should stop (a fatal CM event). */
static bool on_cm_event(struct server *s)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;
	int idx;

	if (rdma_get_cm_event(s->cm_ch, &ev))
		return errno == EAGAIN || errno == EINTR;
	type = ev->event;
	id = ev->id;
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* the id of a refused request is destroyed only after the ack */
		bool refused = on_connect_request(s, ev);

		rdma_ack_cm_event(ev);
		if (refused)
			rdma_destroy_id(id);
		return !s->fatal;
	}
	rdma_ack_cm_event(ev);
	if (type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		dt_error(CMD, "the RDMA device was removed");
		return false;
	}
	idx = find_conn(s, id);
	if (idx < 0)
		return true;
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		on_established(s, idx);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* the peer's DREQ or ours done: the QP is in error */
		if (!s->conns[idx]->closing)
			rdma_disconnect(id);
		conn_free(s, idx, false);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		printf("daxlease serve: client %s: %s\n", s->conns[idx]->peer,
		       rdma_event_str(type));
		conn_free(s, idx, false);
		break;
	default:
		break;
	}
	return true;
}

static void on_persist(struct server *s, struct conn *c, unsigned int idx,
		       const struct dlr_msg *req)
{
	uint64_t off = be64toh(req->addr), len = be64toh(req->length);
	struct dlr_msg ack = {
		.magic = htobe32(DLR_MAGIC),
		.version = htobe16(DLR_VERSION),
		.type = htobe16(DLR_MSG_ACK),
		.seq = req->seq,
	};
	int status = 0;

	if (off > s->mr->length || len > s->mr->length - off) {
		status = EINVAL;
	} else if (s->o->unsafe) {
		/* the negative control: acknowledged, not persisted */
	} else if (len && ibv_dax_mr_persist(s->mr, off, len)) {
		status = errno ? errno : EIO;
		printf("daxlease serve: client %s: persist [%" PRIu64 ", +%" PRIu64 "): %s: %s\n",
		       c->peer, off, len, strerror(status), ibv_dax_errmsg());
		status = EIO;
	}
	if (!status) {
		c->persists++;
		c->bytes += len;
		s->persists++;
	}
	if (s->o->verbose)
		printf("daxlease serve: client %s: PERSIST seq %" PRIu64 " [%" PRIu64 ", +%" PRIu64 "): %s\n",
		       c->peer, be64toh(req->seq), off, len,
		       status ? strerror(status) : "durable");
	ack.status = htobe32(status);
	if (post_msg(s, c, idx, &ack))
		conn_close(c, c->sends >= SEND_SLOTS(s->o->credits) ?
			   "it does not take its ACKs" : "posting ACK failed");
}

static void on_completion(struct server *s, const struct ibv_wc *wc)
{
	unsigned int idx = (wc->wr_id >> 16) & 0xffff;
	unsigned int slot = wc->wr_id & 0x7fff;
	bool recv = wc->wr_id & 0x8000;
	struct conn *c = idx < MAX_CLIENTS ? s->conns[idx] : NULL;
	const struct dlr_msg *m;
	char why[96];

	/* a completion of a client already freed */
	if (!c || c->gen != (uint32_t)(wc->wr_id >> 32))
		return;
	if (!recv && c->sends)
		c->sends--;
	if (wc->status != IBV_WC_SUCCESS) {
		snprintf(why, sizeof(why), "%s completion: %s",
			 recv ? "receive" : "send",
			 ibv_wc_status_str(wc->status));
		conn_close(c, why);
		return;
	}
	if (!recv || c->closing)
		return;
	c->last = now_s();
	m = &c->recv[slot];
	if (wc->opcode != IBV_WC_RECV || wc->byte_len != sizeof(*m) ||
	    be32toh(m->magic) != DLR_MAGIC ||
	    be16toh(m->version) != DLR_VERSION) {
		conn_close(c, "protocol error: not a version 1 message");
		return;
	}
	switch (be16toh(m->type)) {
	case DLR_MSG_PERSIST:
		on_persist(s, c, idx, m);
		break;
	case DLR_MSG_BYE:
		conn_close(c, "BYE");
		return;
	default:
		conn_close(c, "protocol error: unexpected message type");
		return;
	}
	if (post_recv(c, idx, slot))
		conn_close(c, "reposting a receive failed");
}

/* The completion channel fired: take the event, arm the CQ again. */
static void on_cq_event(struct server *s)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(s->comp_ch, &cq, &ctx))
		return;
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(cq, 0))
		dt_error(CMD, "ibv_req_notify_cq: %s", strerror(errno));
}

/*
 * At most CQ_BATCH completions, so that connection events, signals and
 * the idle check are not starved under load; true if there may be more
 * (the loop then polls again without waiting).
 */
#define CQ_BATCH 64
static bool poll_cq_batch(struct server *s)
{
	struct ibv_wc wc[16];
	int n, i, done = 0;

	while (done < CQ_BATCH && (n = ibv_poll_cq(s->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++)
			on_completion(s, &wc[i]);
		done += n;
	}
	return done >= CQ_BATCH;
}

/* Device events: a QP in error ends its client; a CQ error ends us. */
static void on_async_event(struct server *s)
{
	struct ibv_async_event ev;
	unsigned int i;

	if (ibv_get_async_event(s->verbs, &ev))
		return;
	switch (ev.event_type) {
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		for (i = 0; i < MAX_CLIENTS; i++) {
			struct conn *c = s->conns[i];

			if (!c || c->id->qp != ev.element.qp)
				continue;
			if (ev.event_type == IBV_EVENT_COMM_EST)
				/* a SEND came before the RTU: established */
				rdma_notify(c->id, IBV_EVENT_COMM_EST);
			else
				conn_close(c, ibv_event_type_str(ev.event_type));
			break;
		}
		break;
	case IBV_EVENT_CQ_ERR:
	case IBV_EVENT_DEVICE_FATAL:
		dt_error(CMD, "%s: %s", ibv_get_device_name(s->verbs->device),
			 ibv_event_type_str(ev.event_type));
		s->fatal = EIO;
		break;
	default:
		printf("daxlease serve: device event: %s\n",
		       ibv_event_type_str(ev.event_type));
		break;
	}
	ibv_ack_async_event(&ev);
}

static void check_idle(struct server *s)
{
	time_t now = now_s();
	unsigned int i;

	if (!s->o->idle)
		return;
	for (i = 0; i < MAX_CLIENTS; i++)
		if (s->conns[i] && s->conns[i]->established &&
		    now - s->conns[i]->last > (time_t)s->o->idle)
			conn_close(s->conns[i], "idle timeout");
}

static int listen_on(struct server *s)
{
	const struct serve_opts *o = s->o;
	struct rdma_addrinfo hints = {
		.ai_flags = RAI_PASSIVE,
		.ai_port_space = RDMA_PS_TCP,
	}, *res;
	int ret;

	ret = rdma_getaddrinfo(o->bind_addr, o->port, &hints, &res);
	if (ret) {
		dt_error(CMD, "%s port %s: %s", o->bind_addr ? o->bind_addr : "*",
			 o->port, gai_strerror(ret));
		return EINVAL;
	}
	s->cm_ch = rdma_create_event_channel();
	if (!s->cm_ch || rdma_create_id(s->cm_ch, &s->listen, s, RDMA_PS_TCP) ||
	    rdma_bind_addr(s->listen, res->ai_src_addr)) {
		ret = errno;
		dt_error(CMD, "binding %s port %s: %s",
			 o->bind_addr ? o->bind_addr : "*", o->port,
			 strerror(ret));
		rdma_freeaddrinfo(res);
		return ret ? ret : EIO;
	}
	rdma_freeaddrinfo(res);
	/* bound to a device's address: register before anyone connects */
	if (s->listen->verbs) {
		ret = setup_device(s, s->listen->verbs);
		if (ret)
			return ret;
		print_serving(s);
	}
	if (rdma_listen(s->listen, o->clients)) {
		ret = errno;
		dt_error(CMD, "rdma_listen: %s", strerror(ret));
		return ret;
	}
	if (!s->listen->verbs) {
		printf("daxlease serve: listening on * port %s; %s is registered on the first client's device\n",
		       o->port, o->path);
		fflush(stdout);
	}
	return 0;
}

static void teardown(struct server *s)
{
	unsigned int i;
	int err;

	for (i = 0; i < MAX_CLIENTS; i++)
		if (s->conns[i]) {
			if (!s->conns[i]->closing && s->conns[i]->established)
				rdma_disconnect(s->conns[i]->id);
			s->conns[i]->closing = true;
			conn_free(s, i, false);
		}
	if (s->mr) {
		err = ibv_dereg_dax_mr(s->mr);
		if (err)
			dt_error(CMD, "ibv_dereg_dax_mr: %s: %s", strerror(err),
				 ibv_dax_errmsg());
		else
			printf("daxlease serve: deregistered %s after %" PRIu64 " PERSIST\n",
			       s->o->path, s->persists);
	}
	if (s->umap)
		munmap(s->umap, s->umap_len);
	if (s->ufd >= 0)
		close(s->ufd);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->comp_ch)
		ibv_destroy_comp_channel(s->comp_ch);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->listen)
		rdma_destroy_id(s->listen);
	if (s->cm_ch)
		rdma_destroy_event_channel(s->cm_ch);
	if (s->sfd >= 0)
		close(s->sfd);
	fflush(stdout);
}

int dt_cmd_serve(int argc, char **argv)
{
	struct serve_opts o = {};
	struct server s = { .o = &o, .sfd = -1, .ufd = -1 };
	struct pollfd pfd[4];
	sigset_t set;
	int ret, n;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	s.sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (s.sfd < 0) {
		ret = errno;
		dt_error(CMD, "signalfd: %s", strerror(ret));
		return dt_exit_code(ret);
	}
	ret = listen_on(&s);
	if (ret)
		goto out;
	for (;;) {
		int cm, comp = -1, async = -1;

		if (o.exit_after && s.served >= o.exit_after && !s.nconns)
			break;
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = s.sfd, .events = POLLIN };
		cm = n;
		pfd[n++] = (struct pollfd){ .fd = s.cm_ch->fd, .events = POLLIN };
		if (s.comp_ch) {
			comp = n;
			pfd[n++] = (struct pollfd){ .fd = s.comp_ch->fd,
						    .events = POLLIN };
			async = n;
			pfd[n++] = (struct pollfd){ .fd = s.verbs->async_fd,
						    .events = POLLIN };
		}
		if (poll(pfd, n, s.cq_pending ? 0 : 1000) < 0) {
			if (errno == EINTR)
				continue;
			ret = errno;
			dt_error(CMD, "poll: %s", strerror(ret));
			break;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;

			if (read(s.sfd, &si, sizeof(si)) == sizeof(si))
				printf("daxlease serve: %s: stopping\n",
				       strsignal(si.ssi_signo));
			break;
		}
		if (pfd[cm].revents && !on_cm_event(&s)) {
			ret = s.fatal ? s.fatal : ENODEV;
			break;
		}
		if (async >= 0 && pfd[async].revents)
			on_async_event(&s);
		if (s.fatal) {
			ret = s.fatal;
			break;
		}
		if (comp >= 0 && pfd[comp].revents)
			on_cq_event(&s);
		if (s.cq)
			s.cq_pending = poll_cq_batch(&s);
		check_idle(&s);
	}
out:
	teardown(&s);
	return ret ? dt_exit_code(ret) : 0;
}
