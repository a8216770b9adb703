#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Host test of tests/vm/evaluate.py and manifest.py on synthetic runs.

Each case writes a results.jsonl as the guest would (boot, setup, suite
records, exit records, done) with manifests and a skip allow-list of its
own, and asserts the verdict: a complete run passes; a missing test, an
unlisted test, an unlisted skip, any skip of a no-skip suite on the
patched kernel, an end record that miscounts and a missing manifest each
fail it.  The repository's own manifests and allow-list are checked for
form.  Run by ctest (vm-evaluate).
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate  # noqa: E402
import manifest  # noqa: E402


def suite_recs(name, tests, end=None):
    """start, test records (name, result), end (counted unless given)."""
    recs = [{"suite": name, "event": "start"}]
    counts = dict.fromkeys(evaluate.RESULTS, 0)
    for t, res in tests:
        recs.append({"suite": name, "test": t, "result": res,
                     "reason": "why", "seconds": 0.1})
        counts[res] += 1
    recs.append({"suite": name, "event": "end", **(end or counts)})
    return recs


class Fixture:
    """A run directory with results.jsonl and a manifests directory."""

    def __init__(self, tmp, kernel="stock", release="6.1.0-test"):
        self.tmp = tmp
        self.kernel = kernel
        self.release = release
        self.mdir = os.path.join(tmp, "manifests")
        os.makedirs(self.mdir)
        self.results = os.path.join(tmp, "results.jsonl")
        self.write_skips("")

    def write_manifest(self, suite, names, kernel=None, line=None):
        path = evaluate.manifest_path(suite, kernel or self.kernel,
                                      self.mdir)
        if line:
            path = evaluate.line_manifest_path(suite, kernel or self.kernel,
                                               line, self.mdir)
        with open(path, "w") as f:
            f.write("# test manifest\n" + "".join(n + "\n" for n in names))

    def write_skips(self, text):
        with open(os.path.join(self.mdir, "skips.txt"), "w") as f:
            f.write("# allow-list\n" + text)

    def write_run(self, suites, boot=True, done=True, garbage=False):
        """suites: [(run suite, [records])]"""
        recs = []
        if boot:
            recs.append({"event": "boot", "kernel": self.kernel,
                         "release": self.release,
                         "suites": ",".join(s for s, _ in suites)})
        recs += suite_recs("setup", [("modules", "pass"), ("rxe", "pass")])
        for name, body in suites:
            recs += body
            recs.append({"suite": name, "event": "exit", "status": 0,
                         "seconds": 1.0})
        if done:
            recs.append({"event": "done"})
        with open(self.results, "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
            if garbage:
                f.write("\x00garbage\n")

    def evaluate(self, suites, *extra):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = evaluate.main([self.results, "--suites", suites,
                                "--manifests", self.mdir, *extra])
        return rc, out.getvalue()


class EvaluateTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.f = Fixture(self._tmp.name)
        self.f.write_manifest("setup", ["setup/modules", "setup/rxe"])
        self.f.write_manifest("alpha", ["alpha/one", "alpha/two",
                                        "alpha-tools/asan"])
        self.good = suite_recs("alpha", [("one", "pass"), ("two", "pass")]) \
            + suite_recs("alpha-tools", [("asan", "pass")])

    def tearDown(self):
        self._tmp.cleanup()

    def assertVerdict(self, want_rc, needle=None, suites="alpha", *extra):
        rc, out = self.f.evaluate(suites, *extra)
        self.assertEqual(rc, want_rc, out)
        if needle:
            self.assertIn(needle, out)
        return out

    def test_complete_run_passes(self):
        self.f.write_run([("alpha", self.good)])
        self.assertVerdict(0, "PASSED: 5 passed, 0 skipped")

    def test_missing_test_fails(self):
        body = suite_recs("alpha", [("one", "pass")]) + \
            suite_recs("alpha-tools", [("asan", "pass")])
        self.f.write_run([("alpha", body)])
        out = self.assertVerdict(1, "missing tests (1)")
        self.assertIn("alpha/two", out.split("FAILED:")[1])

    def test_unlisted_test_fails(self):
        body = self.good + suite_recs("alpha-extra", [("new", "pass")])
        self.f.write_run([("alpha", body)])
        out = self.assertVerdict(1, "tests not in alpha.stock.txt (1)")
        self.assertIn("alpha-extra/new", out.split("FAILED:")[1])

    def test_duplicate_counts(self):
        body = suite_recs("alpha", [("one", "pass"), ("one", "pass"),
                                    ("two", "pass")]) + \
            suite_recs("alpha-tools", [("asan", "pass")])
        self.f.write_run([("alpha", body)])
        out = self.assertVerdict(1, "tests not in alpha.stock.txt (1)")
        self.assertIn("alpha/one", out.split("FAILED:")[1])
        self.f.write_manifest("alpha", ["alpha/one", "alpha/one",
                                        "alpha/two", "alpha-tools/asan"])
        self.assertVerdict(0)

    def test_unlisted_skip_fails(self):
        body = suite_recs("alpha", [("one", "pass"), ("two", "skip")]) + \
            suite_recs("alpha-tools", [("asan", "pass")])
        self.f.write_run([("alpha", body)])
        self.assertVerdict(1, "alpha/two skipped on the stock kernel and "
                              "not allowed by skips.txt")

    def test_listed_skip_passes(self):
        body = suite_recs("alpha", [("one", "pass"), ("two", "skip")]) + \
            suite_recs("alpha-tools", [("asan", "pass")])
        self.f.write_run([("alpha", body)])
        self.f.write_skips("alpha two stock the stock kernel lacks it\n")
        self.assertVerdict(0, "1 skipped (allowed)")
        # for the other kernel only: not allowed here
        self.f.write_skips("alpha two patched the patched kernel lacks it\n")
        self.assertVerdict(1, "not allowed by skips.txt")

    def test_skip_list_needs_a_reason(self):
        self.f.write_run([("alpha", self.good)])
        self.f.write_skips("alpha two stock\n")
        self.assertVerdict(1, "want SUITE TEST KERNEL REASON")
        self.f.write_skips("alpha two newest because\n")
        self.assertVerdict(1, "is not one of stock, patched")

    def test_no_skip_suite_on_patched(self):
        f = self.f
        f.kernel = "patched"
        f.write_manifest("setup", ["setup/modules", "setup/rxe"])
        f.write_manifest("kernel", ["kernel/p1_ext4", "kernel/p1_xfs"])
        body = suite_recs("kernel", [("p1_ext4", "pass"),
                                     ("p1_xfs", "skip")])
        f.write_run([("kernel", body)])
        self.assertVerdict(1, "where suite kernel may skip nothing",
                           "kernel")
        # the allow-list cannot allow it either, and says so
        f.write_skips("kernel p1_xfs patched no xfs today\n")
        out = self.assertVerdict(1, "suite kernel may not skip on the "
                                    "patched kernel", "kernel")
        self.assertIn("where suite kernel may skip nothing", out)
        # the same skip is allowed on the stock kernel's suites
        f.write_skips("kernel p1_xfs stock no xfs today\n")
        self.assertVerdict(1, "may skip nothing", "kernel")

    def test_end_count_mismatch_fails(self):
        body = suite_recs("alpha", [("one", "pass"), ("two", "pass")],
                          end={"pass": 3, "fail": 0, "skip": 0}) + \
            suite_recs("alpha-tools", [("asan", "pass")])
        self.f.write_run([("alpha", body)])
        self.assertVerdict(1, "suite alpha: the end record counts pass 3, "
                              "fail 0, skip 0; its test records are pass 2")

    def test_record_outside_start_end_fails(self):
        body = self.good + [{"suite": "alpha", "test": "late",
                             "result": "pass"}]
        self.f.write_manifest("alpha", ["alpha/one", "alpha/two",
                                        "alpha-tools/asan", "alpha/late"])
        self.f.write_run([("alpha", body)])
        self.assertVerdict(1, "alpha/late: test record outside its suite's "
                              "start and end records")

    def test_never_ended_fails(self):
        body = self.good[:-1]       # alpha-tools without its end
        self.f.write_run([("alpha", body)])
        self.assertVerdict(1, "suite alpha-tools started but never ended")

    def test_missing_manifest_fails(self):
        self.f.write_run([("alpha", self.good), ("beta",
                          suite_recs("beta", [("x", "pass")]))])
        self.assertVerdict(1, "suite beta: no manifest", "alpha,beta")

    def test_bench_needs_no_manifest(self):
        self.f.write_run([("bench", suite_recs("bench", [("x", "pass")]))])
        self.assertVerdict(0, "no manifest: a measurement", "bench")

    def test_failure_and_hang_fail(self):
        body = suite_recs("alpha", [("one", "pass"), ("two", "fail")]) + \
            suite_recs("alpha-tools", [("asan", "pass")])
        self.f.write_run([("alpha", body)])
        self.assertVerdict(1, "alpha/two failed")
        self.f.write_run([("alpha", self.good)], done=False)
        self.assertVerdict(1, "did not reach the end of /init")

    def test_kernel_from_qemu_cmd(self):
        self.f.write_run([("alpha", self.good)], boot=False)
        self.assertVerdict(1, "cannot tell the kernel")
        with open(os.path.join(self.f.tmp, "qemu.cmd"), "w") as f:
            f.write("qemu-system-x86_64 -append console=ttyS0 "
                    "daxlease.kernel=stock daxlease.suites=alpha\n")
        self.assertVerdict(0)
        self.assertVerdict(1, "no manifest", "alpha", "--kernel", "patched")

    def test_records_of_unrequested_suite_fail(self):
        self.f.write_run([("alpha", self.good),
                          ("beta", suite_recs("beta", [("x", "pass")]))])
        self.assertVerdict(1, "records of suite beta, which was not "
                              "requested")

    def test_hang_attributes_to_running_suite(self):
        # the guest stopped inside alpha: no exit, no done
        body = suite_recs("alpha", [("one", "pass")])
        self.f.write_run([], done=False)
        with open(self.f.results, "a") as f:
            for r in body[:-1]:
                f.write(json.dumps(r) + "\n")
        out = self.assertVerdict(1, "suite alpha: no exit record")
        self.assertIn("missing tests (2)", out)


class LineManifestTest(unittest.TestCase):
    """A suite whose tests differ between kernel lines: SUITE.KERNEL-LINE.txt
    for the line of the boot record's release, else SUITE.KERNEL.txt."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self._tmp.cleanup()

    def fixture(self, release):
        f = Fixture(os.path.join(self._tmp.name, release), release=release)
        f.write_manifest("setup", ["setup/modules", "setup/rxe"])
        f.write_manifest("alpha", ["alpha/one", "alpha/two"])
        f.write_manifest("alpha", ["alpha/one", "alpha/three"],
                         line="6.12")
        return f

    def run_alpha(self, f, tests):
        f.write_run([("alpha", suite_recs("alpha",
                                          [(t, "pass") for t in tests]))])
        return f.evaluate("alpha")

    def test_line_manifest_taken_for_its_line(self):
        f = self.fixture("6.12.118+deb12-amd64")
        rc, out = self.run_alpha(f, ["one", "three"])
        self.assertEqual(rc, 0, out)
        self.assertIn("alpha.stock-6.12.txt", out)
        rc, out = self.run_alpha(f, ["one", "two"])
        self.assertEqual(rc, 1, out)
        self.assertIn("alpha/three", out)

    def test_other_line_takes_the_kernel_manifest(self):
        f = self.fixture("6.1.0-28-amd64")
        rc, out = self.run_alpha(f, ["one", "two"])
        self.assertEqual(rc, 0, out)
        self.assertIn("alpha.stock.txt", out)
        # 6.1 is not 6.12, nor a prefix match of it
        rc, out = self.run_alpha(f, ["one", "three"])
        self.assertEqual(rc, 1, out)

    def test_no_release_takes_the_kernel_manifest(self):
        f = self.fixture("unknown")
        rc, out = self.run_alpha(f, ["one", "two"])
        self.assertEqual(rc, 0, out)
        self.assertIsNone(evaluate.Run(f.results).line())

    def test_manifest_per_line(self):
        f = Fixture(self._tmp.name, release="6.12.5-amd64")
        f.write_run([("alpha", suite_recs("alpha", [("one", "pass")]))])
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = manifest.main([f.results, "--manifests", f.mdir,
                                "--suite", "alpha", "--write",
                                "--per-line"])
        self.assertEqual(rc, 0, err.getvalue())
        path = evaluate.line_manifest_path("alpha", "stock", "6.12", f.mdir)
        self.assertTrue(os.path.exists(path), out.getvalue())
        self.assertFalse(os.path.exists(
            evaluate.manifest_path("alpha", "stock", f.mdir)))
        with open(path) as fh:
            self.assertIn("(line 6.12)", fh.read())
        # without --per-line the existing line manifest is updated
        f.write_run([("alpha", suite_recs("alpha", [("one", "pass"),
                                                    ("two", "pass")]))])
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = manifest.main([f.results, "--manifests", f.mdir,
                                "--suite", "alpha", "--write"])
        self.assertEqual(rc, 0)
        self.assertEqual(sorted(evaluate.load_manifest(path)),
                         ["alpha/one", "alpha/two"])
        self.assertFalse(os.path.exists(
            evaluate.manifest_path("alpha", "stock", f.mdir)))


class ManifestTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.f = Fixture(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def make(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = manifest.main([self.f.results, "--manifests", self.f.mdir,
                                *args])
        return rc, out.getvalue(), err.getvalue()

    def test_generate_then_evaluate(self):
        body = suite_recs("alpha", [("one", "pass"), ("two", "skip")]) + \
            suite_recs("alpha-tools", [("asan", "pass")])
        self.f.write_run([("alpha", body)])
        rc, out, err = self.make("--write")
        self.assertEqual(rc, 0, err)
        self.assertIn("alpha.stock.txt: 3 tests (new)", out)
        self.assertIn("alpha/two skipped and not allowed", err)
        names = evaluate.load_manifest(
            evaluate.manifest_path("alpha", "stock", self.f.mdir))
        self.assertEqual(sorted(names), ["alpha-tools/asan", "alpha/one",
                                         "alpha/two"])
        self.f.write_skips("alpha two stock reviewed\n")
        rc, out = self.f.evaluate("alpha")
        self.assertEqual(rc, 0, out)
        # a test added later: evaluate fails until the manifest follows
        body = body + suite_recs("alpha-new", [("three", "pass")])
        self.f.write_run([("alpha", body)])
        self.assertEqual(self.f.evaluate("alpha")[0], 1)
        rc, out, _ = self.make("--suite", "alpha", "--write")
        self.assertIn("+1 -0", out)
        self.assertEqual(self.f.evaluate("alpha")[0], 0)

    def test_incomplete_run_refused(self):
        body = suite_recs("alpha", [("one", "pass")])[:-1]
        self.f.write_run([("alpha", body)])
        rc, _, err = self.make("--suite", "alpha", "--write")
        self.assertEqual(rc, 1)
        self.assertIn("suite alpha started but never ended", err)
        self.assertFalse(os.path.exists(
            evaluate.manifest_path("alpha", "stock", self.f.mdir)))
        rc, _, _ = self.make("--suite", "alpha", "--write", "--force")
        self.assertEqual(rc, 0)


class RepositoryManifestsTest(unittest.TestCase):
    """The manifests and the allow-list in the tree are well formed."""

    def test_skips_file(self):
        allowed, problems = evaluate.load_skips(
            os.path.join(evaluate.MANIFEST_DIR, "skips.txt"))
        self.assertEqual(problems, [])
        self.assertTrue(allowed)

    def test_manifests(self):
        files = [n for n in os.listdir(evaluate.MANIFEST_DIR)
                 if n != "skips.txt"]
        self.assertTrue(files)
        for n in files:
            m = evaluate.MANIFEST_NAME.match(n)
            self.assertTrue(m, n)
            suite, kernel, line = m.groups()
            if line:
                # a line's manifest overrides the kernel's, which exists
                self.assertIn(f"{suite}.{kernel}.txt", files)
            names = evaluate.load_manifest(
                os.path.join(evaluate.MANIFEST_DIR, n))
            self.assertTrue(names, n)
            for t in names:
                s, _, test = t.partition("/")
                self.assertTrue(s and test and not t.endswith(" "), (n, t))
        for suite in ("setup", "stock", "python", "badinput", "threads",
                      "tools"):
            self.assertIn(f"{suite}.stock.txt", files)
        for suite in ("setup", "kernel", "leasepath", "faults", "badinput",
                      "threads", "tools", "programs"):
            self.assertIn(f"{suite}.patched.txt", files)


if __name__ == "__main__":
    unittest.main(verbosity=2)
