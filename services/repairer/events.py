"""The repair outcome in the contract's words (RepairProposed / RepairWithheld)."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from contracts.common import ArtifactRef
from contracts.events.diagnosis import DiagnosisAbstained, DiagnosisCompleted
from contracts.events.repair import PatchSummary, RepairProposed, RepairWithheld
from services.repairer.handler import RepairProposal, RepairWithholding
from services.repairer.outcome_owners import abstention_candidates, owners_to_tell, urns_to_notify

StorePatch = Callable[[bytes], ArtifactRef]


def withheld_after_abstention(abstained: DiagnosisAbstained) -> RepairWithheld:
    """No repair without a named cause; the owners told are those of the candidates' side (``outcome_owners``)."""
    summary = abstained.report.context_summary
    owners = owners_to_tell(summary, abstention_candidates(abstained.report))
    return RepairWithheld(
        **abstained.carried(),
        diagnosis=abstained.report,
        hypothesis=None,
        reason=f"the diagnosis abstained: {abstained.reason}",
        reason_code="diagnosis_abstained",
        owners_to_notify=urns_to_notify(summary, owners),
        owners=owners,
    )


def repair_event(
    diagnosed: DiagnosisCompleted, outcome: RepairProposal | RepairWithholding, store_patch: StorePatch
) -> BaseModel:
    common = {**diagnosed.carried(), "diagnosis": diagnosed.report}
    if isinstance(outcome, RepairWithholding):
        return RepairWithheld(
            **common,
            hypothesis=outcome.hypothesis,
            reason=f"{outcome.reason_code}: {outcome.reason}",
            violations=[f"{v.rule}: {v.detail}" for v in outcome.violations],
            reason_code=outcome.reason_code,
            owners_to_notify=list(outcome.owner_urns),
            owners=list(outcome.owners),
        )
    artifact = store_patch(outcome.unified_diff.encode())
    if artifact.sha256 != outcome.patch_sha256:
        raise ValueError("the stored patch does not match the proposal's digest")
    return RepairProposed(
        **common,
        hypothesis=diagnosed.hypothesis,
        confidence=diagnosed.confidence,
        patch=PatchSummary(
            strategy=outcome.strategy,
            files=list(outcome.files),
            added_lines=outcome.added_lines,
            removed_lines=outcome.removed_lines,
            diff=outcome.unified_diff,
            artifact=artifact,
        ),
    )
