"""`modelguard bench diagnosis DIR`: run `investigate` on every bundle in DIR and score it against the
bundle's expected.json (read here only, never by the pipeline): hypothesis top-1 and top-3 accuracy,
outcome accuracy, abstention precision and recall, repairs and their sizes, wall time per bundle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from libs.bundle.load import is_bundle
from modelguard.investigation_outcome import OUTCOME_EXIT_CODES

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class BundleResult:
    bundle: str
    expected_outcome: str | None
    expected_hypothesis: str | None
    outcome: str | None
    hypothesis: str | None
    ranked: list[str]
    exit_code: int
    exit_code_matches: bool
    repair_strategy: str | None
    repair_lines: int | None
    seconds: float
    validation_seconds: float | None = None
    error: str | None = None

    @property
    def outcome_right(self) -> bool:
        return self.outcome is not None and self.outcome == self.expected_outcome

    @property
    def top1_right(self) -> bool:
        return self.hypothesis == self.expected_hypothesis

    @property
    def top3_right(self) -> bool:
        if self.expected_hypothesis is None:
            return self.hypothesis is None
        return self.expected_hypothesis in self.ranked[:3]


def investigate_bundle(bundle: Path, scratch: Path) -> BundleResult:
    expected = _expected(bundle)
    out = scratch / bundle.name
    env = {k: v for k, v in os.environ.items() if k != "MODELGUARD_HOME"}
    started = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-m", "modelguard", "investigate", str(bundle), "--out", str(out)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - started
    summary_path = out / "summary.json"
    if not summary_path.is_file():
        tail = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return BundleResult(
            bundle.name, expected.get("outcome"), expected.get("hypothesis"), None, None, [],
            completed.returncode, False, None, None, seconds, error=tail[:300],
        )  # fmt: skip
    summary = json.loads(summary_path.read_text())
    diagnosis = summary.get("diagnosis") or {}
    repair = summary.get("repair") or {}
    return BundleResult(
        bundle=bundle.name,
        expected_outcome=expected.get("outcome"),
        expected_hypothesis=expected.get("hypothesis"),
        outcome=summary["outcome"],
        hypothesis=diagnosis.get("hypothesis"),
        ranked=[item["kind"] for item in diagnosis.get("ranked", [])],
        exit_code=completed.returncode,
        exit_code_matches=completed.returncode == OUTCOME_EXIT_CODES[summary["outcome"]],
        repair_strategy=repair.get("strategy"),
        repair_lines=repair.get("lines"),
        seconds=round(seconds, 2),
        validation_seconds=validation_seconds(out / "events"),
    )


def validation_seconds(events_dir: Path) -> float | None:
    """From the proposal to the validator's verdict, as the signed events record it."""
    times: dict[str, datetime] = {}
    for path in sorted(events_dir.glob("*.json")):
        meta = json.loads(path.read_text())["event"]["meta"]
        times[meta["event_type"]] = datetime.fromisoformat(meta["occurred_at"])
    verdict = times.get("RepairValidated") or times.get("ValidationFailed")
    proposed = times.get("RepairProposed")
    return round((verdict - proposed).total_seconds(), 2) if verdict and proposed else None


def _expected(bundle: Path) -> dict[str, Any]:
    path = bundle / "expected.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def score(results: list[BundleResult]) -> dict[str, Any]:
    scored = [r for r in results if r.expected_outcome is not None]
    with_cause = [r for r in scored if r.expected_hypothesis is not None]
    abstained = [r for r in scored if r.outcome == "abstained"]
    should_abstain = [r for r in scored if r.expected_outcome == "abstained"]
    repairs = [r for r in scored if r.repair_strategy is not None]
    return {
        "bundles": len(results),
        "scored": len(scored),
        "top1_accuracy": _ratio(sum(r.top1_right for r in with_cause), len(with_cause)),
        "top3_accuracy": _ratio(sum(r.top3_right for r in with_cause), len(with_cause)),
        "outcome_accuracy": _ratio(sum(r.outcome_right for r in scored), len(scored)),
        "abstention_precision": _ratio(sum(r.expected_outcome == "abstained" for r in abstained), len(abstained)),
        "abstention_recall": _ratio(sum(r.outcome == "abstained" for r in should_abstain), len(should_abstain)),
        "repairs_proposed": len(repairs),
        "repairs_validated": sum(r.outcome == "repair_validated" for r in scored),
        "repairs_withheld": sum(r.outcome in ("repair_withheld", "validation_failed") for r in scored),
        "lines_per_repair": [r.repair_lines for r in repairs],
        "validation_seconds_per_repair": [r.validation_seconds for r in repairs],
        "exit_codes_match": all(r.exit_code_matches for r in results if r.error is None),
        "errors": sum(r.error is not None for r in results),
        "seconds_per_bundle": [r.seconds for r in results],
    }


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def run_diagnosis_bench(folder: Path, as_json: bool) -> int:
    bundles = [path for path in sorted(Path(folder).iterdir()) if is_bundle(path)]
    if not bundles:
        print(f"no bundles (folders with bundle.yaml) in {folder}", file=sys.stderr)
        return 1
    results = []
    with tempfile.TemporaryDirectory(prefix="modelguard-bench-diagnosis-") as scratch:
        for bundle in bundles:
            result = investigate_bundle(bundle, Path(scratch))
            results.append(result)
            if not as_json:
                print(_line(result), flush=True)
    figures = score(results)
    if as_json:
        print(json.dumps({"summary": figures, "bundles": [asdict(r) for r in results]}, indent=2))
    else:
        print(
            f"\n{figures['scored']} scored bundles: top-1 {figures['top1_accuracy']}, "
            f"top-3 {figures['top3_accuracy']}, outcome {figures['outcome_accuracy']}, "
            f"abstention precision {figures['abstention_precision']} recall {figures['abstention_recall']}; "
            f"repairs proposed {figures['repairs_proposed']}, validated {figures['repairs_validated']}, "
            f"withheld {figures['repairs_withheld']}, lines {figures['lines_per_repair']}, "
            f"validation seconds {figures['validation_seconds_per_repair']}; "
            f"errors {figures['errors']}"
        )
    return 0 if figures["errors"] == 0 else 1


def _line(r: BundleResult) -> str:
    mark = "ok " if r.outcome_right and r.top1_right else "MISS"
    got = f"{r.outcome}/{r.hypothesis}" if r.error is None else f"error: {r.error}"
    repair = (
        f" repair {r.repair_strategy} ({r.repair_lines} lines, validated in {r.validation_seconds}s)"
        if r.repair_strategy
        else ""
    )
    expected = f"{r.expected_outcome}/{r.expected_hypothesis}"
    return f"{mark} {r.bundle:34} expected {expected}  got {got}{repair}  {r.seconds:.1f}s"
