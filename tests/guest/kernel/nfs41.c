// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * nfsd set up by hand and a minimal NFSv4.1 client (nfs41.h).
 *
 * Server: the control files of the nfsd file system take the lease and
 * grace times, the versions, a TCP listener and the thread count; four
 * sunrpc caches take what rpc.mountd would answer to nfsd's upcalls:
 *
 *   auth.unix.ip   "nfsd 127.0.0.1 <expiry> daxlease": the client's
 *                  address maps to the auth domain "daxlease" (and
 *                  creates it)
 *   auth.unix.gid  "0 <expiry> 1 0": the groups of uid 0, looked up for
 *                  every AUTH_SYS request
 *   nfsd.fh        "daxlease 1 \x00000000 <expiry> <dir>": fsid type 1
 *                  (FSID_NUM) number 0 is dir, for PUTROOTFH and every
 *                  file handle of the export
 *   nfsd.export    "daxlease <dir> <expiry> <flags> 65534 65534 0"
 *
 * Expiries are wall-clock seconds (the kernel subtracts its boot time).
 * Once a channel has been written and closed the kernel counts a
 * listener for 30 s, so a lookup of anything not written here would wait
 * for an upcall nobody answers, and the request would be dropped: the
 * client then sees no reply within its 10 s receive timeout.
 *
 * Client: ONC RPC (record marking, AUTH_SYS uid 0 gid 0, machine name
 * "daxlease", AUTH_NONE verifier) carrying COMPOUND minor version 1:
 * EXCHANGE_ID, CREATE_SESSION (no backchannel), then compounds that start
 * with SEQUENCE on slot 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "nfs41.h"

/* Server side */
#define NFSD_DIR "/proc/fs/nfsd"
#define RPC_CACHE_DIR "/proc/net/rpc"
#define NFS41_DOMAIN "daxlease"
#define NFS41_THREADS 1
#define NFS41_LEASE 10		/* the minimum nfsd accepts */
#define NFS41_EXPIRY (365L * 24 * 3600)
#define NFS41_ANON_ID 65534
/* nfsd's default legacy client tracking directory */
#define NFS41_RECOVERY_DIR "/var/lib/nfs/v4recovery"

/* nfsd export flags (NFSEXP_*) */
#define EXP_INSECURE_PORT 0x0002
#define EXP_NOSUBTREECHECK 0x0400
#define EXP_FSID 0x2000
#define EXP_PNFS 0x20000
#define NFS41_EXPORT_FLAGS (EXP_INSECURE_PORT | EXP_NOSUBTREECHECK | \
			    EXP_FSID | EXP_PNFS)

/* Client side */
#define NFS41_TIMEOUT 10	/* seconds a reply may take */
#define NFS41_CLOSE_TIMEOUT 3
#define NFS41_CONNECT_RETRY 30
#define NFS41_OPEN_RETRY 30
#define NFS41_LAYOUTGET_RETRY 15
#define NFS41_RETRY_PAUSE_MS 250
#define NFS41_TX_MAX 4096
#define NFS41_RX_MAX (1U << 20)
#define NFS41_STALE_MAX 16	/* replies to skip while looking for ours */
#define NFS41_MACHINE "daxlease"

/* ONC RPC */
#define RPC_CALL 0
#define RPC_REPLY 1
#define RPC_VERSION 2
#define RPC_MSG_ACCEPTED 0
#define RPC_MSG_DENIED 1
#define RPC_AUTH_NONE 0
#define RPC_AUTH_SYS 1
#define RPC_LAST_FRAG 0x80000000u
#define NFS_PROGRAM 100003
#define NFS_V4 4
#define NFSPROC4_COMPOUND 1

/* NFSv4.1 operations */
#define OP_CLOSE 4
#define OP_GETFH 10
#define OP_OPEN 18
#define OP_PUTFH 22
#define OP_PUTROOTFH 24
#define OP_EXCHANGE_ID 42
#define OP_CREATE_SESSION 43
#define OP_DESTROY_SESSION 44
#define OP_LAYOUTGET 50
#define OP_LAYOUTRETURN 51
#define OP_SEQUENCE 53
#define OP_DESTROY_CLIENTID 57
#define OP_RECLAIM_COMPLETE 58

#define NFS4_FHSIZE 128
#define NFS4_OPAQUE_LIMIT 1024
#define NFS4_SESSIONID_SIZE 16
#define NFS4_STATEID_SIZE 16
#define NFS4_VERIFIER_SIZE 8
#define NFS4_DEVICEID_SIZE 16

#define EXCHGID4_FLAG_USE_PNFS_MDS 0x00020000
#define SP4_NONE 0
#define OPEN4_SHARE_ACCESS_BOTH 0x0003
#define OPEN4_SHARE_WANT_NO_DELEG 0x0400
#define OPEN4_SHARE_DENY_NONE 0
#define OPEN4_NOCREATE 0
#define CLAIM_NULL 0
#define OPEN_DELEGATE_NONE 0
#define OPEN_DELEGATE_READ 1
#define OPEN_DELEGATE_WRITE 2
#define OPEN_DELEGATE_NONE_EXT 3
#define WND4_CONTENTION 1
#define WND4_RESOURCE 2
#define NFS_LIMIT_SIZE 1
#define NFS_LIMIT_BLOCKS 2
#define LAYOUT4_BLOCK_VOLUME 3
#define LAYOUTIOMODE4_ANY 3
#define LAYOUTRETURN4_ALL 3
#define NFS41_MINLENGTH 4096

/* Statuses as in nfs41.h, plus the ones this file acts on */
#define NFS4ERR_STALE_STATEID 10023
#define NFS4ERR_OLD_STATEID 10024
#define NFS4ERR_COMPLETE_ALREADY 10054

struct nfs41_client {
	int fd;
	uint32_t xid;
	bool broken;		/* a call failed mid-way: stream state unknown */
	uint64_t clientid;
	uint32_t cs_seqid;	/* for CREATE_SESSION */
	uint32_t exid_flags;	/* eir_flags */
	bool session;
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t seqid;		/* slot 0: last sequenceid the server took */
	uint32_t maxreq;	/* fore channel, as granted */
	uint32_t maxresp;
	uint32_t maxops;
	bool opened;
	uint8_t open_sid[NFS4_STATEID_SIZE];
	uint8_t fh[NFS4_FHSIZE];
	uint32_t fhlen;
	bool layouts;		/* a LAYOUTGET succeeded since the last return */
	bool have_lo_sid;
	uint8_t lo_sid[NFS4_STATEID_SIZE];
	bool have_ext;
	struct nfs41_extent ext;
	uint8_t *rx;		/* the last reply */
	size_t rxlen;
	uint8_t tx[NFS41_TX_MAX];
};

