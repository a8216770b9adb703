// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The --json output of daxlease(1): one compact JSON document per line so
 * that scripts (and the guest suites) can read it with any JSON parser.
 */
#include <inttypes.h>
#include <stdio.h>

#include "daxlease_tool.h"

void dt_json_init(struct dt_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
}

static void key(struct dt_json *j, const char *k)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (k) {
		dt_json_write_string(j->f, k);
		fputc(':', j->f);
	}
}

static void open_container(struct dt_json *j, const char *k, char c)
{
	key(j, k);
	fputc(c, j->f);
	if (j->depth + 1 < DT_JSON_MAX_DEPTH)
		j->depth++;
	j->need_comma[j->depth] = false;
}

void dt_json_obj_begin(struct dt_json *j, const char *k)
{
	open_container(j, k, '{');
}

void dt_json_arr_begin(struct dt_json *j, const char *k)
{
	open_container(j, k, '[');
}

void dt_json_end(struct dt_json *j, char close)
{
	fputc(close, j->f);
	if (j->depth)
		j->depth--;
}

void dt_json_str(struct dt_json *j, const char *k, const char *val)
{
	key(j, k);
	dt_json_write_string(j->f, val);
}

void dt_json_int(struct dt_json *j, const char *k, long long val)
{
	key(j, k);
	fprintf(j->f, "%lld", val);
}

void dt_json_u64(struct dt_json *j, const char *k, uint64_t val)
{
	key(j, k);
	fprintf(j->f, "%" PRIu64, val);
}

void dt_json_bool(struct dt_json *j, const char *k, bool val)
{
	key(j, k);
	fputs(val ? "true" : "false", j->f);
}

void dt_json_null(struct dt_json *j, const char *k)
{
	key(j, k);
	fputs("null", j->f);
}

void dt_json_finish(struct dt_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}
