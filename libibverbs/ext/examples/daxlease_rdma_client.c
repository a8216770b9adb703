// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * daxlease_rdma_client: write a data set into a daxlease_rdma_server's
 * persistent memory with RDMA WRITE.
 *
 * The client connects, receives the server's MR (address, rkey, length),
 * writes SIZE bytes of the data set of SEED into it in CHUNK-sized RDMA
 * WRITEs, then sends DONE with the seed and checksum and waits for the
 * server's ACK, which says whether the data is persistent and correct.
 * The client needs no daxlease support: the remote side of a DAX MR is an
 * ordinary MR.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "daxlease_rdma.h"

#define PROG "daxlease_rdma_client"

/* RDMA WRITEs in flight; the send queue also holds the final SEND. */
#define WRITE_DEPTH 8

struct client_opts {
	const char *server;
	const char *port;
	size_t size;
	size_t chunk;
	uint64_t seed;
};

static int reap_send(struct rdma_cm_id *id, const char *what)
{
	struct ibv_wc wc;
	int ret;

	while ((ret = rdma_get_send_comp(id, &wc)) == 0)
		;
	if (ret < 0) {
		fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, PROG ": %s: %s\n", what,
			ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

static int reap_recv(struct rdma_cm_id *id, struct daxlease_rdma_msg *msg,
		     uint32_t type)
{
	struct ibv_wc wc;
	int ret;

	while ((ret = rdma_get_recv_comp(id, &wc)) == 0)
		;
	if (ret < 0 || wc.status != IBV_WC_SUCCESS ||
	    be32toh(msg->type) != type) {
		fprintf(stderr, PROG ": expected message %u from the server: %s\n",
			type, ret < 0 ? strerror(errno) :
			wc.status ? ibv_wc_status_str(wc.status) :
			"wrong type");
		return -1;
	}
	return 0;
}

/* Write buf[0, size) to the remote MR, WRITE_DEPTH chunks in flight. */
static int write_data_set(struct rdma_cm_id *id, const struct client_opts *o,
			  void *buf, struct ibv_mr *mr, uint64_t raddr,
			  uint32_t rkey)
{
	size_t off = 0;
	int inflight = 0;

	while (off < o->size || inflight) {
		if (off < o->size && inflight < WRITE_DEPTH) {
			size_t len = o->size - off < o->chunk ?
				     o->size - off : o->chunk;

			if (rdma_post_write(id, NULL, (char *)buf + off, len,
					    mr, 0, raddr + off, rkey)) {
				perror(PROG ": rdma_post_write");
				return -1;
			}
			off += len;
			inflight++;
			continue;
		}
		if (reap_send(id, "RDMA WRITE"))
			return -1;
		inflight--;
	}
	return 0;
}

static int run_client(const struct client_opts *o)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct ibv_qp_init_attr attr = {
		.cap = {
			.max_send_wr = WRITE_DEPTH + 1,
			.max_recv_wr = 2,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	/* [0] MR_INFO and [1] ACK are received, [2] DONE is sent */
	struct daxlease_rdma_msg msgs[3] = {};
	struct ibv_mr *msg_mr, *data_mr;
	struct rdma_addrinfo *res;
	struct rdma_cm_id *id;
	uint64_t raddr, rlen, sum;
	uint32_t rkey, status;
	double t0, us;
	int ret = 1;
	void *buf;

	buf = aligned_alloc(4096, (o->size + 4095) & ~4095UL);
	if (!buf) {
		perror(PROG ": aligned_alloc");
		return 1;
	}
	daxlease_pattern_fill(buf, o->seed, 0, o->size);
	sum = daxlease_checksum(DAXLEASE_CHECKSUM_INIT, buf, o->size);

	ret = rdma_getaddrinfo(o->server, o->port, &hints, &res);
	if (ret) {
		fprintf(stderr, PROG ": rdma_getaddrinfo(%s): %s\n",
			o->server, gai_strerror(ret));
		ret = 1;
		goto err_buf;
	}
	ret = rdma_create_ep(&id, res, NULL, &attr);
	rdma_freeaddrinfo(res);
	if (ret) {
		perror(PROG ": rdma_create_ep");
		ret = 1;
		goto err_buf;
	}
	ret = 1;
	/* Local source of RDMA WRITE: no remote access needed. */
	data_mr = rdma_reg_msgs(id, buf, o->size);
	if (!data_mr) {
		perror(PROG ": rdma_reg_msgs (data)");
		goto err_ep;
	}
	msg_mr = rdma_reg_msgs(id, msgs, sizeof(msgs));
	if (!msg_mr) {
		perror(PROG ": rdma_reg_msgs");
		goto err_data_mr;
	}
	/* Both receives are posted before the server can send anything. */
	if (rdma_post_recv(id, NULL, &msgs[0], sizeof(msgs[0]), msg_mr) ||
	    rdma_post_recv(id, NULL, &msgs[1], sizeof(msgs[1]), msg_mr)) {
		perror(PROG ": rdma_post_recv");
		goto err_msg_mr;
	}
	if (rdma_connect(id, NULL)) {
		perror(PROG ": rdma_connect");
		goto err_msg_mr;
	}
	if (reap_recv(id, &msgs[0], DAXLEASE_MSG_MR_INFO))
		goto err_disconnect;
	raddr = be64toh(msgs[0].addr);
	rkey = be32toh(msgs[0].rkey);
	rlen = be64toh(msgs[0].length);
	printf(PROG ": server MR addr 0x%" PRIx64 " rkey 0x%x length %" PRIu64 "\n",
	       raddr, rkey, rlen);
	if (rlen < o->size) {
		fprintf(stderr, PROG ": data set (%zu bytes) exceeds the MR\n",
			o->size);
		goto err_disconnect;
	}

	t0 = daxlease_now_us();
	if (write_data_set(id, o, buf, data_mr, raddr, rkey))
		goto err_disconnect;
	us = daxlease_now_us() - t0;
	printf(PROG ": wrote %zu bytes in %zu-byte RDMA WRITEs in %.0f us (%.1f MB/s)\n",
	       o->size, o->chunk, us, us > 0 ? o->size / us : 0.0);

	msgs[2].type = htobe32(DAXLEASE_MSG_DONE);
	msgs[2].length = htobe64(o->size);
	msgs[2].seed = htobe64(o->seed);
	msgs[2].checksum = htobe64(sum);
	if (rdma_post_send(id, NULL, &msgs[2], sizeof(msgs[2]), msg_mr, 0)) {
		perror(PROG ": rdma_post_send");
		goto err_disconnect;
	}
	if (reap_send(id, "SEND DONE"))
		goto err_disconnect;
	printf(PROG ": sent DONE (seed %" PRIu64 ", checksum 0x%016" PRIx64 ")\n",
	       o->seed, sum);

	if (reap_recv(id, &msgs[1], DAXLEASE_MSG_ACK))
		goto err_disconnect;
	status = be32toh(msgs[1].status);
	if (status) {
		fprintf(stderr, PROG ": server reports: %s\n",
			strerror(status));
		goto err_disconnect;
	}
	printf(PROG ": server persisted and verified the data set\n");
	ret = 0;

err_disconnect:
	rdma_disconnect(id);
err_msg_mr:
	rdma_dereg_mr(msg_mr);
err_data_mr:
	rdma_dereg_mr(data_mr);
err_ep:
	rdma_destroy_ep(id);
err_buf:
	free(buf);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " -a SERVER_ADDR [-p PORT] [-s SIZE] [-c CHUNK] [--seed N]\n"
		"  -a SERVER_ADDR  daxlease_rdma_server's address\n"
		"  -p PORT         port (default " DAXLEASE_RDMA_PORT ")\n"
		"  -s SIZE         bytes of the data set (K/M/G; default 4M)\n"
		"  -c CHUNK        bytes per RDMA WRITE (default 256K)\n"
		"  -S, --seed N    seed of the data set (default 1)\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct client_opts opts = {
		.port = DAXLEASE_RDMA_PORT,
		.size = 4UL << 20,
		.chunk = 256UL << 10,
		.seed = 1,
	};
	int op;

	while ((op = getopt_long(argc, argv, "a:p:s:c:S:h", longopts,
				 NULL)) != -1) {
		switch (op) {
		case 'a':
			opts.server = optarg;
			break;
		case 'p':
			opts.port = optarg;
			break;
		case 's':
			if (daxlease_parse_size(optarg, &opts.size) || !opts.size ||
			    opts.size % 8) {
				fprintf(stderr, PROG ": bad size %s (a non-zero multiple of 8)\n",
					optarg);
				return 1;
			}
			break;
		case 'c':
			if (daxlease_parse_size(optarg, &opts.chunk) || !opts.chunk) {
				fprintf(stderr, PROG ": bad chunk %s\n", optarg);
				return 1;
			}
			break;
		case 'S':
			opts.seed = strtoull(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (!opts.server || optind != argc) {
		usage(stderr);
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	return run_client(&opts);
}
