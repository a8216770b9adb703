#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest suite "programs": RDMA programs that were not
# written for daxlease, unmodified, register FS-DAX files under
# `daxlease run` (libdaxlease-preload.so):
#   - perftest from Debian's package: ib_write_bw, ib_read_bw and
#     ib_write_lat over rxe with the server's buffer an ext4-dax or xfs-dax
#     file (--mmap), the client's a file in the guest's RAM file system;
#     the data the client wrote (or read) is compared with the files
#     afterwards.  Without `daxlease run` the same server fails: the
#     kernel refuses the pin (no layout lease).
#   - fio's rdma engine (Debian's fio): the receiving job's buffers
#     (iomem=mmapshared) an FS-DAX file, under `daxlease run`; the sending
#     job fills its buffers with a pattern and RDMA WRITEs them; the
#     pattern is checked in the file.  fio's verify= cannot check an rdma
#     job (the engine has no read path: a sending job's verify reads are
#     posted as writes, a receiving job completes no I/O until the end), so
#     the suite reads the bytes itself.
#   - dl-rpma-test (tests/guest/programs), a server and a client written to
#     librpma 1.2's API: the server's rpma_mr_reg() of an FS-DAX mapping
#     under `daxlease run`, the client's rpma_write() + rpma_flush()
#     (persistent), the bytes checked in the file; and the same server
#     failing without `daxlease run`.
#   - dl-preload-test (tests/guest/programs), written as such programs are
#     (libibverbs only), for what perftest does not do: rereg, fork,
#     threads, a dlopen()ed libibverbs.  It reports suite
#     "programs_preload".
# On a stock kernel only: perftest's server under `daxlease run` fails with
# its own error, and daxlease says once why (no series in the kernel).
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0
  Runs inside the test VM (tests/vm/run.sh --suites programs) on the
  patched kernel (on a stock kernel: the refusal only), with DAXLEASE_EXT4, DAXLEASE_XFS, DAXLEASE_RDMA_DEV,
  DAXLEASE_GID_INDEX.  A program that is missing fails its tests.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 2 ;; esac

# shellcheck disable=SC1091
. "$(dirname "$0")/../lib.sh"

dev=${DAXLEASE_RDMA_DEV:-rxe0}
gid=${DAXLEASE_GID_INDEX:-0}
prefix=${DAXLEASE_PREFIX:-/opt/daxlease}
tmp=$(mktemp -d)
port=18600
# buffers: perftest maps what it needs of them (it prints the size)
flen=$((4 << 20))
trap 'rm -rf "$tmp"' EXIT

# perftest's common arguments: rxe, the RoCE v2 GID, a short run
pt_args() { echo "-d $dev -x $gid -F -s 65536 -n 20 -p $port"; }

# "allocated mmap buffer of size N at ..." -> N (0 if absent)
mmap_size()
{
	sed -n 's/.*allocated mmap buffer of size \([0-9]*\).*/\1/p' "$1" |
		head -n 1 | grep . || echo 0
}

# carried RECV SEND N: a 64 KiB chunk of the first N bytes of RECV (the
# receiving side's buffer file) equals a chunk of SEND's at another offset.
# perftest fills both buffers with rand() after srand(time(NULL)), so the
# two may start out alike at the same offsets, never at different ones;
# it writes the sender's first chunk into the receiver's second (perftest
# chooses the offsets: either way round counts).
carried()
{
	/usr/bin/python3 - "$@" <<'PY'
import sys
recv_path, send_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
size = 65536
with open(recv_path, "rb") as f:
    recv = f.read(n)
with open(send_path, "rb") as f:
    send = f.read(n)
rc = [recv[o:o + size] for o in range(0, n - n % size, size)]
sc = [send[o:o + size] for o in range(0, n - n % size, size)]
hits = [(k, j) for k, c in enumerate(rc) for j, d in enumerate(sc)
        if k != j and c == d and c.count(0) != size]
if hits:
    k, j = hits[0]
    print(f"chunk {j} of the sender is chunk {k} of the receiver's file")
    sys.exit(0)
print(f"no chunk of the sender's {len(sc)} at another offset of the receiver's {len(rc)}")
sys.exit(1)
PY
}

