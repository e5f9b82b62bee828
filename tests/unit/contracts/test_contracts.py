"""The contracts: one topic per event type and major version, and committed schemas that match the models."""

from __future__ import annotations

from pathlib import Path

from contracts.registry import CONTRACTS, DEAD_LETTER_TOPIC, all_topics
from contracts.schema_export import drifted, generated_files, topics_manifest


def test_every_contract_has_its_own_versioned_topic() -> None:
    topics = [c.topic for c in CONTRACTS.values()]
    assert len(set(topics)) == len(topics) == 13
    assert CONTRACTS["RegressionDetected"].topic == "modelguard.regression-detected.v1"
    assert DEAD_LETTER_TOPIC in all_topics()


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
