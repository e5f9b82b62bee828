"""The four counterfactual evaluations: each revision on each data window, run as trials (in parallel, cached)."""

from __future__ import annotations

from pathlib import Path

from libs.workspace.data_windows import DataWindow
from services.diagnoser.inputs import CounterfactualMetrics
from services.diagnoser.trials.runner import TrialRunner
from services.diagnoser.trials.trial import Trial

CELLS = ("base_on_approval", "base_on_incident", "candidate_on_approval", "candidate_on_incident")


def counterfactual_trials(base: Path, candidate: Path, approval: DataWindow, incident: DataWindow) -> list[Trial]:
    return [
        Trial("base_on_approval", base, approval),
        Trial("base_on_incident", base, incident),
        Trial("candidate_on_approval", candidate, approval),
        Trial("candidate_on_incident", candidate, incident),
    ]


def run_counterfactual_cells(
    runner: TrialRunner, base: Path, candidate: Path, approval: DataWindow, incident: DataWindow
) -> CounterfactualMetrics:
    outcomes = {o.name: o for o in runner.run(counterfactual_trials(base, candidate, approval, incident))}
    return CounterfactualMetrics(
        **{name: outcomes[name].metric for name in CELLS},
        failures={name: o.failure for name, o in outcomes.items() if o.failure is not None},
        scored={name: o.scored for name, o in outcomes.items() if o.scored is not None},
    )
