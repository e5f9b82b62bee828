"""Rebuild DataHub aspects from the MCP server's answers, so the snapshot is assembled as for files.

What each aspect is rebuilt from (and what the MCP server cannot give, which is said in warnings):

- exact, from ``get_aspect_history`` current values: ``datasetProperties``, ``schemaMetadata``,
  ``upstreamLineage`` (with fine-grained lineage), ``ownership``, ``status``. The tool's cleaning drops
  empty union members, so schema field types are gone; they are inferred from ``nativeDataType`` with
  the SDK's ``resolve_sql_type`` (NullType, with a warning, when it cannot);
- from ``get_entities``: ``subTypes``, ``dataFlowInfo``, ``dataJobInfo``, ``dataJobInputOutput`` (input and
  output datasets), ``mlFeatureTableProperties``, ``assertionInfo`` and the newest completed
  ``assertionRunEvent`` values, names, descriptions and custom properties of the ML entities;
- from ``get_lineage`` one-hop neighbours: the lineage fields of ``mlModelProperties`` (features, training
  jobs, groups, downstream jobs), ``mlFeatureProperties.sources``, ``mlModelGroupProperties.trainingJobs``
  and ``dataJobInputOutput.inputDatajobs``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datahub.ingestion.source.sql.sql_types import resolve_sql_type
from datahub.metadata.urns import Urn
from datahub.utilities.urns.urn import guess_entity_type

from libs.datahub.mcp_file import AspectRecord
from libs.datahub.mcp_findings import McpFindings
from libs.datahub.sdk_aspect_records import AspectDecodeError, decode_aspect

_NULL_TYPE = "com.linkedin.schema.NullType"
_JOB_TYPES = ("dataJob", "dataProcessInstance")
UNKNOWN_JOB_TYPE = "UNKNOWN"


class AspectRebuilder:
    def __init__(self, findings: McpFindings, location: str) -> None:
        self._findings = findings
        self._location = location
        self.records: list[AspectRecord] = []
        self.warnings: list[str] = []

    def rebuild(self) -> tuple[list[AspectRecord], list[str]]:
        for (urn, aspect_name), value in sorted(self._findings.aspect_values.items()):
            if aspect_name == "schemaMetadata":
                value = self._with_field_types(urn, value)
            self._add(urn, aspect_name, value, "get_aspect_history")
        builders: dict[str, Callable[[str, dict[str, Any]], None]] = {
            "dataset": self._dataset,
            "dataFlow": self._data_flow,
            "dataJob": self._data_job,
            "mlModel": self._model,
            "mlModelGroup": self._model_group,
            "mlFeature": self._feature,
            "mlFeatureTable": self._feature_table,
            "assertion": self._assertion,
        }
        for urn, entity in sorted(self._findings.entities.items()):
            if "ownership" in entity and (urn, "ownership") not in self._findings.aspect_values:
                self._add(urn, "ownership", _ownership(entity["ownership"]), "get_entities")
            builder = builders.get(guess_entity_type(urn))
            if builder is not None:
                builder(urn, entity)
        return self.records, self.warnings

    # --- per entity type -----------------------------------------------------------------------------

    def _dataset(self, urn: str, entity: dict[str, Any]) -> None:
        type_names = (entity.get("subTypes") or {}).get("typeNames")
        if type_names:
            self._add(urn, "subTypes", {"typeNames": type_names}, "get_entities")

    def _data_flow(self, urn: str, entity: dict[str, Any]) -> None:
        properties = entity.get("properties")
        if properties is None:
            return
        info = {
            "name": properties.get("name") or entity.get("flowId") or urn,
            "description": properties.get("description"),
            "project": properties.get("project"),
            "customProperties": _custom(properties),
        }
        self._add(urn, "dataFlowInfo", info, "get_entities")

    def _data_job(self, urn: str, entity: dict[str, Any]) -> None:
        properties = entity.get("properties")
        if properties is not None:
            info = {
                "name": properties.get("name") or entity.get("jobId") or urn,
                "description": properties.get("description"),
                "customProperties": _custom(properties),
                "type": {"string": UNKNOWN_JOB_TYPE},
                "flowUrn": (entity.get("dataFlow") or {}).get("urn"),
            }
            self._add(urn, "dataJobInfo", info, "get_entities")
        io = entity.get("inputOutput")
        if io is not None:
            inputs_outputs = {
                "inputDatasets": [d["urn"] for d in io.get("inputDatasets") or ()],
                "outputDatasets": [d["urn"] for d in io.get("outputDatasets") or ()],
                "inputDatajobs": self._neighbours(self._findings.upstream, urn, _JOB_TYPES),
            }
            self._add(urn, "dataJobInputOutput", inputs_outputs, "get_entities+get_lineage")

    def _model(self, urn: str, entity: dict[str, Any]) -> None:
        properties = {
            "description": entity.get("description"),
            "customProperties": _custom(entity.get("properties") or {}),
            "mlFeatures": self._neighbours(self._findings.upstream, urn, ("mlFeature",)),
            "trainingJobs": self._neighbours(self._findings.upstream, urn, _JOB_TYPES),
            "groups": self._neighbours(self._findings.downstream, urn, ("mlModelGroup",)),
            "downstreamJobs": self._neighbours(self._findings.downstream, urn, ("dataJob",)),
        }
        self._add(urn, "mlModelProperties", properties, "get_entities+get_lineage")

    def _model_group(self, urn: str, entity: dict[str, Any]) -> None:
        properties = {
            "description": entity.get("description"),
            "customProperties": _custom(entity.get("properties") or {}),
            "trainingJobs": self._neighbours(self._findings.upstream, urn, _JOB_TYPES),
        }
        self._add(urn, "mlModelGroupProperties", properties, "get_entities+get_lineage")

    def _feature(self, urn: str, entity: dict[str, Any]) -> None:
        properties = {
            "description": entity.get("description"),
            "customProperties": _custom(entity.get("properties") or {}),
            "sources": self._neighbours(self._findings.upstream, urn, ("dataset",)),
        }
        self._add(urn, "mlFeatureProperties", properties, "get_entities+get_lineage")

    def _feature_table(self, urn: str, entity: dict[str, Any]) -> None:
        table = entity.get("featureTableProperties") or {}
        properties = {
            "description": table.get("description") or entity.get("description"),
            "customProperties": _custom(entity.get("properties") or {}),
            "mlFeatures": [f["urn"] for f in table.get("mlFeatures") or ()],
            "mlPrimaryKeys": [k["urn"] for k in table.get("mlPrimaryKeys") or ()],
        }
        self._add(urn, "mlFeatureTableProperties", properties, "get_entities")

    def _assertion(self, urn: str, entity: dict[str, Any]) -> None:
        info = entity.get("info") or {}
        dataset_assertion = info.get("datasetAssertion")
        if dataset_assertion is None:
            self.warnings.append(
                f"assertion {urn}: only DATASET assertions are rebuilt from get_entities; "
                f"type {info.get('type')} skipped"
            )
            return
        assertee = dataset_assertion.get("datasetUrn")
        self._add(urn, "assertionInfo", _assertion_info(info, dataset_assertion), "get_entities")
        for run in (entity.get("runEvents") or {}).get("runEvents") or ():
            event = {
                "timestampMillis": run["timestampMillis"],
                "runId": f"mcp-{run['timestampMillis']}",
                "asserteeUrn": assertee,
                "assertionUrn": urn,
                "status": run.get("status") or "COMPLETE",
                "result": {k: v for k, v in (run.get("result") or {}).items() if k in _RUN_RESULT_FIELDS},
            }
            self._add(urn, "assertionRunEvent", event, "get_entities.runEvents")

    # --- helpers -------------------------------------------------------------------------------------

    def _neighbours(self, hops: dict[str, list[str]], urn: str, entity_types: tuple[str, ...]) -> list[str]:
        return [n for n in hops.get(urn, ()) if guess_entity_type(n) in entity_types]

    def _with_field_types(self, urn: str, schema: dict[str, Any]) -> dict[str, Any]:
        platform = getattr(Urn.from_string(urn), "platform", "") or ""
        platform_name = platform.removeprefix("urn:li:dataPlatform:")
        fields = []
        for field in schema.get("fields") or ():
            if "type" not in field:
                resolved = resolve_sql_type(field.get("nativeDataType"), platform_name)
                type_name = _NULL_TYPE
                if resolved is None:
                    self.warnings.append(
                        f"dataset {urn}: field {field.get('fieldPath')}: type unknown (nativeDataType "
                        f"{field.get('nativeDataType')!r} does not resolve); recorded as NullType"
                    )
                else:
                    type_name = resolved.RECORD_SCHEMA.fullname.replace(".pegasus2avro", "")
                field = {**field, "type": {"type": {type_name: {}}}}
            fields.append(field)
        return {**schema, "fields": fields}

    def _add(self, urn: str, aspect_name: str, value: dict[str, Any], tool: str) -> None:
        value = {key: item for key, item in value.items() if item is not None}
        try:
            self.records.append(decode_aspect(urn, aspect_name, value, f"{self._location} {tool}"))
        except AspectDecodeError as error:
            self.warnings.append(f"mcp provider: {error}")


_RUN_RESULT_FIELDS = ("type", "rowCount", "missingCount", "unexpectedCount", "actualAggValue", "externalUrl")


def _custom(properties: dict[str, Any]) -> dict[str, str]:
    return {entry["key"]: entry.get("value") or "" for entry in properties.get("customProperties") or ()}


def _ownership(ownership: dict[str, Any]) -> dict[str, Any]:
    owners = []
    for owner in ownership.get("owners") or ():
        entry = {"owner": (owner.get("owner") or {}).get("urn"), "type": owner.get("type") or "NONE"}
        type_urn = (owner.get("ownershipType") or {}).get("urn")
        if type_urn:
            entry["typeUrn"] = type_urn
        owners.append(entry)
    return {"owners": owners}


def _assertion_info(info: dict[str, Any], dataset_assertion: dict[str, Any]) -> dict[str, Any]:
    native_parameters = {e["key"]: e.get("value") or "" for e in dataset_assertion.get("nativeParameters") or ()}
    definition = {
        "dataset": dataset_assertion.get("datasetUrn"),
        "scope": dataset_assertion.get("scope"),
        "fields": [f["urn"] for f in dataset_assertion.get("fields") or ()] or None,
        "aggregation": dataset_assertion.get("aggregation"),
        "operator": dataset_assertion.get("operator"),
        "parameters": dataset_assertion.get("parameters"),
        "nativeType": dataset_assertion.get("nativeType"),
        "nativeParameters": native_parameters or None,
        "logic": dataset_assertion.get("logic"),
    }
    return {
        "type": info.get("type"),
        "description": info.get("description"),
        "datasetAssertion": {key: value for key, value in definition.items() if value is not None},
        "source": info.get("source"),
    }