# wait for a background server: its exit status, or 124 after 120 s
wait_server()
{
	local pid=$1 i

	for i in $(seq 1 240); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
		sleep 0.5
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 124
}

# perftest FS PROGRAM VERIFY: server PROGRAM under `daxlease run` on an
# FS-DAX file of FS, client on a RAM file; VERIFY is write (the server's
# file holds the client's data), read (the client's file holds the
# server's) or none (latency: only both ends succeed).
perftest()
{
	local fs=$1 dir=$2 prog=$3 verify=$4
	local name=${prog#ib_}_$fs srv=$dir/perftest-srv.dat cli=$tmp/cli.dat
	local spid src=0 crc=0 n why= out=

	port=$((port + 1))
	if ! command -v "$prog" >/dev/null; then
		result "$name" fail "$prog not in the guest image (package perftest)"
		return
	fi
	head -c "$flen" /dev/zero > "$srv"
	head -c "$flen" /dev/zero > "$cli"
	sync
	# shellcheck disable=SC2046
	(cd "$tmp" && exec daxlease run --debug -- "$prog" $(pt_args) \
		--mmap="$srv") > "$tmp/srv.log" 2>&1 &
	spid=$!
	sleep 2
	# shellcheck disable=SC2046
	(cd "$tmp" && exec timeout 120 "$prog" $(pt_args) --mmap="$cli" \
		127.0.0.1) > "$tmp/cli.log" 2>&1 || crc=$?
	wait_server "$spid" || src=$?
	n=$(mmap_size "$tmp/srv.log")
	if [ "$src" -ne 0 ] || [ "$crc" -ne 0 ]; then
		why="server exit $src, client exit $crc: $(tail -n 3 "$tmp/srv.log" | tr '\n' ' ') / $(tail -n 3 "$tmp/cli.log" | tr '\n' ' ')"
	elif ! grep -q "registered with the layout lease" "$tmp/srv.log"; then
		why="the server's MR did not take the lease path: $(grep daxlease "$tmp/srv.log" | head -n 3 | tr '\n' ' ' || true)"
	elif [ "$n" -le 0 ] || [ "$n" -gt "$flen" ]; then
		why="no buffer size in the server's output (or larger than $flen)"
	elif [ "$verify" = write ] && ! out=$(carried "$srv" "$cli" "$n"); then
		why="$srv does not hold what the client wrote: $out"
	elif [ "$verify" = read ] && ! out=$(carried "$cli" "$srv" "$n"); then
		why="the client's buffer does not hold what it read from $srv: $out"
	elif ! truncate -s 0 "$srv"; then
		why="truncate of $srv after the server exited failed"
	fi
	if [ -z "$why" ]; then
		result "$name" pass "$n-byte buffer on $fs-dax, lease path; ${out:-both ends ran}; $(grep -E '^ *65536' "$tmp/cli.log" | head -n 1 | tr -s ' ')"
	else
		result "$name" fail "$why"
	fi
	rm -f "$srv"
}

# bare FS DIR PROGRAM: without daxlease run, perftest's server cannot
# register its buffer
bare()
{
	local fs=$1 dir=$2 prog=$3 rc=0 spid srv=$2/perftest-bare.dat

	port=$((port + 1))
	if ! command -v "$prog" >/dev/null; then
		result "${prog#ib_}_bare_refused_$fs" fail "$prog not in the guest image (package perftest)"
		return
	fi
	head -c "$flen" /dev/zero > "$srv"
	head -c "$flen" /dev/zero > "$tmp/bare-cli.dat"
	# shellcheck disable=SC2046
	(cd "$tmp" && exec "$prog" $(pt_args) --mmap="$srv") \
		> "$tmp/bare.log" 2>&1 &
	spid=$!
	sleep 2
	# shellcheck disable=SC2046
	(cd "$tmp" && exec timeout 60 "$prog" $(pt_args) \
		--mmap="$tmp/bare-cli.dat" 127.0.0.1) > "$tmp/bare-cli.log" 2>&1 || true
	wait_server "$spid" || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] &&
	   grep -q "Couldn't allocate MR" "$tmp/bare.log"; then
		result "${prog#ib_}_bare_refused_$fs" pass "without daxlease run the server fails (exit $rc): $(grep "Couldn't allocate MR" "$tmp/bare.log" | head -n 1)"
	else
		result "${prog#ib_}_bare_refused_$fs" fail "without daxlease run: server exit $rc (want a failed MR registration): $(tail -n 3 "$tmp/bare.log" | tr '\n' ' ')"
	fi
	rm -f "$srv" "$tmp/bare-cli.dat"
}

