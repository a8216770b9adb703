/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What daxlease_rdma_server and daxlease_rdma_client share: the wire
 * messages, the data set and two small option helpers.
 *
 * The data set is a stream of 64-bit words, word i being a pure function of
 * the seed and i, so either side can produce or check any part of it and a
 * later run (after a remount, say) can check a file with only the seed and
 * the length.  The checksum folds the words in order; it is printed by
 * both sides so a log shows that what left the client is what is on pmem.
 */
#ifndef DAXLEASE_RDMA_EXAMPLE_H
#define DAXLEASE_RDMA_EXAMPLE_H

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define DAXLEASE_RDMA_PORT "7471"

enum daxlease_rdma_msg_type {
	/* server -> client: where to write */
	DAXLEASE_MSG_MR_INFO = 1,
	/* client -> server: the data set is written */
	DAXLEASE_MSG_DONE = 2,
	/* server -> client: persisted and checked; status 0 or an errno */
	DAXLEASE_MSG_ACK = 3,
};

/* All fields big-endian on the wire. */
struct daxlease_rdma_msg {
	uint32_t type;
	uint32_t rkey;		/* MR_INFO */
	uint64_t addr;		/* MR_INFO */
	uint64_t length;	/* MR_INFO: MR length; DONE: bytes written */
	uint64_t seed;		/* DONE */
	uint64_t checksum;	/* DONE: client's; ACK: server's */
	uint32_t status;	/* ACK */
	uint32_t reserved;
};

/* splitmix64 of (seed, index): independent of chunking and order */
static inline uint64_t daxlease_pattern_word(uint64_t seed, uint64_t index)
{
	uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Fill buf, which holds bytes [start, start + len) of the data set. */
static inline void daxlease_pattern_fill(void *buf, uint64_t seed,
					 uint64_t start, size_t len)
{
	uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = daxlease_pattern_word(seed, start / 8 + i);
}

/*
 * Offset of the first word of buf (bytes [0, len) of the data set) that
 * differs from the pattern, or len when all match.
 */
static inline size_t daxlease_pattern_check(const void *buf, uint64_t seed,
					    size_t len)
{
	const volatile uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (w[i] != daxlease_pattern_word(seed, i))
			return i * 8;
	return len;
}

#define DAXLEASE_CHECKSUM_INIT 0xcbf29ce484222325ULL

/* FNV-1a over 64-bit words; continue from a previous value */
static inline uint64_t daxlease_checksum(uint64_t sum, const void *buf,
					 size_t len)
{
	const volatile uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		sum = (sum ^ w[i]) * 0x100000001b3ULL;
	return sum;
}

static inline double daxlease_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A byte count with an optional K, M or G suffix (powers of 1024). */
static inline int daxlease_parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'g': case 'G':
		v <<= 10;
		/* fall through */
	case 'm': case 'M':
		v <<= 10;
		/* fall through */
	case 'k': case 'K':
		v <<= 10;
		end++;
		break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

#endif /* DAXLEASE_RDMA_EXAMPLE_H */
