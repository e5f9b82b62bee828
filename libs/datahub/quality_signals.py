"""Quality signals about a set of entities: assertions with their latest results, profiles, incidents.

``subjects`` is the set of entity urns of a snapshot; a schemaField urn counts as touching its parent
dataset, so an assertion or incident on a column is found through the column's dataset.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from datahub.metadata.schema_classes import (
    AssertionInfoClass,
    AssertionRunEventClass,
    DatasetProfileClass,
    IncidentInfoClass,
)
from datahub.metadata.urns import SchemaFieldUrn

from contracts.context_snapshot import AssertionSignal, DatasetProfileSignal, IncidentSignal
from libs.datahub.graph import MetadataGraph
from libs.datahub.mcp_file import AspectRecord
from libs.datahub.provenance import ProvenanceStamp, iso_from_millis, optional_iso_from_millis

ASSERTS = "Asserts"
INCIDENT_ON = "IncidentOn"
WHOLE_TABLE = "FULL_TABLE_SNAPSHOT"
# Worst first: the latest result of an assertion checked on several partitions is its worst one.
_RESULT_SEVERITY = {"FAILURE": 0, "ERROR": 1, "INIT": 2, "SUCCESS": 3}


class _Run(NamedTuple):
    """One assertionRunEvent record with its aspect as the SDK's class."""

    record: AspectRecord
    event: AssertionRunEventClass


def subject_of(urn: str) -> str:
    """The entity a urn is about: a schemaField's parent dataset, otherwise the urn itself."""
    if urn.startswith("urn:li:schemaField:"):
        try:
            return SchemaFieldUrn.from_string(urn).parent
        except Exception:  # unusual schemaField urns: keep the urn
            return urn
    return urn


def assertion_signals(graph: MetadataGraph, subjects: Collection[str], stamp: ProvenanceStamp) -> list[AssertionSignal]:
    signals = []
    for assertion_urn in graph.entity_urns("assertion"):
        targets = [edge.destination for edge in graph.out_edges(assertion_urn, ASSERTS)]
        runs = [
            _Run(record, record.aspect)
            for record in graph.timeseries(assertion_urn, "assertionRunEvent")
            if isinstance(record.aspect, AssertionRunEventClass)
        ]
        targets += [run.event.asserteeUrn for run in runs if run.event.asserteeUrn]
        if not any(subject_of(target) in subjects for target in targets):
            continue
        signals.append(_assertion_signal(graph, assertion_urn, targets, runs, stamp))
    return signals


def profile_signals(
    graph: MetadataGraph, dataset_urns: Collection[str], stamp: ProvenanceStamp
) -> list[DatasetProfileSignal]:
    signals = []
    for dataset_urn in sorted(dataset_urns):
        profiles = graph.timeseries(dataset_urn, "datasetProfile")
        latest = profiles[-1] if profiles else None
        if latest is None or not isinstance(latest.aspect, DatasetProfileClass):
            continue
        profile = latest.aspect
        field_profiles = profile.fieldProfiles or []
        signals.append(
            DatasetProfileSignal(
                dataset_urn=dataset_urn,
                profiled_at=iso_from_millis(profile.timestampMillis),
                partition=profile.partitionSpec.partition if profile.partitionSpec else None,
                row_count=profile.rowCount,
                column_count=profile.columnCount,
                null_counts={f.fieldPath: f.nullCount for f in field_profiles if f.nullCount is not None},
                null_proportions={
                    f.fieldPath: float(f.nullProportion) for f in field_profiles if f.nullProportion is not None
                },
                provenance=stamp.of_location(dataset_urn, "datasetProfile", latest.location),
            )
        )
    return signals


def incident_signals(graph: MetadataGraph, subjects: Collection[str], stamp: ProvenanceStamp) -> list[IncidentSignal]:
    signals = []
    for incident_urn in graph.entity_urns("incident"):
        info = graph.aspect_value(incident_urn, "incidentInfo")
        if not isinstance(info, IncidentInfoClass):
            continue
        entities = tuple(edge.destination for edge in graph.out_edges(incident_urn, INCIDENT_ON))
        if not any(subject_of(entity) in subjects for entity in entities):
            continue
        signals.append(
            IncidentSignal(
                incident_urn=incident_urn,
                entities=entities,
                incident_type=str(info.type) if info.type else None,
                custom_type=info.customType,
                title=info.title,
                description=info.description,
                state=str(info.status.state) if info.status else None,
                stage=str(info.status.stage) if info.status and info.status.stage else None,
                priority=info.priority,
                created_at=optional_iso_from_millis(info.created.time) if info.created else None,
                provenance=stamp.of_aspect(graph, incident_urn, "incidentInfo"),
            )
        )
    return signals


def _assertion_signal(
    graph: MetadataGraph,
    assertion_urn: str,
    targets: list[str],
    runs: list[_Run],
    stamp: ProvenanceStamp,
) -> AssertionSignal:
    info = graph.aspect_value(assertion_urn, "assertionInfo")
    info = info if isinstance(info, AssertionInfoClass) else None
    fields = tuple(target for target in targets if target != subject_of(target))
    entities = tuple(subject_of(target) for target in targets)
    completed = [run for run in runs if run.event.result is not None]
    latest_time = completed[-1].event.timestampMillis if completed else None
    by_partition: dict[str, str] = {}
    for run in completed:
        result = run.event.result
        if result is not None and run.event.timestampMillis == latest_time:
            by_partition[_partition_of(run.event)] = str(result.type)
    worst = min(by_partition.values(), key=lambda result: _RESULT_SEVERITY.get(result, 1), default=None)
    info_provenance = stamp.of_aspect(graph, assertion_urn, "assertionInfo") if info else None
    run_provenance = (
        stamp.of_location(assertion_urn, "assertionRunEvent", completed[-1].record.location) if completed else None
    )
    return AssertionSignal(
        assertion_urn=assertion_urn,
        asserted_entities=entities,
        fields=fields,
        assertion_type=str(info.type) if info else None,
        description=info.description if info else None,
        native_type=_native_type(info),
        latest_result=worst,
        result_time=optional_iso_from_millis(latest_time),
        latest_partition_results=by_partition,
        run_count=len(completed),
        provenance=info_provenance or run_provenance or stamp.of_location(assertion_urn, "assertionKey", None),
        result_provenance=run_provenance,
    )


def _partition_of(run: AssertionRunEventClass) -> str:
    return run.partitionSpec.partition if run.partitionSpec and run.partitionSpec.partition else WHOLE_TABLE


def _native_type(info: AssertionInfoClass | None) -> str | None:
    if info is None:
        return None
    for member in (info.datasetAssertion, info.fieldAssertion, info.volumeAssertion, info.customAssertion):
        native = getattr(member, "nativeType", None) if member is not None else None
        if native:
            return str(native)
    return None
