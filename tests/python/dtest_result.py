# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""unittest results as the JSON lines of tests/common/dtest.h.

Each test becomes {"suite","test","result","reason","seconds"}, framed by
{"suite","event":"start"} and {"suite","event":"end","pass","fail","skip"},
appended to $DAXLEASE_RESULTS.  A test may set self.note to a string that
becomes the reason of its pass record.
"""
import json
import os
import time
import unittest


class DtestResult(unittest.TextTestResult):
    suite_name = "python"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        path = os.environ.get("DAXLEASE_RESULTS")
        self._out = open(path, "a") if path else None
        self._t0 = time.monotonic()
        self.counts = {"pass": 0, "fail": 0, "skip": 0}

    def _emit(self, rec):
        if self._out:
            self._out.write(json.dumps(rec) + "\n")
            self._out.flush()

    @staticmethod
    def _name(test):
        tid = test.id()
        if " (" in tid:
            # setUpClass/module errors and skips: "setUpClass (mod.Class)"
            what, where = tid.split(" (", 1)
            return f"{where.rstrip(')').split('.')[-1]}.{what}"
        name = tid.split(".")[-1]
        return name[5:] if name.startswith("test_") else name

    def _record(self, test, result, reason):
        self.counts[result] += 1
        secs = time.monotonic() - self._t0
        self._emit({"suite": self.suite_name, "test": self._name(test),
                    "result": result, "reason": " ".join(reason.split())[:500],
                    "seconds": round(secs, 3)})

    def startTestRun(self):
        super().startTestRun()
        self._emit({"suite": self.suite_name, "event": "start"})

    def stopTestRun(self):
        super().stopTestRun()
        self._emit({"suite": self.suite_name, "event": "end", **self.counts})
        if self._out:
            self._out.close()
            self._out = None

    def startTest(self, test):
        super().startTest(test)
        self._t0 = time.monotonic()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "pass", str(getattr(test, "note", "") or ""))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "fail", f"{err[0].__name__}: {err[1]}")

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "fail", f"error {err[0].__name__}: {err[1]}")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "fail", "expected failure is not allowed here")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "fail", "unexpected success")
