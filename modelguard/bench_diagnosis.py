"""`modelguard bench diagnosis DIR...`: run `investigate` on every bundle of each folder (a "source": the seeded
generator's suite, the hand-made repositories) and score it against the bundle's expected.json (read here only,
never by the pipeline): hypothesis top-1 and top-3 accuracy, outcome accuracy, abstention precision and recall,
validated repairs where none is right, repairs and their sizes, repairs that change a file the reviewer's fix
does not, evaluations per incident and the diagnosis's
wall time. Each source is scored apart, then all together."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from contracts.catalogue import Hypothesis, RepairStrategy
from contracts.outcomes import Outcome
from libs.bundle.load import is_bundle
from modelguard.investigation_outcome import OUTCOME_EXIT_CODES

REPO_ROOT = Path(__file__).resolve().parent.parent
MAX_REPAIR_LINES = 10
REFERENCE_FACTOR = 1.5
OUTCOMES_THAT_NOTIFY = (Outcome.REPAIR_WITHHELD, Outcome.NO_CODE_REPAIR, Outcome.ABSTAINED)


@dataclass(frozen=True)
class BundleResult:
    bundle: str
    expected_outcome: str | None
    expected_hypothesis: Hypothesis | None
    outcome: str | None
    hypothesis: Hypothesis | None
    ranked: list[Hypothesis]
    exit_code: int
    exit_code_matches: bool
    repair_strategy: RepairStrategy | None
    repair_lines: int | None
    seconds: float
    validation_seconds: float | None = None
    error: str | None = None
    source: str = ""
    expected_strategy: RepairStrategy | None = None
    diagnosis_seconds: float | None = None
    evaluations: dict[str, int] | None = None
    """Model evaluations each phase ran (ci, detector, diagnoser, validator), from the signed events."""
    reference_fix_lines: int | None = None
    """Changed lines (added + removed) of the fix a reviewer would write, from expected.json."""
    owners: int = 0
    """Owners the outcome names to notify (summary.json's ``owners``)."""
    repair_files: tuple[str, ...] = ()
    """The files the proposed patch changes (summary.json's ``repair.files``)."""
    reference_fix_files: tuple[str, ...] | None = None
    """The files the reviewer's fix changes (the cause's files), from expected.json."""

    @property
    def total_evaluations(self) -> int | None:
        return sum(self.evaluations.values()) if self.evaluations is not None else None

    @property
    def wrongly_repaired(self) -> bool:
        """A validated repair where the right answer is none: a data cause, generated code, an abstention."""
        return self.outcome == Outcome.REPAIR_VALIDATED and self.expected_outcome != Outcome.REPAIR_VALIDATED

    @property
    def oversized_repair(self) -> bool:
        """A validated repair larger than MAX_REPAIR_LINES or REFERENCE_FACTOR times the reviewer's fix."""
        if self.outcome != Outcome.REPAIR_VALIDATED or self.repair_lines is None:
            return False
        limit = MAX_REPAIR_LINES
        if self.reference_fix_lines is not None:
            limit = min(limit, int(REFERENCE_FACTOR * self.reference_fix_lines))
        return self.repair_lines > limit

    @property
    def repair_outside_cause(self) -> bool:
        """A validated repair that changes a file the reviewer's fix does not (the cause's files)."""
        if self.outcome != Outcome.REPAIR_VALIDATED or self.reference_fix_files is None:
            return False
        return not set(self.repair_files) <= set(self.reference_fix_files)

    @property
    def tells_nobody(self) -> bool:
        """A withheld repair or a cause in the data (or an abstention) that names no owner to notify."""
        return self.outcome in OUTCOMES_THAT_NOTIFY and self.owners == 0

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


def investigate_bundle(bundle: Path, scratch: Path, source: str = "") -> BundleResult:
    expected = _expected(bundle)
    out = scratch / source.replace("/", "_") / bundle.name
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
            bundle.name, expected.get("outcome"), hypothesis_named(expected.get("hypothesis")), None, None, [],
            completed.returncode, False, None, None, seconds, error=tail[:300], source=source,
        )  # fmt: skip
    summary = json.loads(summary_path.read_text())
    diagnosis = summary.get("diagnosis") or {}
    repair = summary.get("repair") or {}
    return BundleResult(
        bundle=bundle.name,
        expected_outcome=expected.get("outcome"),
        expected_hypothesis=hypothesis_named(expected.get("hypothesis")),
        outcome=summary["outcome"],
        hypothesis=hypothesis_named(diagnosis.get("hypothesis")),
        ranked=[Hypothesis(item["kind"]) for item in diagnosis.get("ranked", [])],
        exit_code=completed.returncode,
        exit_code_matches=completed.returncode == OUTCOME_EXIT_CODES[summary["outcome"]],
        repair_strategy=strategy_named(repair.get("strategy")),
        repair_lines=repair.get("lines"),
        seconds=round(seconds, 2),
        validation_seconds=validation_seconds(out / "events"),
        source=source,
        expected_strategy=strategy_named(expected.get("repair_strategy")),
        diagnosis_seconds=phase_seconds(
            out / "events", "ContextCollected", ("DiagnosisCompleted", "DiagnosisAbstained")
        ),
        evaluations=evaluations_by_phase(out / "events"),
        reference_fix_lines=expected.get("reference_fix_lines"),
        owners=len(summary.get("owners") or []),
        repair_files=tuple(repair.get("files") or ()),
        reference_fix_files=tuple(expected["reference_fix_files"]) if "reference_fix_files" in expected else None,
    )


