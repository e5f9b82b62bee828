"""Validate a proposed repair in an isolated copy of the candidate workspace, one step after another:
patch identity, patch applies, compile, the tests that import the changed module, the whole suite, the
evaluation re-run, the data check, the gate against the baseline; then integrity (the commands changed
nothing in the copy) and the source workspace unchanged. The first step that fails stops the ones after it
(reported ``skipped``), and the report names it with its reason. The tests, the evaluation and the data check may run
at once (``ValidationRequest.parallel``, :mod:`services.validator.step_lanes`); the report is the same."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from libs.policy.model_policy import GatePolicy
from libs.sandbox.copy import UnsafeWorkspace
from libs.sandbox.folder_removal import scratch_folder
from libs.sandbox.integrity import hash_tree
from libs.sandbox.isolation import probe_isolation
from libs.sandbox.known_digests import LOCAL_TREES
from libs.sandbox.limits import default_sandbox_policy
from libs.workspace.snapshot import tree_digests
from services.validator.checks import (
    CheckResult,
    check_compiles,
    check_evaluation,
    check_gate,
    check_integrity,
    check_invalid_values,
    check_patch_applied,
    check_patch_identity,
    check_source_unchanged,
    check_targeted_tests,
    check_tests,
    skipped,
)
from services.validator.request import ValidationRequest
from services.validator.sandbox import apply_patch, sandbox_copy
from services.validator.step_lanes import all_passed, first_failure, run_steps

WORKSPACE_STEPS = ("compiles", "targeted_tests", "tests", "evaluation", "invalid_values", "gate")


class ValidationReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    passed: bool
    failed_checks: tuple[str, ...]
    """Checks that ran and failed (skipped ones are not listed, though they do not pass either)."""
    failure_reason: str | None
    """The first failed check and its detail: why the patch is withheld."""
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


def validate_repair(request: ValidationRequest) -> ValidationReport:
    """Apply the request's patch (unified diff text) to a fresh copy of its candidate tree and validate it step
    by step (``ValidationRequest`` says what each of its fields does). ``passed`` only when every check passed."""
    candidate_dir = Path(request.candidate_dir)
    patch, workspace_spec, gate_policy = request.patch, request.workspace, request.gate
    data_csv, window, require_predict = request.data_csv, request.window, request.require_predict
    placeholders = dict(request.evaluate_placeholders or {"data": str(Path(data_csv).resolve())})
    features_from = Path(request.features_data or data_csv)
    expected_patch_sha256 = request.expected_patch_sha256
    diagnosed_invalid_by_column = request.diagnosed_invalid_by_column
    approved_invalid_total, same_window_reference = request.approved_invalid_total, request.same_window_reference
    baseline_metrics = request.baseline_metrics
    before = tree_digests(candidate_dir)
    checks: list[CheckResult] = []
    if expected_patch_sha256 is not None:
        checks.append(check_patch_identity(patch, expected_patch_sha256))
    try:
        with sandbox_copy(candidate_dir) as workspace, scratch_folder("modelguard-outputs-") as out:
            if all_passed(checks):
                checks.append(check_patch_applied(apply_patch(workspace, patch)))
            else:
                checks.append(skipped("patch_applies", first_failure(checks)))
            after_patch = hash_tree(workspace)
            changed = [file["path"] for file in checks[-1].values.get("files", [])]
            steps: list[tuple[str, Callable[[], CheckResult]]] = [
                ("compiles", lambda: check_compiles(workspace, changed, workspace_spec)),
                ("targeted_tests", lambda: check_targeted_tests(workspace, changed, workspace_spec)),
                ("tests", lambda: check_tests(workspace, workspace_spec)),
                (
                    "evaluation",
                    lambda: check_evaluation(
                        workspace, workspace_spec, placeholders, gate_policy, window, require_predict
                    ),
                ),
                (
                    "invalid_values",
                    lambda: check_invalid_values(
                        workspace,
                        features_from,
                        workspace_spec,
                        Path(out),
                        diagnosed_invalid_by_column,
                        approved_invalid_total,
                    ),
                ),
                (
                    "gate",
                    lambda: check_gate(
                        _named(checks, "evaluation"), gate_policy, baseline_metrics, same_window_reference
                    ),
                ),
            ]
            run_steps(steps, checks, request.parallel)
            sandbox = default_sandbox_policy()  # the identity its commands ran as: one probe for both
            isolation = probe_isolation(sandbox.isolation, uid=sandbox.run_as_uid, gid=sandbox.run_as_gid)
            evaluation = next((check for check in checks if check.name == "evaluation"), None)
            observed = evaluation.values.get("sandbox") if evaluation is not None else None
            # confined, the commands saw the copy read-only: a file the kernel says is unchanged since one of their
            # hashes read it is not read again (libs/sandbox/known_digests.py); unconfined, every file is read
            known = LOCAL_TREES if isolation.mechanism != "none" else None
            checks.append(check_integrity(after_patch, hash_tree(workspace, known), isolation, observed))
    except UnsafeWorkspace as error:
        checks.append(CheckResult(name="workspace_copy", status="failed", detail=str(error)))
        checks.extend(skipped(name, "the workspace could not be copied") for name in WORKSPACE_STEPS)
    source = check_source_unchanged(before, tree_digests(candidate_dir))
    checks.append(source)
    return _report(checks, patch, gate_policy, baseline_metrics, source)


def _named(checks: list[CheckResult], name: str) -> CheckResult:
    return next(check for check in checks if check.name == name)


def _report(
    checks: list[CheckResult],
    patch: str,
    gate_policy: GatePolicy,
    baseline_metrics: Mapping[str, float],
    source: CheckResult,
) -> ValidationReport:
    by_name = {check.name: check for check in checks}
    metric_name = gate_policy.metric
    tests = by_name.get("tests")
    invalid = by_name.get("invalid_values")
    evaluation = by_name.get("evaluation")
    failed = [check for check in checks if check.status == "failed"]
    repaired = evaluation.values.get("metrics", {}).get(metric_name) if evaluation else None
    return ValidationReport(
        passed=all(check.passed for check in checks),
        failed_checks=tuple(check.name for check in failed),
        failure_reason=f"{failed[0].name}: {failed[0].detail}" if failed else None,
        checks=tuple(checks),
        patch_sha256=hashlib.sha256(patch.encode("utf-8")).hexdigest(),
        metric=metric_name,
        baseline_value=float(baseline_metrics[metric_name]),
        repaired_value=repaired,
        tolerance=float(gate_policy.tolerance),
        invalid_values_after=invalid.values.get("total") if invalid else None,
        tests_passed=tests.values.get("passed") if tests else None,
        tests_failed=tests.values.get("failed") if tests else None,
        tests_errors=tests.values.get("errors") if tests else None,
        source_unchanged=source.passed,
        source_digest_before=source.values["digest_before"],
        source_digest_after=source.values["digest_after"],
    )
