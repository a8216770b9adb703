// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * daxlease(1): inspect and exercise DAX memory registration.
 *
 *   daxlease probe   what the kernel and each RDMA device support
 *   daxlease pins    who pins what (/proc/<pid>/file_pins)
 *   daxlease reg     register a file range and hold the MR
 *   daxlease run     run an unmodified RDMA program with the preload
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "daxlease_tool.h"

#ifndef DAXLEASE_VERSION
#define DAXLEASE_VERSION "unknown"
#endif

const char *dt_prog = "daxlease";

/* "daxlease: CMD: message" without the newline */
static void __attribute__((format(printf, 2, 0)))
vmessage(const char *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s%s", dt_prog, cmd ? cmd : "", cmd ? ": " : "");
	vfprintf(stderr, fmt, ap);
}

void dt_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int dt_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s %s%s--help'.\n", dt_prog,
		cmd ? cmd : "", cmd ? " " : "");
	return DT_EXIT_USAGE;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s COMMAND [OPTIONS]\n"
		"       %s --version | --help\n"
		"\n"
		"Inspect and exercise the registration of persistent-memory (DAX)\n"
		"files for RDMA (libdaxlease, <infiniband/verbs_dax.h>).\n"
		"\n"
		"commands:\n"
		"  probe   kernel and RDMA device support, strategy per file kind\n"
		"  pins    who pins what: processes, uverbs files, pinned files\n"
		"          (why does a truncate fail with ETXTBSY?)\n"
		"  reg     register a file range on a device and hold the MR\n"
		"  run     run an unmodified RDMA program so that its ibv_reg_mr()\n"
		"          of FS-DAX mappings takes the layout lease\n"
		"  serve   serve a pmem file to RDMA clients: they write, the\n"
		"          server makes it durable on request and acknowledges\n"
		"\n"
		"'%s COMMAND --help' describes each command.  Exit status: 0 on\n"
		"success, the errno value of the failure otherwise, %d for a\n"
		"bad command line.  See daxlease(1).\n",
		dt_prog, dt_prog, dt_prog, DT_EXIT_USAGE);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "probe", dt_cmd_probe },
	{ "pins", dt_cmd_pins },
	{ "reg", dt_cmd_reg },
	{ "run", dt_cmd_run },
#ifdef DAXLEASE_HAVE_RDMACM
	{ "serve", dt_cmd_serve },
#endif
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return DT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("daxlease %s\n", DAXLEASE_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	return dt_usage_error(NULL, "unknown command '%s'", argv[1]);
}
