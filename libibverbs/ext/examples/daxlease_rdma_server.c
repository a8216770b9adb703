// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * daxlease_rdma_server: expose a persistent-memory file to one RDMA client.
 *
 * The server waits for a connection, registers the file range on the
 * connection's protection domain with ibv_reg_dax_mr(), tells the client
 * where to write (address, rkey, length), waits for the client's DONE
 * message, makes the written bytes persistent with ibv_dax_mr_persist() and
 * checks them against the data set the client says it wrote.  With -H it
 * then holds the registration (so its pins can be inspected, and a truncate
 * of the file seen to fail) until SIGUSR1, SIGINT or SIGTERM.
 *
 * With -V SEED it does no RDMA at all: it maps the file read-only and checks
 * that its first SIZE bytes are the data set of that seed, e.g. after the
 * file system was remounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs_dax.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "daxlease_rdma.h"

#define PROG "daxlease_rdma_server"

/* Device-DAX maps in multiples of its alignment; 2 MiB is the usual one. */
#define MAP_ALIGN (2UL << 20)

struct server_opts {
	const char *path;
	const char *bind_addr;
	const char *port;
	size_t size;
	int release_lease;
	int hold;
	int verify_only;
	uint64_t verify_seed;
};

static const char *kind_str(enum ibv_dax_file_kind kind)
{
	switch (kind) {
	case IBV_DAX_FILE_FSDAX: return "fsdax";
	case IBV_DAX_FILE_DEVDAX: return "devdax";
	case IBV_DAX_FILE_PAGECACHE: return "page-cache";
	default: return "unknown";
	}
}

static const char *strategy_str(enum ibv_dax_mr_strategy strategy)
{
	switch (strategy) {
	case IBV_DAX_MR_STRATEGY_LEASE_PIN: return "lease-pin";
	case IBV_DAX_MR_STRATEGY_PLAIN: return "plain";
	case IBV_DAX_MR_STRATEGY_ODP: return "odp";
	default: return "none";
	}
}

static const char *granularity_str(enum ibv_dax_persist_granularity gran)
{
	switch (gran) {
	case IBV_DAX_GRAN_BYTE: return "byte";
	case IBV_DAX_GRAN_CACHE_LINE: return "cache-line";
	case IBV_DAX_GRAN_PAGE: return "page";
	default: return "unknown";
	}
}

static struct ibv_mr *register_file(struct ibv_pd *pd,
				    const struct server_opts *opts)
{
	struct ibv_dax_mr_init_attr attr = {
		.comp_mask = IBV_DAX_MR_INIT_FLAGS,
		.path = opts->path,
		.length = opts->size,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		/* a regular file is created or extended to SIZE */
		.flags = IBV_DAX_MR_CREATE,
	};
	struct ibv_dax_mr_attr info = {};
	struct ibv_mr *mr;
	double t0;

	/*
	 * Dropping the layout lease leaves only the pins to keep the blocks
	 * in place (doc/design.md §1.4), which is what a truncate then runs
	 * into.
	 */
	if (opts->release_lease)
		attr.flags |= IBV_DAX_MR_RELEASE_LEASE;

	t0 = daxlease_now_us();
	mr = ibv_reg_dax_mr(pd, &attr);
	if (!mr) {
		fprintf(stderr, PROG ": ibv_reg_dax_mr(%s): %s: %s\n",
			opts->path, strerror(errno), ibv_dax_errmsg());
		return NULL;
	}
	if (ibv_query_dax_mr(mr, &info, sizeof(info))) {
		fprintf(stderr, PROG ": ibv_query_dax_mr: %s: %s\n",
			strerror(errno), ibv_dax_errmsg());
		ibv_dereg_dax_mr(mr);
		return NULL;
	}
	printf(PROG ": registered %s [%" PRIu64 ", +%zu) in %.0f us: kind %s, strategy %s, lease %s, persistence %s, rkey 0x%x\n",
	       info.path ? info.path : opts->path, info.offset, info.length,
	       daxlease_now_us() - t0, kind_str(info.kind),
	       strategy_str(info.strategy),
	       info.lease_held ? "held" : "released",
	       granularity_str(info.granularity), mr->rkey);
	return mr;
}