static void set_why(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* -------------------------------------------------------------------- */
/* XDR                                                                   */
/* -------------------------------------------------------------------- */

/* An encoder over a fixed buffer; overflow sticks and voids the result */
struct xw {
	uint8_t *buf;
	size_t len;
	size_t cap;
	bool overflow;
};

static void xw_init(struct xw *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->len = 0;
	w->cap = cap;
	w->overflow = false;
}

static void xw_put(struct xw *w, const void *p, size_t n)
{
	if (w->overflow || n > w->cap - w->len) {
		w->overflow = true;
		return;
	}
	if (n)
		memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void xw_u32(struct xw *w, uint32_t v)
{
	uint32_t be = htonl(v);

	xw_put(w, &be, 4);
}

static void xw_u64(struct xw *w, uint64_t v)
{
	xw_u32(w, (uint32_t)(v >> 32));
	xw_u32(w, (uint32_t)v);
}

/* Fixed-length opaque: the bytes, zero-padded to a multiple of 4 */
static void xw_fixed(struct xw *w, const void *p, size_t n)
{
	static const uint8_t zero[4];

	xw_put(w, p, n);
	xw_put(w, zero, (4 - n % 4) % 4);
}

/* Variable-length opaque: length, bytes, padding */
static void xw_opaque(struct xw *w, const void *p, size_t n)
{
	if (n > UINT32_MAX) {
		w->overflow = true;
		return;
	}
	xw_u32(w, (uint32_t)n);
	xw_fixed(w, p, n);
}

static void xw_string(struct xw *w, const char *s)
{
	xw_opaque(w, s, strlen(s));
}

/* Overwrites the u32 at off (already written) */
static void xw_patch_u32(struct xw *w, size_t off, uint32_t v)
{
	uint32_t be = htonl(v);

	if (w->overflow || off + 4 > w->len)
		return;
	memcpy(w->buf + off, &be, 4);
}

/* A decoder; running past the end or over a limit sets bad for good */
struct xr {
	const uint8_t *buf;
	size_t len;
	size_t off;
	bool bad;
};

static void xr_init(struct xr *r, const uint8_t *buf, size_t len)
{
	r->buf = buf;
	r->len = len;
	r->off = 0;
	r->bad = false;
}

static const uint8_t *xr_take(struct xr *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || n > r->len - r->off) {
		r->bad = true;
		return NULL;
	}
	p = r->buf + r->off;
	r->off += n;
	return p;
}

static uint32_t xr_u32(struct xr *r)
{
	const uint8_t *p = xr_take(r, 4);
	uint32_t be;

	if (!p)
		return 0;
	memcpy(&be, p, 4);
	return ntohl(be);
}

static uint64_t xr_u64(struct xr *r)
{
	uint64_t hi = xr_u32(r);

	return hi << 32 | xr_u32(r);
}

/* XDR bool: 0 or 1, anything else is malformed */
static bool xr_bool(struct xr *r)
{
	uint32_t v = xr_u32(r);

	if (v > 1)
		r->bad = true;
	return v == 1;
}

/* Fixed-length opaque of n bytes (plus padding); NULL if bad */
static const uint8_t *xr_fixed(struct xr *r, size_t n)
{
	const uint8_t *p = xr_take(r, n);

	if (p)
		xr_take(r, (4 - n % 4) % 4);
	return r->bad ? NULL : p;
}

/* Variable-length opaque of at most max bytes; NULL if bad */
static const uint8_t *xr_opaque(struct xr *r, uint32_t max, uint32_t *n)
{
	uint32_t len = xr_u32(r);

	*n = 0;
	if (r->bad)
		return NULL;
	if (len > max) {
		r->bad = true;
		return NULL;
	}
	*n = len;
	return xr_fixed(r, len);
}

static void xr_skip_opaque(struct xr *r, uint32_t max)
{
	uint32_t n;

	xr_opaque(r, max, &n);
}

/* -------------------------------------------------------------------- */
/* Names                                                                 */
/* -------------------------------------------------------------------- */

static const struct {
	uint32_t status;
	const char *name;
} nfs41_statuses[] = {
	{ 0, "NFS4_OK" },
	{ 1, "NFS4ERR_PERM" },
	{ 2, "NFS4ERR_NOENT" },
	{ 5, "NFS4ERR_IO" },
	{ 6, "NFS4ERR_NXIO" },
	{ 13, "NFS4ERR_ACCESS" },
	{ 17, "NFS4ERR_EXIST" },
	{ 18, "NFS4ERR_XDEV" },
	{ 20, "NFS4ERR_NOTDIR" },
	{ 21, "NFS4ERR_ISDIR" },
	{ 22, "NFS4ERR_INVAL" },
	{ 27, "NFS4ERR_FBIG" },
	{ 28, "NFS4ERR_NOSPC" },
	{ 30, "NFS4ERR_ROFS" },
	{ 31, "NFS4ERR_MLINK" },
	{ 63, "NFS4ERR_NAMETOOLONG" },
	{ 66, "NFS4ERR_NOTEMPTY" },
	{ 69, "NFS4ERR_DQUOT" },
	{ 70, "NFS4ERR_STALE" },
	{ 10001, "NFS4ERR_BADHANDLE" },
	{ 10003, "NFS4ERR_BAD_COOKIE" },
	{ 10004, "NFS4ERR_NOTSUPP" },
	{ 10005, "NFS4ERR_TOOSMALL" },
	{ 10006, "NFS4ERR_SERVERFAULT" },
	{ 10007, "NFS4ERR_BADTYPE" },
	{ 10008, "NFS4ERR_DELAY" },
	{ 10009, "NFS4ERR_SAME" },
	{ 10010, "NFS4ERR_DENIED" },
	{ 10011, "NFS4ERR_EXPIRED" },
	{ 10012, "NFS4ERR_LOCKED" },
	{ 10013, "NFS4ERR_GRACE" },
	{ 10014, "NFS4ERR_FHEXPIRED" },
	{ 10015, "NFS4ERR_SHARE_DENIED" },
	{ 10016, "NFS4ERR_WRONGSEC" },
	{ 10017, "NFS4ERR_CLID_INUSE" },
	{ 10018, "NFS4ERR_RESOURCE" },
	{ 10019, "NFS4ERR_MOVED" },
	{ 10020, "NFS4ERR_NOFILEHANDLE" },
	{ 10021, "NFS4ERR_MINOR_VERS_MISMATCH" },
	{ 10022, "NFS4ERR_STALE_CLIENTID" },
	{ 10023, "NFS4ERR_STALE_STATEID" },
	{ 10024, "NFS4ERR_OLD_STATEID" },
	{ 10025, "NFS4ERR_BAD_STATEID" },
	{ 10026, "NFS4ERR_BAD_SEQID" },
	{ 10027, "NFS4ERR_NOT_SAME" },
	{ 10028, "NFS4ERR_LOCK_RANGE" },
	{ 10029, "NFS4ERR_SYMLINK" },
	{ 10030, "NFS4ERR_RESTOREFH" },
	{ 10031, "NFS4ERR_LEASE_MOVED" },
	{ 10032, "NFS4ERR_ATTRNOTSUPP" },
	{ 10033, "NFS4ERR_NO_GRACE" },
	{ 10034, "NFS4ERR_RECLAIM_BAD" },
	{ 10035, "NFS4ERR_RECLAIM_CONFLICT" },
	{ 10036, "NFS4ERR_BADXDR" },
	{ 10037, "NFS4ERR_LOCKS_HELD" },
	{ 10038, "NFS4ERR_OPENMODE" },
	{ 10039, "NFS4ERR_BADOWNER" },
	{ 10040, "NFS4ERR_BADCHAR" },
	{ 10041, "NFS4ERR_BADNAME" },
	{ 10042, "NFS4ERR_BAD_RANGE" },
	{ 10043, "NFS4ERR_LOCK_NOTSUPP" },
	{ 10044, "NFS4ERR_OP_ILLEGAL" },
	{ 10045, "NFS4ERR_DEADLOCK" },
	{ 10046, "NFS4ERR_FILE_OPEN" },
	{ 10047, "NFS4ERR_ADMIN_REVOKED" },
	{ 10048, "NFS4ERR_CB_PATH_DOWN" },
	{ 10049, "NFS4ERR_BADIOMODE" },
	{ 10050, "NFS4ERR_BADLAYOUT" },
	{ 10051, "NFS4ERR_BAD_SESSION_DIGEST" },
	{ 10052, "NFS4ERR_BADSESSION" },
	{ 10053, "NFS4ERR_BADSLOT" },
	{ 10054, "NFS4ERR_COMPLETE_ALREADY" },
	{ 10055, "NFS4ERR_CONN_NOT_BOUND_TO_SESSION" },
	{ 10056, "NFS4ERR_DELEG_ALREADY_WANTED" },
	{ 10057, "NFS4ERR_BACK_CHAN_BUSY" },
	{ 10058, "NFS4ERR_LAYOUTTRYLATER" },
	{ 10059, "NFS4ERR_LAYOUTUNAVAILABLE" },
	{ 10060, "NFS4ERR_NOMATCHING_LAYOUT" },
	{ 10061, "NFS4ERR_RECALLCONFLICT" },
	{ 10062, "NFS4ERR_UNKNOWN_LAYOUTTYPE" },
	{ 10063, "NFS4ERR_SEQ_MISORDERED" },
	{ 10064, "NFS4ERR_SEQUENCE_POS" },
	{ 10065, "NFS4ERR_REQ_TOO_BIG" },
	{ 10066, "NFS4ERR_REP_TOO_BIG" },
	{ 10067, "NFS4ERR_REP_TOO_BIG_TO_CACHE" },
	{ 10068, "NFS4ERR_RETRY_UNCACHED_REP" },
	{ 10069, "NFS4ERR_UNSAFE_COMPOUND" },
	{ 10070, "NFS4ERR_TOO_MANY_OPS" },
	{ 10071, "NFS4ERR_OP_NOT_IN_SESSION" },
	{ 10072, "NFS4ERR_HASH_ALG_UNSUPP" },
	{ 10074, "NFS4ERR_CLIENTID_BUSY" },
	{ 10075, "NFS4ERR_PNFS_IO_HOLE" },
	{ 10076, "NFS4ERR_SEQ_FALSE_RETRY" },
	{ 10077, "NFS4ERR_BAD_HIGH_SLOT" },
	{ 10078, "NFS4ERR_DEADSESSION" },
	{ 10079, "NFS4ERR_ENCR_ALG_UNSUPP" },
	{ 10080, "NFS4ERR_PNFS_NO_LAYOUT" },
	{ 10081, "NFS4ERR_NOT_ONLY_OP" },
	{ 10082, "NFS4ERR_WRONG_CRED" },
	{ 10083, "NFS4ERR_WRONG_TYPE" },
	{ 10084, "NFS4ERR_DIRDELEG_UNAVAIL" },
	{ 10085, "NFS4ERR_REJECT_DELEG" },
	{ 10086, "NFS4ERR_RETURNCONFLICT" },
	{ 10087, "NFS4ERR_DELEG_REVOKED" },
};

const char *nfs41_status_name(uint32_t status)
{
	size_t i;

	for (i = 0; i < sizeof(nfs41_statuses) / sizeof(nfs41_statuses[0]);
	     i++)
		if (nfs41_statuses[i].status == status)
			return nfs41_statuses[i].name;
	return "NFS4ERR_?";
}

static const char *op_name(uint32_t op)
{
	switch (op) {
	case OP_CLOSE:
		return "CLOSE";
	case OP_GETFH:
		return "GETFH";
	case OP_OPEN:
		return "OPEN";
	case OP_PUTFH:
		return "PUTFH";
	case OP_PUTROOTFH:
		return "PUTROOTFH";
	case OP_EXCHANGE_ID:
		return "EXCHANGE_ID";
	case OP_CREATE_SESSION:
		return "CREATE_SESSION";
	case OP_DESTROY_SESSION:
		return "DESTROY_SESSION";
	case OP_LAYOUTGET:
		return "LAYOUTGET";
	case OP_LAYOUTRETURN:
		return "LAYOUTRETURN";
	case OP_SEQUENCE:
		return "SEQUENCE";
	case OP_DESTROY_CLIENTID:
		return "DESTROY_CLIENTID";
	case OP_RECLAIM_COMPLETE:
		return "RECLAIM_COMPLETE";
	default:
		return "op?";
	}
}

/* An errno value for a failed NFS4 status */
static int status_errno(uint32_t status)
{
	switch (status) {
	case NFS41_OK:
		return 0;
	case 1:				/* PERM */
		return EPERM;
	case 2:				/* NOENT */
		return ENOENT;
	case 13:			/* ACCESS */
	case 10016:			/* WRONGSEC */
		return EACCES;
	case 22:			/* INVAL */
	case 10036:			/* BADXDR */
	case 10049:			/* BADIOMODE */
	case 10050:			/* BADLAYOUT */
	case 10062:			/* UNKNOWN_LAYOUTTYPE */
		return EINVAL;
	case 10004:			/* NOTSUPP */
		return EOPNOTSUPP;
	case NFS41_ERR_DELAY:
	case NFS41_ERR_GRACE:
	case NFS41_ERR_LAYOUTTRYLATER:
	case NFS41_ERR_RECALLCONFLICT:
		return EAGAIN;
	case NFS41_ERR_LAYOUTUNAVAILABLE:
		return ENXIO;
	case NFS41_ERR_BAD_STATEID:
	case NFS4ERR_OLD_STATEID:
	case NFS4ERR_STALE_STATEID:
		return ESTALE;
	case NFS41_NO_STATUS:
		return EPROTO;
	default:
		return EIO;
	}
}

/* -------------------------------------------------------------------- */
/* Transport                                                             */
/* -------------------------------------------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return ETIMEDOUT;
			return errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* 0, ETIMEDOUT (receive timeout), ECONNRESET (peer closed) or errno */
static int read_all(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = recv(fd, p, n, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return ETIMEDOUT;
			return errno;
		}
		if (k == 0)
			return ECONNRESET;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Reads one record (all its fragments) into c->rx / c->rxlen */
static int read_record(struct nfs41_client *c, char *why, size_t whylen)
{
	size_t len = 0;
	uint32_t mark;
	int err;

	do {
		uint32_t frag;
		uint8_t *nrx;

		err = read_all(c->fd, (uint8_t *)&mark, 4);
		if (err)
			goto fail;
		mark = ntohl(mark);
		frag = mark & ~RPC_LAST_FRAG;
		if (frag > NFS41_RX_MAX - len) {
			set_why(why, whylen,
				"RPC record over %u bytes", NFS41_RX_MAX);
			return EPROTO;
		}
		nrx = realloc(c->rx, len + frag + 1);
		if (!nrx) {
			set_why(why, whylen, "out of memory for a reply");
			return ENOMEM;
		}
		c->rx = nrx;
		err = read_all(c->fd, c->rx + len, frag);
		if (err)
			goto fail;
		len += frag;
	} while (!(mark & RPC_LAST_FRAG));
	c->rxlen = len;
	return 0;

fail:
	if (err == ETIMEDOUT)
		set_why(why, whylen,
			"no reply within %d s (request dropped: a sunrpc cache upcall nobody answers?)",
			NFS41_TIMEOUT);
	else if (err == ECONNRESET)
		set_why(why, whylen, "nfsd closed the connection");
	else
		set_why(why, whylen, "receive: %s", strerror(err));
	return err;
}

static const char *auth_stat_name(uint32_t s)
{
	static const char *const names[] = {
		"AUTH_OK", "AUTH_BADCRED", "AUTH_REJECTEDCRED",
		"AUTH_BADVERF", "AUTH_REJECTEDVERF", "AUTH_TOOWEAK",
		"AUTH_INVALIDRESP", "AUTH_FAILED",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "AUTH_?";
}

/*
 * Checks an RPC reply header up to the procedure results (r is left
 * there); xid was checked by the caller.
 */
static int check_rpc_reply(struct xr *r, char *why, size_t whylen)
{
	uint32_t stat, v, lo, hi;

	stat = xr_u32(r);
	if (stat == RPC_MSG_DENIED) {
		v = xr_u32(r);
		if (v == 0) {
			lo = xr_u32(r);
			hi = xr_u32(r);
			set_why(why, whylen,
				"RPC denied: RPC version mismatch (%u..%u)",
				lo, hi);
			return EPROTONOSUPPORT;
		}
		v = xr_u32(r);
		set_why(why, whylen,
			"RPC denied: %s (%u)%s", auth_stat_name(v), v,
			v == 1 ? ": no auth.unix.ip entry for 127.0.0.1?" : "");
		return EACCES;
	}
	if (stat != RPC_MSG_ACCEPTED || r->bad) {
		set_why(why, whylen, "malformed RPC reply (reply_stat %u)", stat);
		return EPROTO;
	}
	xr_u32(r);				/* verifier flavor */
	xr_skip_opaque(r, 400);
	v = xr_u32(r);
	if (r->bad) {
		set_why(why, whylen, "malformed RPC reply header");
		return EPROTO;
	}
	switch (v) {
	case 0:
		return 0;
	case 1:
		set_why(why, whylen, "RPC: program %u unavailable",
			NFS_PROGRAM);
		return EPROTONOSUPPORT;
	case 2:
		lo = xr_u32(r);
		hi = xr_u32(r);
		set_why(why, whylen,
			"RPC: NFS version %u not offered (server has %u..%u)",
			NFS_V4, lo, hi);
		return EPROTONOSUPPORT;
	case 3:
		set_why(why, whylen, "RPC: procedure unavailable");
		return EPROTONOSUPPORT;
	case 4:
		set_why(why, whylen, "RPC: server could not decode the call");
		return EPROTO;
	default:
		set_why(why, whylen, "RPC: accept_stat %u (system error)", v);
		return EIO;
	}
}

/* Writes the RPC call header for a COMPOUND (after the record mark) */
static void rpc_call_header(struct xw *w, uint32_t xid)
{
	struct xw cred;
	uint8_t credbuf[64];

	xw_init(&cred, credbuf, sizeof(credbuf));
	xw_u32(&cred, (uint32_t)time(NULL));	/* stamp */
	xw_string(&cred, NFS41_MACHINE);
	xw_u32(&cred, 0);			/* uid */
	xw_u32(&cred, 0);			/* gid */
	xw_u32(&cred, 0);			/* no other groups */

	xw_u32(w, xid);
	xw_u32(w, RPC_CALL);
	xw_u32(w, RPC_VERSION);
	xw_u32(w, NFS_PROGRAM);
	xw_u32(w, NFS_V4);
	xw_u32(w, NFSPROC4_COMPOUND);
	xw_u32(w, RPC_AUTH_SYS);
	xw_opaque(w, credbuf, cred.len);
	xw_u32(w, RPC_AUTH_NONE);
	xw_u32(w, 0);
}

/* -------------------------------------------------------------------- */
/* Compounds                                                             */
/* -------------------------------------------------------------------- */

#define CB_MAX_OPS 8

struct cb {
	struct nfs41_client *c;
	struct xw w;
	size_t nops_off;
	uint32_t nops;
	uint32_t ops[CB_MAX_OPS];
	uint32_t sent_seqid;	/* of the SEQUENCE op, if any */
	struct xr r;
	uint32_t status;	/* compound status */
	uint32_t nres;		/* results not read yet */
	uint32_t fail_op;	/* the op whose status failed the call */
};

static void cb_begin(struct cb *cb, struct nfs41_client *c)
{
	memset(cb, 0, sizeof(*cb));
	cb->c = c;
	xw_init(&cb->w, c->tx, sizeof(c->tx));
	xw_u32(&cb->w, 0);			/* record mark, set later */
	rpc_call_header(&cb->w, ++c->xid);
	xw_string(&cb->w, "");			/* tag */
	xw_u32(&cb->w, 1);			/* minorversion */
	cb->nops_off = cb->w.len;
	xw_u32(&cb->w, 0);			/* op count, set later */
}

static void cb_op(struct cb *cb, uint32_t op)
{
	if (cb->nops >= CB_MAX_OPS) {
		cb->w.overflow = true;
		return;
	}
	cb->ops[cb->nops++] = op;
	xw_u32(&cb->w, op);
}

/* SEQUENCE on slot 0 with the next sequenceid */
static void cb_sequence(struct cb *cb)
{
	struct nfs41_client *c = cb->c;

	cb->sent_seqid = c->seqid + 1;
	cb_op(cb, OP_SEQUENCE);
	xw_fixed(&cb->w, c->sessionid, NFS4_SESSIONID_SIZE);
	xw_u32(&cb->w, cb->sent_seqid);
	xw_u32(&cb->w, 0);			/* slotid */
	xw_u32(&cb->w, 0);			/* highest_slotid */
	xw_u32(&cb->w, 0);			/* cachethis: false */
}

static void cb_putfh(struct cb *cb)
{
	cb_op(cb, OP_PUTFH);
	xw_opaque(&cb->w, cb->c->fh, cb->c->fhlen);
}

/* SEQUENCE, PUTFH of the open file, then op (its arguments follow) */
static void cb_begin_on_file(struct cb *cb, struct nfs41_client *c,
			     uint32_t op)
{
	cb_begin(cb, c);
	cb_sequence(cb);
	cb_putfh(cb);
	cb_op(cb, op);
}

/*
 * Sends the compound and reads its reply up to the first result.
 * Transport and RPC failures mark the client broken: the next reply on
 * the stream could belong to this call.
 */
static int cb_call(struct cb *cb, char *why, size_t whylen)
{
	struct nfs41_client *c = cb->c;
	uint32_t xid = c->xid;
	int err, skipped;

	cb->status = NFS41_NO_STATUS;
	if (c->broken || c->fd < 0) {
		set_why(why, whylen,
			"client unusable after an earlier transport failure");
		return ENOTCONN;
	}
	xw_patch_u32(&cb->w, cb->nops_off, cb->nops);
	xw_patch_u32(&cb->w, 0, RPC_LAST_FRAG | (uint32_t)(cb->w.len - 4));
	if (cb->w.overflow) {
		set_why(why, whylen, "request larger than %d bytes",
			NFS41_TX_MAX);
		return EMSGSIZE;
	}
	if (c->session && cb->w.len - 4 > c->maxreq) {
		set_why(why, whylen, "request of %zu bytes over maxreq %u",
			cb->w.len - 4, c->maxreq);
		return EMSGSIZE;
	}
	err = write_all(c->fd, cb->w.buf, cb->w.len);
	if (err) {
		c->broken = true;
		set_why(why, whylen, "send: %s", strerror(err));
		return err;
	}
	for (skipped = 0; ; skipped++) {
		uint32_t rxid, mtype;

		err = read_record(c, why, whylen);
		if (err) {
			c->broken = true;
			return err;
		}
		xr_init(&cb->r, c->rx, c->rxlen);
		rxid = xr_u32(&cb->r);
		mtype = xr_u32(&cb->r);
		if (!cb->r.bad && rxid == xid && mtype == RPC_REPLY)
			break;
		/* a late reply to a call that timed out, or a callback */
		if (skipped >= NFS41_STALE_MAX) {
			c->broken = true;
			set_why(why, whylen,
				"no reply with xid %u among %d records", xid,
				NFS41_STALE_MAX);
			return EPROTO;
		}
	}
	err = check_rpc_reply(&cb->r, why, whylen);
	if (err) {
		c->broken = true;
		return err;
	}
	cb->status = xr_u32(&cb->r);
	xr_skip_opaque(&cb->r, NFS4_OPAQUE_LIMIT);	/* tag */
	cb->nres = xr_u32(&cb->r);
	if (cb->r.bad) {
		c->broken = true;
		set_why(why, whylen, "malformed COMPOUND reply header");
		cb->status = NFS41_NO_STATUS;
		return EPROTO;
	}
	return 0;
}

/*
 * Reads the header of the next result, which must be op's.  Returns its
 * status (why set when not NFS4_OK), or NFS41_NO_STATUS with why set when
 * the reply is malformed.
 */
static uint32_t cb_res(struct cb *cb, uint32_t op, char *why, size_t whylen)
{
	uint32_t rop, status;

	if (!cb->nres) {
		/* no result at all: the compound failed before any op */
		if (cb->status != NFS41_OK) {
			cb->fail_op = op;
			set_why(why, whylen, "COMPOUND (at %s): %s (%u)",
				op_name(op), nfs41_status_name(cb->status),
				cb->status);
			return cb->status;
		}
		set_why(why, whylen, "reply has no result for %s",
			op_name(op));
		return NFS41_NO_STATUS;
	}
	cb->nres--;
	rop = xr_u32(&cb->r);
	status = xr_u32(&cb->r);
	if (cb->r.bad) {
		set_why(why, whylen, "reply truncated at the %s result",
			op_name(op));
		return NFS41_NO_STATUS;
	}
	if (status != NFS41_OK) {
		cb->fail_op = op;
		if (rop != op)
			set_why(why, whylen, "%s: %s (%u) for op %u",
				op_name(op), nfs41_status_name(status),
				status, rop);
		else
			set_why(why, whylen, "%s: %s (%u)", op_name(op),
				nfs41_status_name(status), status);
		return status;
	}
	if (rop != op) {
		set_why(why, whylen, "reply has op %u where %s was sent", rop,
			op_name(op));
		return NFS41_NO_STATUS;
	}
	return NFS41_OK;
}

/* Marks a malformed result body; returns NFS41_NO_STATUS */
static uint32_t bad_body(struct cb *cb, uint32_t op, char *why,
			 size_t whylen)
{
	set_why(why, whylen, "malformed %s result (at byte %zu of %zu)",
		op_name(op), cb->r.off, cb->r.len);
	return NFS41_NO_STATUS;
}

/* The SEQUENCE result; on NFS4_OK the slot's sequenceid advances */
static uint32_t cb_sequence_res(struct cb *cb, char *why, size_t whylen)
{
	struct nfs41_client *c = cb->c;
	const uint8_t *sid;
	uint32_t st, seqid, slot;

	st = cb_res(cb, OP_SEQUENCE, why, whylen);
	if (st != NFS41_OK)
		return st;
	c->seqid = cb->sent_seqid;
	sid = xr_fixed(&cb->r, NFS4_SESSIONID_SIZE);
	seqid = xr_u32(&cb->r);
	slot = xr_u32(&cb->r);
	xr_u32(&cb->r);				/* highest_slotid */
	xr_u32(&cb->r);				/* target_highest_slotid */
	xr_u32(&cb->r);				/* status_flags */
	if (cb->r.bad)
		return bad_body(cb, OP_SEQUENCE, why, whylen);
	if (memcmp(sid, c->sessionid, NFS4_SESSIONID_SIZE) ||
	    seqid != cb->sent_seqid || slot != 0) {
		set_why(why, whylen,
			"SEQUENCE reply for another slot (seqid %u, slot %u)",
			seqid, slot);
		return NFS41_NO_STATUS;
	}
	return NFS41_OK;
}

/* A result with no body (PUTFH, PUTROOTFH, RECLAIM_COMPLETE...) */
static uint32_t cb_void_res(struct cb *cb, uint32_t op, char *why,
			    size_t whylen)
{
	return cb_res(cb, op, why, whylen);
}

/* The results of cb_begin_on_file(): SEQUENCE's, PUTFH's, then op's */
static uint32_t cb_on_file_res(struct cb *cb, uint32_t op, char *why,
			       size_t whylen)
{
	uint32_t st = cb_sequence_res(cb, why, whylen);

	if (st == NFS41_OK)
		st = cb_void_res(cb, OP_PUTFH, why, whylen);
	if (st == NFS41_OK)
		st = cb_res(cb, op, why, whylen);
	return st;
}

/* -------------------------------------------------------------------- */
/* Operations                                                            */
/* -------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pause_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int exchange_id_once(struct nfs41_client *c, uint32_t *st,
			    char *why, size_t whylen)
{
	static unsigned int instance;
	uint8_t verf[NFS4_VERIFIER_SIZE];
	uint32_t t = (uint32_t)time(NULL), pid = (uint32_t)getpid();
	uint32_t how, n;
	char owner[96];
	struct cb cb;
	int err;

	memcpy(verf, &t, 4);
	memcpy(verf + 4, &pid, 4);
	snprintf(owner, sizeof(owner), "daxlease-nfs41-%u-%u-%u", pid,
		 ++instance, t);

	cb_begin(&cb, c);
	cb_op(&cb, OP_EXCHANGE_ID);
	xw_fixed(&cb.w, verf, sizeof(verf));
	xw_string(&cb.w, owner);
	xw_u32(&cb.w, EXCHGID4_FLAG_USE_PNFS_MDS);
	xw_u32(&cb.w, SP4_NONE);
	xw_u32(&cb.w, 0);			/* no client_impl_id */
	err = cb_call(&cb, why, whylen);
	if (err) {
		*st = NFS41_NO_STATUS;
		return err;
	}
	*st = cb_res(&cb, OP_EXCHANGE_ID, why, whylen);
	if (*st != NFS41_OK)
		return status_errno(*st);
	c->clientid = xr_u64(&cb.r);
	c->cs_seqid = xr_u32(&cb.r);
	c->exid_flags = xr_u32(&cb.r);
	how = xr_u32(&cb.r);			/* eir_state_protect */
	if (how != SP4_NONE) {
		set_why(why, whylen, "EXCHANGE_ID: state protection %u", how);
		*st = NFS41_NO_STATUS;
		return EPROTO;
	}
	xr_u64(&cb.r);				/* so_minor_id */
	xr_skip_opaque(&cb.r, NFS4_OPAQUE_LIMIT);	/* so_major_id */
	xr_skip_opaque(&cb.r, NFS4_OPAQUE_LIMIT);	/* server scope */
	n = xr_u32(&cb.r);			/* eir_server_impl_id<1> */
	if (n > 1)
		cb.r.bad = true;
	if (n == 1) {
		xr_skip_opaque(&cb.r, NFS4_OPAQUE_LIMIT);
		xr_skip_opaque(&cb.r, NFS4_OPAQUE_LIMIT);
		xr_u64(&cb.r);			/* nfstime4 */
		xr_u32(&cb.r);
	}
	if (cb.r.bad) {
		*st = bad_body(&cb, OP_EXCHANGE_ID, why, whylen);
		return EPROTO;
	}
	return 0;
}

/* channel_attrs4 */
static void enc_chan_attrs(struct xw *w, uint32_t maxreq, uint32_t maxresp,
			   uint32_t cached, uint32_t maxops, uint32_t maxreqs)
{
	xw_u32(w, 0);				/* headerpadsize */
	xw_u32(w, maxreq);
	xw_u32(w, maxresp);
	xw_u32(w, cached);
	xw_u32(w, maxops);
	xw_u32(w, maxreqs);
	xw_u32(w, 0);				/* no rdma_ird */
}

static void dec_chan_attrs(struct xr *r, uint32_t *maxreq, uint32_t *maxresp,
			   uint32_t *maxops, uint32_t *maxreqs)
{
	uint32_t n;

	xr_u32(r);				/* headerpadsize */
	*maxreq = xr_u32(r);
	*maxresp = xr_u32(r);
	xr_u32(r);				/* maxresponsesize_cached */
	*maxops = xr_u32(r);
	*maxreqs = xr_u32(r);
	n = xr_u32(r);
	if (n > 1)
		r->bad = true;
	else if (n == 1)
		xr_u32(r);
}

static int create_session_once(struct nfs41_client *c, uint32_t *st,
			       char *why, size_t whylen)
{
	uint32_t seqid, maxreq, maxresp, maxops, maxreqs, u;
	const uint8_t *sid;
	struct cb cb;
	int err;

	cb_begin(&cb, c);
	cb_op(&cb, OP_CREATE_SESSION);
	xw_u64(&cb.w, c->clientid);
	xw_u32(&cb.w, c->cs_seqid);
	xw_u32(&cb.w, 0);			/* no backchannel */
	enc_chan_attrs(&cb.w, 65536, 65536, 4096, 16, 1);
	enc_chan_attrs(&cb.w, 4096, 4096, 0, 2, 1);
	xw_u32(&cb.w, 0x40000000);		/* callback program */
	xw_u32(&cb.w, 1);			/* one callback_sec_parms4: */
	xw_u32(&cb.w, RPC_AUTH_NONE);
	err = cb_call(&cb, why, whylen);
	if (err) {
		*st = NFS41_NO_STATUS;
		return err;
	}
	*st = cb_res(&cb, OP_CREATE_SESSION, why, whylen);
	if (*st != NFS41_OK)
		return status_errno(*st);
	sid = xr_fixed(&cb.r, NFS4_SESSIONID_SIZE);
	seqid = xr_u32(&cb.r);
	xr_u32(&cb.r);				/* csr_flags */
	dec_chan_attrs(&cb.r, &maxreq, &maxresp, &maxops, &maxreqs);
	dec_chan_attrs(&cb.r, &u, &u, &u, &u);
	if (cb.r.bad) {
		*st = bad_body(&cb, OP_CREATE_SESSION, why, whylen);
		return EPROTO;
	}
	if (seqid != c->cs_seqid || !maxreqs || maxops < 4 ||
	    maxreq < 512 || maxresp < 512) {
		set_why(why, whylen,
			"CREATE_SESSION: unusable reply (seqid %u of %u, maxreqs %u, maxops %u, maxreq %u, maxresp %u)",
			seqid, c->cs_seqid, maxreqs, maxops, maxreq, maxresp);
		*st = NFS41_NO_STATUS;
		return EPROTO;
	}
	memcpy(c->sessionid, sid, NFS4_SESSIONID_SIZE);
	c->session = true;
	c->seqid = 0;
	c->maxreq = maxreq;
	c->maxresp = maxresp;
	c->maxops = maxops;
	return 0;
}

static int reclaim_complete_once(struct nfs41_client *c, uint32_t *st,
				 char *why, size_t whylen)
{
	struct cb cb;
	int err;

	cb_begin(&cb, c);
	cb_sequence(&cb);
	cb_op(&cb, OP_RECLAIM_COMPLETE);
	xw_u32(&cb.w, 0);			/* rca_one_fs: false */
	err = cb_call(&cb, why, whylen);
	if (err) {
		*st = NFS41_NO_STATUS;
		return err;
	}
	*st = cb_sequence_res(&cb, why, whylen);
	if (*st == NFS41_OK)
		*st = cb_void_res(&cb, OP_RECLAIM_COMPLETE, why, whylen);
	if (*st == NFS4ERR_COMPLETE_ALREADY)
		*st = NFS41_OK;
	return status_errno(*st);
}

static bool retryable(uint32_t st, bool layout)
{
	if (st == NFS41_ERR_DELAY || st == NFS41_ERR_GRACE)
		return true;
	return layout && (st == NFS41_ERR_LAYOUTTRYLATER ||
			  st == NFS41_ERR_RECALLCONFLICT);
}

typedef int (*step_fn)(struct nfs41_client *c, uint32_t *st, char *why,
		       size_t whylen);

/* Runs step until it succeeds, fails for good or deadline passes */
static int retry_step(struct nfs41_client *c, step_fn step, double deadline,
		      char *why, size_t whylen)
{
	for (;;) {
		uint32_t st = NFS41_NO_STATUS;
		int err = step(c, &st, why, whylen);

		if (!err || !retryable(st, false) || now_s() >= deadline)
			return err;
		pause_ms(NFS41_RETRY_PAUSE_MS);
	}
}

/* The protocol part of nfs41_connect() on a connected stream socket */
static int nfs41_handshake(struct nfs41_client *c, char *why, size_t whylen)
{
	double deadline = now_s() + NFS41_CONNECT_RETRY;
	int err;

	err = retry_step(c, exchange_id_once, deadline, why, whylen);
	if (!err)
		err = retry_step(c, create_session_once, deadline, why,
				 whylen);
	if (!err)
		err = retry_step(c, reclaim_complete_once, deadline, why,
				 whylen);
	return err;
}

static struct nfs41_client *client_new(int fd)
{
	struct nfs41_client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->xid = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
	return c;
}

static void set_timeout(int fd, int secs)
{
	struct timeval tv = { .tv_sec = secs };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int nfs41_connect(struct nfs41_client **cp, char *why, size_t whylen)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(NFS41_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct nfs41_client *c;
	int fd, one = 1, err;

	*cp = NULL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		set_why(why, whylen, "socket: %s", strerror(err));
		return err;
	}
	set_timeout(fd, NFS41_TIMEOUT);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		err = errno;
		set_why(why, whylen, "connect to 127.0.0.1:%d: %s%s",
			NFS41_PORT, strerror(err),
			err == ECONNREFUSED ? " (nfsd not listening)" : "");
		close(fd);
		return err;
	}
	c = client_new(fd);
	if (!c) {
		close(fd);
		set_why(why, whylen, "out of memory");
		return ENOMEM;
	}
	err = nfs41_handshake(c, why, whylen);
	if (err) {
		nfs41_close(c);
		return err;
	}
	*cp = c;
	return 0;
}

/* open_delegation4, skipped */
static void skip_nfsace4(struct xr *r)
{
	xr_u32(r);				/* type */
	xr_u32(r);				/* flag */
	xr_u32(r);				/* access_mask */
	xr_skip_opaque(r, NFS4_OPAQUE_LIMIT);	/* who */
}

static void skip_delegation(struct xr *r)
{
	uint32_t type = xr_u32(r), why, limit;

	switch (type) {
	case OPEN_DELEGATE_NONE:
		break;
	case OPEN_DELEGATE_READ:
		xr_fixed(r, NFS4_STATEID_SIZE);
		xr_bool(r);			/* recall */
		skip_nfsace4(r);
		break;
	case OPEN_DELEGATE_WRITE:
		xr_fixed(r, NFS4_STATEID_SIZE);
		xr_bool(r);
		limit = xr_u32(r);		/* nfs_space_limit4 */
		if (limit == NFS_LIMIT_SIZE)
			xr_u64(r);
		else if (limit == NFS_LIMIT_BLOCKS) {
			xr_u32(r);
			xr_u32(r);
		} else {
			r->bad = true;
		}
		skip_nfsace4(r);
		break;
	case OPEN_DELEGATE_NONE_EXT:
		why = xr_u32(r);
		if (why == WND4_CONTENTION || why == WND4_RESOURCE)
			xr_bool(r);
		break;
	default:
		r->bad = true;
	}
}

static int open_once(struct nfs41_client *c, const char *name, uint32_t *st,
		     char *why, size_t whylen)
{
	static const char owner[] = "daxlease-nfs41-open";
	const uint8_t *sid, *fh;
	uint32_t n, fhlen;
	struct cb cb;
	int err;

	cb_begin(&cb, c);
	cb_sequence(&cb);
	cb_op(&cb, OP_PUTROOTFH);
	cb_op(&cb, OP_OPEN);
	xw_u32(&cb.w, 0);			/* seqid: unused in 4.1 */
	xw_u32(&cb.w, OPEN4_SHARE_ACCESS_BOTH | OPEN4_SHARE_WANT_NO_DELEG);
	xw_u32(&cb.w, OPEN4_SHARE_DENY_NONE);
	xw_u64(&cb.w, c->clientid);		/* open_owner4 */
	xw_opaque(&cb.w, owner, sizeof(owner) - 1);
	xw_u32(&cb.w, OPEN4_NOCREATE);
	xw_u32(&cb.w, CLAIM_NULL);
	xw_string(&cb.w, name);
	cb_op(&cb, OP_GETFH);
	err = cb_call(&cb, why, whylen);
	if (err) {
		*st = NFS41_NO_STATUS;
		return err;
	}
	*st = cb_sequence_res(&cb, why, whylen);
	if (*st == NFS41_OK)
		*st = cb_void_res(&cb, OP_PUTROOTFH, why, whylen);
	if (*st == NFS41_OK)
		*st = cb_res(&cb, OP_OPEN, why, whylen);
	if (*st != NFS41_OK)
		return status_errno(*st);
	sid = xr_fixed(&cb.r, NFS4_STATEID_SIZE);
	xr_bool(&cb.r);				/* change_info4 */
	xr_u64(&cb.r);
	xr_u64(&cb.r);
	xr_u32(&cb.r);				/* rflags */
	n = xr_u32(&cb.r);			/* attrset bitmap4 */
	if (n > 16)
		cb.r.bad = true;
	while (n-- && !cb.r.bad)
		xr_u32(&cb.r);
	skip_delegation(&cb.r);
	if (cb.r.bad) {
		*st = bad_body(&cb, OP_OPEN, why, whylen);
		return EPROTO;
	}
	/* the file is open from here: keep the stateid before GETFH */
	memcpy(c->open_sid, sid, NFS4_STATEID_SIZE);
	c->opened = false;
	*st = cb_res(&cb, OP_GETFH, why, whylen);
	if (*st != NFS41_OK)
		return status_errno(*st);
	fh = xr_opaque(&cb.r, NFS4_FHSIZE, &fhlen);
	if (!fh || !fhlen) {
		*st = bad_body(&cb, OP_GETFH, why, whylen);
		return EPROTO;
	}
	memcpy(c->fh, fh, fhlen);
	c->fhlen = fhlen;
	c->opened = true;
	c->have_lo_sid = false;
	c->have_ext = false;
	return 0;
}

int nfs41_open(struct nfs41_client *c, const char *name, char *why,
	       size_t whylen)
{
	double deadline = now_s() + NFS41_OPEN_RETRY;

	if (!c || !name || !*name || strchr(name, '/') ||
	    strlen(name) > 255) {
		set_why(why, whylen, "OPEN: bad name \"%s\"", name ? name : "");
		return EINVAL;
	}
	for (;;) {
		uint32_t st = NFS41_NO_STATUS;
		int err = open_once(c, name, &st, why, whylen);

		if (!err || !retryable(st, false) || now_s() >= deadline)
			return err;
		pause_ms(NFS41_RETRY_PAUSE_MS);
	}
}

/* LAYOUTGET4resok; keeps the stateid and the first extent */
static uint32_t layoutget_res(struct cb *cb, char *why, size_t whylen)
{
	struct nfs41_client *c = cb->c;
	struct nfs41_extent ext = { 0 };
	const uint8_t *sid, *body;
	uint32_t n, type, blen;
	struct xr b;

	xr_bool(&cb->r);			/* return_on_close */
	sid = xr_fixed(&cb->r, NFS4_STATEID_SIZE);
	n = xr_u32(&cb->r);			/* layout4 count */
	if (cb->r.bad || !n)
		return bad_body(cb, OP_LAYOUTGET, why, whylen);
	/* the first layout4 */
	xr_u64(&cb->r);				/* lo_offset */
	xr_u64(&cb->r);				/* lo_length */
	ext.iomode = xr_u32(&cb->r);
	type = xr_u32(&cb->r);
	body = xr_opaque(&cb->r, NFS41_RX_MAX, &blen);
	if (cb->r.bad)
		return bad_body(cb, OP_LAYOUTGET, why, whylen);
	memcpy(c->lo_sid, sid, NFS4_STATEID_SIZE);
	c->have_lo_sid = true;
	c->layouts = true;
	c->have_ext = false;
	if (type != LAYOUT4_BLOCK_VOLUME)
		return NFS41_OK;
	/* pnfs_block_layout4: the first pnfs_block_extent4 */
	xr_init(&b, body, blen);
	n = xr_u32(&b);
	if (!n)
		return NFS41_OK;
	xr_fixed(&b, NFS4_DEVICEID_SIZE);
	ext.foff = xr_u64(&b);
	ext.len = xr_u64(&b);
	ext.soff = xr_u64(&b);
	ext.es = xr_u32(&b);
	if (b.bad)
		return bad_body(cb, OP_LAYOUTGET, why, whylen);
	c->ext = ext;
	c->have_ext = true;
	return NFS41_OK;
}

static int layoutget_once(struct nfs41_client *c, uint32_t iomode,
			  uint64_t off, uint64_t len, uint32_t *st,
			  char *why, size_t whylen)
{
	bool lo_sid = c->have_lo_sid;
	struct cb cb;
	int err;

	cb_begin_on_file(&cb, c, OP_LAYOUTGET);
	xw_u32(&cb.w, 0);			/* signal_layout_avail */
	xw_u32(&cb.w, LAYOUT4_BLOCK_VOLUME);
	xw_u32(&cb.w, iomode);
	xw_u64(&cb.w, off);
	xw_u64(&cb.w, len);
	xw_u64(&cb.w, len < NFS41_MINLENGTH ? len : NFS41_MINLENGTH);
	xw_fixed(&cb.w, lo_sid ? c->lo_sid : c->open_sid,
		 NFS4_STATEID_SIZE);
	xw_u32(&cb.w, 4096);			/* maxcount */
	err = cb_call(&cb, why, whylen);
	if (err) {
		*st = NFS41_NO_STATUS;
		return err;
	}
	*st = cb_on_file_res(&cb, OP_LAYOUTGET, why, whylen);
	if (*st == NFS41_OK)
		*st = layoutget_res(&cb, why, whylen);
	if (lo_sid && cb.fail_op == OP_LAYOUTGET &&
	    status_errno(*st) == ESTALE) {
		/* the layout stateid is gone (all its layouts returned) */
		c->have_lo_sid = false;
		return EAGAIN;
	}
	return status_errno(*st);
}

int nfs41_layoutget(struct nfs41_client *c, int rw, uint64_t off,
		    uint64_t len, uint32_t *nfs4status, char *why,
		    size_t whylen)
{
	double deadline = now_s() + NFS41_LAYOUTGET_RETRY;
	uint32_t iomode = rw ? NFS41_IOMODE_RW : NFS41_IOMODE_READ;
	uint32_t st = NFS41_NO_STATUS;
	int err;

	if (nfs4status)
		*nfs4status = NFS41_NO_STATUS;
	if (!c || !c->opened) {
		set_why(why, whylen, "LAYOUTGET: no open file");
		return EINVAL;
	}
	if (!len) {
		set_why(why, whylen, "LAYOUTGET: zero length");
		return EINVAL;
	}
	for (;;) {
		bool lo_sid = c->have_lo_sid;

		st = NFS41_NO_STATUS;
		err = layoutget_once(c, iomode, off, len, &st, why, whylen);
		if (err && lo_sid && !c->have_lo_sid)
			continue;	/* again at once with the open stateid */
		if (!err || !retryable(st, true) || now_s() >= deadline)
			break;
		pause_ms(NFS41_RETRY_PAUSE_MS);
	}
	if (nfs4status)
		*nfs4status = st;
	return err;
}

int nfs41_layout_extent(const struct nfs41_client *c,
			struct nfs41_extent *ext)
{
	if (!c || !c->have_ext)
		return ENOENT;
	*ext = c->ext;
	return 0;
}

int nfs41_layoutreturn(struct nfs41_client *c, char *why, size_t whylen)
{
	uint32_t st;
	struct cb cb;
	int err;

	if (!c || !c->opened) {
		set_why(why, whylen, "LAYOUTRETURN: no open file");
		return EINVAL;
	}
	cb_begin_on_file(&cb, c, OP_LAYOUTRETURN);
	xw_u32(&cb.w, 0);			/* lr_reclaim */
	xw_u32(&cb.w, LAYOUT4_BLOCK_VOLUME);
	xw_u32(&cb.w, LAYOUTIOMODE4_ANY);
	xw_u32(&cb.w, LAYOUTRETURN4_ALL);
	err = cb_call(&cb, why, whylen);
	if (err)
		return err;
	st = cb_on_file_res(&cb, OP_LAYOUTRETURN, why, whylen);
	if (st == NFS41_OK) {
		/* layoutreturn_stateid: present bool, then the stateid */
		if (xr_bool(&cb.r))
			xr_fixed(&cb.r, NFS4_STATEID_SIZE);
		if (cb.r.bad)
			st = bad_body(&cb, OP_LAYOUTRETURN, why, whylen);
	}
	if (st == NFS41_OK) {
		c->layouts = false;
		c->have_lo_sid = false;
		c->have_ext = false;
	}
	return status_errno(st);
}

static void close_file(struct nfs41_client *c)
{
	struct cb cb;
	uint32_t st;

	cb_begin_on_file(&cb, c, OP_CLOSE);
	xw_u32(&cb.w, 0);			/* seqid: unused in 4.1 */
	xw_fixed(&cb.w, c->open_sid, NFS4_STATEID_SIZE);
	if (cb_call(&cb, NULL, 0))
		return;
	st = cb_on_file_res(&cb, OP_CLOSE, NULL, 0);
	if (st == NFS41_OK)
		c->opened = false;
}

/* A compound of one op that takes one fixed-size argument */
static void sole_op(struct nfs41_client *c, uint32_t op, const void *arg,
		    size_t len)
{
	struct cb cb;

	cb_begin(&cb, c);
	cb_op(&cb, op);
	xw_fixed(&cb.w, arg, len);
	if (!cb_call(&cb, NULL, 0))
		cb_void_res(&cb, op, NULL, 0);
}

void nfs41_close(struct nfs41_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0 && !c->broken) {
		set_timeout(c->fd, NFS41_CLOSE_TIMEOUT);
		if (c->session && c->opened && c->layouts)
			nfs41_layoutreturn(c, NULL, 0);
		if (c->session && c->opened)
			close_file(c);
		if (c->session) {
			sole_op(c, OP_DESTROY_SESSION, c->sessionid,
				NFS4_SESSIONID_SIZE);
			c->session = false;
		}
		if (c->clientid) {
			uint8_t id[8];
			struct xw w;

			xw_init(&w, id, sizeof(id));
			xw_u64(&w, c->clientid);
			sole_op(c, OP_DESTROY_CLIENTID, id, sizeof(id));
		}
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c->rx);
	free(c);
}

