"""What the diagnosis works on: both revisions, both data windows, the workspace config, the four
counterfactual metrics and what DataHub knows. Plain paths and values; producing them is the wiring's job."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from contracts.context_snapshot import ContextSnapshot
from libs.policy.model_policy import GatePolicy, WorkspacePolicy
from libs.workspace.data_windows import DataWindow
from libs.workspace.scored_rows import ScoredRows
from services.diagnoser.trials.runner import TrialRunner

__all__ = [
    "CounterfactualMetrics",
    "DataWindow",
    "GateSpec",
    "IncidentInputs",
    "MetadataChangeRecord",
    "WorkspaceConfig",
]

Direction = Literal["higher_is_better", "lower_is_better"]


GateSpec = GatePolicy
"""The gate: metric, direction, tolerance."""

WorkspaceConfig = WorkspacePolicy
"""The workspace's ModelGuard config (``bundle.yaml``'s ``workspace`` section); ``command_spec()`` gives the
mapping ``libs.workspace.commands`` reads."""


@dataclass(frozen=True)
class CounterfactualMetrics:
    """The gate metric for each (revision, window) pair; None when that evaluation could not run."""

    base_on_approval: float | None
    base_on_incident: float | None
    candidate_on_approval: float | None
    candidate_on_incident: float | None
    failures: Mapping[str, str] = field(default_factory=dict)
    """Why a pair has no metric: the pair's name -> the failure's last line (no scratch paths)."""
    scored: Mapping[str, ScoredRows] = field(default_factory=dict)
    """With the referee: each pair's rows, labels and predictions, so metrics can be recomputed without a run."""


@dataclass(frozen=True)
class MetadataChangeRecord:
    """One MetadataChangeLog-shaped record: an aspect before and after (plain JSON objects)."""

    entity_urn: str
    entity_type: str
    aspect: str
    change_type: str
    time_ms: int | None
    actor: str | None
    previous: Mapping[str, Any] | None
    current: Mapping[str, Any] | None


@dataclass(frozen=True)
class IncidentInputs:
    base_dir: Path
    candidate_dir: Path
    approval: DataWindow
    incident: DataWindow
    workspace: WorkspaceConfig
    gate: GateSpec
    metrics: CounterfactualMetrics | None = None
    """The four pairs when already measured; else the diagnosis runs them with ``trials``."""
    trials: TrialRunner | None = None
    """Runs the diagnosis's evaluations (the four pairs, the change and data experiments); None: only
    ``metrics`` are known and the finer experiments are reported as unavailable."""
    context: ContextSnapshot | None = None
    changes: tuple[MetadataChangeRecord, ...] = ()
    dataset_urn: str | None = None
