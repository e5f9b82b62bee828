"""Evidence from the DataHub context snapshot (``contracts.context_snapshot.ContextSnapshot``, or its
JSON-mode dict as carried by ``ContextCollected``).

- the lineage into the model: which data jobs lie on it, which workspace files they run (a job's
  ``code_path`` custom property) and whether the change touched them;
- assertions on datasets of that lineage and their latest result;
- open incidents on datasets of that lineage.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from contracts.context_snapshot import AssertionSignal, ContextSnapshot, IncidentSignal, LineagePath
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence

CODE_PATH_PROPERTIES = ("code_path", "code_paths")
PASSING_RESULTS = frozenset({"SUCCESS"})
FAILING_RESULTS = frozenset({"FAILURE", "ERROR"})
CLOSED_INCIDENT_STATES = frozenset({"RESOLVED", "CLOSED"})


def as_snapshot(context: ContextSnapshot | Mapping[str, Any] | None) -> ContextSnapshot | None:
    if context is None or isinstance(context, ContextSnapshot):
        return context
    return ContextSnapshot.model_validate_json(json.dumps(dict(context)))


def metadata_evidence(
    snapshot: ContextSnapshot | None, changed_files: Collection[str], feature_files: Collection[str]
) -> list[Evidence]:
    if snapshot is None:
        return []
    paths = model_lineage_paths(snapshot)
    on_path = {urn for path in paths for urn in path.urns}
    evidence: list[Evidence] = []
    if paths:
        evidence.append(lineage_evidence(snapshot, paths, changed_files, feature_files))
    for assertion in snapshot.assertions:
        if on_path & set(assertion.asserted_entities):
            evidence.append(assertion_evidence(assertion))
    for incident in snapshot.incidents:
        if on_path & set(incident.entities) and (incident.state or "").upper() not in CLOSED_INCIDENT_STATES:
            evidence.append(incident_evidence(incident))
    return evidence


def model_lineage_paths(snapshot: ContextSnapshot) -> list[LineagePath]:
    """Upstream lineage paths that end at the model, most upstream urn first."""
    return [path for path in snapshot.upstream_paths if path.urns[-1] == snapshot.model_urn]


def job_code_paths(snapshot: ContextSnapshot, job_urn: str) -> list[str]:
    entity = snapshot.entity(job_urn)
    if entity is None:
        return []
    return [
        path.strip()
        for name in CODE_PATH_PROPERTIES
        for path in entity.properties.get(name, "").split(",")
        if path.strip()
    ]


def lineage_evidence(
    snapshot: ContextSnapshot,
    paths: list[LineagePath],
    changed_files: Collection[str],
    feature_files: Collection[str],
) -> Evidence:
    jobs = sorted({urn for path in paths for urn in path.urns if _entity_type(urn) == "dataJob"})
    code_by_job = {job: job_code_paths(snapshot, job) for job in jobs}
    changed_jobs = {job: sorted(set(code) & set(changed_files)) for job, code in code_by_job.items()}
    changed_jobs = {job: files for job, files in changed_jobs.items() if files}
    changed_on_path = sorted({file for files in changed_jobs.values() for file in files})
    shown = next((path for path in paths if changed_jobs.keys() & set(path.urns)), paths[0])
    names = [_display_name(snapshot, urn) for urn in shown.urns]
    return make_evidence(
        EvidenceKind.LINEAGE_PATH,
        subject=snapshot.model_urn,
        values={
            "path": list(shown.urns),
            "path_names": names,
            "paths_considered": len(paths),
            "data_jobs": jobs,
            "job_code_paths": code_by_job,
            "code_paths_known": any(code_by_job.values()),
            "changed_files_on_path": changed_on_path,
            "changed_feature_files_on_path": [file for file in changed_on_path if file in feature_files],
            "changed_other_files_on_path": [file for file in changed_on_path if file not in feature_files],
        },
        summary=" -> ".join(names)
        + (
            f"; changed code on this lineage: {', '.join(changed_on_path)}"
            if changed_on_path
            else "; no changed file is the code of a job on this lineage"
        ),
        source=EvidenceSource.METADATA,
    )


def assertion_evidence(assertion: AssertionSignal) -> Evidence:
    status = assertion_status(assertion.latest_result)
    fields = [field_name(urn) for urn in assertion.fields]
    return make_evidence(
        EvidenceKind.ASSERTION_RESULT,
        subject=assertion.assertion_urn,
        values={
            "datasets": list(assertion.asserted_entities),
            "fields": fields,
            "status": status,
            "latest_result": assertion.latest_result,
            "result_time": assertion.result_time,
            "description": assertion.description,
        },
        summary=f"assertion '{assertion.description or assertion.assertion_urn}' on "
        f"{', '.join(fields) or 'the dataset'} is {status}",
        source=EvidenceSource.METADATA,
    )


def incident_evidence(incident: IncidentSignal) -> Evidence:
    return make_evidence(
        EvidenceKind.UPSTREAM_INCIDENT,
        subject=incident.incident_urn,
        values={
            "entities": list(incident.entities),
            "state": incident.state,
            "type": incident.incident_type,
            "title": incident.title,
        },
        summary=f"open incident on the model's lineage: {incident.title or incident.incident_urn}",
        source=EvidenceSource.METADATA,
    )


def assertion_status(latest_result: str | None) -> str:
    result = (latest_result or "").upper()
    if result in PASSING_RESULTS:
        return "passing"
    if result in FAILING_RESULTS:
        return "failing"
    return "unknown"


def field_name(field_urn: str) -> str:
    """``urn:li:schemaField:(<dataset urn>,account_age_months)`` -> ``account_age_months``."""
    if field_urn.startswith("urn:li:schemaField:(") and field_urn.endswith(")"):
        return field_urn[: -len(")")].rsplit(",", 1)[-1]
    return field_urn


def assertion_fields(snapshot: ContextSnapshot | None) -> list[str]:
    """Fields named by the snapshot's assertions: a fallback for choosing the source column to check."""
    if snapshot is None:
        return []
    return [field_name(urn) for assertion in snapshot.assertions for urn in assertion.fields]


def _entity_type(urn: str) -> str:
    parts = urn.split(":", 3)
    return parts[2] if len(parts) > 2 else ""


def _display_name(snapshot: ContextSnapshot, urn: str) -> str:
    entity = snapshot.entity(urn)
    return entity.name if entity is not None and entity.name else urn
