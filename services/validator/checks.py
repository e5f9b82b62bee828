"""The validation checks, one function each; every check reports the figures it computed.

A check that cannot run because an earlier one failed is reported as ``skipped``, which does not pass.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, computed_field

from libs.workspace.commands import WorkspaceCommandFailed, build_features, evaluate, run_tests
from libs.workspace.data_checks import count_invalid_values
from libs.workspace.runner import CommandTimedOut
from services.validator.sandbox import PatchApplication

CheckStatus = Literal["passed", "failed", "skipped"]
HIGHER_IS_BETTER = "higher_is_better"
LOWER_IS_BETTER = "lower_is_better"
COMMAND_ERRORS = (WorkspaceCommandFailed, CommandTimedOut, OSError, ValueError)


class CheckResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    status: CheckStatus
    detail: str
    values: dict[str, Any] = {}

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return self.status == "passed"


def skipped(name: str, because: str) -> CheckResult:
    return CheckResult(name=name, status="skipped", detail=f"not run: {because}")


def check_patch_identity(unified_diff: str, expected_sha256: str) -> CheckResult:
    actual = hashlib.sha256(unified_diff.encode("utf-8")).hexdigest()
    return _result(
        "patch_identity",
        actual == expected_sha256,
        "the patch is the one that was proposed"
        if actual == expected_sha256
        else "the patch differs from the proposal",
        {"expected_sha256": expected_sha256, "actual_sha256": actual},
    )


def check_patch_applied(application: PatchApplication) -> CheckResult:
    return _result(
        "patch_applies",
        application.applied,
        application.detail,
        {"files": [{"path": path, "added": added, "removed": removed} for added, removed, path in application.numstat]},
    )


def check_compiles(workspace: Path) -> CheckResult:
    """Compile every Python file of the workspace (in memory: no byte-code is written)."""
    errors: list[str] = []
    files = sorted(path for path in workspace.rglob("*.py") if path.is_file())
    for path in files:
        try:
            compile(path.read_bytes(), str(path.relative_to(workspace)), "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as error:
            errors.append(f"{path.relative_to(workspace)}: {error}")
    return _result(
        "compiles",
        not errors,
        f"{len(files)} Python file(s) compiled" if not errors else "; ".join(errors[:5]),
        {"files": len(files), "errors": errors},
    )


def check_tests(workspace: Path, spec: Mapping[str, Any]) -> CheckResult:
    """The workspace's own tests: no failures, no errors, and at least one test passed."""
    try:
        run = run_tests(workspace, spec)
    except COMMAND_ERRORS as error:
        return _result("tests", False, f"the tests did not run: {error}", {})
    values = {
        "passed": run.passed,
        "failed": run.failed,
        "errors": run.errors,
        "skipped": run.skipped,
    }
    ok = run.failed == 0 and run.errors == 0 and run.passed > 0
    return _result("tests", ok, f"{run.passed} passed, {run.failed} failed, {run.errors} errors", values)


def check_invalid_values(workspace: Path, data_csv: Path, spec: Mapping[str, Any], scratch: Path) -> CheckResult:
    """Build the features of the repaired workspace and count non-finite cells: there must be none."""
    try:
        features = build_features(workspace, data_csv, scratch / "repaired-features.csv", spec)
        counted = count_invalid_values(features)
    except COMMAND_ERRORS as error:
        return _result("invalid_values", False, f"the features could not be built: {error}", {})
    return _result(
        "invalid_values",
        counted.total == 0,
        f"{counted.total} invalid value(s) in {counted.rows} feature row(s)",
        {"total": counted.total, "by_column": dict(counted.by_column), "rows": counted.rows},
    )


def check_metric(
    workspace: Path,
    data_csv: Path,
    spec: Mapping[str, Any],
    gate: Mapping[str, Any],
    baseline_metrics: Mapping[str, float],
) -> CheckResult:
    """Re-run the evaluation; the gate's metric must be within the gate's tolerance of the baseline."""
    metric, direction, tolerance = str(gate["metric"]), str(gate["direction"]), float(gate["tolerance"])
    baseline = float(baseline_metrics[metric])
    try:
        result = evaluate(workspace, data_csv, spec)
    except COMMAND_ERRORS as error:
        return _result(
            "metric", False, f"the evaluation did not run: {error}", {"metric": metric, "baseline": baseline}
        )
    if metric not in result.metrics:
        return _result(
            "metric", False, f"the evaluation reported no {metric!r}", {"metric": metric, "baseline": baseline}
        )
    repaired = result.metrics[metric]
    ok = within_tolerance(direction, baseline, repaired, tolerance)
    values = {
        "metric": metric,
        "direction": direction,
        "tolerance": tolerance,
        "baseline": baseline,
        "repaired": repaired,
        "delta": round(repaired - baseline, 6),
        "all_metrics": dict(result.metrics),
    }
    return _result("metric", ok, f"{metric} {repaired} against baseline {baseline} (tolerance {tolerance})", values)


def within_tolerance(direction: str, baseline: float, value: float, tolerance: float) -> bool:
    if direction == HIGHER_IS_BETTER:
        return value >= baseline - tolerance
    if direction == LOWER_IS_BETTER:
        return value <= baseline + tolerance
    raise ValueError(f"unknown metric direction {direction!r}")


def check_source_unchanged(before: Mapping[str, str], after: Mapping[str, str]) -> CheckResult:
    changed = sorted(path for path in before.keys() & after.keys() if before[path] != after[path])
    added = sorted(after.keys() - before.keys())
    removed = sorted(before.keys() - after.keys())
    unchanged = not (changed or added or removed)
    return _result(
        "source_unchanged",
        unchanged,
        f"{len(before)} source file(s) hashed before and after; "
        + ("identical" if unchanged else f"{len(changed)} changed, {len(added)} added, {len(removed)} removed"),
        {
            "files": len(before),
            "digest_before": tree_digest(before),
            "digest_after": tree_digest(after),
            "changed": changed,
            "added": added,
            "removed": removed,
        },
    )


def tree_digest(digests: Mapping[str, str]) -> str:
    """One sha256 over a tree's per-file digests."""
    return hashlib.sha256(json.dumps(dict(sorted(digests.items())), separators=(",", ":")).encode()).hexdigest()


def _result(name: str, ok: bool, detail: str, values: dict[str, Any]) -> CheckResult:
    return CheckResult(name=name, status="passed" if ok else "failed", detail=detail, values=values)