# fio_rdma FS DIR: fio's receiving rdma job on an FS-DAX file under
# daxlease run, its sending job with a pattern; the pattern in the file;
# and the receiver failing without daxlease run
fio_rdma()
{
	local fs=$1 dir=$2 f=$2/fio.dat spid src=0 crc=0 why= n
	local common="--ioengine=rdma --verb=write --bs=64k --size=4m --iodepth=4 --thread"

	port=$((port + 1))
	if ! command -v fio >/dev/null; then
		result "fio_rdma_$fs" fail "fio not in the guest image (package fio)"
		return
	fi
	# fio maps an iomem=mmapshared file as it is: make both 4 MiB
	head -c $((4 << 20)) /dev/zero > "$f"
	head -c $((4 << 20)) /dev/zero > "$tmp/fio-src.dat"
	# shellcheck disable=SC2086
	(cd "$tmp" && exec timeout 120 daxlease run --debug -- fio \
		--name=receiver $common --rw=read --port="$port" \
		--iomem=mmapshared:"$f") > "$tmp/fs.log" 2>&1 &
	spid=$!
	sleep 3
	# shellcheck disable=SC2086
	(cd "$tmp" && exec timeout 120 fio --name=sender $common --rw=write \
		--hostname="$rdma_addr" --port="$port" \
		--buffer_pattern=0x5a17c0de --iomem=mmapshared:"$tmp/fio-src.dat") \
		> "$tmp/fc.log" 2>&1 || crc=$?
	wait_server "$spid" || src=$?
	n=$((4 * 65536))
	if [ "$src" -ne 0 ] || [ "$crc" -ne 0 ]; then
		why="receiver exit $src, sender exit $crc: $(grep -i "err\|fail" "$tmp/fs.log" "$tmp/fc.log" | head -n 3 | tr '\n' ' ' || true)"
	elif ! grep -q "registered with the layout lease" "$tmp/fs.log"; then
		why="the receiver's buffers did not take the lease path: $(grep daxlease "$tmp/fs.log" | head -n 3 | tr '\n' ' ' || true)"
	elif ! out=$(/usr/bin/python3 -c '
import sys
with open(sys.argv[1], "rb") as f:
    d = f.read(int(sys.argv[2]))
want = bytes.fromhex("5a17c0de") * (len(d) // 4)
print(f"{len(d)} bytes read back" if d == want and len(d) == int(sys.argv[2]) else "differ")
sys.exit(d != want)' "$f" "$n"); then
		why="$f does not hold the sender's pattern over the receiver's $n bytes of buffers"
	fi
	if [ -z "$why" ]; then
		result "fio_rdma_$fs" pass "receiver's buffers on $fs-dax through the lease path; the pattern in the file: $out"
	else
		result "fio_rdma_$fs" fail "$why"
	fi
	# without daxlease run the receiver cannot register its buffers
	port=$((port + 1))
	head -c $((4 << 20)) /dev/zero > "$f"
	# shellcheck disable=SC2086
	(cd "$tmp" && exec timeout 60 fio --name=receiver $common --rw=read \
		--port="$port" --iomem=mmapshared:"$f") > "$tmp/fb.log" 2>&1 &
	spid=$!
	sleep 3
	# shellcheck disable=SC2086
	(cd "$tmp" && exec timeout 60 fio --name=sender $common --rw=write \
		--hostname="$rdma_addr" --port="$port" \
		--iomem=mmapshared:"$tmp/fio-src.dat") > /dev/null 2>&1 || true
	src=0
	wait_server "$spid" || src=$?
	# fio reports the failed registration and stops, exit status 0
	if [ "$src" -ne 124 ] && grep -q "ibv_reg_mr io_u failed" "$tmp/fb.log"; then
		result "fio_rdma_bare_refused_$fs" pass "without daxlease run (exit $src): $(grep "ibv_reg_mr io_u failed" "$tmp/fb.log" | head -n 1)"
	else
		result "fio_rdma_bare_refused_$fs" fail "without daxlease run: exit $src (want fio's failed registration): $(tail -n 3 "$tmp/fb.log" | tr '\n' ' ')"
	fi
	rm -f "$f" "$tmp/fio-src.dat"
}

# rpma FS DIR: librpma's server under daxlease run, its client, the bytes
rpma()
{
	local fs=$1 dir=$2 f=$2/rpma.dat spid src=0 crc=0 size=$((1 << 20))

	port=$((port + 1))
	if [ -z "$rpma_prog" ]; then
		result "rpma_$fs" fail "dl-rpma-test not installed (librpma-dev at build time)"
		return
	fi
	head -c "$size" /dev/zero > "$f"
	(cd "$tmp" && exec timeout 120 daxlease run --debug -- "$rpma_prog" \
		server "$rdma_addr" "$port" "$f" "$size" 7) > "$tmp/rs.log" 2>&1 &
	spid=$!
	sleep 2
	(cd "$tmp" && exec timeout 120 "$rpma_prog" client "$rdma_addr" \
		"$port" "$size" 7) > "$tmp/rc.log" 2>&1 || crc=$?
	wait_server "$spid" || src=$?
	if [ "$src" -eq 0 ] && [ "$crc" -eq 0 ] &&
	   grep -q "registered with the layout lease" "$tmp/rs.log" &&
	   grep -q "holds the" "$tmp/rs.log"; then
		result "rpma_$fs" pass "$(grep -h "^client:\|^server: .* holds" "$tmp/rc.log" "$tmp/rs.log" | tr '\n' ' ')"
	else
		result "rpma_$fs" fail "server exit $src, client exit $crc: $(grep -v "^daxlease-preload.*libibverbs: Success" "$tmp/rs.log" | tail -n 4 | tr '\n' ' ') / $(tail -n 2 "$tmp/rc.log" | tr '\n' ' ')"
	fi
	# without daxlease run librpma's registration is refused
	port=$((port + 1))
	if (cd "$tmp" && exec timeout 60 "$rpma_prog" server "$rdma_addr" \
		"$port" "$f" "$size" 7) > "$tmp/rb.log" 2>&1; then
		result "rpma_bare_refused_$fs" fail "the server registered without daxlease run"
	elif grep -q "^rpma_mr_reg:" "$tmp/rb.log"; then
		result "rpma_bare_refused_$fs" pass "without daxlease run: $(grep "^rpma_mr_reg:" "$tmp/rb.log")"
	else
		result "rpma_bare_refused_$fs" fail "without daxlease run the server failed elsewhere: $(tail -n 2 "$tmp/rb.log" | tr '\n' ' ')"
	fi
	rm -f "$f"
}

# stock FS DIR: a kernel without the series cannot pin FS-DAX; under
# daxlease run the server says why, once, and fails with its own error
stock()
{
	local fs=$1 dir=$2 rc=0 spid srv=$2/perftest-stock.dat

	port=$((port + 1))
	head -c "$flen" /dev/zero > "$srv"
	head -c "$flen" /dev/zero > "$tmp/stock-cli.dat"
	# shellcheck disable=SC2046
	(cd "$tmp" && exec daxlease run -- ib_write_bw $(pt_args) \
		--mmap="$srv") > "$tmp/stock.log" 2>&1 &
	spid=$!
	sleep 2
	# shellcheck disable=SC2046
	(cd "$tmp" && exec timeout 60 ib_write_bw $(pt_args) \
		--mmap="$tmp/stock-cli.dat" 127.0.0.1) > /dev/null 2>&1 || true
	wait_server "$spid" || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] &&
	   [ "$(grep -c "^daxlease: cannot register the FS-DAX mapping" "$tmp/stock.log")" = 1 ] &&
	   grep -q "daxlease series" "$tmp/stock.log" &&
	   grep -q "Couldn't allocate MR" "$tmp/stock.log"; then
		result "write_bw_stock_explained_$fs" pass "$(grep "^daxlease:" "$tmp/stock.log")"
	else
		result "write_bw_stock_explained_$fs" fail "server exit $rc (want a failure, one daxlease line naming the series, perftest's own error): $(tail -n 4 "$tmp/stock.log" | tr '\n' ' ')"
	fi
	rm -f "$srv" "$tmp/stock-cli.dat"
}

suite_begin programs
if [ "${DAXLEASE_KERNEL:-}" = stock ]; then
	for pair in "ext4:${DAXLEASE_EXT4:-}" "xfs:${DAXLEASE_XFS:-}"; do
		if [ -z "${pair#*:}" ]; then
			result "setup_${pair%%:*}" fail "no ${pair%%:*}-dax mount"
		elif ! command -v ib_write_bw >/dev/null; then
			result "write_bw_stock_explained_${pair%%:*}" fail "ib_write_bw not in the guest image (package perftest)"
		else
			stock "${pair%%:*}" "${pair#*:}"
		fi
	done
	suite_end
	exit $?
fi
rdma_addr=10.77.0.1
rpma_prog=$(command -v dl-rpma-test ||
	    { [ -x "$prefix/libexec/daxlease/tests/dl-rpma-test" ] &&
	      echo "$prefix/libexec/daxlease/tests/dl-rpma-test"; } || true)
ndev=$(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/ndevs/0" 2>/dev/null) || true
if [ -n "$ndev" ] && ip addr replace "$rdma_addr/24" dev "$ndev"; then
	result rdma_address pass "$dev on $ndev, $rdma_addr (RDMA CM)"
else
	result rdma_address fail "no netdev under $dev for $rdma_addr"
fi
for pair in "ext4:${DAXLEASE_EXT4:-}" "xfs:${DAXLEASE_XFS:-}"; do
	fs=${pair%%:*}
	dir=${pair#*:}
	if [ -z "$dir" ]; then
		result "setup_$fs" fail "no $fs-dax mount (DAXLEASE_${fs^^} unset)"
		continue
	fi
	# each program fails without daxlease run (on one file system: the
	# registration is the same on both)
	bare "$fs" "$dir" ib_write_bw
	if [ "$fs" = ext4 ]; then
		bare "$fs" "$dir" ib_read_bw
		bare "$fs" "$dir" ib_write_lat
	fi
	perftest "$fs" "$dir" ib_write_bw write
	perftest "$fs" "$dir" ib_read_bw read
	perftest "$fs" "$dir" ib_write_lat none
	fio_rdma "$fs" "$dir"
	rpma "$fs" "$dir"
done
rc=0
suite_end || rc=1

prog=$(command -v dl-preload-test ||
       echo "$prefix/libexec/daxlease/tests/dl-preload-test")
if [ -x "$prog" ]; then
	timeout -k 10 600 daxlease run -- "$prog" "${DAXLEASE_EXT4:-}" \
		"${DAXLEASE_XFS:-}" || rc=1
else
	suite_begin programs_preload
	result setup_program fail "dl-preload-test not installed"
	suite_end || true
	rc=1
fi
exit $rc
