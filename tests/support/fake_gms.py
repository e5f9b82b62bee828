"""A loopback HTTP server that answers the read side of DataHub GMS the way GMS does.

It serves what the SDK's ``DataHubGraph`` asks for when reading context, from metadata loaded with
:func:`libs.datahub.mcp_file.load_mcp_file` (the CHURN scenario by default) or ingested through it:

- ``GET  /config``                                    server config (``noCode: "true"``)
- ``GET  /entitiesV2/{urn}``                          every versioned aspect plus the key aspect
- ``GET  /aspects/{urn}?aspect=..&version=0``         one aspect (404 when absent)
- ``GET  /openapi/relationships/v1/?urn=..&direction=INCOMING&relationshipTypes=..&start=..``
- ``POST /aspects?action=getTimeseriesAspectValues``  newest first, ``limit`` values
- ``POST /aspects?action=ingestProposal`` / ``ingestProposalBatch``  UPSERTs (what ``emit_mcp(s)`` sends)

Relationships are derived from the stored aspects with the SDK's ``@Relationship`` annotations, as GMS
derives its graph index. ``token`` makes every request need ``Authorization: Bearer <token>``;
``failing_paths`` makes matching paths answer 500 (for error tests). Not for writes of other kinds.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from datahub.metadata.schema_classes import KEY_ASPECTS
from datahub.utilities.urns.urn import guess_entity_type

from libs.datahub.mcp_file import AspectRecord, load_mcp_file
from libs.datahub.relationships import edges_from_aspect
from libs.datahub.sdk_aspect_records import decode_aspect, restli_json_of

CHURN_METADATA = Path(__file__).resolve().parents[2] / "fixtures/scenarios/churn-monthly-spend/datahub/metadata.json"
_RELATIONSHIPS_PATH = "/openapi/relationships/v1/"


class GmsStore:
    """Latest versioned aspects, every timeseries value, and the relationship index derived from them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.versioned: dict[str, dict[str, AspectRecord]] = defaultdict(dict)
        self.timeseries: dict[tuple[str, str], list[AspectRecord]] = defaultdict(list)

    def ingest(self, records: Iterable[AspectRecord]) -> None:
        with self._lock:
            for record in records:
                if record.aspect.get_aspect_type() == "timeseries":
                    self.timeseries[(record.urn, record.aspect_name)].append(record)
                else:
                    self.versioned[record.urn][record.aspect_name] = record

    def entity_aspects(self, urn: str) -> dict[str, AspectRecord]:
        with self._lock:
            return dict(self.versioned.get(urn, {}))

    def incoming(self, urn: str, relationship_types: set[str]) -> list[dict[str, Any]]:
        with self._lock:
            records = [record for aspects in self.versioned.values() for record in aspects.values()]
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for record in records:
            for edge in edges_from_aspect(record.urn, record.aspect_name, record.aspect):
                if edge.destination == urn and (not relationship_types or edge.relationship in relationship_types):
                    found.setdefault(
                        (edge.source, edge.relationship), {"urn": edge.source, "relationshipType": edge.relationship}
                    )
        return [found[key] for key in sorted(found)]

    def timeseries_values(self, urn: str, aspect_name: str, limit: int) -> list[AspectRecord]:
        with self._lock:
            values = list(self.timeseries.get((urn, aspect_name), ()))
        values.sort(key=lambda record: record.aspect.get("timestampMillis") or 0, reverse=True)
        return values[:limit]


class FakeGms:
    """Run with ``with FakeGms.serving(store) as gms: gms.url``."""

    def __init__(self, store: GmsStore, token: str | None = None, failing_paths: tuple[str, ...] = ()) -> None:
        self.store = store
        self.token = token
        self.failing_paths = failing_paths
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-gms", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @classmethod
    @contextmanager
    def serving(
        cls, store: GmsStore | None = None, token: str | None = None, failing_paths: tuple[str, ...] = ()
    ) -> Iterator[FakeGms]:
        gms = cls(store if store is not None else churn_store(), token, failing_paths)
        gms._thread.start()
        try:
            yield gms
        finally:
            gms._server.shutdown()
            gms._server.server_close()
            gms._thread.join(timeout=5)


def churn_store(path: Path = CHURN_METADATA) -> GmsStore:
    store = GmsStore()
    store.ingest(load_mcp_file(path).records)
    return store


