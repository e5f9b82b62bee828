"""Entity answer shapes of the loopback DataHub MCP server (see :mod:`tests.support.fake_mcp_server`).

What ``mcp-server-datahub`` 0.8's ``GetEntity`` GraphQL query selects for each entity type, built from the
scenario's aspects by :class:`EntityShapes`, and :func:`clean`, the cleaning the real server applies to every
answer (no ``__typename``, no ``None``, no empty lists or objects). :data:`GRAPHQL_TYPES` maps entity types
to their GraphQL enum names. The tools in :mod:`tests.support.fake_mcp_tools` answer with these shapes.
"""

from __future__ import annotations

from typing import Any

from datahub.metadata.urns import Urn

from libs.datahub.graph import MetadataGraph
from libs.datahub.sdk_aspect_records import restli_json_of

GRAPHQL_TYPES = {
    "dataset": "DATASET", "dataJob": "DATA_JOB", "dataFlow": "DATA_FLOW", "mlModel": "MLMODEL",
    "mlModelGroup": "MLMODEL_GROUP", "mlFeature": "MLFEATURE", "mlFeatureTable": "MLFEATURE_TABLE",
    "mlPrimaryKey": "MLPRIMARY_KEY", "assertion": "ASSERTION", "incident": "INCIDENT", "corpuser": "CORP_USER",
    "corpGroup": "CORP_GROUP", "schemaField": "SCHEMA_FIELD", "mlModelDeployment": "MLMODEL_DEPLOYMENT",
}  # fmt: skip


def clean(value: Any) -> Any:
    """What the real server does to every GraphQL answer (``clean_gql_response``)."""
    if isinstance(value, dict):
        cleaned = {}
        for key, item in value.items():
            if key == "__typename" or item is None or item == []:
                continue
            item = clean(item)
            if item is not None and item != {}:
                cleaned[key] = item
        return cleaned
    if isinstance(value, list):
        return [clean(item) for item in value]
    return value


