"""Read test counts from a JUnit XML report (as written by ``pytest --junitxml``)."""

from __future__ import annotations

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

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped

    @property
    def succeeded(self) -> bool:
        return self.failed == 0 and self.errors == 0 and self.passed > 0


def read_junit_report(path: Path) -> TestRun:
    """Sum the counts of every ``<testsuite>`` in the report."""
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if root.tag not in ("testsuite", "testsuites"):
        raise ValueError(f"{path} is not a JUnit report (root element {root.tag!r})")
    tests = failures = errors = skipped = 0
    duration = 0.0
    for suite in suites:
        tests += int(suite.get("tests", 0))
        failures += int(suite.get("failures", 0))
        errors += int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
        duration += float(suite.get("time", 0.0))
    return TestRun(
        passed=tests - failures - errors - skipped,
        failed=failures,
        errors=errors,
        skipped=skipped,
        duration_s=round(duration, 3),
    )
