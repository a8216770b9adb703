// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Command-line value parsers of daxlease(1).  Pure functions so that the
 * host unit test (tools/tests/test_args.c) covers them without a device.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <infiniband/verbs.h>

#include "daxlease_tool.h"

int dt_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE)
		return ERANGE;
	if (end == s)
		return EINVAL;
	switch (*end) {
	case 0:
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	default:
		return EINVAL;
	}
	if (shift) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
		if (*end)
			return EINVAL;
		if (v > (UINT64_MAX >> shift))
			return ERANGE;
		v <<= shift;
	}
	*out = v;
	return 0;
}

static const struct {
	const char *name;
	unsigned int bits;
} access_names[] = {
	{ "local-write", IBV_ACCESS_LOCAL_WRITE },
	{ "remote-read", IBV_ACCESS_REMOTE_READ },
	{ "remote-write", IBV_ACCESS_REMOTE_WRITE },
	{ "remote-atomic", IBV_ACCESS_REMOTE_ATOMIC },
	{ "relaxed-ordering", IBV_ACCESS_RELAXED_ORDERING },
};

#define DT_ACCESS_RW                                                          \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |                    \
	 IBV_ACCESS_REMOTE_WRITE)

int dt_parse_access(const char *s, unsigned int *out)
{
	unsigned int bits = 0;
	const char *p, *comma;
	unsigned long v;
	size_t i, n;
	char *end;

	if (!s || !*s)
		return EINVAL;
	if (!strcmp(s, "r")) {
		*out = IBV_ACCESS_REMOTE_READ;
		return 0;
	}
	if (!strcmp(s, "rw")) {
		*out = DT_ACCESS_RW;
		return 0;
	}
	if (!strcmp(s, "rwa")) {
		*out = DT_ACCESS_RW | IBV_ACCESS_REMOTE_ATOMIC;
		return 0;
	}
	if (!strcmp(s, "local") || !strcmp(s, "none")) {
		*out = 0;
		return 0;
	}
	if (*s >= '0' && *s <= '9') {
		errno = 0;
		v = strtoul(s, &end, 0);
		if (errno || *end || v > UINT32_MAX)
			return EINVAL;
		*out = v;
		return 0;
	}
	for (p = s; *p; p = comma ? comma + 1 : p + n) {
		comma = strchr(p, ',');
		n = comma ? (size_t)(comma - p) : strlen(p);
		for (i = 0; i < sizeof(access_names) / sizeof(access_names[0]);
		     i++)
			if (strlen(access_names[i].name) == n &&
			    !strncmp(access_names[i].name, p, n))
				break;
		if (i == sizeof(access_names) / sizeof(access_names[0]))
			return EINVAL;
		bits |= access_names[i].bits;
		if (comma && !comma[1])
			return EINVAL;
	}
	*out = bits;
	return 0;
}

void dt_format_access(unsigned int access, char *buf, size_t len)
{
	size_t i, used = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (i = 0; i < sizeof(access_names) / sizeof(access_names[0]); i++) {
		if (!(access & access_names[i].bits))
			continue;
		used += snprintf(buf + used, used < len ? len - used : 0,
				 "%s%s", used ? "," : "",
				 access_names[i].name);
		access &= ~access_names[i].bits;
	}
	if (access)
		used += snprintf(buf + used, used < len ? len - used : 0,
				 "%s0x%x", used ? "," : "", access);
	if (!used)
		snprintf(buf, len, "local");
}

int dt_parse_pid(const char *s, pid_t *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > 0x7fffffff)
		return EINVAL;
	*out = (pid_t)v;
	return 0;
}

const char *dt_errname(int err)
{
	static __thread char buf[16];
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

int dt_exit_code(int err)
{
	if (err > 0 && err <= 125)
		return err;
	return 1;
}
