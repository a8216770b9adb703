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
REMOTE_DATA=$((4 << 20))
REMOTE_MR=$((8 << 20))
remote_cases()
{
	echo "ext4 7481 101"
	echo "xfs 7482 102"
	echo "devdax 7483 103"
	echo "perftest 7484 0"
}
# perftest's arguments on both sides, the port last
remote_pt_args() { echo "-d rxe0 -R -F -s 65536 -n 200 -p"; }
# the server's address and the client's (daxlease.ip without the prefix)
remote_my_ip() { echo "${DAXLEASE_IP%/*}"; }
