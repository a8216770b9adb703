#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The whole daxlease test suite, for a fresh Debian 12 machine (root):
# installs what it needs, builds warning-free, runs the host unit tests,
# and for each kernel line (Debian 12's linux 6.1 and 6.12): the guest
# suites on the stock kernel (rxe + emulated NVDIMMs in QEMU TCG), builds
# the patched kernel, compiles the series with Debian's configuration,
# runs the kernel-semantics, lease-path, fault, attack, demo and Python
# suites on the patched kernel, two guests (patched server, stock client)
# across a virtual Ethernet, and the benchmark schema check (bench
# --quick); the crash test on 6.12; then builds the packages and the consumer test and runs the
# reliability tooling.
#
# Each step's outcome and duration is printed at the end; the exit status is
# non-zero if any step failed.  No step is optional: a step that cannot run
# fails, so CI never turns a suite into a silent skip.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--out DIR] [--only STEP[,STEP]] [--list]
  --out DIR    where logs and results go (default: build/test-results)
  --only S,..  run only these steps (for development; CI runs all)
  --list       list the steps
USAGE
}

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/test-results
only=
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift 2 ;;
	--only) only=,$2,; shift 2 ;;
	--list) only=LIST; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

build=$top/build/host
export top out build

step_deps()     { bash "$top/tests/install-deps.sh"; }
step_build()    {
	cmake -S "$top" -B "$build" -DENABLE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build "$build" -j2
}
step_unit()     { ctest --test-dir "$build" --output-on-failure --timeout 300; }
step_uapi()     { bash "$top/kernel-headers/check-uapi.sh"; }
# The kernel lines: Debian 12's linux-source-6.1 and linux-source-6.12.
# Each step of a line is a function of the line (KLINE), named _61 / _612.
stock_suites=stock,python,badinput,threads,tools,programs
# attacks adds some minutes on the debug kernel: a longer bound.  demo is
# the README's demo (tools/demo.sh), on ext4 and xfs; python the pyverbs
# tier (tests/python/test_patched.py).
patched_suites=kernel,leasepath,faults,attacks,tools,badinput,threads,demo,python,programs

line_vm_stock() {
	bash "$top/tests/vm/run.sh" --kernel stock --line "$1" \
		--suites "$stock_suites" --out "$out/vm-stock-$1"
}
line_kernel()   {
	bash "$top/kernel-headers/build-kernel.sh" --line "$1"
	test -s "$(bash "$top/kernel-headers/build-kernel.sh" --line "$1" --print-path)"
}
# every C file the series touches, compiled with Debian's own amd64
# configuration (modules, all file systems and drivers), warnings as errors
line_kernel_debcfg() { bash "$top/kernel-headers/check-debian-config.sh" --line "$1"; }
line_vm_patched() {
	local kernel

	kernel=$(bash "$top/kernel-headers/build-kernel.sh" --line "$1" --print-path)
	bash "$top/tests/vm/run.sh" --kernel "$kernel" --timeout 3600 \
		--suites "$patched_suites" --out "$out/vm-patched-$1"
}
# two guests across a virtual Ethernet: the patched kernel serves FS-DAX
# and device DAX, the stock kernel of the line is the client
line_vm_pair() {
	bash "$top/tests/vm/run-pair.sh" --line "$1" \
		--server-kernel "$(bash "$top/kernel-headers/build-kernel.sh" --line "$1" --print-path)" \
		--out "$out/vm-pair-$1"
}
# the crash test on 6.12: five kills of the server, ext4 and xfs each
# time, no acknowledged record lost.  By hand, to keep CI short: its
# negative control (run-crash.sh --broken --rounds 1, which must be
# caught losing records), the long mode (--rounds 50), the
# durable-write latency (bench/remote) and, on 6.12, the client that
# persists with RDMA FLUSH (--client-persist flush: it downloads and
# builds a newer rdma-core)
step_vm_crash_612() {
	bash "$top/tests/vm/run-crash.sh" --line 6.12 --rounds 5 \
		--server-kernel "$(bash "$top/kernel-headers/build-kernel.sh" --line 6.12 --print-path)" \
		--out "$out/vm-crash-6.12"
}
# reduced benchmark set on the debug kernel: checks the output schema and
# the sanity of each figure, not the targets (bench/run without --quick)
line_bench()    {
	bash "$top/bench/run" --quick \
		--kernel "$(bash "$top/kernel-headers/build-kernel.sh" --line "$1" --print-path)" \
		--out "$out/bench-quick-$1"
}
for l in 61:6.1 612:6.12; do
	for f in vm_stock kernel kernel_debcfg vm_patched vm_pair bench; do
		eval "step_${f}_${l%%:*}() { line_$f ${l#*:}; }"
	done
done
step_packages() { bash "$top/.ci/packages.sh"; }
step_reliability() { bash "$top/tests/reliability/run.sh"; }

STEPS="deps build unit uapi vm_stock_61 vm_stock_612 kernel_61 kernel_612
       kernel_debcfg_61 kernel_debcfg_612 vm_patched_61 vm_patched_612
       vm_pair_61 vm_pair_612 vm_crash_612 packages reliability bench_61 bench_612"

if [ "$only" = LIST ]; then
	echo $STEPS
	exit 0
fi

mkdir -p "$out"
# shellcheck source=tests/lib/steps.sh
. "$top/tests/lib/steps.sh"
for s in $STEPS; do
	if [ -n "$only" ] && [[ "$only" != *,$s,* ]]; then
		continue
	fi
	# a child shell, so that errexit holds inside the step
	export -f "step_$s" line_vm_stock line_kernel line_kernel_debcfg \
		line_vm_patched line_vm_pair line_bench
	export stock_suites patched_suites
	steps_run "$s" "$out/$s.log" bash -euo pipefail -c "step_$s" || true
done
steps_summary summary "$out/summary.txt" || exit 1
