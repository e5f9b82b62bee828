"""Owners in the contracts (1.1): per affected asset, typed, signed and read back; a 1.0 event still reads."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from contracts.common import AssetOwners, owner_urns
from contracts.events.repair import RepairWithheld
from contracts.registry import CONTRACTS, parse_event
from libs.events.codec import event_bytes, open_envelope
from tests.support.sample_owners import owned, owner
from tests.unit.publisher.publisher_inputs import MODEL, UPSTREAM, make_keys, report, signed, withheld_payload

TEAM = "urn:li:corpGroup:crm-data"
ALICE = "urn:li:corpuser:alice"


def test_an_owner_listed_under_another_asset_is_refused() -> None:
    with pytest.raises(ValidationError, match="listed under"):
        AssetOwners(asset=MODEL, owners=[owner(UPSTREAM, TEAM)])


def test_owner_urns_name_each_owner_once_in_the_order_of_the_assets() -> None:
    entries = [
        owned(UPSTREAM, (TEAM, "DATAOWNER"), (ALICE, "TECHNICAL_OWNER")),
        owned(MODEL, (ALICE, "BUSINESS_OWNER")),
    ]
    assert owner_urns(entries) == [TEAM, ALICE]
    assert owner_urns([owned(MODEL)]) == []


def test_the_events_that_carry_owners_are_at_a_new_minor_version_on_the_same_topic() -> None:
    changed = ("DiagnosisCompleted", "DiagnosisAbstained", "RepairProposed", "RepairWithheld", "RepairValidated")
    assert {CONTRACTS[name].version for name in (*changed, "ValidationFailed")} == {"1.1"}
    assert CONTRACTS["RepairWithheld"].topic == "modelguard.repair-withheld.v1"


def test_a_withheld_repair_with_owners_round_trips_through_its_signed_envelope() -> None:
    keys = make_keys()
    owners = [owned(UPSTREAM, (TEAM, "DATAOWNER")), owned(MODEL)]
    payload = withheld_payload(owners=owners)
    sealed = signed(keys, payload)
    opened = open_envelope(sealed.envelope_bytes, keys.registry)
    assert opened.event.meta.event_version == "1.1"
    assert opened.event.payload == payload
    assert opened.event.payload.owners[0].owners[0].type == "DATAOWNER"
    assert opened.event.payload.owners[1] == AssetOwners(asset=MODEL)  # DataHub records no owner for the model


def test_a_1_0_event_without_owner_records_still_reads() -> None:
    keys = make_keys()
    document = json.loads(event_bytes(signed(keys, withheld_payload()).event))
    document["meta"]["event_version"] = "1.0"
    del document["payload"]["owners"]
    for key in ("model_ownership", "dataset_ownership", "cause_datasets"):
        del document["payload"]["diagnosis"]["context_summary"][key]
    document["payload"]["owners_to_notify"] = [ALICE]
    event = parse_event(document, json.dumps(document).encode())
    payload = event.payload
    assert isinstance(payload, RepairWithheld)
    assert payload.owners == [] and payload.owners_to_notify == [ALICE]
    assert payload.diagnosis.context_summary.model_ownership is None
    assert report().context_summary.model_ownership is not None  # what 1.1 diagnoses carry