/* -------------------------------------------------------------------- */
/* Server                                                                */
/* -------------------------------------------------------------------- */

/*
 * Writes s to path in one write(2) (each nfsd control file and cache
 * channel takes one request per write); with resp, then reads the
 * answer of a control file into it.  0 or errno.
 */
static int write_file(const char *path, const char *s, char *resp,
		      size_t resplen)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, (resp ? O_RDWR : O_WRONLY) | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = write(fd, s, len);
	if (n < 0)
		err = errno;
	else if ((size_t)n != len)
		err = EIO;
	if (!err && resp && resplen) {
		n = read(fd, resp, resplen - 1);
		resp[n > 0 ? n : 0] = '\0';
	}
	close(fd);
	return err;
}

/* Reads up to len - 1 bytes of path; 0 or errno */
static int read_file(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	while (got < len - 1) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return 0;
}

/* A control file of the nfsd file system */
static int nfsd_ctl(const char *name, const char *s, char *resp,
		    size_t resplen, char *why, size_t whylen)
{
	char path[128];
	int err;

	snprintf(path, sizeof(path), NFSD_DIR "/%s", name);
	err = write_file(path, s, resp, resplen);
	if (err)
		set_why(why, whylen, "write \"%.*s\" to %s: %s",
			(int)strcspn(s, "\n"), s, path, strerror(err));
	return err;
}

