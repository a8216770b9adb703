#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Decide a test-VM run from its JSON-lines results (tests/common/dtest.h).

Prints a per-test table and the skips with their reasons.  Exit status 0
only if every requested suite started, ended, ran at least one test, had
no failure and exited 0, no other suite (e.g. "setup") failed, and the
guest reached the end of /init.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results", help="results.jsonl written by the guest")
    ap.add_argument("--suites", required=True,
                    help="comma-separated suites that must have run")
    args = ap.parse_args()
    wanted = [s for s in args.suites.split(",") if s]

    suites = {}
    tests = []
    problems = []
    done = False
    garbage = 0
    try:
        with open(args.results, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError as e:
        print(f"evaluate: cannot read {args.results}: {e}")
        return 1
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
        if rec.get("event") == "done":
            done = True
            continue
        name = str(rec.get("suite", "?"))
        s = suites.setdefault(name, {"start": False, "end": False,
                                     "exit": None, "n": 0, "fail": 0,
                                     "seconds": None})
        ev = rec.get("event")
        if ev == "start":
            s["start"] = True
        elif ev == "end":
            s["end"] = True
        elif ev == "exit":
            s["exit"] = rec.get("status")
            s["seconds"] = rec.get("seconds")
        elif "test" in rec:
            res = rec.get("result")
            if res not in ("pass", "fail", "skip"):
                problems.append(f"{name}/{rec['test']}: bad result {res!r}")
                res = "fail"
            s["n"] += 1
            if res == "fail":
                s["fail"] += 1
            tests.append((name, str(rec["test"]), res,
                          rec.get("seconds"), str(rec.get("reason", ""))))

    w = max([len(f"{a}/{b}") for a, b, *_ in tests] + [10])
    print(f"{'TEST':<{w}}  RESULT  SECONDS  REASON")
    for suite, test, res, secs, reason in tests:
        secs = f"{secs:7.2f}" if isinstance(secs, (int, float)) else "      -"
        if len(reason) > 100 and res == "pass":
            reason = reason[:97] + "..."
        print(f"{suite + '/' + test:<{w}}  {res.upper():<6}  {secs}  {reason}")

    skips = [t for t in tests if t[2] == "skip"]
    if skips:
        print(f"\nskipped ({len(skips)}):")
        for suite, test, _, _, reason in skips:
            print(f"  {suite}/{test}: {reason or '(no reason given)'}")

    for suite, test, res, _, reason in tests:
        if res == "fail":
            problems.append(f"{suite}/{test} failed: {reason}")
    for name in wanted:
        s = suites.get(name)
        if not s or not s["start"]:
            problems.append(f"suite {name} never started")
            continue
        if not s["end"]:
            problems.append(f"suite {name} started but never ended "
                            f"(exit status {s['exit']})")
        if s["n"] == 0:
            problems.append(f"suite {name} ran no tests")
        if s["exit"] is None:
            problems.append(f"suite {name}: no exit record from /init")
        elif s["exit"] != 0 and s["fail"] == 0:
            how = {124: " (timeout)", 137: " (killed: timeout)"}
            problems.append(f"suite {name} exited {s['exit']}"
                            f"{how.get(s['exit'], '')} without a failed test")
    if not done:
        problems.append("the guest did not reach the end of /init "
                        "(hang, crash or timeout)")
    if garbage:
        print(f"\nnote: {garbage} line(s) of {args.results} were not JSON")

    print("\nsuites:")
    for name, s in suites.items():
        secs = f", {s['seconds']}s" if s["seconds"] is not None else ""
        print(f"  {name}: {s['n']} tests, {s['fail']} failed, "
              f"exit {s['exit']}{secs}")
    if problems:
        print("\nFAILED:")
        for p in problems:
            print(f"  {p}")
        return 1
    n = sum(1 for t in tests if t[2] == "pass")
    print(f"\nPASSED: {n} passed, {len(skips)} skipped, suites "
          f"{','.join(wanted)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
