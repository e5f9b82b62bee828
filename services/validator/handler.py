"""Validate a proposed repair in an isolated copy of the candidate workspace."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from libs.workspace.snapshot import tree_digests
from services.validator.checks import (
    CheckResult,
    check_compiles,
    check_invalid_values,
    check_metric,
    check_patch_applied,
    check_patch_identity,
    check_source_unchanged,
    check_tests,
    skipped,
)
from services.validator.sandbox import apply_patch, sandbox_copy

WORKSPACE_CHECKS = ("compiles", "tests", "invalid_values", "metric")


class ValidationReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    passed: bool
    failed_checks: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    patch_sha256: str
    metric: str
    baseline_value: float
    repaired_value: float | None
    tolerance: float
    invalid_values_after: int | None
    tests_passed: int | None
    tests_failed: int | None
    tests_errors: int | None
    source_unchanged: bool
    source_digest_before: str
    source_digest_after: str


def validate_repair(
    candidate_dir: Path,
    patch: str,
    data_csv: Path,
    workspace_spec: Mapping[str, Any],
    gate_policy: Mapping[str, Any],
    baseline_metrics: Mapping[str, float],
    *,
    expected_patch_sha256: str | None = None,
) -> ValidationReport:
    """Apply ``patch`` (unified diff text) to a fresh copy of ``candidate_dir`` and check it: it compiles,
    the workspace's tests pass, its features have no invalid values, the gate's metric is back within
    tolerance of ``baseline_metrics``, and ``candidate_dir`` itself is byte-for-byte unchanged.
    ``passed`` only when every check passed."""
    candidate_dir = Path(candidate_dir)
    before = tree_digests(candidate_dir)
    checks: list[CheckResult] = []
    if expected_patch_sha256 is not None:
        checks.append(check_patch_identity(patch, expected_patch_sha256))
    with sandbox_copy(candidate_dir) as workspace, tempfile.TemporaryDirectory(prefix="modelguard-outputs-") as scratch:
        applied = check_patch_applied(apply_patch(workspace, patch))
        checks.append(applied)
        if applied.passed:
            checks.append(check_compiles(workspace))
            checks.append(check_tests(workspace, workspace_spec))
            checks.append(check_invalid_values(workspace, Path(data_csv), workspace_spec, Path(scratch)))
            checks.append(check_metric(workspace, Path(data_csv), workspace_spec, gate_policy, baseline_metrics))
        else:
            checks.extend(skipped(name, "the patch did not apply") for name in WORKSPACE_CHECKS)
    source = check_source_unchanged(before, tree_digests(candidate_dir))
    checks.append(source)
    return _report(checks, patch, gate_policy, baseline_metrics, source)


def _report(
    checks: list[CheckResult],
    patch: str,
    gate_policy: Mapping[str, Any],
    baseline_metrics: Mapping[str, float],
    source: CheckResult,
) -> ValidationReport:
    by_name = {check.name: check for check in checks}
    metric_name = str(gate_policy["metric"])
    tests = by_name.get("tests")
    invalid = by_name.get("invalid_values")
    metric = by_name.get("metric")
    return ValidationReport(
        passed=all(check.passed for check in checks),
        failed_checks=tuple(check.name for check in checks if not check.passed),
        checks=tuple(checks),
        patch_sha256=hashlib.sha256(patch.encode("utf-8")).hexdigest(),
        metric=metric_name,
        baseline_value=float(baseline_metrics[metric_name]),
        repaired_value=metric.values.get("repaired") if metric else None,
        tolerance=float(gate_policy["tolerance"]),
        invalid_values_after=invalid.values.get("total") if invalid else None,
        tests_passed=tests.values.get("passed") if tests else None,
        tests_failed=tests.values.get("failed") if tests else None,
        tests_errors=tests.values.get("errors") if tests else None,
        source_unchanged=source.passed,
        source_digest_before=source.values["digest_before"],
        source_digest_after=source.values["digest_after"],
    )