/* One line into the channel of sunrpc cache name */
static int cache_put(const char *name, const char *line, char *why,
		     size_t whylen)
{
	char path[128];
	int err;

	snprintf(path, sizeof(path), RPC_CACHE_DIR "/%s/channel", name);
	err = write_file(path, line, NULL, 0);
	if (err)
		set_why(why, whylen, "write \"%.*s\" to %s: %s",
			(int)strcspn(line, "\n"), line, path, strerror(err));
	return err;
}

/*
 * A word for a cache channel line: bytes that would end or confuse the
 * word (space, control characters, backslash, non-ASCII) as \ooo octal,
 * which the kernel's qword_get() decodes.  0, or ENAMETOOLONG.
 */
static int qword_enc(char *out, size_t outlen, const char *s)
{
	size_t o = 0;

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= ' ' || ch == '\\' || ch >= 127) {
			if (o + 4 >= outlen)
				return ENAMETOOLONG;
			snprintf(out + o, outlen - o, "\\%03o", ch);
			o += 4;
		} else {
			if (o + 1 >= outlen)
				return ENAMETOOLONG;
			out[o++] = (char)ch;
		}
	}
	if (o >= outlen)
		return ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}

static void mkdir_p(const char *dir)
{
	char p[PATH_MAX];
	char *s;

	snprintf(p, sizeof(p), "%s", dir);
	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

/* Brings lo up (the guest's init usually did); best effort */
static void loopback_up(void)
{
	struct ifreq ifr;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
}

static int nfsd_mount(char *why, size_t whylen)
{
	struct stat st;
	int err;

	if (!stat(NFSD_DIR "/threads", &st))
		return 0;
	if (stat(NFSD_DIR, &st)) {
		set_why(why, whylen,
			"no %s: kernel without the NFS server (CONFIG_NFSD)?",
			NFSD_DIR);
		return ENODEV;
	}
	if (mount("nfsd", NFSD_DIR, "nfsd", 0, NULL)) {
		err = errno;
		set_why(why, whylen, "mount -t nfsd nfsd %s: %s", NFSD_DIR,
			strerror(err));
		return err;
	}
	return 0;
}

/* Is a server instance up (listeners or threads)? */
static bool nfsd_running(void)
{
	char buf[256];

	if (!read_file(NFSD_DIR "/portlist", buf, sizeof(buf)) &&
	    buf[strspn(buf, " \n")])
		return true;
	return !read_file(NFSD_DIR "/threads", buf, sizeof(buf)) &&
	       atoi(buf) > 0;
}

/* Ends the grace period if the kernel lets it; false if it still runs */
static bool end_grace(void)
{
	char buf[16];
	int i;

	/*
	 * EBUSY when nfsd has no client tracking method (nfsdcld, the
	 * nfsdcltrack helper or the legacy recovery directory).
	 */
	write_file(NFSD_DIR "/v4_end_grace", "Y\n", NULL, 0);
	for (i = 0; i < 30; i++) {
		if (!read_file(NFSD_DIR "/v4_end_grace", buf, sizeof(buf)) &&
		    buf[0] == 'Y')
			return true;
		pause_ms(100);
	}
	return false;
}

/* Is dir in the export table nfsd shows, with the pnfs flag? */
static bool export_listed(const char *dir)
{
	static char buf[16384];
	char *line;

	if (read_file(NFSD_DIR "/exports", buf, sizeof(buf)))
		return false;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		size_t n = strlen(dir);

		if (line[0] == '#' || strncmp(line, dir, n) ||
		    (line[n] != '\t' && line[n] != ' '))
			continue;
		if (strstr(line + n, "pnfs"))
			return true;
	}
	return false;
}

