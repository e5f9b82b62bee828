"""validate_repair on a toy workspace: a good patch passes every check; a patch that breaks the tests,
leaves invalid values or does not apply is refused; the source workspace is never modified."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from libs.workspace.snapshot import tree_digests
from services.validator.handler import ValidationReport, validate_repair

CALC = "def ratio(total: float, count: int) -> float:\n    return total / count\n"
FEATURES = """import argparse
import csv

from toy.calc import ratio


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data")
    parser.add_argument("--output")
    args = parser.parse_args()
    with open(args.data, newline="") as handle:
        rows = list(csv.DictReader(handle))
    with open(args.output, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ratio"])
        for row in rows:
            try:
                value = ratio(float(row["total"]), int(row["count"]))
            except ZeroDivisionError:
                value = float("inf")
            writer.writerow([repr(value)])


if __name__ == "__main__":
    main()
"""
EVALUATE = """import argparse
import csv
import json
import math

from toy.calc import ratio


def finite(total: float, count: int) -> bool:
    try:
        return math.isfinite(ratio(total, count))
    except ZeroDivisionError:
        return False


parser = argparse.ArgumentParser()
parser.add_argument("--data")
args = parser.parse_args()
with open(args.data, newline="") as handle:
    rows = list(csv.DictReader(handle))
score = sum(finite(float(row["total"]), int(row["count"])) for row in rows) / len(rows)
print(json.dumps({"metrics": {"score": score}, "rows": {"train": len(rows), "test": len(rows)}}))
"""
TESTS = "from toy.calc import ratio\n\n\ndef test_ratio():\n    assert ratio(10.0, 4) == 2.5\n"
SPEC = {
    "timeout_s": 60,
    "evaluate": ["python", "evaluate.py", "--data", "{data}"],
    "features": ["python", "-m", "toy.features", "--data", "{data}", "--output", "{output}"],
    "tests": ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", "{junit}", "tests"],
}
GATE = {"metric": "score", "direction": "higher_is_better", "tolerance": 0.01}
BASELINE = {"score": 1.0}


def patch(replacement: str) -> str:
    return (
        "--- a/toy/calc.py\n+++ b/toy/calc.py\n@@ -1,2 +1,2 @@\n"
        " def ratio(total: float, count: int) -> float:\n"
        "-    return total / count\n"
        f"{replacement}"
    )


GUARD = (
    "--- a/toy/calc.py\n+++ b/toy/calc.py\n@@ -1,2 +1,4 @@\n"
    " def ratio(total: float, count: int) -> float:\n"
    "+    if count <= 0:\n+        return 0.0\n"
    "     return total / count\n"
)
BREAKS_TESTS = patch("+    return total * count\n")
NAN_GUARD = (
    "--- a/toy/calc.py\n+++ b/toy/calc.py\n@@ -1,2 +1,4 @@\n"
    " def ratio(total: float, count: int) -> float:\n"
    "+    if count <= 0:\n+        return float('nan')\n"
    "     return total / count\n"
)


@pytest.fixture
def toy(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "candidate"
    files = {
        "toy/__init__.py": "",
        "toy/calc.py": CALC,
        "toy/features.py": FEATURES,
        "evaluate.py": EVALUATE,
        "tests/test_calc.py": TESTS,
    }
    for relpath, text in files.items():
        path = workspace / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    data = tmp_path / "data.csv"
    data.write_text("total,count\n10,2\n5,0\n8,4\n3,0\n", encoding="utf-8")
    return workspace, data


def validate(toy: tuple[Path, Path], diff: str, **kwargs: str) -> ValidationReport:
    workspace, data = toy
    before = tree_digests(workspace)
    report = validate_repair(workspace, diff, data, SPEC, GATE, BASELINE, **kwargs)
    assert tree_digests(workspace) == before
    return report


def statuses(report: ValidationReport) -> dict[str, str]:
    return {check.name: check.status for check in report.checks}


def test_a_good_patch_passes_every_check(toy: tuple[Path, Path]) -> None:
    report = validate(toy, GUARD, expected_patch_sha256=hashlib.sha256(GUARD.encode()).hexdigest())
    assert report.passed, report.failed_checks
    assert set(statuses(report).values()) == {"passed"}
    assert (report.tests_passed, report.tests_failed, report.tests_errors) == (1, 0, 0)
    assert report.invalid_values_after == 0
    assert report.repaired_value == 1.0
    assert report.source_unchanged and report.source_digest_before == report.source_digest_after


def test_a_patch_that_breaks_the_tests_is_refused(toy: tuple[Path, Path]) -> None:
    report = validate(toy, BREAKS_TESTS)
    assert not report.passed
    assert report.failed_checks == ("tests",)
    assert report.tests_failed == 1
    assert report.source_unchanged


def test_a_patch_that_leaves_invalid_values_and_misses_the_metric_is_refused(toy: tuple[Path, Path]) -> None:
    report = validate(toy, NAN_GUARD)
    assert set(report.failed_checks) == {"invalid_values", "metric"}
    assert report.invalid_values_after == 2
    assert report.repaired_value == 0.5


def test_a_patch_that_does_not_apply_skips_the_workspace_checks(toy: tuple[Path, Path]) -> None:
    report = validate(toy, patch("+    return 0.0\n").replace("total / count", "total // count"))
    assert not report.passed
    assert statuses(report) == {
        "patch_applies": "failed",
        "compiles": "skipped",
        "tests": "skipped",
        "invalid_values": "skipped",
        "metric": "skipped",
        "source_unchanged": "passed",
    }


def test_a_patch_that_differs_from_the_proposal_is_refused(toy: tuple[Path, Path]) -> None:
    report = validate(toy, GUARD, expected_patch_sha256="0" * 64)
    assert report.failed_checks == ("patch_identity",)
