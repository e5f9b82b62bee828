"""Fetch, entity by entity, exactly what the snapshot of one model needs from a live DataHub.

A live DataHub is too large to read whole, so the records are gathered by a fixpoint: assemble the
snapshot from what has been fetched so far, and wherever its scope reaches an entity that has not been
fetched, fetch its aspects; wherever the scope holds an entity whose incoming relationships are unknown,
ask for them (lineage relationships declared by other entities, ``Contains`` from feature tables,
``Asserts`` from assertions, ``IncidentOn`` from incidents, ``DeployedTo`` from models) and fetch their
sources. When nothing new turns up, the graph around the model is the one a full read would give, so
:func:`libs.datahub.snapshot_assembly.assemble_snapshot` yields the same snapshot as from files.

Timeseries aspects come last: assertion runs of the assertions found and the latest profile of every
dataset in scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol

from libs.datahub.graph import MetadataGraph
from libs.datahub.lineage import DEPLOYMENT_ENTITY_TYPE
from libs.datahub.mcp_file import AspectRecord
from libs.datahub.ml_context import CONTAINS
from libs.datahub.provenance import ProvenanceStamp
from libs.datahub.quality_signals import ASSERTS, INCIDENT_ON
from libs.datahub.relationships import relationship_table
from libs.datahub.snapshot_assembly import WalkLimits, assemble_snapshot

ASSERTION_RUNS = "assertionRunEvent"
DATASET_PROFILE = "datasetProfile"
DEFAULT_MAX_ENTITIES = 2000
DEFAULT_MAX_ASSERTION_RUNS = 1000


class AspectSource(Protocol):
    """Where the closure reads from (the SDK's DataHubGraph in production)."""

    def entity_records(self, urn: str) -> Sequence[AspectRecord]:
        """Every versioned aspect of the entity (empty when DataHub has none)."""
        ...

    def incoming_sources(self, urn: str, relationship_types: Sequence[str]) -> Sequence[str]:
        """Urns of the entities whose aspects declare one of the relationships towards ``urn``."""
        ...

    def timeseries_records(self, urn: str, aspect_name: str, limit: int) -> Sequence[AspectRecord]:
        """The newest ``limit`` values of a timeseries aspect."""
        ...


@dataclass
class ClosedRecords:
    records: list[AspectRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    entities_fetched: int = 0
    relationship_queries: int = 0


@cache
def incoming_relationship_types() -> tuple[str, ...]:
    """Relationship names the snapshot reads backwards, derived from the SDK's annotations."""
    names = {spec.name for spec in relationship_table() if spec.is_lineage}
    names |= {spec.name for spec in relationship_table() if DEPLOYMENT_ENTITY_TYPE in spec.entity_types}
    names |= {CONTAINS, ASSERTS, INCIDENT_ON}
    return tuple(sorted(names))


def close_scope(
    source: AspectSource,
    model_urn: str,
    limits: WalkLimits,
    max_entities: int = DEFAULT_MAX_ENTITIES,
    max_assertion_runs: int = DEFAULT_MAX_ASSERTION_RUNS,
) -> ClosedRecords:
    result = ClosedRecords()
    by_entity: dict[str, list[AspectRecord]] = {}
    incoming_known: set[str] = set()
    pending = {model_urn}
    stamp = ProvenanceStamp("closure", "1970-01-01T00:00:00+00:00")
    while pending:
        if len(by_entity) + len(pending) > max_entities:
            result.warnings.append(
                f"stopped reading DataHub at {len(by_entity)} entities (max_entities={max_entities}): "
                "the context may be incomplete"
            )
            break
        for urn in sorted(pending):
            by_entity[urn] = list(source.entity_records(urn))
        graph = MetadataGraph.from_records(r for records in by_entity.values() for r in records)
        scope = {entity.urn for entity in assemble_snapshot(graph, model_urn, stamp, limits).entities}
        pending = scope - by_entity.keys()
        for urn in sorted(scope - incoming_known):
            incoming_known.add(urn)
            result.relationship_queries += 1
            pending.update(s for s in source.incoming_sources(urn, incoming_relationship_types()) if s not in by_entity)
    result.entities_fetched = len(by_entity)
    result.records = [record for urn in sorted(by_entity) for record in by_entity[urn]]
    graph = MetadataGraph.from_records(result.records)
    scope = {entity.urn for entity in assemble_snapshot(graph, model_urn, stamp, limits).entities}
    for assertion_urn in graph.entity_urns("assertion"):
        runs = source.timeseries_records(assertion_urn, ASSERTION_RUNS, max_assertion_runs)
        if len(runs) >= max_assertion_runs:
            result.warnings.append(f"assertion {assertion_urn}: only the newest {max_assertion_runs} runs were read")
        result.records.extend(runs)
    for dataset_urn in sorted(urn for urn in scope if graph.entity_type(urn) == "dataset"):
        result.records.extend(source.timeseries_records(dataset_urn, DATASET_PROFILE, 1))
    return result
