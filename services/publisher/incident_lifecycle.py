"""Reconciling the incident ModelGuard wants with the one DataHub holds: created, updated or left alone.

Rules (people own the lifecycle once they touch it):
- no incident yet: create it;
- resolved (only a person resolves; ModelGuard never does): leave it alone;
- status last set by someone else than ModelGuard (a person moved the stage): keep their status;
- otherwise the stage follows the finding (triage, investigation, work in progress once a validated patch
  is proposed);
- priority only ever rises automatically (a person may have raised it);
- assignees: the owners the finding names are added, nobody is removed;
- creation stamp and, when the content did not change, the links footer stay as they were.
The result is `noop` when the reconciled aspect equals the current one, so a repeat writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from datahub.metadata.schema_classes import IncidentInfoClass, IncidentStatusClass

from services.publisher.publication_links import content_of, same_content
from services.publisher.render_incident import ACTOR

RESOLVED = "RESOLVED"


@dataclass(frozen=True)
class Reconciled:
    status: Literal["created", "updated", "noop"]
    aspect: IncidentInfoClass | None
    reason: str


def _copy(info: IncidentInfoClass) -> IncidentInfoClass:
    return IncidentInfoClass.from_obj(info.to_obj())


def _same_status(a: IncidentStatusClass, b: IncidentStatusClass) -> bool:
    return (a.state, a.stage, a.message) == (b.state, b.stage, b.message)


def reconcile(current: IncidentInfoClass | None, desired: IncidentInfoClass) -> Reconciled:
    if current is None:
        return Reconciled("created", desired, "no incident under this URN yet")
    if current.status.state == RESOLVED:
        return Reconciled("noop", None, "resolved by a person; ModelGuard leaves it alone")
    merged = _copy(desired)
    merged.created = current.created
    merged.startedAt = current.startedAt
    if same_content(current.description, content_of(desired.description or "")):
        merged.description = current.description
    person_owns_status = current.status.lastUpdated.actor != ACTOR
    if person_owns_status or _same_status(current.status, desired.status):
        merged.status = current.status
    if current.priority is not None and (merged.priority is None or current.priority < merged.priority):
        merged.priority = current.priority
    kept = list(current.assignees or [])
    known = {a.actor for a in kept}
    added = [a for a in desired.assignees or [] if a.actor not in known]
    merged.assignees = (kept + added) or None
    if merged.to_obj() == current.to_obj():
        return Reconciled("noop", None, "DataHub already says this")
    reason = "status kept as a person set it" if person_owns_status else "finding changed"
    return Reconciled("updated", merged, reason)
