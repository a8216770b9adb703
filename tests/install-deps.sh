#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Install every Debian package the build, the tests, the VM image, the
# kernel build and the packaging need: the union of .ci/packages/*.txt.
# Idempotent; needs root (or sudo) on Debian 12.
set -euo pipefail

usage()
{
	cat <<USAGE
usage: $0 [--list]
  Installs the union of .ci/packages/*.txt with apt-get (after apt-get update).
  --list   print the package list and exit
USAGE
}

top=$(cd "$(dirname "$0")/.." && pwd)
list=$(cat "$top"/.ci/packages/*.txt | sed 's/#.*//' | tr -s ' \t' '\n' |
       grep -v '^$' | sort -u)

case "${1:-}" in
-h|--help) usage; exit 0 ;;
--list) echo "$list"; exit 0 ;;
"") ;;
*) usage >&2; exit 2 ;;
esac

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
# dpkg-query exits 1 when any of them was never installed (a fresh machine)
missing=$({ dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $list 2>/dev/null || true; } |
	  awk '$1 == "ii" { print $2 }' | sort -u | comm -13 - <(echo "$list"))
if [ -z "$missing" ]; then
	echo "install-deps: all $(echo "$list" | wc -l) packages present"
	exit 0
fi
echo "install-deps: installing:" $missing
export DEBIAN_FRONTEND=noninteractive
timeout 900 $SUDO apt-get update -q
# shellcheck disable=SC2086
timeout 1800 $SUDO apt-get install -y -q $missing