static int post_msg_send(struct rdma_cm_id *id, struct daxlease_rdma_msg *msg,
			 struct ibv_mr *mr)
{
	struct ibv_wc wc;
	int ret;

	if (rdma_post_send(id, NULL, msg, sizeof(*msg), mr, 0)) {
		perror(PROG ": rdma_post_send");
		return -1;
	}
	while ((ret = rdma_get_send_comp(id, &wc)) == 0)
		;
	if (ret < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, PROG ": send failed: %s\n",
			ret < 0 ? strerror(errno) :
				  ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

/* Persist what the client wrote, then check it; 0 or an errno value. */
static int persist_and_check(struct ibv_mr *mr,
			     const struct daxlease_rdma_msg *done)
{
	uint64_t len = be64toh(done->length);
	uint64_t seed = be64toh(done->seed);
	uint64_t theirs = be64toh(done->checksum);
	uint64_t ours;
	size_t bad;
	double t0;

	printf(PROG ": client wrote %" PRIu64 " bytes (seed %" PRIu64 ", checksum 0x%016" PRIx64 ")\n",
	       len, seed, theirs);
	if (len > mr->length || len % 8) {
		fprintf(stderr, PROG ": bad length %" PRIu64 "\n", len);
		return EINVAL;
	}

	t0 = daxlease_now_us();
	if (ibv_dax_mr_persist(mr, 0, len)) {
		fprintf(stderr, PROG ": ibv_dax_mr_persist: %s: %s\n",
			strerror(errno), ibv_dax_errmsg());
		return errno;
	}
	printf(PROG ": persisted %" PRIu64 " bytes in %.0f us\n", len,
	       daxlease_now_us() - t0);

	ours = daxlease_checksum(DAXLEASE_CHECKSUM_INIT, mr->addr, len);
	bad = daxlease_pattern_check(mr->addr, seed, len);
	if (bad != len || ours != theirs) {
		fprintf(stderr, PROG ": data set mismatch: first bad byte %zu, checksum 0x%016" PRIx64 "\n",
			bad, ours);
		return EIO;
	}
	printf(PROG ": verified %" PRIu64 " bytes: pattern of seed %" PRIu64 " and checksum 0x%016" PRIx64 " match\n",
	       len, seed, ours);
	return 0;
}

static void hold_until_signal(void)
{
	sigset_t set;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf(PROG ": holding the MR (pid %d); SIGUSR1 deregisters\n",
	       getpid());
	fflush(stdout);
	sigwait(&set, &sig);
	printf(PROG ": got %s\n", strsignal(sig));
}

struct server {
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_mr *msg_mr;
	struct ibv_mr *dax_mr;
	int connected;
	/* [0] receives DONE, [1] is sent: MR_INFO then ACK */
	struct daxlease_rdma_msg msgs[2];
};

/* The PD of the connection: its QP, the message MR and the DAX MR. */
static int setup_device(struct server *s, struct ibv_context *verbs,
			const struct server_opts *opts)
{
	s->pd = ibv_alloc_pd(verbs);
	if (!s->pd) {
		perror(PROG ": ibv_alloc_pd");
		return -1;
	}
	s->msg_mr = ibv_reg_mr(s->pd, s->msgs, sizeof(s->msgs),
			       IBV_ACCESS_LOCAL_WRITE);
	if (!s->msg_mr) {
		perror(PROG ": ibv_reg_mr");
		return -1;
	}
	s->dax_mr = register_file(s->pd, opts);
	return s->dax_mr ? 0 : -1;
}

/* Releases whatever is set up, in reverse order. */
static void server_close(struct server *s)
{
	if (s->connected)
		rdma_disconnect(s->id);
	if (s->id && s->id->qp)
		rdma_destroy_qp(s->id);
	if (s->dax_mr)
		ibv_dereg_dax_mr(s->dax_mr);
	if (s->msg_mr)
		ibv_dereg_mr(s->msg_mr);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->id)
		rdma_destroy_ep(s->id);
	if (s->listen_id)
		rdma_destroy_ep(s->listen_id);
}

static int serve_one(struct server *s, const struct server_opts *opts)
{
	struct ibv_qp_init_attr qp_attr = {
		.cap = {
			.max_send_wr = 2,
			.max_recv_wr = 2,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct daxlease_rdma_msg *done = &s->msgs[0], *out = &s->msgs[1];
	struct ibv_wc wc;
	int status, ret;

	if (rdma_get_request(s->listen_id, &s->id)) {
		perror(PROG ": rdma_get_request");
		return -1;
	}
	if (!s->pd && setup_device(s, s->id->verbs, opts))
		return -1;
	if (s->pd->context != s->id->verbs) {
		fprintf(stderr, PROG ": connection on another device than %s\n",
			ibv_get_device_name(s->pd->context->device));
		return -1;
	}
	if (rdma_create_qp(s->id, s->pd, &qp_attr)) {
		perror(PROG ": rdma_create_qp");
		return -1;
	}
	if (rdma_post_recv(s->id, NULL, done, sizeof(*done), s->msg_mr)) {
		perror(PROG ": rdma_post_recv");
		return -1;
	}
	if (rdma_accept(s->id, NULL)) {
		perror(PROG ": rdma_accept");
		return -1;
	}
	s->connected = 1;

	out->type = htobe32(DAXLEASE_MSG_MR_INFO);
	out->addr = htobe64((uintptr_t)s->dax_mr->addr);
	out->rkey = htobe32(s->dax_mr->rkey);
	out->length = htobe64(s->dax_mr->length);
	if (post_msg_send(s->id, out, s->msg_mr))
		return -1;

	while ((ret = rdma_get_recv_comp(s->id, &wc)) == 0)
		;
	if (ret < 0 || wc.status != IBV_WC_SUCCESS ||
	    be32toh(done->type) != DAXLEASE_MSG_DONE) {
		fprintf(stderr, PROG ": no DONE message from the client\n");
		return -1;
	}

	status = persist_and_check(s->dax_mr, done);
	memset(out, 0, sizeof(*out));
	out->type = htobe32(DAXLEASE_MSG_ACK);
	out->status = htobe32(status);
	if (post_msg_send(s->id, out, s->msg_mr) || status)
		return -1;

	/*
	 * The passive side must disconnect too: a synchronous
	 * rdma_disconnect() on the client waits for our DREP, which the CM
	 * sends only from here.  The MR lives on in the PD.
	 */
	s->connected = 0;
	if (rdma_disconnect(s->id)) {
		perror(PROG ": rdma_disconnect");
		return -1;
	}
	return 0;
}

static int run_server(const struct server_opts *opts)
{
	struct rdma_addrinfo hints = {
		.ai_flags = RAI_PASSIVE,
		.ai_port_space = RDMA_PS_TCP,
	};
	struct server s = {};
	struct rdma_addrinfo *res;
	int ret;

	ret = rdma_getaddrinfo(opts->bind_addr, opts->port, &hints, &res);
	if (ret) {
		fprintf(stderr, PROG ": rdma_getaddrinfo(%s): %s\n",
			opts->bind_addr ? opts->bind_addr : "*",
			gai_strerror(ret));
		return 1;
	}
	ret = rdma_create_ep(&s.listen_id, res, NULL, NULL);
	rdma_freeaddrinfo(res);
	if (ret) {
		perror(PROG ": rdma_create_ep");
		return 1;
	}
	/*
	 * Bound to a device's address, the listener knows its device: register
	 * now, so a refusal is reported before any client connects.  A
	 * wildcard listener registers on the first connection's device.
	 */
	if (s.listen_id->verbs && setup_device(&s, s.listen_id->verbs, opts))
		goto out;
	if (rdma_listen(s.listen_id, 1)) {
		perror(PROG ": rdma_listen");
		goto out;
	}
	printf(PROG ": listening on %s port %s\n",
	       opts->bind_addr ? opts->bind_addr : "*", opts->port);

	if (serve_one(&s, opts))
		goto out;
	if (opts->hold)
		hold_until_signal();

	ret = ibv_dereg_dax_mr(s.dax_mr);
	s.dax_mr = NULL;
	if (ret) {
		fprintf(stderr, PROG ": ibv_dereg_dax_mr: %s: %s\n",
			strerror(ret), ibv_dax_errmsg());
		goto out;
	}
	printf(PROG ": deregistered\n");
	server_close(&s);
	return 0;

out:
	server_close(&s);
	return 1;
}

/* -V: check the file's first SIZE bytes without RDMA or registration. */
static int verify_file(const struct server_opts *opts)
{
	size_t map_len = (opts->size + MAP_ALIGN - 1) & ~(MAP_ALIGN - 1);
	uint64_t sum;
	struct stat st;
	size_t bad;
	void *addr;
	int fd;

	fd = open(opts->path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, PROG ": %s: %s\n", opts->path,
			strerror(errno));
		return 1;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < opts->size) {
		fprintf(stderr, PROG ": %s: %jd bytes, shorter than %zu\n",
			opts->path, (intmax_t)st.st_size, opts->size);
		close(fd);
		return 1;
	}
	addr = mmap(NULL, map_len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (addr == MAP_FAILED) {
		fprintf(stderr, PROG ": mmap %s: %s\n", opts->path,
			strerror(errno));
		return 1;
	}
	sum = daxlease_checksum(DAXLEASE_CHECKSUM_INIT, addr, opts->size);
	bad = daxlease_pattern_check(addr, opts->verify_seed, opts->size);
	munmap(addr, map_len);
	if (bad != opts->size) {
		fprintf(stderr, PROG ": %s: data set of seed %" PRIu64 " differs at byte %zu (checksum 0x%016" PRIx64 ")\n",
			opts->path, opts->verify_seed, bad, sum);
		return 1;
	}
	printf(PROG ": %s: %zu bytes match the data set of seed %" PRIu64 ", checksum 0x%016" PRIx64 "\n",
	       opts->path, opts->size, opts->verify_seed, sum);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " -f FILE [-s SIZE] [-b BIND_ADDR] [-p PORT] [-r] [-H]\n"
		"       " PROG " -f FILE -s SIZE -V SEED\n"
		"  -f FILE       pmem file (fsdax mount) or /dev/daxX.Y to expose\n"
		"  -s SIZE       bytes to register from offset 0 (K/M/G suffixes;\n"
		"                default 8M); a regular file is extended to SIZE\n"
		"  -b BIND_ADDR  local address to listen on (default: all)\n"
		"  -p PORT       port (default " DAXLEASE_RDMA_PORT ")\n"
		"  -r            release the layout lease once registered\n"
		"  -H            after checking, hold the MR until SIGUSR1\n"
		"  -V SEED       only check that FILE holds SIZE bytes of the\n"
		"                data set of SEED (no RDMA)\n");
}

int main(int argc, char **argv)
{
	struct server_opts opts = {
		.port = DAXLEASE_RDMA_PORT,
		.size = 8UL << 20,
	};
	sigset_t set;
	int op;

	while ((op = getopt(argc, argv, "f:s:b:p:rHV:h")) != -1) {
		switch (op) {
		case 'f':
			opts.path = optarg;
			break;
		case 's':
			if (daxlease_parse_size(optarg, &opts.size) || !opts.size) {
				fprintf(stderr, PROG ": bad size %s\n", optarg);
				return 1;
			}
			break;
		case 'b':
			opts.bind_addr = optarg;
			break;
		case 'p':
			opts.port = optarg;
			break;
		case 'r':
			opts.release_lease = 1;
			break;
		case 'H':
			opts.hold = 1;
			break;
		case 'V':
			opts.verify_only = 1;
			opts.verify_seed = strtoull(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (!opts.path || optind != argc) {
		usage(stderr);
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (opts.verify_only)
		return verify_file(&opts);

	/* An early SIGUSR1 stays pending for hold_until_signal(). */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	return run_server(&opts);
}
