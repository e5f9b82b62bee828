"""Contract evolution inside a major: services are upgraded one at a time, so a reader meets events one minor
older (its new optional fields take their defaults) and one minor newer (the fields it does not know are ignored),
while an event of its own version must match its model exactly. Every event here is really signed; the bytes on
the bus and in the ledger are never rewritten."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contracts.envelope import EVENT_PAYLOAD_TYPE
from libs.canonical_json import canonical_bytes
from libs.events.codec import MalformedMessage, SignedEvent, envelope_bytes, open_envelope
from libs.ledger import LedgerStore
from libs.ledger.projections import project
from libs.ledger.verify import verify_all
from libs.signing.dsse import sign_envelope
from tests.support.envelope_corpus import without_fields
from tests.support.sample_events import SampleKeys, repaired_incident

# What 1.1 added to the diagnosis, repair and validation contracts (contracts/registry.py)
FIELDS_OF_1_1 = ("model_ownership", "dataset_ownership", "cause_datasets")


@pytest.fixture(scope="module")
def keys() -> SampleKeys:
    return SampleKeys.generate()


@pytest.fixture(scope="module")
def incident(keys: SampleKeys) -> list[SignedEvent]:
    return repaired_incident(keys, "minor-versions")


def _document(signed: SignedEvent) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(json.dumps(signed.event.model_dump(mode="json")))
    return document


def _signed(keys: SampleKeys, document: dict[str, Any], payload: bytes | None = None) -> bytes:
    body = canonical_bytes(document) if payload is None else payload
    return envelope_bytes(sign_envelope(body, EVENT_PAYLOAD_TYPE, keys.keys[document["meta"]["producer"]]))


def _diagnosis(incident: list[SignedEvent]) -> SignedEvent:
    return next(e for e in incident if e.event.meta.event_type == "DiagnosisCompleted")


def test_an_event_one_minor_older_is_read_with_the_new_fields_at_their_defaults(
    keys: SampleKeys, incident: list[SignedEvent]
) -> None:
    current = _diagnosis(incident)
    older = without_fields(_document(current), FIELDS_OF_1_1)
    older["meta"]["event_version"] = "1.0"
    assert older != _document(current), "the sample carries the 1.1 fields"
    raw = _signed(keys, older)

    opened = open_envelope(raw, keys.registry)

    summary = opened.event.payload.report.context_summary
    assert not set(FIELDS_OF_1_1) & summary.model_fields_set
    assert all(
        getattr(summary, f) == type(summary).model_fields[f].get_default(call_default_factory=True)
        for f in FIELDS_OF_1_1
    )
    assert opened.envelope_bytes == raw, "the stored bytes are the writer's"
    assert opened.event.payload.report.hypotheses == current.event.payload.report.hypotheses


def test_an_event_one_minor_newer_is_read_without_the_fields_the_reader_does_not_know(
    keys: SampleKeys, incident: list[SignedEvent]
) -> None:
    current = _diagnosis(incident)
    newer = _document(current)
    newer["meta"]["event_version"] = "1.2"
    newer["meta"]["tenant"] = "analytics"
    newer["payload"]["report"]["calibration"] = {"ece": 0.031, "bins": [0.1, 0.2]}
    newer["payload"]["report"]["hypotheses"][0]["prior"] = 0.25
    raw = _signed(keys, newer)

    opened = open_envelope(raw, keys.registry)

    assert opened.event.payload == current.event.payload
    assert opened.event.meta.event_version == "1.2" and opened.envelope_bytes == raw
    assert opened.digest != current.digest


def test_an_unknown_field_at_the_readers_own_version_is_still_refused(
    keys: SampleKeys, incident: list[SignedEvent]
) -> None:
    same = _document(_diagnosis(incident))
    same["payload"]["report"]["calibration"] = {"ece": 0.031}
    with pytest.raises(MalformedMessage) as refused:
        open_envelope(_signed(keys, same), keys.registry)
    assert refused.value.reason == "schema-violation" and "calibration" in str(refused.value)


def test_a_newer_major_has_no_contract(keys: SampleKeys, incident: list[SignedEvent]) -> None:
    future = _document(_diagnosis(incident))
    future["meta"]["event_version"] = "2.0"
    with pytest.raises(MalformedMessage) as refused:
        open_envelope(_signed(keys, future), keys.registry)
    assert refused.value.reason == "unknown-event-type" and "have v1.1" in str(refused.value)


@pytest.mark.parametrize("version", ["1.0", "1.2"])
def test_every_version_must_still_be_signed_in_its_one_canonical_encoding(
    keys: SampleKeys, incident: list[SignedEvent], version: str
) -> None:
    document = without_fields(_document(_diagnosis(incident)), FIELDS_OF_1_1 if version == "1.0" else ())
    document["meta"]["event_version"] = version
    spaced = json.dumps(document, sort_keys=True, indent=1).encode()
    with pytest.raises(MalformedMessage) as refused:
        open_envelope(_signed(keys, document, spaced), keys.registry)
    assert refused.value.reason == "non-canonical-payload"


def test_an_older_event_whose_known_fields_are_not_as_signed_is_refused(
    keys: SampleKeys, incident: list[SignedEvent]
) -> None:
    """A value pydantic would coerce (a score sent as text) does not slip through the older-minor path."""
    older = without_fields(_document(_diagnosis(incident)), FIELDS_OF_1_1)
    older["meta"]["event_version"] = "1.0"
    older["payload"]["report"]["hypotheses"][0]["score"] = "0.82"
    with pytest.raises(MalformedMessage) as refused:
        open_envelope(_signed(keys, older), keys.registry)
    assert refused.value.reason in {"schema-violation", "non-canonical-payload"}


def test_a_ledger_holding_three_minors_of_one_contract_verifies_and_replays(
    keys: SampleKeys, incident: list[SignedEvent], tmp_path: Any
) -> None:
    """The incident's diagnosis as a 1.0 writer, a 1.1 writer and a 1.2 writer would have signed it: each in its
    own ledger, all verified and replayed by this reader into the same projection."""
    diagnosis_at = incident.index(_diagnosis(incident))
    projections = []
    for version in ("1.0", "1.1", "1.2"):
        document = _document(incident[diagnosis_at])
        if version == "1.0":
            document = without_fields(document, FIELDS_OF_1_1)
        if version == "1.2":
            document["payload"]["report"]["calibration"] = {"ece": 0.031}
        document["meta"]["event_version"] = version
        rewritten = open_envelope(_signed(keys, document), keys.registry)
        chain = [*incident[:diagnosis_at], rewritten]
        with LedgerStore(f"sqlite:///{tmp_path / f'ledger-{version}.db'}") as store:
            store.create_schema()
            for signed in chain:
                store.append(signed)
            [report] = verify_all(store, keys.registry)
            assert report.ok, (version, report)
            events = [
                open_envelope(row.envelope.encode(), keys.registry).event
                for row in store.incident_events(report.incident_id)
            ]
        projections.append(project(events))
    assert projections[0] == projections[1] == projections[2]
