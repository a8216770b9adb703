/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The remote persistence protocol of `daxlease serve` (daxlease-serve(1)
 * describes it in full), and the record format of daxlease-remote-client.
 *
 * One RC connection per client (rdma_cm, port space TCP).  All messages
 * are SENDs of one struct dlr_msg, every field big-endian:
 *   server -> client, first: REGION: the registered range (addr, rkey,
 *     length), how many PERSIST requests may be outstanding (credits) and
 *     the DLR_REGION_* flags;
 *   client -> server: PERSIST (seq, offset, length): make bytes
 *     [offset, offset + length) of the region durable.  The client posts
 *     it on the QP that carried its RDMA WRITEs of those bytes, after
 *     them: an RC responder places the WRITEs before it delivers the SEND;
 *   server -> client: ACK (seq, status): 0 once the range is durable
 *     (ibv_dax_mr_persist() returned), else an errno value: EINVAL for a
 *     range outside the region, EIO when persisting failed;
 *   client -> server: BYE, then disconnect (or just disconnect).
 * A client counts bytes as durable only once it holds the ACK of a
 * PERSIST that covers them, or, where REGION says DLR_REGION_FLUSH, once
 * an RDMA FLUSH (placement type persistent) of them, posted after their
 * WRITEs on the same QP, has completed.  A client that uses FLUSH still
 * sends a PERSIST well within the server's idle_ms.
 */
#ifndef DAXLEASE_REMOTE_PROTO_H
#define DAXLEASE_REMOTE_PROTO_H

#include <stdint.h>

#define DLR_MAGIC 0x44584c52u	/* "DXLR" */
#define DLR_VERSION 1
#define DLR_DEFAULT_PORT "7472"

enum dlr_msg_type {
	DLR_MSG_REGION = 1,
	DLR_MSG_PERSIST = 2,
	DLR_MSG_ACK = 3,
	DLR_MSG_BYE = 4,
};

/* DLR_MSG_REGION flags */
enum dlr_region_flags {
	/* the server's stores need a cache flush (not eADR or page cache) */
	DLR_REGION_CACHE_FLUSH = 1u << 0,
	/* the server persists page-cache files with msync */
	DLR_REGION_PAGECACHE = 1u << 1,
	/*
	 * the region is registered for RDMA FLUSH (global visibility and
	 * persistence): a client that can post FLUSH may FLUSH a range
	 * instead of sending PERSIST
	 */
	DLR_REGION_FLUSH = 1u << 2,
};

struct dlr_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint64_t seq;		/* PERSIST, ACK */
	uint64_t addr;		/* REGION: address of byte 0; PERSIST: offset */
	uint64_t length;	/* REGION: bytes; PERSIST: bytes */
	uint32_t rkey;		/* REGION */
	uint32_t status;	/* ACK: 0 or an errno value */
	uint32_t flags;		/* REGION: DLR_REGION_* */
	uint32_t credits;	/* REGION: PERSISTs that may be outstanding */
	/*
	 * REGION: the server drops a client that sent nothing for this long
	 * (0: never; older servers send 0 here too)
	 */
	uint32_t idle_ms;
	uint8_t reserved[12];
};

_Static_assert(sizeof(struct dlr_msg) == 64, "dlr_msg is 64 bytes");

/*
 * Records of daxlease-remote-client: SIZE bytes (a multiple of 8, at least
 * 64) at offset base + seq * SIZE of the region, a header and a payload of
 * 64-bit words that are a pure function of (client, seq, index).  A record
 * is intact when its header names the client and sequence number expected
 * at its offset and the checksum of its payload matches.
 */
#define DLR_RECORD_MAGIC 0x44585243u	/* "DXRC" */

struct dlr_record {
	uint32_t magic;
	uint32_t client;
	uint64_t seq;
	uint64_t size;		/* of the whole record */
	uint64_t sum;		/* FNV-1a over the payload words */
};

static inline uint64_t dlr_word(uint32_t client, uint64_t seq, uint64_t i)
{
	uint64_t z = ((uint64_t)client << 40) ^ (seq * 0x9e3779b97f4a7c15ULL) ^
		     ((i + 1) * 0xbf58476d1ce4e5b9ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t dlr_fnv(uint64_t sum, uint64_t w)
{
	return (sum ^ w) * 0x100000001b3ULL;
}

#define DLR_FNV_INIT 0xcbf29ce484222325ULL

#endif /* DAXLEASE_REMOTE_PROTO_H */
