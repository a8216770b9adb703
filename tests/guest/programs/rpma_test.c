// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dl-rpma-test: a server and a client written to librpma's API (Debian's
 * librpma 1.2), as its users write them, with no line for daxlease.  The
 * guest suite "programs" runs the server under `daxlease run`.
 *
 *   dl-rpma-test server ADDR PORT FILE SIZE SEED
 *	maps FILE (MAP_SHARED_VALIDATE | MAP_SYNC, as libpmem would),
 *	registers it with rpma_mr_reg() for write and persistent flush,
 *	sends the MR and its peer configuration (direct write to pmem) to
 *	one client, waits for it to disconnect, unmaps, and checks through a
 *	new descriptor that FILE holds SIZE bytes of the pattern of SEED.
 *	Exit 0, or 1 with the reason on stderr; "rpma_mr_reg:" starts the
 *	line when the registration fails.
 *   dl-rpma-test client ADDR PORT SIZE SEED
 *	writes the pattern into the server's MR in 64 KiB rpma_write()s,
 *	each followed by rpma_flush(RPMA_FLUSH_TYPE_PERSISTENT), waits for
 *	every flush completion, disconnects.
 *   dl-rpma-test lat ADDR PORT SIZE ITERS
 *	the latency of a durable write as librpma's users measure it: one
 *	rpma_write() of SIZE bytes and one rpma_flush(PERSISTENT), waited
 *	for, ITERS times; prints min, median, p99 and max in microseconds
 *	(the same line as daxlease-remote-client lat).  The server then
 *	runs with SEED "-": no check of the file (device DAX cannot be
 *	read back with pread).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <librpma.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#define CHUNK 65536

/* the private data the server sends: descriptors of its MR and config */
struct pdata {
	uint8_t mr_size;
	uint8_t cfg_size;
	uint8_t desc[200];
};

static int fail(const char *what, int ret)
{
	fprintf(stderr, "%s: %s\n", what,
		ret < 0 ? rpma_err_2str(ret) : strerror(ret));
	return 1;
}

static void pattern(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131 + seed) ^ (i >> 16));
}

static int wait_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &ev);

	if (ret)
		return fail("rpma_conn_next_event", ret);
	if (ev != want) {
		fprintf(stderr, "connection event %s, want %s\n",
			rpma_utils_conn_event_2str(ev),
			rpma_utils_conn_event_2str(want));
		return 1;
	}
	return 0;
}

static int server(char **argv)
{
	const char *addr = argv[0], *port = argv[1], *path = argv[2];
	size_t size = strtoull(argv[3], NULL, 0);
	unsigned int seed = (unsigned int)strtoul(argv[4], NULL, 0);
	int check = strcmp(argv[4], "-") != 0;
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data pd;
	struct pdata data = { 0 };
	size_t mr_size = 0, cfg_size = 0;
	uint8_t *map, *want, *got;
	int fd, ret, rc = 1;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail(path, errno);
	map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return fail("mmap MAP_SYNC", errno);
	}
	close(fd);
	memset(map, 0, size);

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
					 &dev);
	if (!ret)
		ret = rpma_peer_new(dev, &peer);
	if (ret) {
		fail("rpma device", ret);
		goto out;
	}
	ret = rpma_mr_reg(peer, map, size,
			  RPMA_MR_USAGE_WRITE_DST |
				  RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
			  &mr);
	if (ret) {
		fprintf(stderr, "rpma_mr_reg: %s (errno %s)\n",
			rpma_err_2str(ret), strerror(errno));
		goto out;
	}
	ret = rpma_peer_cfg_new(&pcfg);
	if (!ret)
		ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true);
	if (!ret)
		ret = rpma_mr_get_descriptor_size(mr, &mr_size);
	if (!ret)
		ret = rpma_peer_cfg_get_descriptor_size(pcfg, &cfg_size);
	if (!ret && mr_size + cfg_size > sizeof(data.desc))
		ret = RPMA_E_NOSUPP;
	if (!ret)
		ret = rpma_mr_get_descriptor(mr, data.desc);
	if (!ret)
		ret = rpma_peer_cfg_get_descriptor(pcfg, data.desc + mr_size);
	if (ret) {
		fail("descriptors", ret);
		goto out;
	}
	data.mr_size = (uint8_t)mr_size;
	data.cfg_size = (uint8_t)cfg_size;

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (!ret)
		ret = rpma_ep_next_conn_req(ep, NULL, &req);
	pd.ptr = &data;
	pd.len = (uint8_t)(offsetof(struct pdata, desc) + mr_size + cfg_size);
	if (!ret)
		ret = rpma_conn_req_connect(&req, &pd, &conn);
	if (ret) {
		fail("listen and accept", ret);
		goto out;
	}
	printf("server: %zu bytes of %s registered, client connected\n", size,
	       path);
	fflush(stdout);
	if (wait_event(conn, RPMA_CONN_ESTABLISHED) ||
	    wait_event(conn, RPMA_CONN_CLOSED))
		goto out;
	rc = 0;
out:
	if (conn) {
		rpma_conn_disconnect(conn);
		rpma_conn_delete(&conn);
	}
	if (req)
		rpma_conn_req_delete(&req);
	if (ep)
		rpma_ep_shutdown(&ep);
	if (mr)
		rpma_mr_dereg(&mr);
	if (pcfg)
		rpma_peer_cfg_delete(&pcfg);
	if (peer)
		rpma_peer_delete(&peer);
	munmap(map, size);
	if (rc || !check)
		return rc;

	/* what the file holds, read through a new descriptor */
	want = malloc(size);
	got = malloc(size);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!want || !got || fd < 0 || pread(fd, got, size, 0) != (ssize_t)size) {
		fprintf(stderr, "reading %s back failed\n", path);
		rc = 1;
	} else {
		pattern(want, size, seed);
		rc = memcmp(want, got, size) != 0;
		printf("server: %s %s the %zu bytes the client wrote\n", path,
		       rc ? "does NOT hold" : "holds", size);
	}
	if (fd >= 0)
		close(fd);
	free(want);
	free(got);
	return rc;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* one rpma_write + rpma_flush(PERSISTENT), waited for */
