// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * daxlease reg: register a range of a pmem file or /dev/daxX.Y with
 * ibv_reg_dax_mr(), print the MR and hold it until SIGINT or SIGTERM
 * (SIGUSR1 drops the layout lease and keeps the pin: doc/design.md §1.4), then
 * deregister.  For manual tests and demos: the pin is then visible in
 * /proc/<pid>/file_pins and blocks truncates of the file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <infiniband/verbs.h>
#include <infiniband/verbs_dax.h>

#include "daxlease_tool.h"
#include "devdax.h"
#include "source.h"
#include "strategy.h"

struct reg_opts {
	const char *path;
	const char *device;
	uint64_t offset;
	uint64_t length;
	bool have_length;
	unsigned int access;
	uint32_t flags;
	bool json;
	long hold;		/* seconds; -1 until a signal */
};

static void reg_usage(FILE *f)
{
	fprintf(f,
		"usage: %s reg PATH [--offset N] [--length N] [--access ACCESS]\n"
		"       [-d DEV] [--release-lease] [--create] [--allow-odp]\n"
		"       [--no-fallback] [--hold SEC] [--json]\n"
		"\n"
		"Register [offset, offset + length) of PATH (a file on a DAX mount,\n"
		"a page-cache file or /dev/daxX.Y) with ibv_reg_dax_mr(3), print\n"
		"the MR and hold it until SIGINT or SIGTERM, then deregister.\n"
		"SIGUSR1 releases the layout lease and keeps the MR.\n"
		"\n"
		"  -o, --offset N      offset in the file (default 0; K/M/G suffixes)\n"
		"  -l, --length N      length (default: to the end of the file)\n"
		"  -a, --access A      r, rw (default), rwa, local, a comma list of\n"
		"                      local-write,remote-read,remote-write,\n"
		"                      remote-atomic,relaxed-ordering, or a number\n"
		"  -d, --device DEV    RDMA device (default: the first one)\n"
		"  -r, --release-lease IBV_DAX_MR_RELEASE_LEASE: drop the lease\n"
		"                      once pinned\n"
		"  -c, --create        IBV_DAX_MR_CREATE: create or extend the file\n"
		"                      (needs --length)\n"
		"      --allow-odp     IBV_DAX_MR_ALLOW_ODP\n"
		"      --no-fallback   IBV_DAX_MR_NO_FALLBACK\n"
		"  -t, --hold SEC      deregister after SEC seconds (0: at once)\n"
		"  -j, --json          print the MR as one JSON object\n"
		"  -h, --help          this text\n"
		"\n"
		"On failure the library's reason (ibv_dax_errmsg(3)) is printed and\n"
		"the exit status is the errno value (e.g. 95 EOPNOTSUPP, 11 EAGAIN).\n",
		dt_prog);
}

static int default_length(struct reg_opts *o)
{
	struct dl_devdax dd;
	uint64_t size = 0;
	struct stat st;
	int err, ret;

	if (stat(o->path, &st)) {
		err = errno;
		dt_error("reg", "%s: %s", o->path, strerror(err));
		return err;
	}
	if (S_ISCHR(st.st_mode)) {
		ret = dl_devdax_probe(major(st.st_rdev), minor(st.st_rdev),
				      o->path, &dd);
		if (ret <= 0) {
			err = ret ? errno : ENODEV;
			dt_error("reg", "%s: no device DAX size (%s): pass --length",
				 o->path, ret ? ibv_dax_errmsg() :
						"not a device DAX");
			return err;
		}
		size = dd.size;
	} else {
		size = st.st_size;
	}
	if (size <= o->offset) {
		dt_error("reg", "%s: offset %" PRIu64 " is at or past the end (%" PRIu64 " bytes): pass --length",
			 o->path, o->offset, size);
		return ERANGE;
	}
	o->length = size - o->offset;
	return 0;
}

