"""The workspace's own commands, as named in the policy's ``workspace`` section: evaluate the model,
build the feature matrix, run the tests. Outputs go outside the workspace so it stays unchanged."""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from libs.workspace.argv_template import render_argv
from libs.workspace.data_windows import DataWindow
from libs.workspace.junit_report import TestRun, read_junit_report
from libs.workspace.runner import CommandResult, run_command

DEFAULT_TIMEOUT_S = 300.0
STDERR_TAIL_CHARS = 2000

__all__ = [
    "EvaluationResult",
    "TestRun",
    "WorkspaceCommandFailed",
    "build_features",
    "evaluate",
    "run_tests",
]


class WorkspaceCommandFailed(RuntimeError):
    def __init__(self, name: str, reason: str, result: CommandResult | None = None) -> None:
        self.name = name
        self.reason = reason
        self.result = result
        detail = ""
        if result is not None:
            tail = result.stderr[-STDERR_TAIL_CHARS:].strip()
            detail = f" (exit {result.returncode}; stderr tail:\n{tail})"
        super().__init__(f"workspace command {name!r} failed: {reason}{detail}")


@dataclass(frozen=True)
class EvaluationResult:
    metrics: dict[str, float]
    rows: dict[str, int]
    command: CommandResult


def _template(spec: Mapping[str, Any], name: str) -> list[str]:
    if name not in spec:
        raise WorkspaceCommandFailed(name, "the policy's workspace section does not define it")
    return list(spec[name])


def _timeout(spec: Mapping[str, Any]) -> float:
    return float(spec.get("timeout_s", DEFAULT_TIMEOUT_S))


def _run(name: str, workspace: Path, spec: Mapping[str, Any], values: Mapping[str, str]) -> CommandResult:
    argv = render_argv(_template(spec, name), values)
    return run_command(argv, cwd=Path(workspace), timeout_s=_timeout(spec))


def _refuse_non_finite(token: str) -> float:
    raise ValueError(f"non-finite number {token} in evaluation output")


def parse_evaluation_output(stdout: str) -> tuple[dict[str, float], dict[str, int]]:
    """Read ``{"metrics": {...}}`` (optionally with ``"rows": {...}``) from the last non-empty line of ``stdout``."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise ValueError("evaluation printed nothing")
    document = json.loads(lines[-1], parse_constant=_refuse_non_finite)
    if not isinstance(document, dict):
        raise ValueError("evaluation output must be a JSON object")
    metrics, rows = document.get("metrics"), document.get("rows", {})
    if not isinstance(metrics, dict) or not metrics or not isinstance(rows, dict):
        raise ValueError("evaluation output needs a non-empty 'metrics' object ('rows', if given, an object)")
    parsed_metrics = {str(name): float(value) for name, value in metrics.items()}
    if not all(math.isfinite(value) for value in parsed_metrics.values()):
        raise ValueError(f"non-finite metric in {parsed_metrics}")
    return parsed_metrics, {str(name): int(value) for name, value in rows.items()}


def evaluate(workspace: Path, window: DataWindow, spec: Mapping[str, Any]) -> EvaluationResult:
    """Train on the window's ``{train}`` rows and score its ``{eval}`` rows, with the workspace's command."""
    result = _run("evaluate", workspace, spec, window.placeholders())
    if not result.succeeded:
        raise WorkspaceCommandFailed("evaluate", "non-zero exit", result)
    try:
        metrics, rows = parse_evaluation_output(result.stdout)
    except (ValueError, TypeError, AttributeError) as error:
        raise WorkspaceCommandFailed("evaluate", f"unreadable output: {error}", result) from error
    return EvaluationResult(metrics=metrics, rows=rows, command=result)


def build_features(workspace: Path, data: Path, out: Path, spec: Mapping[str, Any]) -> Path:
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    values = {"data": str(Path(data).resolve()), "output": str(out)}
    result = _run("features", workspace, spec, values)
    if not result.succeeded:
        raise WorkspaceCommandFailed("features", "non-zero exit", result)
    if not out.is_file():
        raise WorkspaceCommandFailed("features", f"{out} was not written", result)
    return out


def run_tests(workspace: Path, spec: Mapping[str, Any]) -> TestRun:
    """Run the workspace's tests; failing tests are counted, a run that leaves no report raises."""
    with tempfile.TemporaryDirectory(prefix="modelguard-junit-") as reports:
        junit = Path(reports) / "junit.xml"
        result = _run("tests", workspace, spec, {"junit": str(junit)})
        if not junit.is_file():
            raise WorkspaceCommandFailed("tests", "no JUnit report was written", result)
        try:
            return read_junit_report(junit)
        except (ValueError, SyntaxError) as error:
            raise WorkspaceCommandFailed("tests", f"unreadable JUnit report: {error}", result) from error
