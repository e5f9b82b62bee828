"""The dead letters kept beside the ledger: once per record, a new row for new content at a reused offset, text
cut and stripped of control characters, the bytes' digest and size but never the bytes."""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from libs.bus.dead_letters import DeadLetter
from libs.operations.dead_letter_store import KEEP_CHARS, TABLE, DeadLetterStore, keepable
from services.ledger.dead_letter_keeping import record_time

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _store(tmp_path: Path) -> DeadLetterStore:
    store = DeadLetterStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    assert not store.exists()
    store.create_schema()
    assert store.exists()
    return store


def test_a_record_read_twice_is_kept_once_and_new_content_at_a_reused_offset_is_a_new_row(tmp_path: Path) -> None:
    store = _store(tmp_path)
    letter = DeadLetter("inc-1", "not-json", "Expecting value", "detector", "topic/0@4", b"<not json>")
    assert store.keep("modelguard.dead-letter.v1/0@0", letter, AT)
    assert not store.keep("modelguard.dead-letter.v1/0@0", letter, AT)
    other = DeadLetter("inc-2", "not-json", "Expecting value", "detector", "topic/0@0", b"other bytes")
    assert store.keep("modelguard.dead-letter.v1/0@0", other, AT + timedelta(minutes=1))  # a broker started afresh
    assert store.count() == 2
    newest = store.newest()
    assert [k.key for k in newest] == ["inc-2", "inc-1"]
    assert newest[1].sha256 == hashlib.sha256(b"<not json>").hexdigest() and newest[1].size == len(b"<not json>")
    assert [(g.service, g.reason, g.count) for g in store.groups()] == [("detector", "not-json", 2)]
    assert store.newest(service="ledger") == [] and len(store.newest(reason="not-json")) == 2


def test_the_bytes_are_never_kept_and_hostile_text_is_cut_and_stripped(tmp_path: Path) -> None:
    store = _store(tmp_path)
    marker = b"THE-REFUSED-BYTES"
    hostile = DeadLetter("k\x00" + "x" * 1000, "r\x1b[31m", "d\x00" * 5000, "s\x07", "src\r", marker * 100_000)
    assert store.keep("p", hostile, None)
    (kept,) = store.newest()
    assert kept.size == len(marker) * 100_000 and kept.sha256 == hashlib.sha256(hostile.value).hexdigest()
    assert len(kept.detail) == KEEP_CHARS["detail"] and kept.detail.endswith("…")
    assert kept.key is not None and len(kept.key) == KEEP_CHARS["key"]
    assert (kept.reason, kept.service, kept.source) == ("r\ufffd[31m", "s\ufffd", "src\ufffd")
    assert not any(c in "".join([kept.detail, kept.key]) for c in "\x00\x1b\x07\r")
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
        stored = b"".join(str(v).encode() for row in db.execute(f"SELECT * FROM {TABLE}") for v in row)
    assert marker not in stored
    assert keepable("line\nnext\ttab", 100) == "line\nnext\ttab"


def test_the_record_time_is_the_kafka_timestamp_when_it_is_one() -> None:
    assert record_time(1_760_000_000_000) == datetime.fromtimestamp(1_760_000_000, UTC)
    for not_a_time in (None, -1, 0, "1760000000000", 10**30):
        assert record_time(not_a_time) is None
