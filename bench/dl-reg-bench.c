// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dl-reg-bench: the cost of one ibv_reg_mr() + ibv_dereg_mr() of 4 KiB of
 * anonymous memory, as any program pays it; bench/apps.sh runs it with and
 * without libdaxlease-preload.so in LD_PRELOAD (a registration the preload
 * passes through).  Links libibverbs only.
 *
 * usage: dl-reg-bench ITERATIONS
 * prints "reg_us MEDIAN" and "dereg_us MEDIAN" (microseconds, median of
 * ITERATIONS), exit 1 with a reason on failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <infiniband/verbs.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	double *reg, *dereg, t;
	const char *want = getenv("DAXLEASE_RDMA_DEV");
	int i, n, ndev;
	void *buf;

	n = argc > 1 ? atoi(argv[1]) : 0;
	if (n < 1) {
		fprintf(stderr, "usage: %s ITERATIONS\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(&ndev);
	for (i = 0; list && i < ndev; i++)
		if (!want || !strcmp(ibv_get_device_name(list[i]), want))
			break;
	if (!list || i == ndev) {
		fprintf(stderr, "no RDMA device %s\n", want ? want : "");
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg = calloc((size_t)n, sizeof(*reg));
	dereg = calloc((size_t)n, sizeof(*dereg));
	if (!pd || buf == MAP_FAILED || !reg || !dereg) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	memset(buf, 1, 4096);
	for (i = 0; i < n; i++) {
		struct ibv_mr *mr;

		t = now_us();
		mr = ibv_reg_mr(pd, buf, 4096,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		reg[i] = now_us() - t;
		if (!mr) {
			fprintf(stderr, "ibv_reg_mr: %s\n", strerror(errno));
			return 1;
		}
		t = now_us();
		if (ibv_dereg_mr(mr)) {
			fprintf(stderr, "ibv_dereg_mr failed\n");
			return 1;
		}
		dereg[i] = now_us() - t;
	}
	qsort(reg, (size_t)n, sizeof(*reg), cmp);
	qsort(dereg, (size_t)n, sizeof(*dereg), cmp);
	printf("reg_us %.3f\ndereg_us %.3f\n", reg[n / 2], dereg[n / 2]);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
