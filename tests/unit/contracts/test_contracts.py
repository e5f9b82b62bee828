"""The contracts: one topic per event type and major version, and committed schemas that match the models."""

from __future__ import annotations

from pathlib import Path

from contracts.registry import CONTRACTS, DEAD_LETTER_TOPIC, PAST_CONTRACTS, Event, all_topics
from contracts.schema_export import drifted, generated_files, topics_manifest


def test_every_contract_has_its_own_versioned_topic() -> None:
    topics = [c.topic for c in CONTRACTS.values()]
    assert len(set(topics)) == len(topics) == 13
    assert CONTRACTS["RegressionDetected"].topic == "modelguard.regression-detected.v1"
    assert DEAD_LETTER_TOPIC in all_topics()


def test_each_contract_reads_events_of_its_own_payload_model() -> None:
    contracts = [*CONTRACTS.values(), *PAST_CONTRACTS.values()]
    for contract in contracts:
        model = contract.event_model
        assert model is Event[contract.payload_model]  # type: ignore[name-defined]
        assert model.model_fields["payload"].annotation is contract.payload_model
        assert contract.event_model is model
    assert len({c.event_model for c in contracts}) == len({c.payload_model for c in contracts}) == len(contracts)


def test_committed_schemas_match_the_models() -> None:
    assert drifted() == []


def test_drift_is_detected(tmp_path: Path) -> None:
    manifest = tmp_path / "contract-topics.yaml"
    manifest.write_text(topics_manifest().replace("  - modelguard.published.v1\n", "", 1))
    for name, text in generated_files().items():
        (tmp_path / name).write_text(text)
    schema = tmp_path / "RegressionDetected.v1.schema.json"
    schema.write_text(schema.read_text().replace('"gate"', '"gates"', 1))
    (tmp_path / "Removed.v1.schema.json").write_text("{}")
    assert drifted(tmp_path, manifest) == [
        "RegressionDetected.v1.schema.json",
        "Removed.v1.schema.json",
        "contract-topics.yaml",
    ]


def test_the_event_schemas_validate_stored_events_with_the_catalogue_they_refer_to() -> None:
    import base64
    import json

    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    from contracts.schema_export import SCHEMA_BASE, SCHEMA_DIR

    resources = [
        (SCHEMA_BASE + path.name, Resource.from_contents(json.loads(path.read_text()), DRAFT202012))
        for path in SCHEMA_DIR.glob("*.json")
    ]
    registry = Registry().with_resources(resources)
    corpus = Path(__file__).resolve().parents[2] / "fixtures" / "envelope-corpus" / "envelopes.jsonl"
    documents = [
        json.loads(base64.b64decode(json.loads(json.loads(line)["envelope"])["payload"]))
        for line in corpus.read_text().splitlines()
    ]
    diagnosed = next(d for d in documents if d["meta"]["event_type"] == "DiagnosisCompleted")
    schema = json.loads((SCHEMA_DIR / "DiagnosisCompleted.v1.schema.json").read_text())
    validator = Draft202012Validator(schema, registry=registry)
    assert list(validator.iter_errors(diagnosed)) == []
    unknown = {**diagnosed, "payload": {**diagnosed["payload"], "hypothesis": "gremlins"}}
    assert [e.validator for e in validator.iter_errors(unknown)] == ["enum"], "the catalogue's names, resolved"
