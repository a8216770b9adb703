# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Shared by the tests/reliability scripts (sourced, not run).
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rel_build_root=${DAXLEASE_REL_BUILD:-$top/build/reliability}
# the sanitizer and valgrind options (DL_*_OPTIONS, DL_MEMCHECK)
# shellcheck source=tests/lib/checkers.sh
. "$top/tests/lib/checkers.sh"

# rel_configure DIR [cmake args...]: configure and build the tree in DIR
rel_configure()
{
	local dir=$1

	shift
	timeout 600 cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=Debug "$@" \
		>"$dir.configure.log" 2>&1 || {
		cat "$dir.configure.log" >&2
		return 1
	}
}

rel_build()
{
	local dir=$1

	shift
	timeout 1800 cmake --build "$dir" -j2 "$@"
}

# ctest's test commands as lines "name<TAB>exe<TAB>args...", ELF only;
# not the tests whose verdict is their output or an expected failure
# (PASS_REGULAR_EXPRESSION, WILL_FAIL: e.g. a program that must fail
# without an RDMA device), which only ctest can judge
rel_test_commands()
{
	local dir=$1

	ctest --test-dir "$dir" --show-only=json-v1 | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d.get("tests", []):
    cmd = t.get("command") or []
    if not cmd:
        continue
    props = {p.get("name") for p in t.get("properties", [])}
    if props & {"PASS_REGULAR_EXPRESSION", "WILL_FAIL"}:
        continue
    try:
        with open(cmd[0], "rb") as f:
            if f.read(4) != b"\x7fELF":
                continue
    except OSError:
        continue
    print("\t".join([t["name"]] + cmd))
'
}

# The ENVIRONMENT property of ctest's test NAME, one VAR=value a line (e.g.
# unit-preload's LD_PRELOAD), for the runners that start the test
# themselves
rel_test_env()
{
	local dir=$1 name=$2

	ctest --test-dir "$dir" --show-only=json-v1 | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d.get("tests", []):
    if t.get("name") != sys.argv[1]:
        continue
    for p in t.get("properties", []):
        if p.get("name") == "ENVIRONMENT":
            v = p.get("value")
            for e in (v if isinstance(v, list) else [v]):
                print(e)
' "$name"
}
