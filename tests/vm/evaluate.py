#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Decide a test-VM run from its JSON-lines results (tests/common/dtest.h).

Prints a per-test table and the skips with their reasons.  Exit status 0
only if
- every requested suite ran, exited 0 and had no failed test, no other
  suite (e.g. "setup") failed, and the guest reached the end of /init;
- each requested suite, and the harness's "setup", emitted exactly the
  tests of its manifest for the kernel of the run
  (manifests/SUITE.KERNEL.txt, or SUITE.KERNEL-LINE.txt if there is one
  for the kernel line, e.g. 6.12, of the release the boot record
  reports): none missing, none unlisted;
- every skip is allowed by manifests/skips.txt for that test and kernel,
  and on the patched kernel the suites of NO_SKIP skip nothing at all;
- every record suite's end record counts exactly the pass, fail and skip
  records between its start and its end.
The kernel (stock or patched) comes from --kernel, else from the "boot"
record /init writes, else from qemu.cmd next to the results.  The suites
of NO_MANIFEST have no manifest; everything else applies to them.
tests/vm/manifest.py makes a manifest from a run.
"""
import argparse
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST_DIR = os.path.join(HERE, "manifests")
KERNELS = ("stock", "patched")
RESULTS = ("pass", "fail", "skip")
# The suites that assert the patched kernel's semantics: there, a test
# that cannot run is a failure, whatever the allow-list says.
NO_SKIP = {"patched": {"kernel", "leasepath", "faults", "attacks", "demo",
                       "python", "programs", "remote-server"}}
# The harness's own suite: its records come first, whatever ran after.
SETUP = "setup"
# Suites without a manifest, and why.  Skips and failures count as
# everywhere else.
NO_MANIFEST = {
    "bench": "a measurement: its cases follow its arguments (--quick, "
             "daxlease.bench_args) and bench/report.py checks its records",
    "crash-server": "one boot of many: tests/vm/run-crash.sh checks every "
                    "boot's records and counts the rounds",
    "crash-client": "its tests repeat per round: tests/vm/run-crash.sh "
                    "counts them against --rounds",
}


def read_records(path):
    """The JSON objects of a results file and the number of other lines."""
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8", "replace").splitlines()
    recs = []
    garbage = 0
    for line in lines:
        line = line.strip().strip("\x00")
        if not line:
            continue
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict):
                raise ValueError
        except ValueError:
            garbage += 1
            continue
        recs.append(rec)
    return recs, garbage


def is_test(rec):
    return "test" in rec and "event" not in rec


def test_name(rec):
    """suite/test, the form the manifests list."""
    return f"{rec.get('suite', '?')}/{rec['test']}"


def result_of(rec):
    res = rec.get("result")
    return res if res in RESULTS else None


class Run:
    """A results file, with its records attributed to the guest suites.

    /init runs the suites one after the other and writes an "exit" record
    after each: every record since the previous exit belongs to the suite
    of the next exit, whatever record suites (a program's own, a tool
    run's) it names.  The harness's setup records belong to "setup".
    Records after the last exit belong to the first requested suite
    without an exit record (the one that was running when the guest
    stopped).
    """

    def __init__(self, path, wanted=None):
        self.path = path
        self.recs, self.garbage = read_records(path)
        self.boot = next((r for r in self.recs if r.get("event") == "boot"),
                         None)
        self.done = any(r.get("event") == "done" for r in self.recs)
        self.exits = {}
        self.segments = collections.OrderedDict()
        pending = []
        for r in self.recs:
            ev = r.get("event")
            if ev in ("boot", "done"):
                continue
            if r.get("suite") == SETUP:
                self.segments.setdefault(SETUP, []).append(r)
                continue
            if ev == "exit":
                name = str(r.get("suite", "?"))
                self.exits[name] = r
                self.segments.setdefault(name, []).extend(pending)
                pending = []
                continue
            pending.append(r)
        self.trailing = pending
        order = wanted or self.boot_suites()
        if pending:
            running = next((s for s in order if s not in self.exits), None)
            self.segments.setdefault(running or "?", []).extend(pending)

    def boot_suites(self):
        if not self.boot:
            return []
        return [s for s in str(self.boot.get("suites", "")).split(",") if s]

    def kernel(self):
        """stock, patched or None, from the boot record or qemu.cmd."""
        if self.boot and self.boot.get("kernel") in KERNELS:
            return self.boot["kernel"]
        cmd = os.path.join(os.path.dirname(os.path.abspath(self.path)),
                           "qemu.cmd")
        try:
            with open(cmd) as f:
                m = re.search(r"daxlease\.kernel=(\w+)", f.read())
        except OSError:
            return None
        return m.group(1) if m and m.group(1) in KERNELS else None

    def line(self):
        """The kernel line, "6.12" of release 6.12.118+deb12-amd64, from
        the boot record; None if it does not say."""
        if not self.boot:
            return None
        m = re.match(r"(\d+)\.(\d+)", str(self.boot.get("release", "")))
        return f"{m.group(1)}.{m.group(2)}" if m else None

    def tests(self, suite=None):
        if suite is None:
            return [r for r in self.recs if is_test(r)]
        return [r for r in self.segments.get(suite, []) if is_test(r)]

    def span_problems(self):
        """Each record suite's end record against its test records: a
        list of (record suite, problem)."""
        problems = []
        open_ = {}
        for r in self.recs:
            s = str(r.get("suite", "?"))
            ev = r.get("event")
            if ev == "start":
                if s in open_:
                    problems.append((s, f"suite {s} started again before "
                                        f"its end record"))
                open_[s] = dict.fromkeys(RESULTS, 0)
            elif ev == "end":
                counted = open_.pop(s, None)
                if counted is None:
                    problems.append((s, f"suite {s}: end record without a "
                                        f"start"))
                    continue
                said = {k: r.get(k) for k in RESULTS}
                if said != counted:
                    problems.append((s,
                        f"suite {s}: the end record counts " +
                        ", ".join(f"{k} {said[k]}" for k in RESULTS) +
                        "; its test records are " +
                        ", ".join(f"{k} {counted[k]}" for k in RESULTS)))
            elif is_test(r):
                counted = open_.get(s)
                if counted is None:
                    problems.append((s, f"{test_name(r)}: test record "
                                        f"outside its suite's start and end "
                                        f"records"))
                    continue
                counted[result_of(r) or "fail"] += 1
        for s in open_:
            problems.append((s, f"suite {s} started but never ended"))
        return problems


def manifest_path(suite, kernel, mdir=MANIFEST_DIR, line=None):
    """SUITE.KERNEL-LINE.txt if line is given and it exists (a suite whose
    tests differ between kernel lines), else SUITE.KERNEL.txt."""
    if line:
        path = line_manifest_path(suite, kernel, line, mdir)
        if os.path.exists(path):
            return path
    return os.path.join(mdir, f"{suite}.{kernel}.txt")


def line_manifest_path(suite, kernel, line, mdir=MANIFEST_DIR):
    return os.path.join(mdir, f"{suite}.{kernel}-{line}.txt")


# SUITE.KERNEL.txt or SUITE.KERNEL-LINE.txt: (suite, kernel, line or None)
MANIFEST_NAME = re.compile(r"^([\w-]+)\.(" + "|".join(KERNELS) +
                           r")(?:-(\d+\.\d+))?\.txt$")


def load_manifest(path):
    """Counter of suite/test names; a name listed n times is emitted n
    times.  Blank lines and # comments are ignored."""
    names = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            names[line] += 1
    return names


def load_skips(path):
    """The reviewed allow-list: {(suite, test, kernel): reason} and the
    problems of the file itself.  One entry a line, whitespace between
    the fields: SUITE TEST KERNEL REASON..., SUITE being the suite the
    record names (e.g. badinput-tools), KERNEL stock or patched, REASON
    why the skip is right.  # comments and blank lines are ignored."""
    allowed = {}
    problems = []
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        return allowed, [f"cannot read the skip allow-list {path}: {e}"]
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split(None, 3)
            where = f"{os.path.basename(path)}:{n}"
            if len(parts) < 4 or not parts[3].strip():
                problems.append(f"{where}: want SUITE TEST KERNEL REASON")
                continue
            suite, test, kernel, reason = parts
            if kernel not in KERNELS:
                problems.append(f"{where}: kernel {kernel!r} is not one of "
                                f"{', '.join(KERNELS)}")
                continue
            if suite in NO_SKIP.get(kernel, ()):
                problems.append(f"{where}: suite {suite} may not skip on the "
                                f"{kernel} kernel")
                continue
            key = (suite, test, kernel)
            if key in allowed:
                problems.append(f"{where}: {suite}/{test} on {kernel} is "
                                f"listed twice")
            allowed[key] = reason.strip()
    return allowed, problems


def listing(title, names, limit=25):
    out = [f"{title} ({sum(names.values())}):"]
    for i, (n, c) in enumerate(sorted(names.items())):
        if i == limit:
            out.append(f"    ... and {len(names) - limit} more")
            break
        out.append(f"    {n}" + (f" (x{c})" if c > 1 else ""))
    return out


def check_manifests(run, wanted, kernel, mdir, skips_path):
    """Problems and notes of the manifest and skip checks."""
    problems = []
    notes = []
    allowed, skip_problems = load_skips(skips_path)
    problems += skip_problems
    line = run.line()
    for suite in [SETUP] + wanted:
        path = manifest_path(suite, kernel, mdir, line)
        recs = run.tests(suite)
        if suite in NO_MANIFEST:
            notes.append(f"{suite}: {len(recs)} tests, no manifest: "
                         f"{NO_MANIFEST[suite]}")
        elif not os.path.exists(path):
            problems.append(f"suite {suite}: no manifest {path}: make it "
                            f"from a run with tests/vm/manifest.py")
            want = collections.Counter()
        else:
            want = load_manifest(path)
            seen = collections.Counter(test_name(r) for r in recs)
            missing = want - seen
            unlisted = seen - want
            if missing:
                problems += [f"suite {suite} ({kernel}): " + line
                             for line in listing("missing tests", missing)]
            if unlisted:
                problems += [f"suite {suite} ({kernel}): " + line
                             for line in listing("tests not in "
                                                 f"{os.path.basename(path)}",
                                                 unlisted)]
            notes.append(f"{suite}: {sum(seen.values())} tests, manifest "
                         f"{os.path.basename(path)} "
                         f"{sum(want.values())}, {sum(missing.values())} "
                         f"missing, {sum(unlisted.values())} unlisted")
        for r in recs:
            if result_of(r) != "skip":
                continue
            key = (str(r.get("suite")), str(r["test"]), kernel)
            if suite in NO_SKIP.get(kernel, ()) or \
               key[0] in NO_SKIP.get(kernel, ()):
                problems.append(f"{test_name(r)} skipped on the {kernel} "
                                f"kernel, where suite {suite} may skip "
                                f"nothing: {r.get('reason', '')}")
            elif key not in allowed:
                problems.append(f"{test_name(r)} skipped on the {kernel} "
                                f"kernel and not allowed by "
                                f"{os.path.basename(skips_path)}: "
                                f"{r.get('reason', '')}")
    for suite in run.segments:
        if suite != SETUP and suite not in wanted:
            problems.append(f"records of suite {suite}, which was not "
                            f"requested")
    return problems, notes


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="results.jsonl written by the guest")
    ap.add_argument("--suites", required=True,
                    help="comma-separated suites that must have run")
    ap.add_argument("--kernel", choices=KERNELS,
                    help="the kernel of the run (default: from the results)")
    ap.add_argument("--manifests", default=MANIFEST_DIR,
                    help="directory of SUITE.KERNEL.txt (default %(default)s)")
    ap.add_argument("--skips",
                    help="skip allow-list (default MANIFESTS/skips.txt)")
    args = ap.parse_args(argv)
    wanted = [s for s in args.suites.split(",") if s]
    skips_path = args.skips or os.path.join(args.manifests, "skips.txt")

    try:
        run = Run(args.results, wanted)
    except OSError as e:
        print(f"evaluate: cannot read {args.results}: {e}")
        return 1
    problems = []
    tests = run.tests()

    w = max([len(test_name(r)) for r in tests] + [10])
    print(f"{'TEST':<{w}}  RESULT  SECONDS  REASON")
    for r in tests:
        secs = r.get("seconds")
        secs = f"{secs:7.2f}" if isinstance(secs, (int, float)) else "      -"
        reason = str(r.get("reason", ""))
        res = result_of(r)
        if len(reason) > 100 and res == "pass":
            reason = reason[:97] + "..."
        print(f"{test_name(r):<{w}}  {str(res).upper():<6}  {secs}  "
              f"{reason}")

    skips = [r for r in tests if result_of(r) == "skip"]
    if skips:
        print(f"\nskipped ({len(skips)}):")
        for r in skips:
            print(f"  {test_name(r)}: "
                  f"{r.get('reason') or '(no reason given)'}")

    for r in tests:
        res = result_of(r)
        if res is None:
            problems.append(f"{test_name(r)}: bad result {r.get('result')!r}")
        elif res == "fail":
            problems.append(f"{test_name(r)} failed: {r.get('reason', '')}")

    kernel = run.kernel()
    if args.kernel:
        if kernel and kernel != args.kernel:
            problems.append(f"the run says kernel {kernel}, --kernel "
                            f"{args.kernel}")
        kernel = args.kernel
    if run.boot and run.boot_suites() and run.boot_suites() != wanted:
        problems.append(f"the guest ran suites {','.join(run.boot_suites())},"
                        f" not {','.join(wanted)}")

    for name in wanted:
        recs = run.tests(name)
        ex = run.exits.get(name)
        if name not in run.segments:
            problems.append(f"suite {name} never started")
            continue
        if not recs:
            problems.append(f"suite {name} ran no tests")
        if ex is None:
            problems.append(f"suite {name}: no exit record from /init")
        elif ex.get("status") != 0 and \
                not any(result_of(r) == "fail" for r in recs):
            how = {124: " (timeout)", 137: " (killed: timeout)"}
            problems.append(f"suite {name} exited {ex.get('status')}"
                            f"{how.get(ex.get('status'), '')} without a "
                            f"failed test")
    problems += [p for _, p in run.span_problems()]
    notes = []
    if kernel is None:
        problems.append("cannot tell the kernel of the run (no boot record, "
                        "no qemu.cmd): pass --kernel")
    else:
        more, notes = check_manifests(run, wanted, kernel, args.manifests,
                                      skips_path)
        problems += more
    if not run.done:
        problems.append("the guest did not reach the end of /init "
                        "(hang, crash or timeout)")
    if run.garbage:
        print(f"\nnote: {run.garbage} line(s) of {args.results} were not "
              f"JSON")

    print(f"\nsuites (kernel {kernel}):")
    for name, recs in run.segments.items():
        t = [r for r in recs if is_test(r)]
        ex = run.exits.get(name, {})
        secs = f", {ex['seconds']}s" if ex.get("seconds") is not None else ""
        nfail = sum(1 for r in t if result_of(r) not in ("pass", "skip"))
        status = ex.get("status", "-" if name == SETUP else None)
        print(f"  {name}: {len(t)} tests, {nfail} failed, "
              f"exit {status}{secs}")
    if notes:
        print("\nmanifests:")
        for n in notes:
            print(f"  {n}")
    if problems:
        print("\nFAILED:")
        for p in problems:
            print(f"  {p}")
        return 1
    n = sum(1 for r in tests if result_of(r) == "pass")
    print(f"\nPASSED: {n} passed, {len(skips)} skipped (allowed), suites "
          f"{','.join(wanted)} on the {kernel} kernel")
    return 0


if __name__ == "__main__":
    sys.exit(main())
