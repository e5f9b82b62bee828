"""Read test counts from a JUnit XML report (as written by ``pytest --junitxml``).

The report is written where the workspace's own code runs (inside pytest, which runs the tests), so it is one
witness, not proof: a run passes only when the command's exit status says so too (``TestRun.succeeded``), and a
report whose counts no run can have (negative, not whole numbers, a time that is not a finite number) is unreadable.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TestRun:
    __test__ = False  # not a pytest test class

    passed: int
    failed: int
    errors: int
    skipped: int
    duration_s: float
    exit_status: int = 0
    """The tests command's own exit status (pytest: 0 when every test passed)."""

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped

    @property
    def succeeded(self) -> bool:
        return self.failed == 0 and self.errors == 0 and self.passed > 0 and self.exit_status == 0


def read_junit_report(path: Path) -> TestRun:
    """Sum the counts of every ``<testsuite>`` in the report."""
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if root.tag not in ("testsuite", "testsuites"):
        raise ValueError(f"{path} is not a JUnit report (root element {root.tag!r})")
    tests = failures = errors = skipped = 0
    duration = 0.0
    for suite in suites:
        tests += _count(suite, "tests")
        failures += _count(suite, "failures")
        errors += _count(suite, "errors")
        skipped += _count(suite, "skipped")
        time = float(suite.get("time", 0.0))
        if not math.isfinite(time) or time < 0:
            raise ValueError(f"{path.name}: a suite's time is {time}")
        duration += time
    return TestRun(
        passed=tests - failures - errors - skipped,
        failed=failures,
        errors=errors,
        skipped=skipped,
        duration_s=round(duration, 3),
    )


def _count(suite: ElementTree.Element, name: str) -> int:
    count = int(suite.get(name, 0))
    if count < 0:
        raise ValueError(f"a suite's {name} is negative ({count})")
    return count
