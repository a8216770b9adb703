// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * daxlease run [OPTIONS] -- PROGRAM [ARGS]: run an unmodified RDMA program
 * with libdaxlease-preload.so in LD_PRELOAD, so that its ibv_reg_mr() of
 * an FS-DAX mapping registers with the layout lease (see daxlease-run(1)).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daxlease_tool.h"

#ifndef DAXLEASE_PRELOAD_PATH
#define DAXLEASE_PRELOAD_PATH "libdaxlease-preload.so"
#endif

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: %s run [--allow-odp] [--debug] [--] PROGRAM [ARGS...]\n"
		"\n"
		"Run PROGRAM with the daxlease preload library, which registers\n"
		"the FS-DAX mappings PROGRAM passes to ibv_reg_mr() with an\n"
		"exclusive layout lease (a kernel with the daxlease series);\n"
		"every other registration is left to libibverbs.\n"
		"\n"
		"  --allow-odp  where the kernel cannot pin FS-DAX, register it\n"
		"               on-demand-paging if the device supports ODP\n"
		"  --debug      log each registration decision on stderr\n"
		"               (same as DAXLEASE_DEBUG=1)\n"
		"\n"
		"Environment: DAXLEASE_PRELOAD overrides the library's path\n"
		"(%s).\n"
		"Exit status: PROGRAM's; 127 if it cannot be run, %d for a bad\n"
		"command line.  See daxlease-run(1).\n",
		dt_prog, DAXLEASE_PRELOAD_PATH, DT_EXIT_USAGE);
}

/* LD_PRELOAD with the library first, the caller's entries after it */
static int set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int ret;

	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1);
	if (asprintf(&v, "%s:%s", lib, old) < 0)
		return -1;
	ret = setenv("LD_PRELOAD", v, 1);
	free(v);
	return ret;
}

int dt_cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "allow-odp", no_argument, NULL, 'o' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *lib;
	int c, err;

	optind = 0;
	/* '+': the first non-option is PROGRAM, its options are its own */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			setenv("DAXLEASE_ALLOW_ODP", "1", 1);
			break;
		case 'd':
			setenv("DAXLEASE_DEBUG", "1", 1);
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			return dt_usage_error("run", "bad option");
		}
	}
	if (optind >= argc)
		return dt_usage_error("run", "no PROGRAM to run");

	lib = getenv("DAXLEASE_PRELOAD");
	if (!lib || !*lib)
		lib = DAXLEASE_PRELOAD_PATH;
	if (access(lib, R_OK)) {
		err = errno;
		dt_error("run", "preload library %s: %s", lib, strerror(err));
		return dt_exit_code(err);
	}
	if (strchr(lib, ':') || strchr(lib, ' ')) {
		dt_error("run", "preload library path %s contains ':' or a space, which LD_PRELOAD cannot carry",
			 lib);
		return DT_EXIT_USAGE;
	}
	if (set_preload(lib)) {
		err = errno;
		dt_error("run", "setting LD_PRELOAD: %s", strerror(err));
		return dt_exit_code(err);
	}
	execvp(argv[optind], argv + optind);
	err = errno;
	dt_error("run", "%s: %s", argv[optind], strerror(err));
	return 127;
}
