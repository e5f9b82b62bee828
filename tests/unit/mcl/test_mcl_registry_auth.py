"""Schema registry credentials: basic auth or a bearer token from the environment or a mounted file, sent to a
loopback registry that refuses requests without them; one line for a setting that cannot work; the secret is in
no repr, description or error."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from libs.datahub.mcl.avro_schema import shipped_mcl_schema, shipped_mcl_schema_json
from libs.datahub.mcl.registry_auth import RegistryAuth, RegistryAuthError, registry_auth_for, registry_auth_from
from libs.datahub.mcl.schema_registry import SchemaRegistryUnavailable, schema_resolver_for
from modelguard.emit_mcl import registered_schema_id

TOKEN = "dh-access-token-0123456789"
PASSWORD = "registry-secret-9876"
BASIC = "Basic " + base64.b64encode(f"svc-modelguard:{PASSWORD}".encode()).decode()


def test_nothing_set_sends_no_authorization() -> None:
    auth = registry_auth_from({})
    assert auth == RegistryAuth() and auth.headers() == {} and auth.describe() == "no authentication"


def test_basic_auth_from_the_environment_or_a_file(tmp_path: Path) -> None:
    env = {"MODELGUARD_SCHEMA_REGISTRY_USER": "svc-modelguard", "MODELGUARD_SCHEMA_REGISTRY_PASSWORD": PASSWORD}
    assert registry_auth_from(env).headers() == {"Authorization": BASIC}
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    env = {"MODELGUARD_SCHEMA_REGISTRY_USER": "svc-modelguard", "MODELGUARD_SCHEMA_REGISTRY_PASSWORD_FILE": str(secret)}
    auth = registry_auth_from(env)
    assert auth.headers() == {"Authorization": BASIC} and auth.describe() == "basic auth as svc-modelguard"


def test_a_bearer_token_from_the_environment_or_a_file(tmp_path: Path) -> None:
    assert registry_auth_from({"MODELGUARD_SCHEMA_REGISTRY_TOKEN": TOKEN}).headers() == {
        "Authorization": f"Bearer {TOKEN}"
    }
    token = tmp_path / "token"
    token.write_text(TOKEN)
    auth = registry_auth_from({"MODELGUARD_SCHEMA_REGISTRY_TOKEN_FILE": str(token)})
    assert auth.headers() == {"Authorization": f"Bearer {TOKEN}"} and auth.describe() == "a bearer token"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"MODELGUARD_SCHEMA_REGISTRY_TOKEN": TOKEN, "MODELGUARD_SCHEMA_REGISTRY_USER": "u"},
            "MODELGUARD_SCHEMA_REGISTRY_TOKEN and MODELGUARD_SCHEMA_REGISTRY_USER/PASSWORD are both set",
        ),
        (
            {"MODELGUARD_SCHEMA_REGISTRY_USER": "u"},
            "MODELGUARD_SCHEMA_REGISTRY_USER is set without MODELGUARD_SCHEMA_REGISTRY_PASSWORD or "
            "MODELGUARD_SCHEMA_REGISTRY_PASSWORD_FILE",
        ),
        (
            {"MODELGUARD_SCHEMA_REGISTRY_PASSWORD": PASSWORD},
            "MODELGUARD_SCHEMA_REGISTRY_PASSWORD is set without MODELGUARD_SCHEMA_REGISTRY_USER",
        ),
        (
            {"MODELGUARD_SCHEMA_REGISTRY_TOKEN": TOKEN, "MODELGUARD_SCHEMA_REGISTRY_TOKEN_FILE": "/run/token"},
            "MODELGUARD_SCHEMA_REGISTRY_TOKEN and MODELGUARD_SCHEMA_REGISTRY_TOKEN_FILE are both set; set one",
        ),
        (
            {"MODELGUARD_SCHEMA_REGISTRY_TOKEN_FILE": "/nowhere/token"},
            "MODELGUARD_SCHEMA_REGISTRY_TOKEN_FILE: cannot read /nowhere/token",
        ),
        (
            {"MODELGUARD_SCHEMA_REGISTRY_USER": "a:b", "MODELGUARD_SCHEMA_REGISTRY_PASSWORD": PASSWORD},
            "MODELGUARD_SCHEMA_REGISTRY_USER must not contain ':'",
        ),
    ],
)
def test_a_setting_that_cannot_work_is_one_line_without_the_secret(env: dict[str, str], expected: str) -> None:
    with pytest.raises(RegistryAuthError) as caught:
        registry_auth_from(env)
    message = str(caught.value)
    assert message.startswith(expected) and "\n" not in message
    assert TOKEN not in message and PASSWORD not in message


def test_an_empty_token_file_and_credentials_for_no_registry_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "token"
    empty.write_text("")
    with pytest.raises(RegistryAuthError, match=r"is empty$"):
        registry_auth_from({"MODELGUARD_SCHEMA_REGISTRY_TOKEN_FILE": str(empty)})
    with pytest.raises(RegistryAuthError, match="credentials are set but MODELGUARD_SCHEMA_REGISTRY_URL is not"):
        registry_auth_for({"MODELGUARD_SCHEMA_REGISTRY_TOKEN": TOKEN}, None)
    assert registry_auth_for({}, None) == RegistryAuth()


def test_no_secret_in_the_repr() -> None:
    for env in (
        {"MODELGUARD_SCHEMA_REGISTRY_TOKEN": TOKEN},
        {"MODELGUARD_SCHEMA_REGISTRY_USER": "svc-modelguard", "MODELGUARD_SCHEMA_REGISTRY_PASSWORD": PASSWORD},
    ):
        auth = registry_auth_from(env)
        for text in (repr(auth), str(auth), auth.describe()):
            assert TOKEN not in text and PASSWORD not in text and BASIC not in text


class _GuardedRegistry(BaseHTTPRequestHandler):
    """A Confluent-API registry that answers only requests carrying the expected Authorization header."""

    expected = ""

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") == type(self).expected:
            return True
        body = json.dumps({"error_code": 40101, "message": "Unauthorized"}).encode()
        self.send_response(401)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return False

    def _answer(self, document: dict[str, object]) -> None:
        body = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self._authorized():
            self._answer({"schema": shipped_mcl_schema_json()})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self._authorized():
            self._answer({"id": 42})

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def registry() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GuardedRegistry)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/schema-registry/api"
    finally:
        server.shutdown()
        server.server_close()


def test_the_resolver_sends_the_bearer_token_and_without_it_the_registry_is_unavailable(registry: str) -> None:
    _GuardedRegistry.expected = f"Bearer {TOKEN}"
    refused = schema_resolver_for(registry)
    with pytest.raises(SchemaRegistryUnavailable, match="HTTP 401") as caught:
        refused.resolve(19)
    assert TOKEN not in str(caught.value)
    auth = registry_auth_for({"MODELGUARD_SCHEMA_REGISTRY_TOKEN": TOKEN}, registry)
    assert schema_resolver_for(registry, headers=auth.headers()).resolve(19) == shipped_mcl_schema()


def test_emit_mcl_registers_its_schema_with_basic_auth(registry: str) -> None:
    _GuardedRegistry.expected = BASIC
    with pytest.raises(httpx.HTTPStatusError) as caught:
        registered_schema_id(registry)
    assert caught.value.response.status_code == 401
    env = {"MODELGUARD_SCHEMA_REGISTRY_USER": "svc-modelguard", "MODELGUARD_SCHEMA_REGISTRY_PASSWORD": PASSWORD}
    assert registered_schema_id(registry, registry_auth_for(env, registry).headers()) == 42