def _handler_for(gms: FakeGms) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            self._dispatch("GET")

        def do_POST(self) -> None:
            self._dispatch("POST")

        def _dispatch(self, method: str) -> None:
            url = urlsplit(self.path)
            gms.requests.append(f"{method} {url.path}?{url.query}")
            if gms.token is not None and self.headers.get("Authorization") != f"Bearer {gms.token}":
                self._send(401, {"message": "Unauthorized"})
                return
            if any(url.path.startswith(prefix) for prefix in gms.failing_paths):
                self._send(500, {"message": "internal server error (fake)"})
                return
            query = parse_qs(url.query)
            body = self._body() if method == "POST" else {}
            try:
                status, payload = _route(gms.store, method, url.path, query, body)
            except Exception as error:  # answer like GMS: a JSON error body, not a dropped connection
                status, payload = 400, {"message": f"{type(error).__name__}: {error}"}
            self._send(status, payload)

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}")

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _route(store: GmsStore, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
    action = (query.get("action") or [""])[0]
    if method == "GET" and path == "/config":
        return 200, {"noCode": "true", "versions": {"acryldata/datahub": {"version": "v1.2.0", "commit": "fake"}}}
    if method == "GET" and path.startswith("/entitiesV2/"):
        return 200, _entity_v2(store, unquote(path.removeprefix("/entitiesV2/")))
    if method == "GET" and path.startswith("/aspects/"):
        return _one_aspect(store, unquote(path.removeprefix("/aspects/")), (query.get("aspect") or [""])[0])
    if method == "GET" and path.rstrip("/") == _RELATIONSHIPS_PATH.rstrip("/"):
        return 200, _relationships(store, query)
    if method == "POST" and path == "/aspects" and action == "getTimeseriesAspectValues":
        return 200, _timeseries(store, body)
    if method == "POST" and path == "/aspects" and action == "ingestProposal":
        return 200, {"value": _ingest(store, [body["proposal"]])[0]}
    if method == "POST" and path == "/aspects" and action == "ingestProposalBatch":
        return 200, {"value": _ingest(store, body["proposals"])}
    return 404, {"message": f"no route for {method} {path}"}


def _entity_v2(store: GmsStore, urn: str) -> dict[str, Any]:
    entity_type = guess_entity_type(urn)
    aspects = {
        name: {"name": name, "type": "VERSIONED", "version": 0, "value": restli_json_of(record)}
        for name, record in store.entity_aspects(urn).items()
    }
    key_class = KEY_ASPECTS.get(entity_type)
    if key_class is not None:  # GMS always answers with the key aspect, even for unknown urns
        aspects[key_class.ASPECT_NAME] = {"name": key_class.ASPECT_NAME, "type": "VERSIONED", "version": 0, "value": {}}
    return {"urn": urn, "entityName": entity_type, "aspects": aspects}


def _one_aspect(store: GmsStore, urn: str, aspect_name: str) -> tuple[int, Any]:
    record = store.entity_aspects(urn).get(aspect_name)
    if record is None:
        return 404, {"message": f"{aspect_name} of {urn} not found"}
    type_name = record.aspect.RECORD_SCHEMA.fullname.replace(".pegasus2avro", "")
    return 200, {"urn": urn, "version": 0, "aspect": {type_name: restli_json_of(record)}}


def _relationships(store: GmsStore, query: dict[str, list[str]]) -> dict[str, Any]:
    if (query.get("direction") or ["INCOMING"])[0] != "INCOMING":
        raise ValueError("only INCOMING relationships are served by this fake")
    urn = query["urn"][0]
    start = int((query.get("start") or ["0"])[0])
    found = store.incoming(urn, set(query.get("relationshipTypes") or ()))
    page = found[start:]
    return {"start": start, "count": len(page), "total": len(found), "entities": page}


def _timeseries(store: GmsStore, body: dict[str, Any]) -> dict[str, Any]:
    values = store.timeseries_values(body["urn"], body["aspect"], int(body.get("limit") or 10))
    return {
        "value": {
            "entityName": body.get("entity"),
            "aspectName": body["aspect"],
            "limit": len(values),
            "values": [
                {"aspect": {"value": json.dumps(restli_json_of(record)), "contentType": "application/json"}}
                for record in values
            ],
        }
    }


def _ingest(store: GmsStore, proposals: list[dict[str, Any]]) -> list[str]:
    records = []
    for proposal in proposals:
        if proposal.get("changeType", "UPSERT") != "UPSERT":
            raise ValueError("only UPSERT proposals are accepted by this fake")
        urn, aspect_name = proposal["entityUrn"], proposal["aspectName"]
        value = json.loads(proposal["aspect"]["value"])
        records.append(decode_aspect(urn, aspect_name, value, "ingestProposal"))
    store.ingest(records)
    return [record.urn for record in records]