static int parse_reg(int argc, char **argv, struct reg_opts *o)
{
	enum { OPT_ODP = 256, OPT_NOFB };
	static const struct option opts[] = {
		{ "offset", required_argument, NULL, 'o' },
		{ "length", required_argument, NULL, 'l' },
		{ "access", required_argument, NULL, 'a' },
		{ "device", required_argument, NULL, 'd' },
		{ "release-lease", no_argument, NULL, 'r' },
		{ "create", no_argument, NULL, 'c' },
		{ "allow-odp", no_argument, NULL, OPT_ODP },
		{ "no-fallback", no_argument, NULL, OPT_NOFB },
		{ "hold", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_WRITE;
	o->hold = -1;
	optind = 0;
	while ((c = getopt_long(argc, argv, "o:l:a:d:rct:jh", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'o':
			if (dt_parse_size(optarg, &o->offset))
				return dt_usage_error("reg", "bad --offset '%s'",
						      optarg);
			break;
		case 'l':
			if (dt_parse_size(optarg, &o->length) || !o->length)
				return dt_usage_error("reg", "bad --length '%s'",
						      optarg);
			o->have_length = true;
			break;
		case 'a':
			if (dt_parse_access(optarg, &o->access))
				return dt_usage_error("reg", "bad --access '%s'",
						      optarg);
			break;
		case 'd':
			o->device = optarg;
			break;
		case 'r':
			o->flags |= IBV_DAX_MR_RELEASE_LEASE;
			break;
		case 'c':
			o->flags |= IBV_DAX_MR_CREATE;
			break;
		case OPT_ODP:
			o->flags |= IBV_DAX_MR_ALLOW_ODP;
			break;
		case OPT_NOFB:
			o->flags |= IBV_DAX_MR_NO_FALLBACK;
			break;
		case 't':
			if (dt_parse_size(optarg, &v) || v > INT_MAX)
				return dt_usage_error("reg", "bad --hold '%s'",
						      optarg);
			o->hold = v;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			reg_usage(stdout);
			return -1;
		default:
			return dt_usage_error("reg", "bad option");
		}
	}
	if (optind != argc - 1)
		return dt_usage_error("reg", optind < argc ?
					      "one PATH only" : "missing PATH");
	o->path = argv[optind];
	if ((o->flags & IBV_DAX_MR_CREATE) && !o->have_length)
		return dt_usage_error("reg", "--create needs --length");
	return 0;
}

static struct ibv_context *open_device(const char *want)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n = 0, err = ENODEV;

	list = ibv_get_device_list(&n);
	if (!list || !n) {
		dt_error("reg", "no RDMA device (for Soft-RoCE: rdma link add rxe0 type rxe netdev IFACE)");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (want && strcmp(ibv_get_device_name(list[i]), want))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx) {
			err = errno;
			dt_error("reg", "%s: ibv_open_device: %s",
				 ibv_get_device_name(list[i]), strerror(err));
		}
		goto out;
	}
	dt_error("reg", "no RDMA device '%s'", want);
out:
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		errno = err;
	return ctx;
}

static const char *gran_name(enum ibv_dax_persist_granularity g)
{
	switch (g) {
	case IBV_DAX_GRAN_BYTE:
		return "byte";
	case IBV_DAX_GRAN_CACHE_LINE:
		return "cache-line";
	case IBV_DAX_GRAN_PAGE:
		return "page";
	default:
		return "unknown";
	}
}

static void print_mr(const struct reg_opts *o, struct ibv_context *ctx,
		     struct ibv_mr *mr, const struct ibv_dax_mr_attr *a)
{
	char access[128];
	struct dt_json j;

	dt_format_access(o->access, access, sizeof(access));
	if (o->json) {
		dt_json_init(&j, stdout);
		dt_json_obj_begin(&j, NULL);
		dt_json_int(&j, "pid", getpid());
		dt_json_str(&j, "device", ibv_get_device_name(ctx->device));
		dt_json_str(&j, "path", a->path);
		dt_json_str(&j, "kind", dl_kind_name(a->kind));
		dt_json_str(&j, "strategy", dl_strategy_name(a->strategy));
		dt_json_bool(&j, "lease_held", a->lease_held);
		dt_json_str(&j, "granularity", gran_name(a->granularity));
		dt_json_u64(&j, "offset", a->offset);
		dt_json_u64(&j, "length", a->length);
		dt_json_u64(&j, "addr", (uintptr_t)mr->addr);
		dt_json_u64(&j, "lkey", mr->lkey);
		dt_json_u64(&j, "rkey", mr->rkey);
		dt_json_str(&j, "access", access);
		dt_json_end(&j, '}');
		dt_json_finish(&j);
		return;
	}
	printf("device:      %s\n", ibv_get_device_name(ctx->device));
	printf("path:        %s\n", a->path);
	printf("kind:        %s\n", dl_kind_name(a->kind));
	printf("strategy:    %s\n", dl_strategy_name(a->strategy));
	printf("lease held:  %s\n", a->lease_held ? "yes" : "no");
	printf("granularity: %s\n", gran_name(a->granularity));
	printf("offset:      %" PRIu64 "\n", a->offset);
	printf("length:      %zu\n", a->length);
	printf("addr:        %p\n", mr->addr);
	printf("lkey:        0x%x\n", mr->lkey);
	printf("rkey:        0x%x\n", mr->rkey);
	printf("access:      %s\n", access);
	printf("holding the MR (pid %d) until SIGINT or SIGTERM; SIGUSR1 releases the lease\n",
	       (int)getpid());
	fflush(stdout);
}

/* Wait for SIGINT/SIGTERM (or the hold time); SIGUSR1 drops the lease. */
static int hold_mr(const struct reg_opts *o, struct ibv_mr *mr)
{
	struct timespec deadline, now, left;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += o->hold > 0 ? o->hold : 0;
	if (!o->hold)
		return 0;
	for (;;) {
		if (o->hold < 0) {
			sig = sigwaitinfo(&set, NULL);
		} else {
			clock_gettime(CLOCK_MONOTONIC, &now);
			left.tv_sec = deadline.tv_sec - now.tv_sec;
			left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
			if (left.tv_nsec < 0) {
				left.tv_sec--;
				left.tv_nsec += 1000000000L;
			}
			if (left.tv_sec < 0)
				return 0;
			sig = sigtimedwait(&set, NULL, &left);
			if (sig < 0 && errno == EAGAIN)
				return 0;
		}
		if (sig < 0)
			continue;	/* EINTR */
		if (sig != SIGUSR1)
			return sig;
		if (ibv_dax_mr_release_lease(mr))
			dt_error("reg", "release lease: %s", ibv_dax_errmsg());
		else if (!o->json)
			printf("lease released; the MR stays registered\n");
		fflush(stdout);
	}
}

int dt_cmd_reg(int argc, char **argv)
{
	struct ibv_dax_mr_init_attr init = {};
	struct ibv_dax_mr_attr attr = {};
	struct ibv_context *ctx;
	struct reg_opts o;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	sigset_t set;
	int ret, err;

	ret = parse_reg(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!o.have_length) {
		err = default_length(&o);
		if (err)
			return dt_exit_code(err);
	}

	/* block first: a signal between print and wait must not kill us */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);

	ctx = open_device(o.device);
	if (!ctx)
		return dt_exit_code(errno);
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		err = errno;
		dt_error("reg", "ibv_alloc_pd: %s", strerror(err));
		goto err_close;
	}

	init.path = o.path;
	init.fd = -1;
	init.offset = o.offset;
	init.length = o.length;
	init.access = o.access;
	if (o.flags) {
		init.comp_mask |= IBV_DAX_MR_INIT_FLAGS;
		init.flags = o.flags;
	}
	mr = ibv_reg_dax_mr(pd, &init);
	if (!mr) {
		err = errno;
		dt_error("reg", "%s: %s (%s)", o.path,
			 *ibv_dax_errmsg() ? ibv_dax_errmsg() : strerror(err),
			 dt_errname(err));
		goto err_pd;
	}
	if (ibv_query_dax_mr(mr, &attr, sizeof(attr))) {
		err = errno;
		dt_error("reg", "ibv_query_dax_mr: %s", ibv_dax_errmsg());
		goto err_mr;
	}
	print_mr(&o, ctx, mr, &attr);
	hold_mr(&o, mr);

	err = ibv_dereg_dax_mr(mr);
	if (err) {
		dt_error("reg", "ibv_dereg_dax_mr: %s (%s)", ibv_dax_errmsg(),
			 dt_errname(err));
		goto err_pd;
	}
	if (!o.json)
		printf("deregistered\n");
	fflush(stdout);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;

err_mr:
	ibv_dereg_dax_mr(mr);
err_pd:
	ibv_dealloc_pd(pd);
err_close:
	ibv_close_device(ctx);
	return dt_exit_code(err);
}
