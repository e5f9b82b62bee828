"""A loopback DataHub GMS answering what acryl-datahub's `DataHubGraph` sends for aspects.

Paths, as the SDK (1.7) builds them:
- `GET /config`: server configuration (`noCode: "true"` tells the SDK it reached GMS, not the frontend);
- `GET /aspects/{url-encoded urn}?aspect=<name>&version=0`: `{"aspect": {"<pegasus class>": {...}}}` or 404
  (`DataHubGraph.get_aspect`);
- `POST /aspects?action=ingestProposal`: `{"proposal": {..., "aspect": {"value": "<json>", ...}}, "async": ...}`
  (`DataHubGraph.emit_mcp` over Rest.li);
- `POST /aspects?action=getTimeseriesAspectValues`: `{"urn", "entity", "aspect", "limit", "filter": {"or": [{"and":
  [{"field", "values", "condition": "EQUAL"}]}]}}` → `{"value": {"values": [{"aspect": {"value": "<json>"}}]}}`
  (`DataHubGraph.get_timeseries_values`), newest first.
Versioned aspects are stored per (urn, aspect name) with a version counter; timeseries aspects (assertion runs) per
(urn, aspect name, timestampMillis, partition), a later write of the same key replacing the earlier, as GMS does. A
token, when set, is required.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from datahub.metadata.schema_classes import ASPECT_NAME_MAP

from tests.support.loopback_http import LoopbackServer, Reply, Request

SERVER_CONFIG = {
    "noCode": "true",
    "versions": {"acryldata/datahub": {"version": "v1.2.0", "commit": "fake"}},
    "statefulIngestionCapable": True,
    "supportsImpactAnalysis": False,
    "managedIngestion": {"enabled": False},
}


def _pegasus_name(aspect_name: str) -> str:
    return ASPECT_NAME_MAP[aspect_name].RECORD_SCHEMA.fullname.replace(".pegasus2avro", "")


class FakeDataHubGms(LoopbackServer):
    def __init__(self, token: str | None = None) -> None:
        super().__init__()
        self.token = token
        self.aspects: dict[tuple[str, str], dict[str, Any]] = {}
        self.versions: dict[tuple[str, str], int] = {}
        self.timeseries: dict[tuple[str, str], dict[tuple[int, str], dict[str, Any]]] = {}

    def timeseries_values(self, urn: str, aspect_name: str) -> list[dict[str, Any]]:
        """The timeseries aspect's values for the entity, newest first."""
        with self.lock:
            stored = self.timeseries.get((urn, aspect_name), {})
            return [stored[key] for key in sorted(stored, reverse=True)]

    def aspect(self, urn: str, aspect_name: str) -> dict[str, Any] | None:
        with self.lock:
            return self.aspects.get((urn, aspect_name))

    def put_aspect(self, urn: str, aspect_name: str, value: dict[str, Any]) -> None:
        """What a person's edit in the DataHub UI would leave behind."""
        with self.lock:
            self.aspects[(urn, aspect_name)] = value
            self.versions[(urn, aspect_name)] = self.versions.get((urn, aspect_name), 0) + 1

    def writes(self) -> list[Request]:
        """Requests that change something: a timeseries query is a POST that only reads."""
        return [r for r in super().writes() if r.query.get("action") != "getTimeseriesAspectValues"]

    def ingested(self) -> list[Request]:
        return [r for r in self.writes() if r.query.get("action") == "ingestProposal"]

    def route(self, request: Request) -> Reply:
        if self.token is not None and request.headers.get("authorization") != f"Bearer {self.token}":
            return Reply(401, {"message": "Unauthorized to perform this action", "status": 401})
        if request.method == "GET" and request.path == "/config":
            return Reply(200, SERVER_CONFIG)
        if request.method == "GET" and request.path.startswith("/aspects/"):
            urn = unquote(request.path.removeprefix("/aspects/"))
            name = request.query.get("aspect", "")
            value = self.aspect(urn, name)
            if value is None:
                return Reply(404, {"message": f"{urn} has no {name}", "status": 404})
            with self.lock:
                version = self.versions[(urn, name)]
            return Reply(200, {"aspect": {_pegasus_name(name): value}, "version": version})
        if request.method == "POST" and request.path == "/aspects" and request.query.get("action") == "ingestProposal":
            proposal = request.json()["proposal"]
            value = json.loads(proposal["aspect"]["value"])
            name = proposal["aspectName"]
            if ASPECT_NAME_MAP[name].get_aspect_type() == "timeseries":
                key = (int(value["timestampMillis"]), json.dumps(value.get("partitionSpec"), sort_keys=True))
                with self.lock:
                    self.timeseries.setdefault((proposal["entityUrn"], name), {})[key] = value
            else:
                self.put_aspect(proposal["entityUrn"], name, value)
            return Reply(200, {"value": proposal["entityUrn"]})
        if (
            request.method == "POST"
            and request.path == "/aspects"
            and request.query.get("action") == "getTimeseriesAspectValues"
        ):
            query = request.json()
            conditions = [c for branch in query.get("filter", {}).get("or", []) for c in branch.get("and", [])]
            values = [
                v
                for v in self.timeseries_values(query["urn"], query["aspect"])
                if all(str(v.get(c["field"])) in c["values"] for c in conditions)
            ][: int(query.get("limit", 10))]
            answer = [{"aspect": {"value": json.dumps(v), "contentType": "application/json"}} for v in values]
            return Reply(200, {"value": {"values": answer, "limit": len(answer)}})
        return Reply(404, {"message": f"no route for {request.method} {request.path}", "status": 404})
