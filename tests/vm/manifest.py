#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Make or update the manifest of guest suites from a test-VM run.

A manifest (tests/vm/manifests/SUITE.KERNEL.txt) lists the tests a guest
suite must emit on the stock or patched kernel, one "suite/test" a line,
as tests/vm/evaluate.py checks them.  After adding, renaming or removing
a test, run the suite and regenerate its manifest from the run:

    tests/vm/run.sh --kernel ... --suites kernel --out OUT
    tests/vm/manifest.py OUT/results.jsonl --suite kernel --write
    git diff tests/vm/manifests      # review: every line is a promise

The run must have finished the suite (exit record from /init, every
record suite ended, end counts matching the test records); --force takes
an incomplete run anyway.  Failed tests are listed like the others (the
manifest is about what runs, evaluate.py about how it went).  Skips are
listed too, and the ones that manifests/skips.txt does not allow are
printed: add them there with a reason, or make the test run.

A suite whose tests differ between kernel lines (6.1, 6.12) has one
manifest a line, SUITE.KERNEL-LINE.txt, taken by evaluate.py for runs of
that line: --per-line writes it for the line of the run's release (and an
existing one is updated without --per-line).  Prefer the same tests on
every line.
"""
import argparse
import collections
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evaluate  # noqa: E402  (the same reading of the results)

HEADER = """\
# Tests the guest suite "{suite}" emits on the {kernel} kernel{line}, one
# "suite/test" a line (a name listed twice is emitted twice).  Checked by
# tests/vm/evaluate.py: a missing or unlisted test fails the run.
# Generated from a run ({release}) by
#   tests/vm/manifest.py OUT/results.jsonl --suite {suite} --write
"""


def render(suite, kernel, release, names, line=None):
    lines = [HEADER.format(suite=suite, kernel=kernel, release=release,
                           line=f" (line {line})" if line else "")]
    for name, count in sorted(names.items()):
        lines += [name + "\n"] * count
    return "".join(lines)


def incomplete(run, suite):
    """Why the run's records of suite are not a whole run, or []."""
    why = []
    if suite != evaluate.SETUP and suite not in run.exits:
        why.append("no exit record from /init (the suite did not finish)")
    recs = run.segments.get(suite, [])
    own = {str(r.get("suite")) for r in recs}
    why += [p for s, p in run.span_problems() if s in own]
    if not any(evaluate.is_test(r) for r in recs):
        why.append("no test records")
    return why


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="results.jsonl of a tests/vm/run.sh run")
    ap.add_argument("--suite", action="append", default=[],
                    help="suite(s), comma-separated or repeated (default: "
                         "every suite of the run, and setup)")
    ap.add_argument("--kernel", choices=evaluate.KERNELS,
                    help="default: the kernel the run says it booted")
    ap.add_argument("--manifests", default=evaluate.MANIFEST_DIR,
                    help="directory of the manifests (default %(default)s)")
    ap.add_argument("--write", action="store_true",
                    help="write MANIFESTS/SUITE.KERNEL.txt (default: print)")
    ap.add_argument("--force", action="store_true",
                    help="take a suite whose run is incomplete")
    ap.add_argument("--per-line", action="store_true",
                    help="write MANIFESTS/SUITE.KERNEL-LINE.txt for the "
                         "kernel line of the run (its tests differ "
                         "between lines)")
    args = ap.parse_args(argv)

    run = evaluate.Run(args.results)
    kernel = args.kernel or run.kernel()
    if kernel is None:
        print("manifest: cannot tell the kernel of the run: pass --kernel",
              file=sys.stderr)
        return 2
    suites = [s for a in args.suite for s in a.split(",") if s]
    if not suites:
        suites = [evaluate.SETUP] + [s for s in run.segments
                                     if s != evaluate.SETUP]
    release = str((run.boot or {}).get("release", "kernel release unknown"))
    line = run.line()
    if args.per_line and not line:
        print("manifest: --per-line: the run reports no kernel release",
              file=sys.stderr)
        return 2
    allowed, _ = evaluate.load_skips(os.path.join(args.manifests,
                                                  "skips.txt"))
    rc = 0
    for suite in suites:
        why = incomplete(run, suite)
        if why:
            print(f"manifest: {suite}: the run is incomplete:",
                  file=sys.stderr)
            for w in why:
                print(f"  {w}", file=sys.stderr)
            if not args.force:
                rc = 1
                continue
        recs = run.tests(suite)
        names = collections.Counter(evaluate.test_name(r) for r in recs)
        for r in recs:
            res = evaluate.result_of(r)
            key = (str(r.get("suite")), str(r["test"]), kernel)
            if res == "fail":
                print(f"manifest: note: {evaluate.test_name(r)} failed in "
                      f"this run", file=sys.stderr)
            elif res == "skip" and (
                    suite in evaluate.NO_SKIP.get(kernel, ()) or
                    key not in allowed):
                print(f"manifest: {evaluate.test_name(r)} skipped and not "
                      f"allowed on {kernel}: {r.get('reason', '')}",
                      file=sys.stderr)
        if args.per_line:
            path = evaluate.line_manifest_path(suite, kernel, line,
                                               args.manifests)
        else:
            path = evaluate.manifest_path(suite, kernel, args.manifests,
                                          line)
        per_line = evaluate.MANIFEST_NAME.match(os.path.basename(path))
        text = render(suite, kernel, release, names,
                      per_line.group(3) if per_line else None)
        if not args.write:
            sys.stdout.write(text)
            continue
        old = None
        if os.path.exists(path):
            old = evaluate.load_manifest(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        if old is None:
            print(f"{path}: {sum(names.values())} tests (new)")
        else:
            print(f"{path}: {sum(names.values())} tests, "
                  f"+{sum((names - old).values())} "
                  f"-{sum((old - names).values())}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