static int write_caches(const char *dir, char *why, size_t whylen)
{
	long long exp = (long long)time(NULL) + NFS41_EXPIRY;
	char word[3 * PATH_MAX], line[4 * PATH_MAX];
	int err;

	err = qword_enc(word, sizeof(word), dir);
	if (err) {
		set_why(why, whylen, "path too long: %s", dir);
		return err;
	}
	/* class, address, expiry, domain (created by this line) */
	snprintf(line, sizeof(line), "nfsd 127.0.0.1 %lld " NFS41_DOMAIN "\n",
		 exp);
	err = cache_put("auth.unix.ip", line, why, whylen);
	if (err)
		return err;
	/* uid, expiry, group count, groups: 0 would be a negative entry */
	snprintf(line, sizeof(line), "0 %lld 1 0\n", exp);
	err = cache_put("auth.unix.gid", line, why, whylen);
	if (err)
		return err;
	/* domain, fsid type 1 (FSID_NUM), 4-byte fsid 0, expiry, path */
	snprintf(line, sizeof(line),
		 NFS41_DOMAIN " 1 \\x00000000 %lld %s\n", exp, word);
	err = cache_put("nfsd.fh", line, why, whylen);
	if (err)
		return err;
	/* domain, path, expiry, flags, anon uid, anon gid, fsid */
	snprintf(line, sizeof(line), NFS41_DOMAIN " %s %lld %d %d %d 0\n",
		 word, exp, NFS41_EXPORT_FLAGS, NFS41_ANON_ID, NFS41_ANON_ID);
	return cache_put("nfsd.export", line, why, whylen);
}

