"""The workspace's own commands, as named in the policy's ``workspace`` section: predict the held-out rows
(the referee scores them), evaluate the model (a self-reported metric), build the feature matrix, run the
tests. Outputs go outside the workspace so it stays unchanged."""

from __future__ import annotations

import contextlib
import math
import tempfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from libs.canonical_json import strict_loads
from libs.referee.held_out import HeldOutError
from libs.referee.held_out_splits import SPLITS
from libs.referee.predictions import MalformedPredictions, read_predictions
from libs.workspace.argv_template import render_argv
from libs.workspace.data_windows import DataWindow
from libs.workspace.junit_report import TestRun, read_junit_report
from libs.workspace.runner import CommandResult, run_command
from libs.workspace.scored_rows import ScoredRows

DEFAULT_TIMEOUT_S = 300.0
STDERR_TAIL_CHARS = 2000
ROW_COUNT_NAMES = frozenset({"train", "test", "eval"})

__all__ = [
    "EvaluationResult",
    "PredictionRun",
    "TestRun",
    "WorkspaceCommandFailed",
    "build_features",
    "evaluate",
    "predict",
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


@dataclass(frozen=True)
class PredictionRun:
    """What ``predict`` gave for one window's evaluation rows, with the labels ModelGuard kept back."""

    scored: ScoredRows
    command: CommandResult


def _template(spec: Mapping[str, Any], name: str) -> list[str]:
    if name not in spec:
        raise WorkspaceCommandFailed(name, "the policy's workspace section does not define it")
    return list(spec[name])


def _timeout(spec: Mapping[str, Any]) -> float:
    return float(spec.get("timeout_s", DEFAULT_TIMEOUT_S))


def _run(name: str, workspace: Path, spec: Mapping[str, Any], values: Mapping[str, str]) -> CommandResult:
    argv = render_argv(_template(spec, name), values)
    return run_command(argv, cwd=Path(workspace), timeout_s=_timeout(spec), image=spec.get("image"))


def parse_evaluation_output(
    stdout: str, allowed_metrics: Collection[str] | None = None
) -> tuple[dict[str, float], dict[str, int]]:
    """Read ``{"metrics": {...}}`` (optionally with ``"rows": {...}``) from the last non-empty line of ``stdout``.

    With ``allowed_metrics`` only those names may appear: any other name is refused without being repeated
    (a name is text the workspace chose, and must never travel on into a signed event)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise ValueError("evaluation printed nothing")
    document = strict_loads(lines[-1])  # no NaN, infinity or nesting past the parser: a ValueError
    if not isinstance(document, dict):
        raise ValueError("evaluation output must be a JSON object")
    if set(document) - {"metrics", "rows"}:
        raise ValueError(f"evaluation output may hold only 'metrics' and 'rows' ({len(document)} keys given)")
    metrics, rows = document.get("metrics"), document.get("rows", {})
    if not isinstance(metrics, dict) or not metrics or not isinstance(rows, dict):
        raise ValueError("evaluation output needs a non-empty 'metrics' object ('rows', if given, an object)")
    if allowed_metrics is not None:
        undeclared = [name for name in metrics if name not in allowed_metrics]
        if undeclared:
            raise ValueError(
                f"evaluation output holds {len(undeclared)} undeclared metric name(s); declared: "
                f"{', '.join(sorted(allowed_metrics))}"
            )
    if not all(isinstance(value, int | float) and not isinstance(value, bool) for value in metrics.values()):
        raise ValueError("every metric must be a number")
    parsed_metrics = {str(name): float(value) for name, value in metrics.items()}
    if not all(math.isfinite(value) for value in parsed_metrics.values()):
        raise ValueError("a metric is not finite")
    if set(rows) - ROW_COUNT_NAMES or not all(isinstance(v, int) and not isinstance(v, bool) for v in rows.values()):
        raise ValueError(f"'rows' may hold only {', '.join(sorted(ROW_COUNT_NAMES))} with whole numbers")
    return parsed_metrics, {str(name): int(value) for name, value in rows.items()}


def evaluate(
    workspace: Path, window: DataWindow, spec: Mapping[str, Any], allowed_metrics: Collection[str] | None = None
) -> EvaluationResult:
    """Train on the window's ``{train}`` rows and score its ``{eval}`` rows, with the workspace's command: a
    self-reported metric. ``allowed_metrics`` are the names the output may hold (the gate's, when given)."""
    result = _run("evaluate", workspace, spec, window.placeholders())
    if not result.succeeded:
        raise WorkspaceCommandFailed("evaluate", "non-zero exit", result)
    try:
        metrics, rows = parse_evaluation_output(result.stdout, allowed_metrics)
    except (ValueError, TypeError, AttributeError) as error:
        raise WorkspaceCommandFailed("evaluate", f"unreadable output: {error}", result) from error
    return EvaluationResult(metrics=metrics, rows=rows, command=result)


def predict(workspace: Path, window: DataWindow, spec: Mapping[str, Any], label: str) -> PredictionRun:
    """Train on the window's ``{train}`` rows and predict its evaluation rows, handed over without their
    ``label`` column as ``{features}``; the predictions are read strictly from ``{predictions}``."""
    with contextlib.ExitStack() as held_until_read:
        try:  # this window's split, made once in this process and shared (read-only) by the commands given it
            features, held = held_until_read.enter_context(SPLITS.features(window.eval, label))
        except HeldOutError as error:
            raise WorkspaceCommandFailed("predict", str(error)) from error
        written = held_until_read.enter_context(tempfile.TemporaryDirectory(prefix="modelguard-predictions-"))
        out = Path(written) / "predictions.csv"
        values = {"train": str(window.train.resolve()), "features": str(features), "predictions": str(out)}
        result = _run("predict", workspace, spec, values)
        if not result.succeeded:
            raise WorkspaceCommandFailed("predict", "non-zero exit", result)
        try:
            predictions = read_predictions(out, len(held))
        except MalformedPredictions as error:
            raise WorkspaceCommandFailed("predict", f"unreadable predictions: {error}", result) from error
    return PredictionRun(ScoredRows(labels=held, predictions=predictions), result)


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
            return replace(read_junit_report(junit), exit_status=result.returncode)
        except (ValueError, SyntaxError) as error:
            raise WorkspaceCommandFailed("tests", f"unreadable JUnit report: {error}", result) from error