static int write_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		       struct rpma_mr_local *src_mr, struct rpma_cq *cq,
		       size_t off, size_t len)
{
	struct ibv_wc wc;
	int ret, got;

	ret = rpma_write(conn, dst, off, src_mr, off, len,
			 RPMA_F_COMPLETION_ON_ERROR, NULL);
	if (!ret)
		ret = rpma_flush(conn, dst, off, len, RPMA_FLUSH_TYPE_PERSISTENT,
				 RPMA_F_COMPLETION_ALWAYS, NULL);
	if (!ret)
		ret = rpma_cq_wait(cq);
	if (!ret)
		ret = rpma_cq_get_wc(cq, 1, &wc, &got);
	if (ret)
		return fail("rpma_write + rpma_flush", ret);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "flush completion: %s\n",
			ibv_wc_status_str(wc.status));
		return 1;
	}
	return 0;
}

/* iters 0: write SIZE bytes of the pattern; else the latency mode */
static int client(char **argv, unsigned long iters)
{
	const char *addr = argv[0], *port = argv[1];
	size_t size = strtoull(argv[2], NULL, 0), off;
	unsigned int seed = iters ? 0 : (unsigned int)strtoul(argv[3], NULL, 0);
	double *t = NULL, t0;
	unsigned long i;
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_private_data pd;
	struct rpma_cq *cq = NULL;
	const struct pdata *data;
	size_t dst_size = 0;
	uint8_t *src;
	int ret, rc = 1;

	if (!size || size > (1UL << 30))
		return fail("size", EINVAL);
	src = aligned_alloc(4096, (size + 4095) & ~4095UL);
	t = iters ? calloc(iters, sizeof(*t)) : NULL;
	if (!src || (iters && !t)) {
		free(src);
		free(t);
		return fail("malloc", ENOMEM);
	}
	pattern(src, size, seed);

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE,
					 &dev);
	if (!ret)
		ret = rpma_peer_new(dev, &peer);
	if (!ret)
		ret = rpma_mr_reg(peer, src, size, RPMA_MR_USAGE_WRITE_SRC,
				  &src_mr);
	if (!ret)
		ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (!ret)
		ret = rpma_conn_req_connect(&req, NULL, &conn);
	if (ret) {
		fail("connect", ret);
		goto out;
	}
	if (wait_event(conn, RPMA_CONN_ESTABLISHED))
		goto out;
	ret = rpma_conn_get_private_data(conn, &pd);
	data = pd.ptr;
	if (!ret && (!data || pd.len < offsetof(struct pdata, desc)))
		ret = RPMA_E_INVAL;
	if (!ret)
		ret = rpma_mr_remote_from_descriptor(data->desc, data->mr_size,
						     &dst);
	if (!ret)
		ret = rpma_peer_cfg_from_descriptor(data->desc + data->mr_size,
						    data->cfg_size, &pcfg);
	if (!ret)
		ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg);
	if (!ret)
		ret = rpma_mr_remote_get_size(dst, &dst_size);
	if (!ret && dst_size < size)
		ret = RPMA_E_INVAL;
	if (!ret)
		ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		fail("server's MR", ret);
		goto out;
	}
	if (iters) {
		for (i = 0; i < iters; i++) {
			t0 = now_us();
			if (write_flush(conn, dst, src_mr, cq, 0, size))
				goto out;
			t[i] = now_us() - t0;
		}
		qsort(t, iters, sizeof(*t), cmp_double);
		printf("lat: %zu bytes x %lu: min %.1f median %.1f p99 %.1f max %.1f us\n",
		       size, iters, t[0], t[iters / 2], t[(iters * 99) / 100],
		       t[iters - 1]);
		rc = 0;
		goto out;
	}
	for (off = 0; off < size; off += CHUNK) {
		size_t len = size - off < CHUNK ? size - off : CHUNK;

		if (write_flush(conn, dst, src_mr, cq, off, len))
			goto out;
	}
	printf("client: %zu bytes written and flushed (persistent)\n", size);
	rc = 0;
out:
	if (conn) {
		rpma_conn_disconnect(conn);
		if (!rc)
			rc = wait_event(conn, RPMA_CONN_CLOSED);
		rpma_conn_delete(&conn);
	}
	if (req)
		rpma_conn_req_delete(&req);
	if (dst)
		rpma_mr_remote_delete(&dst);
	if (pcfg)
		rpma_peer_cfg_delete(&pcfg);
	if (src_mr)
		rpma_mr_dereg(&src_mr);
	if (peer)
		rpma_peer_delete(&peer);
	free(src);
	free(t);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "server"))
		return server(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "client"))
		return client(argv + 2, 0);
	if (argc == 6 && !strcmp(argv[1], "lat") && strtoul(argv[5], NULL, 0))
		return client(argv + 2, strtoul(argv[5], NULL, 0));
	fprintf(stderr,
		"usage: %s server ADDR PORT FILE SIZE SEED|-\n"
		"       %s client ADDR PORT SIZE SEED\n"
		"       %s lat ADDR PORT SIZE ITERS\n",
		argv[0], argv[0], argv[0]);
	return 2;
}
