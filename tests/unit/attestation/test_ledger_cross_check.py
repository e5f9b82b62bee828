"""The online check: an attestation's causal chain followed back into the incident log."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from contracts.common import ArtifactRef
from contracts.events.publication import Published
from libs.attestation import ATTESTATION_MEDIA_TYPE, attest_publication, cross_check, verify_attestation
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.ledger import LedgerStore
from tests.support.sample_events import SampleKeys, repaired_incident


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LedgerStore]:
    ledger = LedgerStore(f"sqlite:///{tmp_path / 'ledger.db'}")
    ledger.create_schema()
    yield ledger
    ledger.close()


def test_every_chain_event_is_found_verified_and_in_order(
    store: LedgerStore, keys: SampleKeys, incident: list[SignedEvent], validated: SignedEvent
) -> None:
    for event in incident:
        store.append(event)
    attestation = attest_publication(validated, keys.keys["publisher"])
    result = cross_check(verify_attestation(attestation.envelope_bytes, keys.registry), store, keys.registry)
    assert result.ok and result.problems == []
    assert [link.event_type for link in result.links] == [e.event.meta.event_type for e in incident[:-1]]
    assert result.published_by is None, "the sample's Published does not name this attestation"
    assert cross_check(attestation, store, keys.registry).ok


def test_a_chain_event_missing_from_the_ledger_is_named(
    store: LedgerStore, keys: SampleKeys, incident: list[SignedEvent], validated: SignedEvent
) -> None:
    for event in incident[2:]:
        store.append(event)
    check = verify_attestation(attest_publication(validated, keys.keys["publisher"]).envelope_bytes, keys.registry)
    result = cross_check(check, store, keys.registry)
    assert not result.ok
    assert result.problems == [
        f"chain event 1 (sha256 {incident[0].digest[:16]}..) is not in the ledger",
        f"chain event 2 (sha256 {incident[1].digest[:16]}..) is not in the ledger",
    ]


def test_an_attestation_of_another_ledger_finds_nothing(
    store: LedgerStore, keys: SampleKeys, validated: SignedEvent
) -> None:
    for event in repaired_incident(keys, "another"):
        store.append(event)
    result = cross_check(attest_publication(validated, keys.keys["publisher"]), store, keys.registry)
    assert not result.ok and len(result.problems) == 5 and result.links == []


def test_the_publication_that_names_the_attestation_is_found(
    store: LedgerStore, keys: SampleKeys, incident: list[SignedEvent], validated: SignedEvent
) -> None:
    attestation = attest_publication(validated, keys.keys["publisher"])
    published = Published(
        run_id=validated.event.payload.run_id,
        outcome="repair_validated",
        source_event_type="RepairValidated",
        channels=[],
        attestation=ArtifactRef(
            sha256=attestation.digest, media_type=ATTESTATION_MEDIA_TYPE, size=len(attestation.envelope_bytes)
        ),
    )
    event = next_event(
        published, producer="publisher", producer_version="t", occurred_at=datetime.now(UTC), causes=[validated]
    )
    publication = seal(event, keys.keys["publisher"])
    for signed in [*incident[:-1], publication]:
        store.append(signed)
    result = cross_check(attestation, store, keys.registry)
    assert result.ok and result.published_by == publication.event.meta.event_id


def test_an_unverified_attestation_has_no_chain_to_follow(store: LedgerStore, keys: SampleKeys) -> None:
    result = cross_check(verify_attestation(b"{}", keys.registry), store, keys.registry)
    assert not result.ok and result.problems == ["the attestation did not verify; there is no chain to follow"]
