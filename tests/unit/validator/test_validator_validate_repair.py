"""validate_repair on a toy workspace: a good patch passes every step in order; a patch that breaks the
tests, leaves invalid values, misses the gate or does not apply is refused at the first step that fails,
with the reason; the source workspace is never modified."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from libs.policy.model_policy import GatePolicy, WorkspacePolicy
from libs.workspace.snapshot import tree_digests
from services.validator.handler import ValidationReport, validate_repair
from services.validator.request import ValidationRequest
from tests.support.typed_policy import workspace_policy

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
SPEC = workspace_policy(
    timeout_s=60,
    evaluate=["python", "evaluate.py", "--data", "{data}"],
    features=["python", "-m", "toy.features", "--data", "{data}", "--output", "{output}"],
    tests=["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", "{junit}", "tests"],
)
GATE = GatePolicy(metric="score", direction="higher_is_better", tolerance=0.01)
BASELINE = {"score": 1.0}


def request(
    workspace: Path,
    patch: str,
    data: Path,
    spec: WorkspacePolicy = SPEC,
    baseline: dict[str, float] = BASELINE,
    **more: Any,
) -> ValidationRequest:
    return ValidationRequest(
        candidate_dir=workspace,
        patch=patch,
        data_csv=data,
        workspace=spec,
        gate=GATE,
        baseline_metrics=baseline,
        **more,
    )


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
    report = validate_repair(request(workspace, diff, data, **kwargs))
    assert tree_digests(workspace) == before
    return report


def statuses(report: ValidationReport) -> dict[str, str]:
    return {check.name: check.status for check in report.checks}


ORDER = [
    "patch_identity",
    "patch_applies",
    "compiles",
    "targeted_tests",
    "tests",
    "evaluation",
    "invalid_values",
    "gate",
    "integrity",
    "source_unchanged",
]


def test_a_good_patch_passes_every_step_in_order(toy: tuple[Path, Path]) -> None:
    report = validate(toy, GUARD, expected_patch_sha256=hashlib.sha256(GUARD.encode()).hexdigest())
    assert report.passed, report.failure_reason
    assert list(statuses(report)) == ORDER
    assert set(statuses(report).values()) == {"passed"}
    checks = {check.name: check for check in report.checks}
    assert checks["compiles"].values["files"] == ["toy/calc.py"]
    assert checks["targeted_tests"].values["test_files"] == ["tests/test_calc.py"]
    assert checks["targeted_tests"].values["passed"] == 1
    assert (report.tests_passed, report.tests_failed, report.tests_errors) == (1, 0, 0)
    assert report.invalid_values_after == 0
    assert report.repaired_value == 1.0
    assert report.failure_reason is None
    assert report.source_unchanged and report.source_digest_before == report.source_digest_after
    assert checks["integrity"].values["created"] == checks["integrity"].values["modified"] == []


def test_a_patch_that_breaks_the_tests_stops_at_the_targeted_tests(toy: tuple[Path, Path]) -> None:
    report = validate(toy, BREAKS_TESTS)
    assert not report.passed
    assert report.failed_checks == ("targeted_tests",)
    assert report.failure_reason == "targeted_tests: 0 passed, 1 failed, 0 errors"
    later = ["tests", "evaluation", "invalid_values", "gate"]
    assert [statuses(report)[name] for name in later] == ["skipped"] * 4
    assert report.checks[-3].detail == "not run: targeted_tests did not pass"
    assert report.source_unchanged


def test_a_patch_that_leaves_invalid_values_fails_the_data_check(toy: tuple[Path, Path]) -> None:
    report = validate(toy, NAN_GUARD)
    assert report.failed_checks == ("invalid_values",)
    assert report.invalid_values_after == 2
    assert report.repaired_value == 0.5
    assert statuses(report)["gate"] == "skipped"


def test_the_data_check_names_the_diagnosed_values_gone_and_new_ones(toy: tuple[Path, Path]) -> None:
    workspace, data = toy
    repaired = validate_repair(request(workspace, GUARD, data, diagnosed_invalid_by_column={"ratio": 2}))
    check = next(check for check in repaired.checks if check.name == "invalid_values")
    assert check.passed and check.values["gone"] == ["ratio"] and check.values["new"] == {}
    unrepaired = validate_repair(request(workspace, NAN_GUARD, data, diagnosed_invalid_by_column={}))
    check = next(check for check in unrepaired.checks if check.name == "invalid_values")
    assert not check.passed and check.values["new"] == {"ratio": 2}


def test_a_patch_that_misses_the_gate_is_refused(toy: tuple[Path, Path]) -> None:
    workspace, data = toy
    report = validate_repair(request(workspace, GUARD, data, baseline={"score": 1.5}))
    assert report.failed_checks == ("gate",)
    assert report.failure_reason == "gate: score 1.0 against baseline 1.5 (tolerance 0.01)"


def test_the_evaluation_takes_its_placeholders_and_the_data_check_its_data(
    toy: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace, data = toy
    windows = SPEC.model_copy(update={"evaluate": ("python", "evaluate.py", "--data", "{eval}")})
    incident = tmp_path / "incident-eval.csv"
    incident.write_text("total,count\n10,2\n", encoding="utf-8")
    report = validate_repair(
        request(
            workspace,
            GUARD,
            data,
            windows,
            evaluate_placeholders={"train": str(data), "eval": str(incident)},
            features_data=incident,
        )
    )
    assert report.passed, report.failure_reason
    checks = {check.name: check for check in report.checks}
    assert checks["evaluation"].values["rows"] == {"train": 1, "test": 1}
    assert checks["invalid_values"].values["rows"] == 1


def test_a_patch_that_does_not_apply_skips_the_workspace_steps(toy: tuple[Path, Path]) -> None:
    report = validate(toy, patch("+    return 0.0\n").replace("total / count", "total // count"))
    assert not report.passed
    assert report.failed_checks == ("patch_applies",)
    assert statuses(report) == {
        "patch_applies": "failed",
        "compiles": "skipped",
        "targeted_tests": "skipped",
        "tests": "skipped",
        "evaluation": "skipped",
        "invalid_values": "skipped",
        "gate": "skipped",
        "integrity": "passed",
        "source_unchanged": "passed",
    }


def test_a_patch_that_differs_from_the_proposal_is_not_even_applied(toy: tuple[Path, Path]) -> None:
    report = validate(toy, GUARD, expected_patch_sha256="0" * 64)
    assert report.failed_checks == ("patch_identity",)
    assert statuses(report)["patch_applies"] == "skipped"
    assert report.failure_reason == "patch_identity: the patch differs from the proposal"


def test_a_workspace_command_that_runs_into_a_limit_fails_with_the_limit(
    toy: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, data = toy
    central = tmp_path / "central.yaml"
    central.write_text("sandbox:\n  limits:\n    output_bytes: 65536\n", encoding="utf-8")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(central))
    noisy = SPEC.model_copy(update={"evaluate": ("python", "-c", "while True: print('x' * 1000)", "{data}")})
    report = validate_repair(request(workspace, GUARD, data, noisy))
    assert report.failed_checks == ("evaluation",)
    evaluation = next(check for check in report.checks if check.name == "evaluation")
    assert evaluation.values == {"limit_exceeded": "output"}
    assert "exceeded the output limit of 65536 bytes" in (report.failure_reason or "")


@pytest.mark.parametrize("diff", [GUARD, BREAKS_TESTS, NAN_GUARD], ids=["passes", "breaks-tests", "leaves-nan"])
def test_tests_beside_the_evaluation_give_the_same_report(toy: tuple[Path, Path], diff: str) -> None:
    one_by_one = validate(toy, diff)
    at_once = validate_repair(request(*toy[:1], diff, toy[1], parallel=2))

    def outcome(report: ValidationReport) -> tuple[object, ...]:
        return (
            [(c.name, c.status) for c in report.checks],
            report.failed_checks,
            report.failure_reason,
            report.repaired_value,
            (report.tests_passed, report.tests_failed, report.tests_errors),
            report.invalid_values_after,
        )

    assert outcome(at_once) == outcome(one_by_one)
    integrity = next(c for c in at_once.checks if c.name == "integrity")
    assert integrity.passed and integrity.values["created"] == integrity.values["modified"] == []