def hypothesis_named(name: str | None) -> Hypothesis | None:
    """The catalogue's hypothesis a summary or expected.json names (None: none named)."""
    return Hypothesis(name) if name is not None else None


def strategy_named(name: str | None) -> RepairStrategy | None:
    """The catalogue's repair strategy a summary or expected.json names (None: none named)."""
    return RepairStrategy(name) if name is not None else None


def _events(events_dir: Path) -> dict[str, dict[str, Any]]:
    """Each event type's last event of the run (the signed envelope's ``event``)."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(events_dir.glob("*.json")):
        event = json.loads(path.read_text())["event"]
        found[event["meta"]["event_type"]] = event
    return found


def phase_seconds(events_dir: Path, start: str, ends: tuple[str, ...]) -> float | None:
    """From the ``start`` event to the first of ``ends``, as the signed events record them."""
    events = _events(events_dir)
    end = next((events[name] for name in ends if name in events), None)
    if start not in events or end is None:
        return None
    began = datetime.fromisoformat(events[start]["meta"]["occurred_at"])
    return round((datetime.fromisoformat(end["meta"]["occurred_at"]) - began).total_seconds(), 2)


def validation_seconds(events_dir: Path) -> float | None:
    """From the proposal to the validator's verdict, as the signed events record it."""
    return phase_seconds(events_dir, "RepairProposed", ("RepairValidated", "ValidationFailed"))


def evaluations_by_phase(events_dir: Path) -> dict[str, int]:
    """How many model evaluations each phase ran, as its event says: the CI's two self-reported runs (when it
    reported figures), the detector's two referee runs, the diagnosis's own count, the validator's re-run."""
    events = _events(events_dir)
    reported = events.get("EvaluationReported", {}).get("payload", {})
    gate: dict[str, Any] = next((e["payload"]["gate"] for name, e in events.items() if name in GATE_EVENTS), {})
    diagnosis: dict[str, Any] = next(
        (events[name]["payload"]["report"] for name in ("DiagnosisCompleted", "DiagnosisAbstained") if name in events),
        {},
    )
    validation = next((events[name]["payload"]["validation"] for name in VALIDATION_EVENTS if name in events), None)
    ran = [c for c in (validation or {}).get("checks", []) if c["name"] == "evaluation"]
    return {
        "ci": 2 if reported.get("claimed") and gate.get("metric_source") != "referee" else 0,
        "detector": 2 if gate.get("metric_source") == "referee" else 0,
        "diagnoser": int(diagnosis.get("evaluations") or 0),
        "validator": int(bool(ran) and ran[0]["values"].get("status") in ("passed", "failed")),
    }


GATE_EVENTS = ("RegressionDetected", "EvaluationPassed")
VALIDATION_EVENTS = ("RepairValidated", "ValidationFailed")


class ExpectedFileError(ValueError):
    """A bundle's expected.json cannot be read, or names what the catalogue does not hold; one line."""


def _expected(bundle: Path) -> dict[str, Any]:
    path = bundle / "expected.json"
    if not path.is_file():
        return {}
    try:
        expected = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ExpectedFileError(f"{path}: not readable JSON: {' '.join(str(exc).split())}") from None
    if not isinstance(expected, dict):
        raise ExpectedFileError(f"{path}: the expected outcome is a JSON object")
    for key, members in (("hypothesis", Hypothesis), ("repair_strategy", RepairStrategy)):
        named = expected.get(key)
        if named is not None and named not in {m.value for m in members}:
            known = ", ".join(m.value for m in members)
            raise ExpectedFileError(f"{path}: {key} {named!r} is not in the catalogue ({known})")
    return expected


