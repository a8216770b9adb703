#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The daxlease demo, end to end, on a fresh Debian 12 machine (as root):
# installs the build dependencies, builds the patched kernel (cached),
# boots it in QEMU with emulated NVDIMMs and Soft-RoCE, and runs the demo
# suite (tests/vm/suites/demo.sh) there: an RDMA client writes a data set
# into an ext4-dax file registered with ibv_reg_dax_mr(), the pin shows in
# /proc/<pid>/file_pins and blocks a truncate with ETXTBSY, deregistration
# lets the truncate through, and the data set is checked after a remount;
# then the same on xfs (steps named STEP-xfs).  tests/run-all.sh runs the
# same suite in its patched-kernel step.
# The guest prints each step; at the end the host prints the summary from
# results.jsonl.  Exit status 0 only if every step passed or was skipped
# with a reason.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--kernel 6.12|6.1|patched|stock|BZIMAGE] [--line 6.12|6.1]
          [--plain] [--out DIR] [--timeout SEC] [--no-deps]
  --kernel K   patched (default): build kernel-headers/patches/linux-LINE
               with kernel-headers/build-kernel.sh (cached) and boot it;
               6.12 or 6.1: patched, of that line;
               stock: Debian's kernel of the line, where the FS-DAX
               registration is refused and the demo uses device DAX
               instead; or the path of a bzImage
  --line L     kernel line: 6.12 (default, Debian 13's and the LTS a new
               deployment runs) or 6.1 (Debian 12's)
  --plain      build the patched kernel without the debug options (KASAN,
               lockdep...): runs ~4x faster under TCG; the default debug
               kernel is the one tests/run-all.sh builds, so they share it
  --out DIR    logs and results.jsonl (default: build/demo)
  --timeout S  bound for the VM run (default 1200)
  --no-deps    skip tests/install-deps.sh (packages already installed)
USAGE
}

top=$(cd "$(dirname "$0")/.." && pwd)
kernel=patched
line=6.12
out=$top/build/demo
vm_timeout=1200
deps=1
kflavour=--debug
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=${2:?--kernel needs a value}; shift 2 ;;
	--line) line=${2:?--line needs 6.12 or 6.1}; shift 2 ;;
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	--timeout) vm_timeout=${2:?--timeout needs seconds}; shift 2 ;;
	--plain) kflavour=--plain; shift ;;
	--no-deps) deps=0; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "demo.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
case "$vm_timeout" in ''|*[!0-9]*) echo "demo.sh: bad --timeout" >&2; exit 2 ;; esac
case "$kernel" in 6.1|6.12) line=$kernel; kernel=patched ;; esac
case "$line" in 6.1|6.12) ;; *) echo "demo.sh: --line is 6.12 or 6.1" >&2; exit 2 ;; esac

mkdir -p "$out"
t_start=$(date +%s)
# shellcheck source=tests/lib/steps.sh
. "$top/tests/lib/steps.sh"

# phase NAME CMD...: run, time and record one host phase (in this shell:
# build_kernel sets bzimage)
phase()
{
	local name=$1

	shift
	steps_run "demo: $name" - "$@"
}

summary()
{
	echo
	echo "######## demo summary (kernel: $kernel)"
	if [ -s "$out/results.jsonl" ]; then
		python3 - "$out/results.jsonl" <<'PY'
import json, sys

n = 0
for line in open(sys.argv[1], errors="replace"):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("suite") != "demo" or "test" not in r:
        continue
    n += 1
    print("  %2d %-22s %-4s  %s" % (n, r["test"], r["result"].upper(),
                                    r.get("reason", "")))
if not n:
    print("  (no demo steps recorded)")
PY
	else
		echo "  no results: $out/results.jsonl is missing"
	fi
	steps_summary "host phases" "$out/phases.txt" || true
	echo "total $(( $(date +%s) - t_start ))s; logs in $out"
}

deps()
{
	bash "$top/tests/install-deps.sh"
}

# The bzImage path is the only thing build-kernel.sh prints on stdout.
build_kernel()
{
	bzimage=$(bash "$top/kernel-headers/build-kernel.sh" --line "$line" "$kflavour" \
		2> >(tee "$out/kernel.log" >&2))
	echo "kernel: $bzimage"
	test -s "$bzimage"
}

run_vm()
{
	timeout $((vm_timeout + 300)) bash "$top/tests/vm/run.sh" \
		--kernel "$bzimage" --line "$line" --suites demo --out "$out" \
		--timeout "$vm_timeout" 2>&1 | tee "$out/vm.log"
}

rc=0
if [ "$deps" = 1 ]; then
	phase deps deps || rc=1
fi
case "$kernel" in
patched)
	[ "$rc" = 0 ] && { phase kernel build_kernel || rc=1; } ;;
stock)
	bzimage=stock ;;
*)
	bzimage=$kernel
	[ -s "$bzimage" ] || { echo "demo.sh: no kernel image $bzimage" >&2; exit 2; } ;;
esac
rm -f "$out/results.jsonl"
if [ "$rc" = 0 ]; then
	phase vm run_vm || rc=1
fi
summary
exit "$rc"
