"""A dead letter keeps the refused bytes; what it says about its run is read without trusting them."""

from __future__ import annotations

import base64
import json

from libs.bus.dead_letters import DeadLetter


def test_a_dead_letter_names_the_run_of_the_refused_event_without_trusting_it() -> None:
    event = {"meta": {}, "payload": {"run_id": "ci-7"}}
    envelope = {"payloadType": "x", "payload": base64.b64encode(json.dumps(event).encode()).decode()}
    letter = DeadLetter(None, "bad-signature", "", "detector", "t/0@1", json.dumps(envelope).encode())
    assert letter.run_id() == "ci-7"
    assert DeadLetter(None, "not-json", "", "detector", "t/0@2", b"\xff").run_id() is None
