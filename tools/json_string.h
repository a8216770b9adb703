/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * A C string as a JSON string: the one copy of the escaping, for the
 * tool's JSON writer (json.c) and the tests' result records
 * (tests/common/dtest.h), which include it by its path.
 */
#ifndef DAXLEASE_TOOL_JSON_STRING_H
#define DAXLEASE_TOOL_JSON_STRING_H

#include <stdio.h>

/* NULL is written as ""; bytes >= 0x80 (UTF-8 paths) are kept */
static inline void dt_json_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			/* paths are bytes: keep UTF-8, escape controls */
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

#endif /* DAXLEASE_TOOL_JSON_STRING_H */
