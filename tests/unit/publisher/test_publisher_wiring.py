"""The service's wiring: fixture mode by default, the source event attested, stored and linked."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.events.publication import Published
from libs.artifacts.store import LocalArtifactStore
from libs.attestation import verify_attestation
from libs.settings import load_settings
from services.publisher.bootstrap import bootstrap
from tests.unit.publisher.publisher_inputs import make_keys, signed, upstream_risk_payload, validated_payload


def test_the_handler_attests_stores_and_links_the_attestation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    settings = load_settings()
    keys = make_keys()
    handler = bootstrap(settings, keys["publisher"]).handler
    assert handler is not None

    (published,) = handler(signed(keys, validated_payload()))
    assert isinstance(published, Published) and published.attestation is not None
    envelope = LocalArtifactStore(settings.artifacts_dir).get(published.attestation)
    assert verify_attestation(envelope, keys.registry).ok
    digest = published.attestation.sha256
    (comment,) = (settings.publish_dir / "github").rglob("*.md")
    assert f"attestation `sha256:{digest}`" in comment.read_text()
    (incident,) = (settings.publish_dir / "datahub").glob("urn_li_incident*.json")
    assert digest in incident.read_text()

    (upstream,) = handler(signed(keys, upstream_risk_payload(), incident_id="inc-00000000000000aa"))
    assert [c.channel for c in upstream.channels] == ["datahub", "datahub"] and upstream.attestation is not None