int nfs41_server_start(const char *dir, char *why, size_t whylen)
{
	char path[PATH_MAX], resp[256], num[32];
	struct stat st;
	int err;

	if (!realpath(dir, path)) {
		err = errno;
		set_why(why, whylen, "realpath %s: %s", dir, strerror(err));
		return err;
	}
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		set_why(why, whylen, "%s is not a directory", path);
		return ENOTDIR;
	}
	loopback_up();
	err = nfsd_mount(why, whylen);
	if (err)
		return err;
	/* versions and times can only change while no server instance is up */
	if (nfsd_running())
		nfs41_server_stop();
	/* lets nfsd pick the legacy client tracking, so grace can end early */
	mkdir_p(NFS41_RECOVERY_DIR);

	snprintf(num, sizeof(num), "%d\n", NFS41_LEASE);
	err = nfsd_ctl("nfsv4leasetime", num, NULL, 0, why, whylen);
	if (!err)
		err = nfsd_ctl("nfsv4gracetime", num, NULL, 0, why, whylen);
	if (!err)
		err = nfsd_ctl("versions", "-2 -3 +4 +4.1\n", resp,
			       sizeof(resp), why, whylen);
	if (err)
		return err;
	if (!strstr(resp, "+4.1")) {
		set_why(why, whylen, "NFSv4.1 not enabled: versions \"%.*s\"",
			(int)strcspn(resp, "\n"), resp);
		return EPROTONOSUPPORT;
	}
	/* a TCP listener on 0.0.0.0 (and [::] if IPv6 is built) */
	snprintf(num, sizeof(num), "tcp %d\n", NFS41_PORT);
	err = nfsd_ctl("portlist", num, NULL, 0, why, whylen);
	if (err)
		return err;
	snprintf(num, sizeof(num), "%d\n", NFS41_THREADS);
	err = nfsd_ctl("threads", num, NULL, 0, why, whylen);
	if (!err)
		err = write_caches(path, why, whylen);
	if (err)
		goto fail;
	if (!export_listed(path)) {
		set_why(why, whylen,
			"%s with pnfs not in %s/exports after the cache writes",
			path, NFSD_DIR);
		err = ENOENT;
		goto fail;
	}
	end_grace();
	return 0;

fail:
	nfs41_server_stop();
	return err;
}

void nfs41_server_stop(void)
{
	static const char *const caches[] = {
		"nfsd.export", "nfsd.fh", "auth.unix.gid", "auth.unix.ip",
	};
	char path[128], now[32];
	size_t i;

	if (nfsd_running())
		write_file(NFSD_DIR "/threads", "0\n", NULL, 0);
	snprintf(now, sizeof(now), "%lld\n", (long long)time(NULL));
	for (i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		snprintf(path, sizeof(path), RPC_CACHE_DIR "/%s/flush",
			 caches[i]);
		write_file(path, now, NULL, 0);
	}
}
