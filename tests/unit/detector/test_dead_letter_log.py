"""The detector's record of the dead-letter topic: a record read off the topic as the runtime wrote it, kept once
per place on the topic, found by incident and run, and still there after a restart."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from libs.bus.dead_letters import dead_letter_of
from libs.bus.headers import dead_letter_headers
from libs.state.sqlite_state import SqliteState
from services.detector.dead_letter_log import DeadLetterLog, RefusedInput


def _refused_envelope(run_id: str) -> bytes:
    event = {"meta": {}, "payload": {"run_id": run_id}}
    return json.dumps({"payloadType": "x", "payload": base64.b64encode(json.dumps(event).encode()).decode()}).encode()


def _record(incident: bytes | None, run_id: str, reason: str = "handler-error") -> tuple:
    headers = dead_letter_headers(reason, "ReadError: invalid header\nTraceback ...", "diagnoser", "topic/0@5")
    return incident, _refused_envelope(run_id), [(k, v.encode()) for k, v in headers.items()]


def test_a_dead_letter_is_kept_once_by_its_place_and_found_by_incident_and_run(tmp_path: Path) -> None:
    log = DeadLetterLog.of(SqliteState(lambda service: tmp_path / service), "detector")
    first = dead_letter_of(*_record(b"inc-0000000000000001", "ci-1"))

    assert log.record("dlq/0@0", first) is True
    assert log.record("dlq/0@0", first) is False, "a redelivered record is the same dead letter"
    assert log.record("dlq/0@1", dead_letter_of(*_record(b"inc-0000000000000001", "ci-2", "bad-evaluation")))
    assert log.record("dlq/0@2", dead_letter_of(*_record(None, "ci-1"))) is False, "no incident: not kept"

    [refused] = log.of_run("inc-0000000000000001", "ci-1")
    assert refused == RefusedInput(
        "diagnoser", "topic/0@5", "handler-error", "ReadError: invalid header\nTraceback ..."
    )
    assert refused.line() == "diagnoser dead-lettered topic/0@5: handler-error: ReadError: invalid header"
    assert [r.reason for r in log.of_run("inc-0000000000000001", "ci-2")] == ["bad-evaluation"]
    assert log.of_run("inc-0000000000000002", "ci-1") == []
    log.close()

    assert (tmp_path / "detector" / "dead_letters.sqlite").is_file()
    reopened = DeadLetterLog.of(SqliteState(lambda service: tmp_path / service), "detector")
    assert len(reopened.of_run("inc-0000000000000001", "ci-1")) == 1
    reopened.close()


def test_a_long_reason_is_cut_to_one_line_of_bounded_length() -> None:
    refused = RefusedInput("detector", "t/0@1", "referee-failed", "x" * 5000)
    line = refused.line()
    assert len(line) == 400 and line.endswith("…") and "\n" not in line
