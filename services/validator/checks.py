"""The validation steps, one function each; every step reports the figures it computed.

Every workspace command runs in the sandbox (libs.workspace.runner -> libs.sandbox). A step that does not
run because an earlier one failed is reported as ``skipped``, which does not pass.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, computed_field

from libs.canonical_json import strict_loads
from libs.policy.model_policy import GatePolicy, WorkspacePolicy
from libs.sandbox.integrity import compare_trees
from libs.sandbox.isolation import Isolation
from libs.workspace.argv_template import InvalidCommandTemplate, render_argv
from libs.workspace.commands import (
    WorkspaceCommandFailed,
    build_features,
    parse_evaluation_output,
    run_tests,
)
from libs.workspace.data_checks import count_invalid_values
from libs.workspace.data_windows import DataWindow
from libs.workspace.model_evaluation import evaluate_model
from libs.workspace.runner import CommandNotAllowed, CommandResult, CommandTimedOut, run_command
from services.validator.sandbox import PatchApplication
from services.validator.targeting import importing_tests, module_name, named_test_folders, targeted_command

CheckStatus = Literal["passed", "failed", "skipped", "not_applicable"]
"""``not_applicable``: the workspace config declares no command for this check (no tests, no features);
it does not block the repair, and the report says the check did not run."""
HIGHER_IS_BETTER = "higher_is_better"
LOWER_IS_BETTER = "lower_is_better"
COMMAND_ERRORS = (
    WorkspaceCommandFailed,
    CommandTimedOut,
    CommandNotAllowed,
    InvalidCommandTemplate,
    OSError,
    ValueError,
)
COMPILE_PROGRAM = """\
import json, sys
errors = []
for path in sys.argv[1:]:
    try:
        with open(path, "rb") as handle:
            compile(handle.read(), path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        errors.append(f"{path}: {error}")
print(json.dumps(errors))
"""


class CheckResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    status: CheckStatus
    detail: str
    values: dict[str, Any] = {}

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return self.status in ("passed", "not_applicable")


def skipped(name: str, because: str) -> CheckResult:
    return CheckResult(name=name, status="skipped", detail=f"not run: {because}")


def _timeout(spec: WorkspacePolicy) -> float:
    return float(spec.timeout_s)


def _limit_of(error: BaseException) -> dict[str, Any]:
    """The sandbox limit a failed command ran into, for the check's values."""
    report = getattr(error, "sandbox", None)
    result = getattr(error, "result", None)
    if report is None and isinstance(result, CommandResult):
        report = result.sandbox
    if isinstance(error, CommandTimedOut):
        return {"limit_exceeded": "wall_time"}
    return {"limit_exceeded": report.limit_exceeded} if report is not None and report.limit_exceeded else {}


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


def changed_python_files(workspace: Path, changed: Sequence[str]) -> list[str]:
    return sorted(path for path in changed if path.endswith(".py") and (workspace / path).is_file())


def check_compiles(workspace: Path, changed: Sequence[str], spec: WorkspacePolicy) -> CheckResult:
    """Compile the changed Python files, inside the sandbox (in memory: no byte-code is written)."""
    files = changed_python_files(workspace, changed)
    if not files:
        return _result("compiles", True, "no Python file changed", {"files": [], "errors": []})
    try:
        # -I: isolated, so the workspace's folder is not on the path and its own json.py cannot write the report
        compile_argv = ["python", "-I", "-c", COMPILE_PROGRAM, *files]
        result = run_command(compile_argv, cwd=workspace, timeout_s=_timeout(spec), image=spec.image)
        if not result.succeeded:
            raise WorkspaceCommandFailed("compile", result.failure_reason or "non-zero exit", result)
        errors = _compile_errors(result.stdout)
    except (*COMMAND_ERRORS, IndexError) as error:
        return _result("compiles", False, f"the compiler did not run: {error}", {"files": files, **_limit_of(error)})
    detail = f"{len(files)} changed Python file(s) compiled" if not errors else "; ".join(errors[:5])
    return _result("compiles", not errors, detail, {"files": files, "errors": errors})


def _compile_errors(stdout: str) -> list[str]:
    """The messages of the compile program's last line: a JSON list of strings. It runs in the workspace's folder
    (isolated, so it imports none of the workspace's modules), and anything else is a ValueError (the compiler did
    not run)."""
    try:
        errors = strict_loads(stdout.strip().splitlines()[-1])
    except ValueError as error:
        raise ValueError(f"the compile program's report is not JSON: {error}") from None
    if not isinstance(errors, list) or not all(isinstance(error, str) for error in errors):
        raise ValueError("the compile program's report is not a list of messages")
    return errors


def _test_values(name: str, workspace: Path, spec: Mapping[str, Any], extra: dict[str, Any]) -> CheckResult:
    """``spec`` is the command mapping ``libs.workspace.commands`` reads (``WorkspacePolicy.command_spec``)."""
    """Run a tests command: no failures, no errors, and at least one test passed."""
    try:
        run = run_tests(workspace, spec)
    except COMMAND_ERRORS as error:
        return _result(name, False, f"the tests did not run: {error}", {**extra, **_limit_of(error)})
    values = {**extra, "passed": run.passed, "failed": run.failed, "errors": run.errors, "skipped": run.skipped}
    detail = f"{run.passed} passed, {run.failed} failed, {run.errors} errors"
    if run.exit_status != 0 and run.failed == 0 and run.errors == 0:  # the report says nothing failed, and the
        values["exit_status"] = run.exit_status  # workspace's code can write over it: the exit status disagrees
        detail += f", but the tests command exited with status {run.exit_status}"
    return _result(name, run.succeeded, detail, values)


def check_targeted_tests(workspace: Path, changed: Sequence[str], spec: WorkspacePolicy) -> CheckResult:
    """The tests that import a changed module (found from their imports), run on their own first."""
    template = list(spec.tests or ())
    modules = sorted({name for path in changed if (name := module_name(path))})
    folders = named_test_folders(workspace, template)
    files, unreadable = importing_tests(workspace, folders, modules)
    extra: dict[str, Any] = {"modules": modules, "test_files": files, "unparsable_test_files": unreadable}
    if not template:
        return not_applicable("targeted_tests", "the workspace config defines no tests command")
    if not files:
        detail = f"no test imports {', '.join(modules) or 'a changed module'}; the whole suite runs next"
        return _result("targeted_tests", True, detail, {**extra, "ran": False})
    targeted = {**spec.command_spec(), "tests": targeted_command(template, folders, files)}
    return _test_values("targeted_tests", workspace, targeted, {**extra, "ran": True})


def check_tests(workspace: Path, spec: WorkspacePolicy) -> CheckResult:
    """The workspace's whole test suite."""
    if not spec.tests:
        return not_applicable("tests", "the workspace config defines no tests command")
    return _test_values("tests", workspace, spec.command_spec(), {})


def check_evaluation(
    workspace: Path,
    spec: WorkspacePolicy,
    placeholders: Mapping[str, str],
    gate: GatePolicy | None = None,
    window: DataWindow | None = None,
    require_predict: bool = False,
) -> CheckResult:
    """Re-run the repaired tree's evaluation. With ``predict`` and a ``window``, ModelGuard is the referee: the
    workspace predicts the window's evaluation rows without their labels and the metric is computed here.
    Otherwise the workspace's ``evaluate`` reports its own metric (``placeholders`` fill its command), which
    ``require_predict`` (the central policy's ``validation.require_predict``) refuses."""
    predicts = spec.predict is not None
    if not predicts and require_predict:
        return _result(
            "evaluation",
            False,
            "the central policy requires the predict contract (validation.require_predict); this workspace "
            "only reports its own metric",
            {"metric_source": "self_reported"},
        )
    if predicts and window is not None and gate is not None:
        return _refereed_evaluation(workspace, spec, gate, window)
    allowed = {gate.metric, *spec.reported_metrics} if gate is not None else None
    try:
        argv = render_argv(list(spec.evaluate or ()), placeholders)
        result = run_command(argv, cwd=workspace, timeout_s=_timeout(spec), image=spec.image)
        if not result.succeeded:
            raise WorkspaceCommandFailed("evaluate", result.failure_reason or "non-zero exit", result)
        metrics, rows = parse_evaluation_output(result.stdout, allowed)
    except (*COMMAND_ERRORS, TypeError, AttributeError) as error:
        return _result("evaluation", False, f"the evaluation did not run: {error}", _limit_of(error))
    return _result(
        "evaluation",
        True,
        f"{len(metrics)} metric(s) reported by the workspace itself (self-reported)",
        {
            "metrics": metrics,
            "rows": rows,
            "metric_source": "self_reported",
            "sandbox": sandbox_in_force(result.sandbox),
        },
    )


def _refereed_evaluation(
    workspace: Path, policy: WorkspacePolicy, gate_policy: GatePolicy, window: DataWindow
) -> CheckResult:
    try:
        evaluation = evaluate_model(workspace, window, policy, gate_policy)
    except (*COMMAND_ERRORS, TypeError, AttributeError) as error:
        return _result("evaluation", False, f"the prediction did not run: {error}", _limit_of(error))
    rows = len(evaluation.scored.labels) if evaluation.scored is not None else 0
    return _result(
        "evaluation",
        True,
        f"{gate_policy.metric} computed by ModelGuard from {rows} predictions against the labels it kept back",
        {
            "metrics": evaluation.metrics,
            "rows": {"eval": rows},
            "metric_source": evaluation.source,
            "sandbox": sandbox_in_force(evaluation.command.sandbox),
        },
    )


def check_invalid_values(
    workspace: Path,
    features_data: Path,
    spec: WorkspacePolicy,
    scratch: Path,
    diagnosed_by_column: Mapping[str, int] | None = None,
    approved_invalid_total: int | None = None,
) -> CheckResult:
    """Build the repaired tree's features from ``features_data`` and count non-finite cells: the invalid
    values the diagnosis counted (``diagnosed_by_column``) must be gone and no column may have new ones."""
    diagnosed = dict(diagnosed_by_column or {})
    if not spec.features:
        return not_applicable("invalid_values", "the workspace config defines no features command")
    try:
        features = build_features(workspace, features_data, scratch / "repaired-features.csv", spec.command_spec())
        counted = count_invalid_values(features)
    except COMMAND_ERRORS as error:
        return _result("invalid_values", False, f"the features could not be built: {error}", _limit_of(error))
    after = dict(counted.by_column)
    remaining = {column: after[column] for column in diagnosed if after.get(column)}
    new = {column: count for column, count in after.items() if column not in diagnosed}
    values = {
        "total": counted.total,
        "by_column": after,
        "rows": counted.rows,
        "diagnosed": diagnosed,
        "gone": sorted(column for column in diagnosed if not after.get(column)),
        "remaining": remaining,
        "new": new,
        "approved_code_total": approved_invalid_total,
    }
    if approved_invalid_total is not None and not diagnosed:
        # none new: no more than the approved code gives on the same rows (its own NaNs may be by design)
        values["new"] = {} if counted.total <= approved_invalid_total else new
        ok = counted.total <= approved_invalid_total
    else:
        ok = not remaining and not new
    return _result("invalid_values", ok, f"{counted.total} invalid value(s) in {counted.rows} feature row(s)", values)


def check_gate(
    evaluation: CheckResult,
    gate: GatePolicy,
    baseline_metrics: Mapping[str, float],
    same_window_reference: float | None = None,
) -> CheckResult:
    """The gate's metric of the re-run evaluation must be within the gate's tolerance of the baseline, or, when
    ``same_window_reference`` is given (the approved base revision scored on the same incident window, for a
    cause in the code), within tolerance of that: the repair restores what the approved code does on these rows.
    """
    metric, direction, tolerance = gate.metric, gate.direction, float(gate.tolerance)
    baseline = float(baseline_metrics[metric])
    metrics: Mapping[str, float] = evaluation.values.get("metrics", {})
    if metric not in metrics:
        return _result(
            "gate", False, f"the evaluation reported no {metric!r}", {"metric": metric, "baseline": baseline}
        )
    repaired = float(metrics[metric])
    against_baseline = within_tolerance(direction, baseline, repaired, tolerance)
    against_same_window = same_window_reference is not None and within_tolerance(
        direction, same_window_reference, repaired, tolerance
    )
    values = {
        "metric": metric,
        "direction": direction,
        "tolerance": tolerance,
        "baseline": baseline,
        "repaired": repaired,
        "delta": round(repaired - baseline, 6),
        "base_on_same_window": same_window_reference,
        "within_tolerance_of": "baseline"
        if against_baseline
        else ("base_on_same_window" if against_same_window else None),
    }
    detail = f"{metric} {repaired} against baseline {baseline} (tolerance {tolerance})"
    if same_window_reference is not None:
        detail += f"; the approved code scores {same_window_reference} on the same rows"
    return _result("gate", against_baseline or against_same_window, detail, values)


def within_tolerance(direction: str, baseline: float, value: float, tolerance: float) -> bool:
    if direction == HIGHER_IS_BETTER:
        return value >= baseline - tolerance
    if direction == LOWER_IS_BETTER:
        return value <= baseline + tolerance
    raise ValueError(f"unknown metric direction {direction!r}")


def sandbox_in_force(report: object) -> dict[str, str]:
    """What a command's SandboxReport says was enforced (the workspace runner's when one ran it)."""
    found = {
        "mechanism": str(getattr(report, "mechanism", "")),
        "network_isolation": str(getattr(report, "network_isolation", "")),
        "filesystem_isolation": str(getattr(report, "filesystem_isolation", "")),
    }
    if getattr(report, "runner", ""):
        found["runner"] = str(report.runner)  # type: ignore[attr-defined]
    return found


def check_integrity(
    after_patch: Mapping[str, str],
    after_commands: Mapping[str, str],
    isolation: Isolation,
    observed: Mapping[str, str] | None = None,
) -> CheckResult:
    """Every file of the patched copy, hashed after the patch and after the last command: the commands
    changed nothing. Also records what the sandbox enforced: ``observed`` as the evaluation's own command
    reported it (locally or on the workspace runner), else what this machine's probe says."""
    changes = compare_trees(after_patch, after_commands)
    values = {
        "files": len(after_patch),
        "digest_after_patch": tree_digest(after_patch),
        "digest_after_commands": tree_digest(after_commands),
        **changes.as_dict(),
        "sandbox": dict(observed)
        if observed
        else {
            "mechanism": isolation.mechanism,
            "network_isolation": isolation.network_status(),
            "filesystem_isolation": isolation.filesystem_status(),
        },
    }
    detail = f"{len(after_patch)} file(s) of the patched copy hashed after the patch and after the commands; "
    return _result("integrity", changes.unchanged, detail + changes.summary(), values)


def check_source_unchanged(before: Mapping[str, str], after: Mapping[str, str]) -> CheckResult:
    changes = compare_trees(before, after)
    changed, added, removed = changes.modified, changes.created, changes.deleted
    return _result(
        "source_unchanged",
        changes.unchanged,
        f"{len(before)} source file(s) hashed before and after; "
        + ("identical" if changes.unchanged else f"{len(changed)} changed, {len(added)} added, {len(removed)} removed"),
        {
            "files": len(before),
            "digest_before": tree_digest(before),
            "digest_after": tree_digest(after),
            "changed": list(changed),
            "added": list(added),
            "removed": list(removed),
        },
    )


def tree_digest(digests: Mapping[str, str]) -> str:
    """One sha256 over a tree's per-file digests."""
    return hashlib.sha256(json.dumps(dict(sorted(digests.items())), separators=(",", ":")).encode()).hexdigest()


def not_applicable(name: str, because: str) -> CheckResult:
    return CheckResult(name=name, status="not_applicable", detail=f"not run: {because}")


def _result(name: str, ok: bool, detail: str, values: dict[str, Any]) -> CheckResult:
    return CheckResult(name=name, status="passed" if ok else "failed", detail=detail, values=values)
