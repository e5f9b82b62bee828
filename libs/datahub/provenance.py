"""Provenance stamps: which provider read which aspect of which entity, when, and from where."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from datahub.metadata.schema_classes import KEY_ASPECTS

from contracts.context_snapshot import Provenance
from libs.datahub.graph import MetadataGraph


@dataclass(frozen=True)
class ProvenanceStamp:
    provider: str
    fetched_at: str

    def of_aspect(self, graph: MetadataGraph, urn: str, aspect_name: str) -> Provenance:
        """Provenance of a versioned aspect (location taken from the record when the graph has it)."""
        record = graph.aspect(urn, aspect_name)
        location = record.location if record else None
        return Provenance(
            provider=self.provider, urn=urn, aspect=aspect_name, fetched_at=self.fetched_at, location=location
        )

    def of_location(self, urn: str, aspect_name: str, location: str | None) -> Provenance:
        return Provenance(
            provider=self.provider, urn=urn, aspect=aspect_name, fetched_at=self.fetched_at, location=location
        )

    def of_first_present(self, graph: MetadataGraph, urn: str, aspect_names: tuple[str, ...]) -> Provenance:
        """Provenance of the first aspect the graph holds, else of the urn's key aspect (urn-only facts)."""
        for aspect_name in aspect_names:
            if graph.aspect(urn, aspect_name) is not None:
                return self.of_aspect(graph, urn, aspect_name)
        return self.of_location(urn, key_aspect_name(graph.entity_type(urn)), None)


def key_aspect_name(entity_type: str) -> str:
    key_class = KEY_ASPECTS.get(entity_type)
    return key_class.ASPECT_NAME if key_class is not None else f"{entity_type}Key"


def iso_from_millis(millis: int) -> str:
    return datetime.fromtimestamp(millis / 1000, tz=UTC).isoformat(timespec="milliseconds")


def optional_iso_from_millis(millis: int | None) -> str | None:
    return None if millis is None else iso_from_millis(millis)