class EntityShapes:
    """The ``GetEntity`` answer of every urn, built from the scenario's aspects."""

    def __init__(self, graph: MetadataGraph) -> None:
        self.graph = graph

    def exists(self, urn: str) -> bool:
        return self.graph.has_metadata(urn)

    def entity(self, urn: str) -> dict[str, Any]:
        entity_type = self.graph.entity_type(urn)
        builder = getattr(self, f"_{entity_type}", None)
        shape: dict[str, Any] = {"urn": urn}
        if builder is not None:
            shape.update(builder(urn))
        return clean(shape)

    def _aspect(self, urn: str, name: str) -> dict[str, Any]:
        record = self.graph.aspect(urn, name)
        return restli_json_of(record) if record else {}

    def _ownership(self, urn: str) -> dict[str, Any] | None:
        owners = self._aspect(urn, "ownership").get("owners")
        if not owners:
            return None
        return {
            "owners": [
                {
                    "owner": {"urn": owner["owner"]},
                    "type": owner.get("type"),
                    "ownershipType": {"urn": owner["typeUrn"]} if owner.get("typeUrn") else None,
                }
                for owner in owners
            ]
        }

    @staticmethod
    def _custom(properties: dict[str, Any]) -> list[dict[str, str]]:
        return [{"key": key, "value": value} for key, value in (properties.get("customProperties") or {}).items()]

    @staticmethod
    def _platform(urn: str) -> dict[str, Any] | None:
        platform = getattr(Urn.from_string(urn), "platform", None)
        if not isinstance(platform, str):
            return None
        return {"urn": platform, "name": platform.removeprefix("urn:li:dataPlatform:")}

    def _dataset(self, urn: str) -> dict[str, Any]:
        properties = self._aspect(urn, "datasetProperties")
        schema = self._aspect(urn, "schemaMetadata")
        return {
            "name": properties.get("name") or getattr(Urn.from_string(urn), "name", None),
            "platform": self._platform(urn),
            "properties": {
                "name": properties.get("name"),
                "description": properties.get("description"),
                "externalUrl": properties.get("externalUrl"),
                "customProperties": self._custom(properties),
            },
            "ownership": self._ownership(urn),
            "subTypes": {"typeNames": self._aspect(urn, "subTypes").get("typeNames")},
            "schemaMetadata": self._schema(schema) if schema else None,
        }

    @staticmethod
    def _schema(schema: dict[str, Any]) -> dict[str, Any]:
        # entitySchemaFieldFields selects no `type`; the real server keeps only these keys.
        fields = [
            {
                "fieldPath": field["fieldPath"],
                "nativeDataType": field.get("nativeDataType"),
                "description": field.get("description"),
                "nullable": field.get("nullable"),
                "label": field.get("label"),
                "isPartOfKey": True if field.get("isPartOfKey") else None,
                "isPartitioningKey": True if field.get("isPartitioningKey") else None,
            }
            for field in schema.get("fields", [])
        ]
        return {"name": schema.get("schemaName"), "platformUrn": schema.get("platform"), "fields": fields}

    def _dataFlow(self, urn: str) -> dict[str, Any]:
        flow = Urn.from_string(urn)
        info = self._aspect(urn, "dataFlowInfo")
        return {
            "type": "DATA_FLOW",
            "orchestrator": getattr(flow, "orchestrator", None),
            "flowId": getattr(flow, "flow_id", None),
            "cluster": getattr(flow, "cluster", None),
            "properties": {
                "name": info.get("name"),
                "description": info.get("description"),
                "project": info.get("project"),
                "customProperties": self._custom(info),
            },
            "ownership": self._ownership(urn),
        }

    def _dataJob(self, urn: str) -> dict[str, Any]:
        info = self._aspect(urn, "dataJobInfo")
        io = self._aspect(urn, "dataJobInputOutput")
        inputs = [*(io.get("inputDatasets") or ()), *(e["destinationUrn"] for e in io.get("inputDatasetEdges") or ())]
        outputs = [
            *(io.get("outputDatasets") or ()),
            *(e["destinationUrn"] for e in io.get("outputDatasetEdges") or ()),
        ]
        flow_urn = info.get("flowUrn") or getattr(Urn.from_string(urn), "flow", None)
        return {
            "type": "DATA_JOB",
            "dataFlow": {"urn": flow_urn} if flow_urn else None,
            "jobId": getattr(Urn.from_string(urn), "job_id", None),
            "inputOutput": {
                "inputDatasets": [{"urn": u, "type": "DATASET"} for u in dict.fromkeys(inputs)],
                "outputDatasets": [{"urn": u, "type": "DATASET"} for u in dict.fromkeys(outputs)],
            }
            if io
            else None,
            "ownership": self._ownership(urn),
            "properties": {
                "name": info.get("name"),
                "description": info.get("description"),
                "customProperties": self._custom(info),
            }
            if info
            else None,
            "subTypes": {"typeNames": self._aspect(urn, "subTypes").get("typeNames")},
        }

    def _ml_common(self, urn: str, properties_aspect: str) -> dict[str, Any]:
        properties = self._aspect(urn, properties_aspect)
        return {
            "name": getattr(Urn.from_string(urn), "name", None),
            "properties": {"customProperties": self._custom(properties)},
            "description": properties.get("description"),
            "ownership": self._ownership(urn),
        }

    def _mlModel(self, urn: str) -> dict[str, Any]:
        return {**self._ml_common(urn, "mlModelProperties"), "platform": self._platform(urn)}

    def _mlModelGroup(self, urn: str) -> dict[str, Any]:
        return {**self._ml_common(urn, "mlModelGroupProperties"), "platform": self._platform(urn)}

    def _mlFeature(self, urn: str) -> dict[str, Any]:
        return self._ml_common(urn, "mlFeatureProperties")

    def _mlFeatureTable(self, urn: str) -> dict[str, Any]:
        properties = self._aspect(urn, "mlFeatureTableProperties")
        return {
            **self._ml_common(urn, "mlFeatureTableProperties"),
            "platform": self._platform(urn),
            "featureTableProperties": {
                "description": properties.get("description"),
                "mlFeatures": [{"urn": u} for u in properties.get("mlFeatures") or ()],
                "mlPrimaryKeys": [{"urn": u} for u in properties.get("mlPrimaryKeys") or ()],
            },
        }

    def _assertion(self, urn: str) -> dict[str, Any]:
        info = self._aspect(urn, "assertionInfo")
        dataset_assertion = info.get("datasetAssertion") or {}
        runs = [restli_json_of(r) for r in self.graph.timeseries(urn, "assertionRunEvent")]
        completed = [run for run in reversed(runs) if run.get("status") == "COMPLETE"][:10]
        return {
            "type": "ASSERTION",
            "info": {
                "type": info.get("type"),
                "description": info.get("description"),
                "datasetAssertion": {
                    "datasetUrn": dataset_assertion.get("dataset"),
                    "scope": dataset_assertion.get("scope"),
                    "aggregation": dataset_assertion.get("aggregation"),
                    "operator": dataset_assertion.get("operator"),
                    "parameters": dataset_assertion.get("parameters"),
                    "fields": [
                        {"urn": f, "path": f.rsplit(",", 1)[-1].rstrip(")")}
                        for f in dataset_assertion.get("fields") or ()
                    ],
                    "nativeType": dataset_assertion.get("nativeType"),
                    "nativeParameters": self._custom({"customProperties": dataset_assertion.get("nativeParameters")}),
                    "logic": dataset_assertion.get("logic"),
                }
                if dataset_assertion
                else None,
                "source": info.get("source"),
            },
            "runEvents": {
                "total": len(completed),
                "failed": sum(1 for run in completed if (run.get("result") or {}).get("type") == "FAILURE"),
                "succeeded": sum(1 for run in completed if (run.get("result") or {}).get("type") == "SUCCESS"),
                "runEvents": [
                    {
                        "timestampMillis": run["timestampMillis"],
                        "status": run.get("status"),
                        "result": {
                            "type": (run.get("result") or {}).get("type"),
                            "rowCount": (run.get("result") or {}).get("rowCount"),
                            "unexpectedCount": (run.get("result") or {}).get("unexpectedCount"),
                            "actualAggValue": (run.get("result") or {}).get("actualAggValue"),
                        },
                    }
                    for run in completed
                ],
            },
        }
