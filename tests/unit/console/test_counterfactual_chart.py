"""The counterfactual chart is computed from the diagnosis's runs: one bar per run at its metric, taller for a
higher value, with the gate's baseline and threshold drawn where they fall."""

from __future__ import annotations

from contracts.common import GateResult
from contracts.events.diagnosis import DiagnosisReport, ExperimentRun
from modelguard.console.counterfactual_chart import counterfactual_chart

RUNS = {"base_on_approval": 0.787, "base_on_incident": 0.792, "candidate_on_approval": 0.71}


def _report(runs: list[ExperimentRun], counterfactual: dict[str, float | None] | None = None) -> DiagnosisReport:
    return DiagnosisReport(
        evidence=[],
        hypotheses=[],
        invalid_values={},
        suspect=None,
        context_digest="d" * 64,
        runs=runs,
        counterfactual=counterfactual or {},
    )


def _gate() -> GateResult:
    return GateResult(
        metric="f1",
        direction="higher_is_better",
        tolerance=0.02,
        baseline=0.787,
        candidate=0.71,
        delta=-0.077,
        regressed=True,
    )


def test_each_run_is_a_bar_at_its_metric_and_the_threshold_sits_below_the_baseline() -> None:
    runs = [ExperimentRun(name=n, metric=v, cached=False, content_digest="e" * 64) for n, v in RUNS.items()]
    runs.append(
        ExperimentRun(
            name="candidate_on_incident", metric=None, cached=False, failure="exit 1", content_digest="f" * 64
        )
    )
    chart = counterfactual_chart(_report(runs), _gate())
    assert chart is not None and chart.metric == "f1"
    bars = {b.name: b for b in chart.bars}
    assert [b.kind for b in chart.bars] == ["base", "base", "candidate", "candidate"]
    assert bars["base_on_incident"].y < bars["base_on_approval"].y < bars["candidate_on_approval"].y
    assert bars["candidate_on_incident"].value is None and bars["candidate_on_incident"].height == 0
    assert bars["base_on_approval"].lines == ("base", "on approval")
    rules = {r.kind: r for r in chart.rules}
    assert rules["baseline"].y < rules["threshold"].y and rules["threshold"].text == "gate threshold 0.767"
    assert chart.top <= min(b.y for b in chart.bars) and max(b.y for b in chart.bars) <= chart.bottom
    assert "candidate_on_incident failed" in chart.description


def test_without_runs_the_counterfactual_figures_are_drawn_and_without_either_no_chart() -> None:
    chart = counterfactual_chart(_report([], dict(RUNS)), None)
    assert chart is not None and [b.value for b in chart.bars] == list(RUNS.values()) and chart.rules == []
    assert counterfactual_chart(_report([]), _gate()) is None
