"""Writer schemas by id from a loopback Confluent-API schema registry; the offline resolver only without one."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import fastavro
import pytest
from datahub.metadata.schema_classes import StatusClass

from libs.datahub.mcl.avro_schema import shipped_mcl_schema_json
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.schema_registry import (
    RegistrySchemaResolver,
    SchemaRegistryUnavailable,
    ShippedSchemaResolver,
    UnknownSchemaId,
    schema_resolver_for,
)
from libs.datahub.mcl.wire import decode_confluent, encode_confluent
from tests.unit.mcl.mcl_test_inputs import Churn, mcl_record

CURRENT_ID, OLDER_ID, BROKEN_ID, PROTOBUF_ID, FAILING_ID = 19, 2, 7, 8, 500
NESTED_ANSWER_ID, NESTED_SCHEMA_ID, NESTED_FAILURE_ID, NESTED_UNKNOWN_ID = 31, 32, 503, 33
DEEP = "[" * 100_000 + "]" * 100_000


def _older_mcl_schema() -> str:
    """An older MCL schema version: no ``previousSystemMetadata`` / ``created`` fields (ids differ per version)."""
    schema = json.loads(shipped_mcl_schema_json())
    schema["fields"] = [
        field for field in schema["fields"] if field["name"] not in {"previousSystemMetadata", "created"}
    ]
    return json.dumps(schema)


class _Registry(BaseHTTPRequestHandler):
    requests: list[str] = []
    answers = {
        CURRENT_ID: (200, {"schema": shipped_mcl_schema_json()}),
        OLDER_ID: (200, {"schema": _older_mcl_schema()}),
        BROKEN_ID: (200, {"schema": "{not an avro schema"}),
        PROTOBUF_ID: (200, {"schema": "syntax = 'proto3';", "schemaType": "PROTOBUF"}),
        FAILING_ID: (500, {"error_code": 50001, "message": "store error"}),
    }
    raw_answers = {  # what a hostile or broken registry (or whatever answers at its URL) can send
        NESTED_ANSWER_ID: (200, DEEP),
        NESTED_SCHEMA_ID: (200, json.dumps({"schema": DEEP})),
        NESTED_FAILURE_ID: (500, DEEP),
        NESTED_UNKNOWN_ID: (404, DEEP),
    }

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        prefix = "/schema-registry/api/schemas/ids/"
        schema_id = int(self.path.removeprefix(prefix)) if self.path.startswith(prefix) else -1
        status, body = self.answers.get(schema_id, (404, {"error_code": 40403, "message": "Schema not found"}))
        if schema_id in self.raw_answers:
            status, text = self.raw_answers[schema_id]
            payload = text.encode()
        else:
            payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def registry_url() -> Iterator[str]:
    _Registry.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/schema-registry/api/"
    finally:
        server.shutdown()
        server.server_close()


def _message(schema_id: int, schema_json: str) -> bytes:
    record = mcl_record(Churn.RAW, "status", StatusClass(removed=True))
    if schema_id == OLDER_ID:
        record.pop("created")
    return encode_confluent(schema_id, record, fastavro.parse_schema(json.loads(schema_json)))


def test_the_writer_schema_is_fetched_by_the_id_in_the_message_and_cached(registry_url: str) -> None:
    resolver = RegistrySchemaResolver(registry_url)
    decoder = MclDecoder(resolver)

    first = decoder.decode_avro(_message(CURRENT_ID, shipped_mcl_schema_json()))
    second = decoder.decode_avro(_message(CURRENT_ID, shipped_mcl_schema_json()))

    assert first is not None and second is not None and first.aspect == StatusClass(removed=True)
    assert _Registry.requests == [f"/schema-registry/api/schemas/ids/{CURRENT_ID}"]
    resolver.close()


def test_an_older_schema_version_decodes_with_its_own_writer_schema(registry_url: str) -> None:
    older = _older_mcl_schema()
    message = _message(OLDER_ID, older)

    record = decode_confluent(message, RegistrySchemaResolver(registry_url))

    assert record["entityUrn"] == Churn.RAW and "created" not in record
    with pytest.raises(MclDecodeError):  # the shipped schema is not the writer schema of this message
        decode_confluent(message, ShippedSchemaResolver())


def test_an_id_the_registry_does_not_know_is_a_decode_error(registry_url: str) -> None:
    resolver = RegistrySchemaResolver(registry_url)
    with pytest.raises(UnknownSchemaId, match="40403 Schema not found"):
        resolver.resolve(404)

    with pytest.raises(MclDecodeError) as caught:
        decode_confluent(_message(12345, shipped_mcl_schema_json()), resolver)
    assert caught.value.reason == "unknown_schema_id"


def test_a_registry_answer_that_is_not_an_avro_schema_is_a_decode_error(registry_url: str) -> None:
    resolver = RegistrySchemaResolver(registry_url)
    for schema_id in (BROKEN_ID, PROTOBUF_ID):
        with pytest.raises(MclDecodeError) as caught:
            decode_confluent(_message(schema_id, shipped_mcl_schema_json()), resolver)
        assert caught.value.reason == "invalid_writer_schema"


def test_a_failing_or_absent_registry_is_transient_not_a_decode_error(registry_url: str) -> None:
    with pytest.raises(SchemaRegistryUnavailable, match="HTTP 500"):
        RegistrySchemaResolver(registry_url).resolve(FAILING_ID)
    closed = RegistrySchemaResolver("http://127.0.0.1:9/schema-registry/api", timeout_seconds=0.5)
    with pytest.raises(SchemaRegistryUnavailable):
        decode_confluent(_message(CURRENT_ID, shipped_mcl_schema_json()), closed)


def test_the_shipped_schema_is_used_only_when_no_registry_is_configured(registry_url: str) -> None:
    assert isinstance(schema_resolver_for(None), ShippedSchemaResolver)
    assert isinstance(schema_resolver_for(""), ShippedSchemaResolver)
    configured = schema_resolver_for(registry_url)
    assert isinstance(configured, RegistrySchemaResolver)
    with pytest.raises(UnknownSchemaId):
        configured.resolve(3)


def test_a_registry_answer_nested_past_the_parser_is_a_decode_error_or_transient(registry_url: str) -> None:
    """JSON nested past Python's recursion from the registry: the writer schema cannot be read (a decode error with
    the reason) and an error answer is still unavailable or unknown, not a RecursionError out of the consumer."""
    resolver = RegistrySchemaResolver(registry_url)
    for schema_id in (NESTED_ANSWER_ID, NESTED_SCHEMA_ID):
        with pytest.raises(MclDecodeError) as caught:
            decode_confluent(_message(schema_id, shipped_mcl_schema_json()), resolver)
        assert caught.value.reason == "invalid_writer_schema"
        assert "nested too deeply" in str(caught.value)
    with pytest.raises(SchemaRegistryUnavailable, match="HTTP 500"):
        resolver.resolve(NESTED_FAILURE_ID)
    with pytest.raises(UnknownSchemaId):
        resolver.resolve(NESTED_UNKNOWN_ID)
