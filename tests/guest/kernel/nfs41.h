/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The in-kernel NFS server (nfsd) and a minimal NFSv4.1 client, for the
 * attack tests that make nfsd hand out a pNFS block layout of a file on a
 * local xfs, so that nfsd calls the file system's ->map_blocks
 * (xfs_fs_map_blocks) on it.
 *
 * No nfs-utils and no kernel NFS client are needed: the server is set up
 * through /proc/fs/nfsd and the sunrpc cache channels of /proc/net/rpc
 * (what rpc.nfsd, exportfs and rpc.mountd would write), and the client
 * speaks NFSv4.1 (ONC RPC over TCP, AUTH_SYS uid 0) to 127.0.0.1:2049
 * itself.  The session has no backchannel: a layout recall (a local
 * truncate of a file with a layout out) finds the callback path down and
 * nfsd drops the layouts at once, so nothing waits for this client.
 *
 * Functions returning int return 0 or a positive errno value; on failure
 * why (may be NULL) says what failed.
 */
#ifndef DAXLEASE_NFS41_H
#define DAXLEASE_NFS41_H

#include <stddef.h>
#include <stdint.h>

#define NFS41_PORT 2049

/* LAYOUTGET iomodes (layoutiomode4) */
#define NFS41_IOMODE_READ 1
#define NFS41_IOMODE_RW 2

/* *nfs4status when no reply carried an NFS4 status (transport failure) */
#define NFS41_NO_STATUS 0xffffffffu

/* NFS4 status numbers a test may want to compare against */
#define NFS41_OK 0
#define NFS41_ERR_DELAY 10008
#define NFS41_ERR_GRACE 10013
#define NFS41_ERR_BAD_STATEID 10025
#define NFS41_ERR_LAYOUTTRYLATER 10058
#define NFS41_ERR_LAYOUTUNAVAILABLE 10059
#define NFS41_ERR_RECALLCONFLICT 10061
#define NFS41_ERR_UNKNOWN_LAYOUTTYPE 10062

/*
 * Starts nfsd exporting dir (a directory on the file system under test)
 * to 127.0.0.1 with fsid=0, rw, no_root_squash, insecure,
 * no_subtree_check and pnfs, NFSv4.1 on TCP port 2049 with one thread, a
 * 10 s lease and grace time; ends the grace period at once when the
 * kernel lets it (needs a client tracking method: the legacy recovery
 * directory is created for that), else the client's retries ride it out.
 * Mounts the nfsd file system on /proc/fs/nfsd and brings lo up if
 * needed; a server left running is stopped first.  Needs root.
 */
int nfs41_server_start(const char *dir, char *why, size_t whylen);

/*
 * Stops the nfsd threads (which closes the listeners and drops all NFSv4
 * state, layouts included) and flushes the four caches written by
 * nfs41_server_start().  Best effort.
 */
void nfs41_server_stop(void);

/* A TCP connection, a client ID, a session (slot 0) and an open file */
struct nfs41_client;

/*
 * Connects to 127.0.0.1:2049 and runs EXCHANGE_ID, CREATE_SESSION and
 * RECLAIM_COMPLETE, retrying NFS4ERR_DELAY and NFS4ERR_GRACE for up to
 * about 30 s.  Every request waits at most 10 s for its reply: an
 * unanswered request fails the call and leaves the client unusable
 * (nfs41_close() only).  On success *c is the new client.
 */
int nfs41_connect(struct nfs41_client **c, char *why, size_t whylen);

/*
 * OPEN of name (one path component) in the export root: share access
 * read+write, deny none, no create, no delegation wanted.  Retries
 * NFS4ERR_GRACE and NFS4ERR_DELAY for up to about 30 s (the grace period
 * is 10 s).  Keeps the open stateid and the file handle for
 * nfs41_layoutget(); a second call replaces them.
 */
int nfs41_open(struct nfs41_client *c, const char *name, char *why,
	       size_t whylen);

/*
 * LAYOUTGET of a LAYOUT4_BLOCK_VOLUME layout, iomode RW if rw else READ,
 * over [off, off + len) of the open file (off must be a multiple of the
 * file system block size, or nfsd answers NFS4ERR_LAYOUTUNAVAILABLE
 * without mapping anything).  minlength is min(len, 4096): nfsd refuses
 * a read-write layout over unwritten blocks when minlength is 0, after
 * ->map_blocks ran.
 *
 * The stateid sent is the layout stateid of the last successful
 * LAYOUTGET if any (so that repeated calls do not pile up layout stateids
 * and their leases), else the open stateid; a layout stateid the server
 * no longer knows is dropped and the open stateid used instead.
 *
 * Retries NFS4ERR_GRACE, NFS4ERR_DELAY, NFS4ERR_LAYOUTTRYLATER and
 * NFS4ERR_RECALLCONFLICT for up to about 15 s.  Returns 0 on NFS4_OK;
 * else a positive errno-like value (EAGAIN for the retried statuses,
 * ENXIO for LAYOUTUNAVAILABLE, EINVAL, EACCES, ENOENT, EIO, ETIMEDOUT,
 * EPROTO...) and why names the NFS4 status.  *nfs4status (may be NULL)
 * is the status of the LAYOUTGET (or of the op that failed before it),
 * NFS41_NO_STATUS when no reply was usable.
 */
int nfs41_layoutget(struct nfs41_client *c, int rw, uint64_t off,
		    uint64_t len, uint32_t *nfs4status, char *why,
		    size_t whylen);

/* The first extent of the last successful LAYOUTGET (pnfs_block_extent4) */
struct nfs41_extent {
	uint64_t foff;		/* file offset */
	uint64_t len;
	uint64_t soff;		/* offset on the volume (the block device) */
	uint32_t es;		/* 0 READ_WRITE, 1 READ, 2 INVALID, 3 NONE */
	uint32_t iomode;	/* of the layout segment */
};

/* Copies that extent to *ext; ENOENT if there is none. */
int nfs41_layout_extent(const struct nfs41_client *c,
			struct nfs41_extent *ext);

/*
 * LAYOUTRETURN of all the client's block layouts (LAYOUTRETURN4_ALL,
 * any iomode): nfsd frees them and, with the last one of a layout
 * stateid, drops that stateid's FL_LAYOUT lease on the file.
 */
int nfs41_layoutreturn(struct nfs41_client *c, char *why, size_t whylen);

/*
 * Returns the layouts, closes the open file, destroys the session and the
 * client ID (each best effort, with a short timeout), closes the socket
 * and frees c.  NULL is ignored.
 */
void nfs41_close(struct nfs41_client *c);

/* "NFS4ERR_GRACE" for 10013 etc.; "NFS4ERR_?" for unknown numbers */
const char *nfs41_status_name(uint32_t status);

#endif /* DAXLEASE_NFS41_H */
