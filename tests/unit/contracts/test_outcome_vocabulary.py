"""Outcomes are named once (contracts/outcomes.py): the stored envelopes read into the enums and re-encode to the
bytes their writers signed, a contract refuses an outcome outside its vocabulary, and every table keyed by an
outcome or a publication state has a row for each member."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from contracts.events.publication import Published
from contracts.outcomes import (
    PUBLISHED_OUTCOME_OF,
    RUN_OUTCOMES,
    Outcome,
    PublicationState,
    publication_state,
)
from contracts.registry import contract_for
from libs.events.codec import SignedEvent, event_bytes, open_envelope
from libs.policy.ci import CiOutcomes
from libs.signing.dsse import decode_payload
from libs.signing.keys import KeyRegistry
from modelguard.exit_codes import OUTCOME_EXIT_CODES
from services.publisher.finding import STAGES
from services.publisher.notification_message import SAYS
from services.publisher.render_comment import HEADLINES

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "envelope-corpus"


def _stored() -> list[SignedEvent]:
    registry = KeyRegistry.from_document(json.loads((CORPUS / "registry.json").read_text()))
    lines = (CORPUS / "envelopes.jsonl").read_text().splitlines()
    return [open_envelope(json.loads(line)["envelope"].encode(), registry) for line in lines if line.strip()]


def test_stored_publications_read_into_the_enums_and_re_encode_to_the_signed_bytes() -> None:
    stored = _stored()
    published = [s for s in stored if isinstance(s.event.payload, Published)]
    assert {s.event.payload.outcome for s in published} >= {Outcome.REPAIR_VALIDATED, Outcome.UPSTREAM_RISK}
    for signed in published:
        payload: Any = signed.event.payload
        assert type(payload.outcome) is Outcome
        assert all(type(n.state) is PublicationState for n in payload.notifications)
    current = [s for s in stored if s.event.meta.event_version == contract_for(s.event.meta.event_type).version]
    assert current, "the corpus holds events of today's contract versions"
    for signed in current:  # the typed event's canonical JSON is the payload its writer signed, byte for byte
        assert event_bytes(signed.event) == decode_payload(signed.envelope), signed.event.meta.event_type


def test_a_publication_refuses_an_outcome_no_publication_is_made_for() -> None:
    for word in ("repair_proposed", Outcome.GATE_PASSED, Outcome.NO_CODE_REPAIR):
        with pytest.raises(ValidationError):
            Published(run_id="ci-1", outcome=word, source_event_type="RepairValidated", channels=[])  # type: ignore[arg-type]


def test_every_run_outcome_has_an_exit_code_and_a_ci_key_and_every_published_one_a_state() -> None:
    assert set(OUTCOME_EXIT_CODES) == set(RUN_OUTCOMES) == set(CiOutcomes.model_fields)
    assert set(Outcome) - set(RUN_OUTCOMES) == {Outcome.UPSTREAM_RISK}
    states = {publication_state(o, abstained=False) for o in PUBLISHED_OUTCOME_OF.values()}
    assert states | {publication_state(Outcome.REPAIR_WITHHELD, abstained=True)} == set(PublicationState)


def test_every_publication_table_has_a_row_for_each_member() -> None:
    assert set(STAGES) == set(SAYS) == set(PublicationState)
    assert set(HEADLINES) == set(PUBLISHED_OUTCOME_OF.values())
