#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The kernel a user installs, built and tested: for each line, Debian's
# own amd64 configuration reduced to the modules the test VM loads
# (build-deb.sh --localmodconfig with the list of
# tests/vm/mkinitramfs.sh --print-lsmod), packaged, and the package booted
# in the test VM with its modules (run.sh --kernel deb:...) for the
# kernel-semantics suites.  Long (about 25 min of build per line on two
# cores): not a CI step.  Prints build time and package sizes.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--line 6.1|6.12|both] [--out DIR] [--suites A,B]
  --line L     default both
  --out DIR    default build/full-config (packages, logs, guest results)
  --suites S   default kernel,leasepath,faults
USAGE
}

top=$(cd "$(dirname "$0")/.." && pwd)
lines="6.1 6.12"
out=$top/build/full-config
suites=kernel,leasepath,faults
while [ $# -gt 0 ]; do
	case "$1" in
	--line) [ "$2" = both ] || lines=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--suites) suites=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
for l in $lines; do
	case "$l" in 6.1|6.12) ;; *) usage >&2; exit 2 ;; esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

status=0
summary=()
for l in $lines; do
	ktree=$(timeout 900 bash "$top/tests/vm/get-stock-kernel.sh" --line "$l")
	bash "$top/tests/vm/mkinitramfs.sh" --print-lsmod --kernel-tree "$ktree" \
		> "$out/lsmod-$l.txt"
	t0=$SECONDS
	if ! image=$(bash "$top/kernel-headers/build-deb.sh" --line "$l" \
		     --localmodconfig "$out/lsmod-$l.txt" --out "$out/deb-$l" \
		     2> "$out/build-$l.log"); then
		tail -n 20 "$out/build-$l.log"
		summary+=("$l: build FAILED ($out/build-$l.log)")
		status=1
		continue
	fi
	secs=$((SECONDS - t0))
	sizes=$(cd "$out/deb-$l" && du -h linux-image-*.deb linux-headers-*.deb |
		awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')
	if bash "$top/tests/vm/run.sh" --kernel "deb:$image" --suites "$suites" \
		--out "$out/vm-$l" --build-dir "$out/vm-build" --timeout 2400 \
		> "$out/vm-$l.log" 2>&1; then
		verdict=PASS
	else
		verdict=FAIL
		status=1
	fi
	summary+=("$l: built in ${secs}s ($sizes); $suites: $verdict ($(grep -E '^(PASSED|FAILED)' "$out/vm-$l.log" | tail -1))")
done
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
exit $status