def score(results: list[BundleResult]) -> dict[str, Any]:
    scored = [r for r in results if r.expected_outcome is not None]
    with_cause = [r for r in scored if r.expected_hypothesis is not None]
    abstained = [r for r in scored if r.outcome == Outcome.ABSTAINED]
    should_abstain = [r for r in scored if r.expected_outcome == Outcome.ABSTAINED]
    repairs = [r for r in scored if r.repair_strategy is not None]
    return {
        "bundles": len(results),
        "scored": len(scored),
        "top1_accuracy": _ratio(sum(r.top1_right for r in with_cause), len(with_cause)),
        "top3_accuracy": _ratio(sum(r.top3_right for r in with_cause), len(with_cause)),
        "outcome_accuracy": _ratio(sum(r.outcome_right for r in scored), len(scored)),
        "abstention_precision": _ratio(sum(r.expected_outcome == Outcome.ABSTAINED for r in abstained), len(abstained)),
        "abstention_recall": _ratio(sum(r.outcome == Outcome.ABSTAINED for r in should_abstain), len(should_abstain)),
        "repairs_proposed": len(repairs),
        "repairs_validated": sum(r.outcome == Outcome.REPAIR_VALIDATED for r in scored),
        "repairs_withheld": sum(r.outcome in (Outcome.REPAIR_WITHHELD, Outcome.VALIDATION_FAILED) for r in scored),
        "lines_per_repair": [r.repair_lines for r in repairs],
        "validation_seconds_per_repair": [r.validation_seconds for r in repairs],
        "validated_where_none_is_right": [r.bundle for r in scored if r.wrongly_repaired],
        "oversized_repairs": [r.bundle for r in scored if r.oversized_repair],
        "repairs_outside_the_cause": [r.bundle for r in scored if r.repair_outside_cause],
        "naming_no_owner": [r.bundle for r in scored if r.tells_nobody],
        "exit_codes_match": all(r.exit_code_matches for r in results if r.error is None),
        "errors": sum(r.error is not None for r in results),
        "seconds_per_bundle": [r.seconds for r in results],
        "evaluations_per_incident": _mean([r.total_evaluations for r in results]),
        "diagnosis_evaluations_per_incident": _mean([(r.evaluations or {}).get("diagnoser") for r in results]),
        "median_diagnosis_seconds": _median([r.diagnosis_seconds for r in results]),
    }


def _mean(values: list[int | float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.fmean(known), 2) if known else None


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 2) if known else None


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def run_diagnosis_bench(folders: Sequence[Path], as_json: bool) -> int:
    sources = {str(folder): [path for path in sorted(Path(folder).iterdir()) if is_bundle(path)] for folder in folders}
    if not any(sources.values()):
        print(f"no bundles (folders with bundle.yaml) in {', '.join(map(str, folders))}", file=sys.stderr)
        return 1
    for bundle in (b for bundles in sources.values() for b in bundles):
        _expected(bundle)  # a bad expected.json stops the bench before any bundle runs, not half way
    results: list[BundleResult] = []
    with tempfile.TemporaryDirectory(prefix="modelguard-bench-diagnosis-") as scratch:
        for source, bundles in sources.items():
            for bundle in bundles:
                result = investigate_bundle(bundle, Path(scratch), source)
                results.append(result)
                if not as_json:
                    print(bundle_line(result), flush=True)
    by_source = {source: score([r for r in results if r.source == source]) for source in sources if sources[source]}
    together = score(results)
    if as_json:
        document = {"sources": by_source, "summary": together, "bundles": [asdict(r) for r in results]}
        print(json.dumps(document, indent=2))
    else:
        for source, figures in by_source.items():
            print(f"\n{source}: {_summary_line(figures)}")
        if len(by_source) > 1:
            print(f"\nall sources: {_summary_line(together)}")
    return 0 if together["errors"] == 0 else 1


def _summary_line(figures: dict[str, Any]) -> str:
    return (
        f"{figures['scored']} scored bundles: top-1 {figures['top1_accuracy']}, "
        f"top-3 {figures['top3_accuracy']}, outcome {figures['outcome_accuracy']}, "
        f"abstention precision {figures['abstention_precision']} recall {figures['abstention_recall']}; "
        f"validated where none is right {figures['validated_where_none_is_right'] or 'none'}; "
        f"repairs proposed {figures['repairs_proposed']}, validated {figures['repairs_validated']}, "
        f"withheld {figures['repairs_withheld']}, lines {figures['lines_per_repair']}, "
        f"larger than {MAX_REPAIR_LINES} lines or {REFERENCE_FACTOR}x the reviewer's fix "
        f"{figures['oversized_repairs'] or 'none'}; "
        f"changing a file the reviewer's fix does not {figures['repairs_outside_the_cause'] or 'none'}; "
        f"withheld, data-caused or abstained naming no owner {figures['naming_no_owner'] or 'none'}; "
        f"evaluations per incident {figures['evaluations_per_incident']} "
        f"(diagnosis {figures['diagnosis_evaluations_per_incident']}), "
        f"median diagnosis {figures['median_diagnosis_seconds']} s; errors {figures['errors']}"
    )


def bundle_line(r: BundleResult) -> str:
    mark = "ok " if r.outcome_right and r.top1_right else "MISS"
    got = f"{r.outcome}/{r.hypothesis}" if r.error is None else f"error: {r.error}"
    repair = (
        f" repair {r.repair_strategy} ({r.repair_lines} lines{_reference(r)}, validated in {r.validation_seconds}s)"
        if r.repair_strategy
        else ""
    )
    expected = f"{r.expected_outcome}/{r.expected_hypothesis}"
    runs = f" {r.total_evaluations} evaluations, diagnosis {r.diagnosis_seconds}s" if r.evaluations else ""
    return f"{mark} {r.bundle:34} expected {expected}  got {got}{repair}  {r.seconds:.1f}s{runs}"


def _reference(r: BundleResult) -> str:
    return f" vs reviewer's {r.reference_fix_lines}" if r.reference_fix_lines is not None else ""
