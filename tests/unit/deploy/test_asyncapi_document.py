"""contracts/asyncapi.yaml is FastStream's AsyncAPI of each service, combined; it fails the build when stale,
every reference in it resolves, and what it says each service consumes is what the service's wiring consumes."""

from __future__ import annotations

import dataclasses
import importlib
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from contracts.asyncapi import service_document
from contracts.registry import DEAD_LETTER_TOPIC, contract_for
from contracts.schema_export import ASYNCAPI_DOCUMENT, SCHEMA_DIR, asyncapi_document, drifted
from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.runtime import ServiceDefinition
from libs.settings import load_settings
from libs.signing.keys import load_private_key, provision_keys
from modelguard.stack import REPO_ROOT, SERVICES, default_datahub_files, install_default_inputs


def test_the_committed_document_is_the_generated_one() -> None:
    assert ASYNCAPI_DOCUMENT.read_text() == asyncapi_document()
    assert "asyncapi.yaml" not in drifted()


def test_a_stale_document_is_reported(tmp_path: Path) -> None:
    stale = tmp_path / "asyncapi.yaml"
    stale.write_text(asyncapi_document().replace("modelguard.published.v1", "modelguard.published.v2", 1))
    assert "asyncapi.yaml" in drifted(asyncapi=stale)
    assert "missing.yaml" in drifted(asyncapi=tmp_path / "missing.yaml")


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref" and isinstance(v, str)] + [
            r for v in node.values() for r in _refs(v)
        ]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def _resolve(document: dict[str, Any], pointer: str) -> Any:
    node: Any = document
    for part in pointer.removeprefix("#/").split("/"):
        node = node[unquote(part).replace("~1", "/").replace("~0", "~")]
    return node


def test_every_reference_resolves_and_each_service_has_its_operations() -> None:
    document = yaml.safe_load(ASYNCAPI_DOCUMENT.read_text())
    refs = _refs(document)
    internal = [r for r in refs if r.startswith("#/")]
    assert internal and all(_resolve(document, r) is not None for r in internal)
    files = {r for r in refs if not r.startswith("#")}
    assert files and all((SCHEMA_DIR.parent / f).exists() for f in files)

    operations = document["operations"]
    assert operations["detector.receive.modelguard.evaluation-reported.v2"]["action"] == "receive"
    assert operations["detector.receive.modelguard.evaluation-reported.v1"]["action"] == "receive"  # a past major
    assert operations["detector.send.modelguard.regression-detected.v1"]["action"] == "send"
    assert operations["reporter.send.modelguard.evaluation-reported.v2"]["action"] == "send"
    assert "reporter.send.modelguard.evaluation-reported.v1" not in operations
    assert operations["context.receive.MetadataChangeLog_Versioned_v1"]["action"] == "receive"
    for service in SERVICES:
        assert f"{service}.send.{DEAD_LETTER_TOPIC}" in operations, f"{service} dead-letters"
    envelope = document["components"]["schemas"]["DsseEnvelope"]
    assert envelope["required"] == ["payloadType", "payload", "signatures"]


def test_a_service_document_is_fastStreams_own() -> None:
    document = service_document("validator")
    assert document["asyncapi"] == "3.0.0" and document["info"]["title"] == "modelguard-validator"
    assert set(document["channels"]) == {
        "modelguard.repair-proposed.v1",
        "modelguard.repair-validated.v1",
        "modelguard.validation-failed.v1",
        DEAD_LETTER_TOPIC,
    }


@pytest.fixture
def built_definitions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, ServiceDefinition]:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.setenv("MODELGUARD_DATAHUB_FILES", os.pathsep.join(str(p) for p in default_datahub_files()))
    settings = dataclasses.replace(load_settings(), datahub_root=REPO_ROOT)  # as the stack's processes read them
    provision_keys(list(SERVICES), settings.keys_dir)
    install_default_inputs(settings)
    built = {}
    for service in SERVICES:
        key = load_private_key(service, settings.keys_dir / f"{service}.key")
        built[service] = importlib.import_module(f"services.{service}.bootstrap").bootstrap(settings, key)
    return built


def test_each_service_runs_on_the_one_declaration_the_document_is_generated_from(
    built_definitions: dict[str, ServiceDefinition],
) -> None:
    """The runtime dead-letters an input the declaration does not name and an output it does not name either
    (tests/unit/bus/test_in_memory_transport.py), so what the document says each service does is what it can do."""
    assert {s: d.channels for s, d in built_definitions.items()} == {s: SERVICE_CHANNELS[s] for s in SERVICES}
    operations = yaml.safe_load(ASYNCAPI_DOCUMENT.read_text())["operations"]

    def topics(service: str, action: str) -> set[str]:
        prefix = f"{service}.{action}."
        return {o["channel"]["$ref"].removeprefix("#/channels/") for k, o in operations.items() if k.startswith(prefix)}

    for service, definition in built_definitions.items():
        assert topics(service, "receive") >= set(definition.topics)
        assert topics(service, "send") == {contract_for(t).topic for t in definition.produces} | {DEAD_LETTER_TOPIC}
    produced = [t for c in SERVICE_CHANNELS.values() for t in c.produces]
    assert sorted(produced) == sorted({t for c in SERVICE_CHANNELS.values() for t in c.consumes} | {"Published"})
    assert all(contract_for(t) for t in produced)
