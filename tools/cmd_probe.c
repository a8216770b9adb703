// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * daxlease probe: what the kernel offers (layout lease, file_pins) and,
 * per RDMA device, what ibv_dax_query_caps() found and which strategy each
 * file kind would get (doc/design.md §3.1, strategy.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <infiniband/verbs.h>
#include <infiniband/verbs_dax.h>

#include "caps.h"
#include "errmsg.h"
#include "strategy.h"
#include "daxlease_tool.h"

struct probe_dev {
	const char *name;
	int err;			/* open or query failure */
	char errmsg[DL_ERRMSG_MAX];
	struct ibv_dax_caps caps;
	enum ibv_dax_mr_strategy fsdax_odp;	/* with IBV_DAX_MR_ALLOW_ODP */
	char fsdax_why[DL_ERRMSG_MAX];	/* why fsdax gets NONE */
	enum ibv_dax_mr_strategy pagecache_ro;	/* read-only access */
	enum ibv_dax_mr_strategy pagecache_odp;	/* with IBV_DAX_MR_ALLOW_ODP */
	char pagecache_why[DL_ERRMSG_MAX];	/* why pagecache gets NONE */
	int reg_mr_answer;	/* the extended REG_MR probe's errno, or -1 */
};

static void probe_usage(FILE *f)
{
	fprintf(f,
		"usage: %s probe [--json] [-d DEV]\n"
		"\n"
		"Report what this kernel supports (exclusive layout lease\n"
		"F_LAYOUT|F_EXCLUSIVE, /proc/<pid>/file_pins, writable long-term\n"
		"pins of page-cache files) and, for each RDMA device, the\n"
		"extended REG_MR, ODP and ATOMIC WRITE support found by\n"
		"ibv_dax_query_caps(3) and the strategy each file kind gets with\n"
		"write access (lease-pin, plain, odp, none = registration fails;\n"
		"page cache: a file on a disk file system).\n"
		"\n"
		"  -d, --device DEV  only this device (e.g. rxe0)\n"
		"  -j, --json        one JSON object on stdout\n"
		"  -h, --help        this text\n",
		dt_prog);
}

static const char *yesno(int v)
{
	return v ? "yes" : "no";
}

static void probe_one(struct ibv_device *dev, struct probe_dev *p)
{
	struct ibv_context *ctx;
	enum ibv_dax_mr_strategy s;
	uint32_t driver_id;

	p->name = ibv_get_device_name(dev);
	ctx = ibv_open_device(dev);
	if (!ctx) {
		p->err = errno ? errno : ENODEV;
		snprintf(p->errmsg, sizeof(p->errmsg),
			 "ibv_open_device failed: %s", strerror(p->err));
		return;
	}
	memset(&p->caps, 0, sizeof(p->caps));
	if (ibv_dax_query_caps(ctx, &p->caps, sizeof(p->caps))) {
		p->err = errno;
		snprintf(p->errmsg, sizeof(p->errmsg), "%s",
			 ibv_dax_errmsg());
		ibv_close_device(ctx);
		return;
	}
	dl_strategy_choose(IBV_DAX_FILE_FSDAX, 0, DL_PIN_WRITE, &p->caps, &s,
			   p->fsdax_why, sizeof(p->fsdax_why));
	dl_strategy_choose(IBV_DAX_FILE_FSDAX, IBV_DAX_MR_ALLOW_ODP,
			   DL_PIN_WRITE, &p->caps, &p->fsdax_odp, NULL, 0);
	dl_strategy_choose(IBV_DAX_FILE_PAGECACHE, 0, DL_PIN_WRITE, &p->caps,
			   &s, p->pagecache_why, sizeof(p->pagecache_why));
	dl_strategy_choose(IBV_DAX_FILE_PAGECACHE, 0, 0, &p->caps,
			   &p->pagecache_ro, NULL, 0);
	dl_strategy_choose(IBV_DAX_FILE_PAGECACHE, IBV_DAX_MR_ALLOW_ODP,
			   DL_PIN_WRITE, &p->caps, &p->pagecache_odp, NULL, 0);
	/* what the kernel answered the extended REG_MR probe (caps.c) */
	p->reg_mr_answer = -1;
	if (!dl_caps_find_driver_id(ctx->cmd_fd, &driver_id))
		dl_caps_probe_reg_mr(ctx->cmd_fd, driver_id, &p->reg_mr_answer);
	ibv_close_device(ctx);
}

static void print_json(const struct utsname *u, int lease, int lease_err,
		       bool file_pins, const char *dev_note,
		       struct probe_dev *devs, int ndevs)
{
	struct dt_json j;
	int i;

	dt_json_init(&j, stdout);
	dt_json_obj_begin(&j, NULL);
	dt_json_str(&j, "version", DAXLEASE_VERSION);
	dt_json_obj_begin(&j, "kernel");
	dt_json_str(&j, "release", u->release);
	dt_json_bool(&j, "layout_lease", lease);
	if (lease_err && !lease)
		dt_json_str(&j, "layout_lease_errno", dt_errname(lease_err));
	else
		dt_json_null(&j, "layout_lease_errno");
	dt_json_bool(&j, "file_pins", file_pins);
	dt_json_bool(&j, "pagecache_write_pin",
		     dl_kernel_pagecache_write_pin(u->release));
	dt_json_end(&j, '}');
	if (dev_note)
		dt_json_str(&j, "devices_note", dev_note);
	dt_json_arr_begin(&j, "devices");
	for (i = 0; i < ndevs; i++) {
		struct probe_dev *p = &devs[i];

		dt_json_obj_begin(&j, NULL);
		dt_json_str(&j, "name", p->name);
		if (p->err) {
			dt_json_str(&j, "error", dt_errname(p->err));
			dt_json_str(&j, "message", p->errmsg);
			dt_json_end(&j, '}');
			continue;
		}
		dt_json_bool(&j, "layout_lease",
			     !!(p->caps.cap_flags & IBV_DAX_CAP_LAYOUT_LEASE));
		dt_json_bool(&j, "ext_reg_mr",
			     !!(p->caps.cap_flags & IBV_DAX_CAP_EXT_REG_MR));
		if (p->reg_mr_answer >= 0)
			dt_json_str(&j, "ext_reg_mr_probe",
				    p->reg_mr_answer ?
					    dt_errname(p->reg_mr_answer) :
					    "0");
		else
			dt_json_null(&j, "ext_reg_mr_probe");
		dt_json_bool(&j, "odp", !!(p->caps.cap_flags & IBV_DAX_CAP_ODP));
		dt_json_bool(&j, "atomic_write",
			     !!(p->caps.cap_flags & IBV_DAX_CAP_ATOMIC_WRITE));
		dt_json_bool(&j, "flush",
			     !!(p->caps.cap_flags & IBV_DAX_CAP_FLUSH));
		dt_json_bool(&j, "flush_post",
			     !!(p->caps.cap_flags & IBV_DAX_CAP_FLUSH_POST));
		dt_json_bool(&j, "pagecache_write_pin",
			     !!(p->caps.cap_flags &
				IBV_DAX_CAP_PAGECACHE_WRITE_PIN));
		dt_json_obj_begin(&j, "strategy");
		dt_json_str(&j, "fsdax", dl_strategy_name(p->caps.strategy_fsdax));
		dt_json_str(&j, "devdax",
			    dl_strategy_name(p->caps.strategy_devdax));
		dt_json_str(&j, "pagecache",
			    dl_strategy_name(p->caps.strategy_pagecache));
		dt_json_str(&j, "pagecache_read_only",
			    dl_strategy_name(p->pagecache_ro));
		dt_json_str(&j, "fsdax_allow_odp",
			    dl_strategy_name(p->fsdax_odp));
		dt_json_str(&j, "pagecache_allow_odp",
			    dl_strategy_name(p->pagecache_odp));
		dt_json_end(&j, '}');
		if (p->caps.strategy_fsdax == IBV_DAX_MR_STRATEGY_NONE)
			dt_json_str(&j, "fsdax_reason", p->fsdax_why);
		if (p->caps.strategy_pagecache == IBV_DAX_MR_STRATEGY_NONE)
			dt_json_str(&j, "pagecache_reason", p->pagecache_why);
		dt_json_end(&j, '}');
	}
	dt_json_end(&j, ']');
	dt_json_end(&j, '}');
	dt_json_finish(&j);
}

static void print_table(const struct utsname *u, int lease, int lease_err,
			bool file_pins, const char *dev_note,
			struct probe_dev *devs, int ndevs)
{
	int i;

	printf("daxlease %s, Linux %s\n\n", DAXLEASE_VERSION, u->release);
	printf("kernel:\n");
	printf("  %-38s %s", "layout lease (F_LAYOUT|F_EXCLUSIVE)",
	       yesno(lease));
	if (!lease && lease_err)
		printf(" (fcntl: %s)", dt_errname(lease_err));
	printf("\n  %-38s %s\n", "/proc/<pid>/file_pins", yesno(file_pins));
	printf("  %-38s %s\n\n", "writable long-term pin of page cache",
	       dl_kernel_pagecache_write_pin(u->release) ?
		       "yes" : "no (Linux 6.5+)");

	if (!ndevs) {
		printf("devices: none%s%s\n", dev_note ? ": " : "",
		       dev_note ? dev_note : "");
		return;
	}
	printf("devices:\n  %-12s %-5s %-10s %-4s %-12s %-10s %-7s %-9s %s\n",
	       "DEVICE", "LEASE", "EXT_REG_MR", "ODP", "ATOMIC_WRITE", "FSDAX",
	       "DEVDAX", "PAGECACHE", "FSDAX+ALLOW_ODP");
	for (i = 0; i < ndevs; i++) {
		struct probe_dev *p = &devs[i];

		if (p->err) {
			printf("  %-12s error %s: %s\n", p->name,
			       dt_errname(p->err), p->errmsg);
			continue;
		}
		printf("  %-12s %-5s %-10s %-4s %-12s %-10s %-7s %-9s %s\n",
		       p->name,
		       yesno(!!(p->caps.cap_flags & IBV_DAX_CAP_LAYOUT_LEASE)),
		       yesno(!!(p->caps.cap_flags & IBV_DAX_CAP_EXT_REG_MR)),
		       yesno(!!(p->caps.cap_flags & IBV_DAX_CAP_ODP)),
		       yesno(!!(p->caps.cap_flags & IBV_DAX_CAP_ATOMIC_WRITE)),
		       dl_strategy_name(p->caps.strategy_fsdax),
		       dl_strategy_name(p->caps.strategy_devdax),
		       dl_strategy_name(p->caps.strategy_pagecache),
		       dl_strategy_name(p->fsdax_odp));
	}
	for (i = 0; i < ndevs; i++)
		if (!devs[i].err &&
		    devs[i].caps.strategy_fsdax == IBV_DAX_MR_STRATEGY_NONE)
			printf("\n%s: fsdax: %s\n", devs[i].name,
			       devs[i].fsdax_why);
	for (i = 0; i < ndevs; i++)
		if (!devs[i].err &&
		    devs[i].caps.strategy_pagecache ==
			    IBV_DAX_MR_STRATEGY_NONE)
			printf("\n%s: pagecache: %s (read-only: %s, with IBV_DAX_MR_ALLOW_ODP: %s)\n",
			       devs[i].name, devs[i].pagecache_why,
			       dl_strategy_name(devs[i].pagecache_ro),
			       dl_strategy_name(devs[i].pagecache_odp));
}

int dt_cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct ibv_device **list;
	struct probe_dev *devs = NULL;
	const char *want = NULL, *dev_note = NULL;
	bool json = false, file_pins;
	struct utsname u;
	int c, i, n = 0, ndevs = 0, lease, lease_err, ret = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+d:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			want = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			probe_usage(stdout);
			return 0;
		default:
			return dt_usage_error("probe", "bad option");
		}
	}
	if (optind < argc)
		return dt_usage_error("probe", "unexpected argument '%s'",
				      argv[optind]);

	uname(&u);
	lease = dl_lease_probe_now(&lease_err);
	file_pins = access("/proc/self/file_pins", R_OK) == 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		/* ENOSYS: no /sys/class/infiniband at all */
		dev_note = errno == ENOSYS ?
			"no RDMA subsystem in this kernel (no /sys/class/infiniband)" :
			"ibv_get_device_list failed";
		n = 0;
	} else if (!n) {
		dev_note = "no RDMA device (for Soft-RoCE: rdma link add rxe0 type rxe netdev IFACE)";
	}
	if (n) {
		devs = calloc(n, sizeof(*devs));
		if (!devs) {
			ibv_free_device_list(list);
			dt_error("probe", "out of memory");
			return dt_exit_code(ENOMEM);
		}
	}
	for (i = 0; i < n; i++) {
		if (want && strcmp(ibv_get_device_name(list[i]), want))
			continue;
		probe_one(list[i], &devs[ndevs++]);
	}
	if (want && !ndevs) {
		dt_error("probe", "no RDMA device '%s'%s", want,
			 n ? "" : " (no RDMA device at all)");
		ret = dt_exit_code(ENODEV);
		goto out;
	}

	if (json)
		print_json(&u, lease, lease_err, file_pins, dev_note, devs,
			   ndevs);
	else
		print_table(&u, lease, lease_err, file_pins, dev_note, devs,
			    ndevs);
	for (i = 0; i < ndevs; i++)
		if (devs[i].err && !ret)
			ret = dt_exit_code(devs[i].err);
out:
	free(devs);
	if (list)
		ibv_free_device_list(list);
	return ret;
}
