"""Read aspects and relationships from a live DataHub with the SDK's ``DataHubGraph``.

Calls (all through acryl-datahub, which speaks GMS's REST APIs):

- ``DataHubGraph.test_connection()``                   -> ``GET /config``
- ``DataHubGraph.get_entity_raw(urn)``                 -> ``GET /entitiesV2/{urn}`` (every versioned aspect)
- ``DataHubGraph.get_related_entities(urn, types, INCOMING)`` -> ``GET /openapi/relationships/v1/``
- ``DataHubGraph.get_timeseries_values(urn, AspectClass, filter, limit)``
                                                       -> ``POST /aspects?action=getTimeseriesAspectValues``

Every transport or server failure becomes a :class:`ContextUnavailable` naming the GMS URL (never the
token); aspects that do not decode are skipped with a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from datahub.emitter.aspect import ASPECT_MAP
from datahub.emitter.serialization_helper import pre_json_transform
from datahub.ingestion.graph.client import DataHubGraph
from datahub.ingestion.graph.openapi import RelationshipDirection
from requests import HTTPError

from libs.datahub.mcp_file import AspectRecord
from libs.datahub.sdk_aspect_records import (
    KEY_ASPECT_NAMES,
    AspectDecodeError,
    decode_aspect,
    is_known_aspect,
)
from libs.datahub.sdk_errors import ContextUnavailable, describe_error

SDK_PROVIDER = "sdk"
_T = TypeVar("_T")
# Every value: getTimeseriesAspectValues needs a filter, and timestampMillis is in every timeseries index.
ALL_VALUES_FILTER: dict[str, Any] = {
    "or": [{"and": [{"field": "timestampMillis", "condition": "GREATER_THAN_OR_EQUAL_TO", "value": "0"}]}]
}


class SdkAspectSource:
    """An :class:`~libs.datahub.sdk_scope_closure.AspectSource` over a ``DataHubGraph``."""

    def __init__(self, graph: DataHubGraph, server: str) -> None:
        self._graph = graph
        self._server = server
        self.warnings: list[str] = []

    def check_connection(self) -> None:
        self._call("GET /config", self._graph.test_connection)

    def entity_records(self, urn: str) -> Sequence[AspectRecord]:
        try:
            response = self._graph.get_entity_raw(urn)
        except HTTPError as error:
            if error.response is not None and error.response.status_code == 404:
                return []
            raise self._unavailable(f"GET /entitiesV2 for {urn}", error) from None
        except Exception as error:
            raise self._unavailable(f"GET /entitiesV2 for {urn}", error) from None
        aspects = response.get("aspects") if isinstance(response, dict) else None
        if not isinstance(aspects, dict):
            raise ContextUnavailable(SDK_PROVIDER, self._server, f"GET /entitiesV2 for {urn}: no aspects object")
        records = []
        for aspect_name, envelope in sorted(aspects.items()):
            if aspect_name in KEY_ASPECT_NAMES:
                continue  # GMS always answers with the key aspect; MCP files rarely carry it
            if not is_known_aspect(aspect_name):
                self.warnings.append(f"{urn}: aspect {aspect_name} is unknown to this acryl-datahub version")
                continue
            value = envelope.get("value") if isinstance(envelope, dict) else None
            try:
                records.append(decode_aspect(urn, aspect_name, value, self._location(f"entitiesV2/{aspect_name}")))
            except AspectDecodeError as error:
                self.warnings.append(str(error))
        return records

    def incoming_sources(self, urn: str, relationship_types: Sequence[str]) -> Sequence[str]:
        def related() -> list[str]:
            found = self._graph.get_related_entities(urn, list(relationship_types), RelationshipDirection.INCOMING)
            return sorted({entity.urn for entity in found})

        return self._call(f"GET /openapi/relationships/v1 for {urn}", related)

    def timeseries_records(self, urn: str, aspect_name: str, limit: int) -> Sequence[AspectRecord]:
        aspect_class = ASPECT_MAP[aspect_name]

        def values() -> list[Any]:
            return self._graph.get_timeseries_values(urn, aspect_class, ALL_VALUES_FILTER, limit)

        aspects = self._call(f"getTimeseriesAspectValues {aspect_name} for {urn}", values)
        location = self._location(f"timeseries/{aspect_name}")
        records = []
        for aspect in aspects:
            try:  # re-decoded through the same checked path as versioned aspects
                records.append(decode_aspect(urn, aspect_name, pre_json_transform(aspect.to_obj()), location))
            except AspectDecodeError as error:
                self.warnings.append(str(error))
        return sorted(records, key=lambda record: record.aspect.get("timestampMillis") or 0)

    def _location(self, what: str) -> str:
        return f"{self._server}/{what}"

    def _call(self, what: str, call: Callable[[], _T]) -> _T:
        try:
            return call()
        except ContextUnavailable:
            raise
        except Exception as error:
            raise self._unavailable(what, error) from None

    def _unavailable(self, what: str, error: BaseException) -> ContextUnavailable:
        return ContextUnavailable(SDK_PROVIDER, self._server, f"{what} failed: {describe_error(error)}")
