"""Upstream risk detection: a DataHub change (as a decoded MCL) that can hurt models downstream.

Causes (``UpstreamRiskDetected.cause``):

- ``schema_change``: a schemaMetadata whose columns changed against ``previousAspectValue`` (else the
  mirror's stored value): removed, renamed (heuristic), type or nullability changed
  (:mod:`services.context.upstream_schema_diff`); traced field-level from the changed columns;
- ``assertion_failed``: an assertionRunEvent that completed with result FAILURE; traced from the
  assertee, field-level from the assertion's columns (assertionInfo in the mirror) when it names some;
- ``job_changed``: a data job's dataJobInfo or dataJobInputOutput changed against its previous value
  (:mod:`services.context.upstream_job_diff`); traced from the job and from any output it gained;
- ``incident_raised``: an incidentInfo that is ACTIVE and was not ACTIVE before; traced from every
  entity it is raised on (a schemaField entity field-level).

A risk is emitted only when at least one (non-removed) model is downstream. Its ``change_fingerprint``
is sha256 of the canonical JSON of (urn, aspect, cause, normalised change): the same change delivered
twice, or re-ingested unchanged, has the same fingerprint; :class:`RiskDeduplicator` remembers them.
The normalised change holds no timestamps, except that an assertion failure is identified by its run id
(each failing run is a new signal; a redelivered run is not).

Order matters: detection reads the mirror's state *before* the MCL is applied (the previous schema
when the MCL carries none; the job's old outputs). :func:`handle_upstream_mcl` does detect, apply,
deduplicate in that order. Typed SDK decoding happens only after the cheap checks (the aspect really
changed, a model is downstream at entity level), so the stream of changes to assets no model depends
on costs little.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from datahub.metadata.schema_classes import (
    AssertionInfoClass,
    AssertionResultTypeClass,
    AssertionRunEventClass,
    AssertionRunStatusClass,
    ChangeTypeClass,
    IncidentInfoClass,
    IncidentStateClass,
    SchemaMetadataClass,
)

from contracts.events.context import AffectedModel, UpstreamRiskDetected
from libs.canonical_json import canonical_bytes, sha256_hex
from libs.datahub.mcl.aspect_facts_json import lineage_pairs_of_json
from libs.datahub.mcl.events import DecodedMcl
from libs.datahub.mcl.impact import Impact, ImpactReport
from libs.datahub.mcl.mirror import Applied, MetadataMirror
from libs.datahub.mcl.mirror_impact import merge_reports
from libs.datahub.mcl.schema_field_urn import column_of
from services.context.upstream_job_diff import INFO_ASPECT, IO_ASPECT, info_change, input_output_change
from services.context.upstream_risk_dedup import SeenRisks
from services.context.upstream_schema_diff import schema_changes

CAUSE_SCHEMA_CHANGE = "schema_change"
CAUSE_ASSERTION_FAILED = "assertion_failed"
CAUSE_JOB_CHANGED = "job_changed"
CAUSE_INCIDENT_RAISED = "incident_raised"

# Change types whose MCL says something changed (RESTATE re-sends an unchanged aspect; DELETE is not a risk).
_EVALUATED_CHANGE_TYPES = frozenset(
    {
        ChangeTypeClass.UPSERT,
        ChangeTypeClass.CREATE,
        ChangeTypeClass.CREATE_ENTITY,
        ChangeTypeClass.UPDATE,
        ChangeTypeClass.PATCH,
    }
)


@dataclass(frozen=True)
class Trace:
    """Where to walk downstream from: an asset and, optionally, its changed columns."""

    urn: str
    field_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finding:
    cause: str
    asset_urn: str
    change: dict[str, Any]
    """The normalised change: what the fingerprint is computed from (no timestamps unless they identify it)."""
    summary: str
    traces: tuple[Trace, ...]
    source_urn: str | None = None
    """The entity that reported the change, when it is not the asset: the assertion or the incident."""


def handle_upstream_mcl(mcl: DecodedMcl, mirror: MetadataMirror, dedup: SeenRisks) -> UpstreamRiskDetected | None:
    """Detect against the mirror's current state, apply the MCL, drop a change already reported.

    The caller publishes the result and then calls ``dedup.remember(risk.change_fingerprint, now)``.
    """
    return apply_upstream_mcl(mcl, mirror, dedup)[0]


def apply_upstream_mcl(
    mcl: DecodedMcl, mirror: MetadataMirror, dedup: SeenRisks
) -> tuple[UpstreamRiskDetected | None, Applied]:
    """:func:`handle_upstream_mcl`, and what the mirror did with the MCL (applied, or skipped and why)."""
    risk = detect_upstream_risk(mcl, mirror)
    applied = mirror.apply(mcl)
    if risk is None or dedup.seen(risk.change_fingerprint):
        return None, applied
    return risk, applied


def detect_upstream_risk(mcl: DecodedMcl, mirror: MetadataMirror) -> UpstreamRiskDetected | None:
    """The risk an MCL signals, or None (nothing changed, not a risk cause, or no model downstream).

    Call before ``mirror.apply(mcl)``. Raises MclDecodeError when an aspect it needs does not decode.
    """
    if mcl.change_type not in _EVALUATED_CHANGE_TYPES or mcl.aspect_json is None or mcl.aspect_name is None:
        return None
    detect = _DETECTORS.get(mcl.aspect_name)
    finding = detect(mcl, mirror) if detect is not None else None
    if finding is None:
        return None
    report = _merged_report(mirror, finding.traces)
    if not report.impacts:
        return None
    return UpstreamRiskDetected(
        cause=finding.cause,
        asset_urn=finding.asset_urn,
        change_summary=_summary(finding, report),
        change_fingerprint=change_fingerprint(mcl.urn, mcl.aspect_name, finding.cause, finding.change),
        affected=[_affected(impact) for impact in report.impacts],
        source_urn=finding.source_urn,
        changed_fields=list(dict.fromkeys(path for trace in finding.traces for path in trace.field_paths)),
    )


def change_fingerprint(urn: str, aspect_name: str, cause: str, change: dict[str, Any]) -> str:
    document = {"urn": urn, "aspect": aspect_name, "cause": cause, "change": change}
    return sha256_hex(canonical_bytes(document))


# --- one detector per aspect ---------------------------------------------------------------------------


def _schema_change(mcl: DecodedMcl, mirror: MetadataMirror) -> Finding | None:
    if not _has_downstream_model(mirror, mcl.urn):  # the in-memory walk first: it spares most a read of the store
        return None
    previous_json = mcl.previous_aspect_json or mirror.aspect_json(mcl.urn, "schemaMetadata")
    if previous_json is None or previous_json == mcl.aspect_json:
        return None
    previous = mcl.previous_aspect or mirror.aspect(mcl.urn, "schemaMetadata")
    current = mcl.aspect
    if not isinstance(previous, SchemaMetadataClass) or not isinstance(current, SchemaMetadataClass):
        return None
    changes = schema_changes(previous, current)
    if not changes:
        return None
    return Finding(
        cause=CAUSE_SCHEMA_CHANGE,
        asset_urn=mcl.urn,
        change={"fields": [change.as_json() for change in changes]},
        summary=f"schema of {mcl.urn} changed: " + "; ".join(change.describe() for change in changes),
        traces=(Trace(mcl.urn, tuple(dict.fromkeys(change.field_path for change in changes))),),
    )


def _assertion_failed(mcl: DecodedMcl, mirror: MetadataMirror) -> Finding | None:
    result = mcl.aspect_json.get("result") if mcl.aspect_json else None
    if not isinstance(result, dict) or result.get("type") != AssertionResultTypeClass.FAILURE:
        return None
    run = mcl.aspect
    if not isinstance(run, AssertionRunEventClass) or run.status != AssertionRunStatusClass.COMPLETE:
        return None
    info = mirror.aspect(run.assertionUrn or mcl.urn, "assertionInfo")
    assertee = run.asserteeUrn
    column = column_of(assertee)
    trace = Trace(column[0], (column[1],)) if column else Trace(assertee, _assertion_columns(info, assertee))
    if not _has_downstream_model(mirror, trace.urn):
        return None
    description = info.description if isinstance(info, AssertionInfoClass) and info.description else None
    return Finding(
        cause=CAUSE_ASSERTION_FAILED,
        asset_urn=trace.urn,
        change={"assertion": mcl.urn, "assertee": assertee, "result": "FAILURE", "run": run.runId},
        summary=f"assertion {mcl.urn} failed on {assertee} in run {run.runId}"
        + (f" ({description})" if description else ""),
        traces=(trace,),
        source_urn=mcl.urn,
    )


def _job_changed(mcl: DecodedMcl, mirror: MetadataMirror) -> Finding | None:
    aspect_name = mcl.aspect_name or ""
    # the traces are the job and the outputs it gained, a subset of its outputs now: no model downstream of any
    # of them, no risk, and neither a read of the store nor an SDK object
    reach = [mcl.urn]
    if aspect_name == IO_ASPECT and mcl.aspect_json is not None:
        pairs = lineage_pairs_of_json(mcl.urn, IO_ASPECT, mcl.aspect_json)
        reach += [downstream for upstream, downstream in pairs if upstream == mcl.urn]
    if not any(_has_downstream_model(mirror, urn) for urn in reach):
        return None
    previous_json = mcl.previous_aspect_json or mirror.aspect_json(mcl.urn, aspect_name)
    if previous_json is None or previous_json == mcl.aspect_json:
        return None
    previous = mcl.previous_aspect or mirror.aspect(mcl.urn, aspect_name)
    current = mcl.aspect
    if previous is None or current is None:
        return None
    gained_outputs: list[str] = []
    if aspect_name == IO_ASPECT:
        flows = input_output_change(mcl.urn, previous, current)
        if flows is None:
            return None
        diff: dict[str, Any] = flows
        gained_outputs = flows.get("outputs_added", [])
        described = "; ".join(f"{key.replace('_', ' ')}: {', '.join(urns)}" for key, urns in flows.items())
    else:
        fields = info_change(previous, current)
        if fields is None:
            return None
        diff = fields
        described = "fields " + ", ".join(sorted(fields))
    return Finding(
        cause=CAUSE_JOB_CHANGED,
        asset_urn=mcl.urn,
        change={"aspect": aspect_name, "diff": diff},
        summary=f"{aspect_name} of job {mcl.urn} changed: {described}",
        traces=(Trace(mcl.urn), *(Trace(output) for output in gained_outputs)),
    )


def _incident_raised(mcl: DecodedMcl, mirror: MetadataMirror) -> Finding | None:
    if _incident_state(mcl.aspect_json) != IncidentStateClass.ACTIVE:
        return None
    previous_json = mcl.previous_aspect_json or mirror.aspect_json(mcl.urn, "incidentInfo")
    if _incident_state(previous_json) == IncidentStateClass.ACTIVE:
        return None
    incident = mcl.aspect
    if not isinstance(incident, IncidentInfoClass):
        return None
    traces = tuple(_trace_of(entity) for entity in sorted(set(incident.entities or ())))
    if not traces:
        return None
    kind = incident.customType if incident.type == "CUSTOM" and incident.customType else incident.type
    return Finding(
        cause=CAUSE_INCIDENT_RAISED,
        asset_urn=traces[0].urn,
        change={"incident": mcl.urn, "type": kind, "entities": sorted(set(incident.entities)), "state": "ACTIVE"},
        summary=f"{kind} incident {mcl.urn} raised on {', '.join(sorted(set(incident.entities)))}"
        + (f": {incident.title}" if incident.title else ""),
        traces=traces,
        source_urn=mcl.urn,
    )


_DETECTORS: dict[str, Callable[[DecodedMcl, MetadataMirror], Finding | None]] = {
    "schemaMetadata": _schema_change,
    "assertionRunEvent": _assertion_failed,
    INFO_ASPECT: _job_changed,
    IO_ASPECT: _job_changed,
    "incidentInfo": _incident_raised,
}


# --- helpers ---------------------------------------------------------------------------------------------


def _has_downstream_model(mirror: MetadataMirror, urn: str) -> bool:
    """Cheap gate before typed decoding: an entity-level walk over the int index."""
    return bool(mirror.impact_report(urn).impacts)


def _assertion_columns(info: Any, assertee: str) -> tuple[str, ...]:
    if not isinstance(info, AssertionInfoClass) or info.datasetAssertion is None:
        return ()
    columns = [column_of(field) for field in info.datasetAssertion.fields or ()]
    return tuple(column[1] for column in columns if column and column[0] == assertee)


def _incident_state(incident_json: dict[str, Any] | None) -> str | None:
    status = incident_json.get("status") if incident_json else None
    return status.get("state") if isinstance(status, dict) else None


def _trace_of(urn: str) -> Trace:
    column = column_of(urn)
    return Trace(column[0], (column[1],)) if column else Trace(urn)


def _merged_report(mirror: MetadataMirror, traces: Iterable[Trace]) -> ImpactReport:
    return merge_reports([mirror.impact_report(trace.urn, trace.field_paths) for trace in traces])


def _summary(finding: Finding, report: ImpactReport) -> str:
    models = "; ".join(
        f"{impact.model_urn} ({'field-level' if impact.precision == 'field' else 'entity-level'}, "
        f"deployments: {', '.join(impact.deployments) or 'none'})"
        for impact in report.impacts
    )
    parts = [f"{finding.summary}.", f"At risk: {models}."]
    parts.extend(f"{note[:1].upper()}{note[1:]}." for note in report.notes)
    if report.truncated:
        parts.append("The downstream walk was cut short: more models may be affected.")
    return " ".join(parts)


def _affected(impact: Impact) -> AffectedModel:
    return AffectedModel(
        model_urn=impact.model_urn,
        deployments=list(impact.deployments),
        owners=list(impact.owners),
        path=list(impact.path),
    )
