# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# What the two guests of tests/vm/run-pair.sh agree on: the cases of
# suites remote-server and remote-client, in the order both run them, and
# the port of each.  The server serves case N on its port only after case
# N-1 has ended; the client connects to case N's port until it is served.
#   remote_cases: NAME PORT SEED, one case a line
#     NAME ext4, xfs, devdax: the example server (daxlease_rdma_server)
#       registers the file (FS-DAX) or the device with ibv_reg_dax_mr(),
#       the stock client RDMA-WRITEs REMOTE_DATA bytes of the data set of
#       SEED, the server persists and checks them and acknowledges.
#     NAME perftest: perftest's ib_write_bw, unmodified, its server under
#       `daxlease run` on an ext4-dax file, its client on the stock kernel,
#       connected through rdma_cm (-R).
#     NAME serve: `daxlease serve` on an ext4-dax file and
#       daxlease-remote-client: one client, four at once, one killed
#       mid-transfer, one stopped until the server's idle timeout drops
#       it, every acknowledged record read back, a last client after
#       them; REMOTE_SERVE_CONNS connections in all.
REMOTE_DATA=$((4 << 20))
REMOTE_MR=$((8 << 20))
remote_cases()
{
	echo "ext4 7481 101"
	echo "xfs 7482 102"
	echo "devdax 7483 103"
	echo "perftest 7484 0"
	echo "serve 7485 0"
}
# daxlease serve: the clients' connections (1 + 4 + 1 + 1 + 5 checks + 1)
REMOTE_SERVE_CONNS=13
REMOTE_SERVE_IDLE=15
REMOTE_REC=4096
# perftest's arguments on both sides, the port last
remote_pt_args() { echo "-d rxe0 -R -F -s 65536 -n 200 -p"; }
# REMOTE_CLIENT: the command of daxlease-remote-client; with
# daxlease.persist=flush the one built against a libibverbs that posts
# RDMA FLUSH (tests/vm/get-rdma-core.sh), with --persist flush: it fails
# where it cannot make its records durable so instead of falling back to
# PERSIST.  (A command, not a function: a client started in the
# background is the process that $! names, for kill -STOP and -KILL.)
REMOTE_FLUSH_CLIENT=/opt/daxlease/rdma-core/bin/daxlease-remote-client
REMOTE_CLIENT=(daxlease-remote-client)
if [ "${DAXLEASE_PERSIST:-}" = flush ]; then
	REMOTE_CLIENT=("$REMOTE_FLUSH_CLIENT" --persist flush)
fi
# the server's address and the client's (daxlease.ip without the prefix)
remote_my_ip() { echo "${DAXLEASE_IP%/*}"; }
# The crash test (tests/vm/run-crash.sh): one file per file system,
# fallocated (its extents start unwritten), REMOTE_CRASH_SLOTS records of
# REMOTE_REC bytes, written round after round by client 1 (ext4) and
# client 2 (xfs), the sequence numbers wrapping over the slots.
REMOTE_CRASH_SIZE=$((64 << 20))
REMOTE_CRASH_SLOTS=$((REMOTE_CRASH_SIZE / 4096))
remote_crash_cases()
{
	echo "ext4 7490 1"
	echo "xfs 7491 2"
}
# bench/remote: the ports of the FS-DAX, device DAX and librpma servers
REMOTE_BENCH_FSDAX=7492
REMOTE_BENCH_DEVDAX=7493
REMOTE_BENCH_RPMA=7494
