"""EvaluationReported 1.x, as its writers signed it (replaced by 2.0 in ``contracts/events/evaluation.py``): the
class keeps its name, so the committed v1 schema is the one 1.x was published with."""

from __future__ import annotations

from pydantic import Field

from contracts.common import Frozen, WorkspaceRefs


class EvaluationReported(Frozen):
    """A model CI run reports the metrics of a base and a candidate commit."""

    run_id: str = Field(min_length=1, max_length=128, description="CI run and attempt; a retry is a new run")
    workspace: WorkspaceRefs
    baseline_metrics: dict[str, float]
    candidate_metrics: dict[str, float]
    evaluation_command: list[str]
