/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * daxlease(1): internal interfaces of the command-line tool.
 *
 * Exit status convention (documented in daxlease(1)): 0 on success, the
 * errno value of the failed library or system call otherwise (so scripts
 * can tell EOPNOTSUPP from EAGAIN from EPERM), and DT_EXIT_USAGE for a bad
 * command line.
 */
#ifndef DAXLEASE_TOOL_H
#define DAXLEASE_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* EX_USAGE of sysexits(3); no daxlease call fails with errno 64 */
#define DT_EXIT_USAGE 64

/* args.c: pure parsers, unit tested without a device ------------------ */

/*
 * "4096", "0x1000", "2M", "1G", "512k": binary suffixes K, M, G, T (either
 * case, optional trailing "iB" or "B").  Returns 0, EINVAL or ERANGE.
 */
int dt_parse_size(const char *s, uint64_t *out);
/*
 * IBV_ACCESS_* from "r" (remote read), "rw" (local write, remote read and
 * write; the default), "rwa" (rw + remote atomic), "local" (local read
 * only), a comma list of local-write, remote-read, remote-write,
 * remote-atomic, relaxed-ordering, or a number.  Returns 0 or EINVAL.
 */
int dt_parse_access(const char *s, unsigned int *out);
/* Format access bits as the comma list dt_parse_access() accepts. */
void dt_format_access(unsigned int access, char *buf, size_t len);
/* A positive pid; 0 or EINVAL. */
int dt_parse_pid(const char *s, pid_t *out);
/* "EAGAIN" for EAGAIN, "E123" if unknown. */
const char *dt_errname(int err);
/* Exit status for a failure with errno err (1..125, else 1). */
int dt_exit_code(int err);

/* json.c: a small streaming JSON writer -------------------------------- */

#define DT_JSON_MAX_DEPTH 16

struct dt_json {
	FILE *f;
	int depth;
	bool need_comma[DT_JSON_MAX_DEPTH];
};

void dt_json_init(struct dt_json *j, FILE *f);
/* key is NULL inside arrays and for the top-level value */
void dt_json_obj_begin(struct dt_json *j, const char *key);
void dt_json_arr_begin(struct dt_json *j, const char *key);
void dt_json_end(struct dt_json *j, char close);
void dt_json_str(struct dt_json *j, const char *key, const char *val);
void dt_json_int(struct dt_json *j, const char *key, long long val);
void dt_json_u64(struct dt_json *j, const char *key, uint64_t val);
void dt_json_bool(struct dt_json *j, const char *key, bool val);
void dt_json_null(struct dt_json *j, const char *key);
/* Close the top level value with a newline. */
void dt_json_finish(struct dt_json *j);
/* dt_json_write_string(): s as a JSON string literal */
#include "json_string.h"

/* subcommands ----------------------------------------------------------- */

extern const char *dt_prog;

int dt_cmd_probe(int argc, char **argv);
int dt_cmd_pins(int argc, char **argv);
int dt_cmd_reg(int argc, char **argv);
int dt_cmd_run(int argc, char **argv);
int dt_cmd_serve(int argc, char **argv);

/* "daxlease: <cmd>: <message>" on stderr */
void dt_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* usage error: message, hint to --help, returns DT_EXIT_USAGE */
int dt_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* DAXLEASE_TOOL_H */
