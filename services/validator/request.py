"""What one validation is asked: the candidate tree, the patch, the data and the typed policy it is judged by."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from libs.policy.model_policy import GatePolicy, WorkspacePolicy
from libs.workspace.data_windows import DataWindow


@dataclass(frozen=True)
class ValidationRequest:
    """``validate_repair``'s input.

    ``evaluate_placeholders`` fill the evaluate command (default ``{"data": data_csv}``; for an incident with
    data windows, the incident window's ``{"train": ..., "eval": ...}``); ``features_data`` is what the
    features command reads for the data check (default ``data_csv``); ``diagnosed_invalid_by_column`` are the
    invalid feature values the diagnosis counted per column (they must be gone; no column may have new ones).
    ``window`` is the data window the evaluation re-runs on: with ``predict`` ModelGuard computes the metric
    from its held-back labels; ``require_predict`` (the policy's ``validation.require_predict``) refuses a
    self-reported one. ``same_window_reference`` is the base revision's metric on the incident window, when the
    diagnosis put the cause in the code; ``approved_invalid_total`` the base revision's invalid values there.
    """

    candidate_dir: Path
    patch: str
    """The unified diff text."""
    data_csv: Path
    workspace: WorkspacePolicy
    gate: GatePolicy
    baseline_metrics: Mapping[str, float]
    expected_patch_sha256: str | None = None
    evaluate_placeholders: Mapping[str, str] | None = None
    features_data: Path | None = None
    diagnosed_invalid_by_column: Mapping[str, int] | None = None
    same_window_reference: float | None = None
    approved_invalid_total: int | None = None
    window: DataWindow | None = None
    require_predict: bool = False
    parallel: int = 1
    """How many independent steps may run at once: 2 runs the tests beside the evaluation (the same report, sooner);
    1 runs every step one after another."""
