"""The console over a PostgreSQL ledger (the deployed kind): the same signed events as the SQLite home the real
handlers filled, appended in their order, and a checkpoint sealed; the pages read and verify them alike. The
dead letters the ledger service keeps there read alike too."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

import pytest
from aiokafka.structs import ConsumerRecord  # type: ignore[import-untyped]
from starlette.testclient import TestClient

from contracts.registry import DEAD_LETTER_TOPIC
from libs.events.codec import open_envelope
from libs.ledger import LedgerStore, write_checkpoint
from libs.operations.dead_letter_store import DeadLetterStore
from modelguard.console.app import console_app
from modelguard.console.config import ConsoleAuth
from services.ledger.dead_letter_keeping import keep_record
from tests.support.console_home import DEPLOYMENT, ConsoleHome, fill_console_home
from tests.support.postgres import fresh_schema, postgres_server

pytestmark = pytest.mark.postgres

TOKEN = "postgres-console-token-0123456789"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> ConsoleHome:
    return fill_console_home(tmp_path_factory.mktemp("console-home"))


@pytest.fixture
def postgres_url(home: ConsoleHome) -> Iterator[str]:
    with postgres_server() as server, fresh_schema(server) as url:
        ledger = LedgerStore(url)
        ledger.create_schema()
        for row in LedgerStore(home.settings.ledger_url).events_after(0, 10_000):
            ledger.append(open_envelope(row.envelope_bytes, home.registry))
        write_checkpoint(ledger, home.key("ledger"))
        yield url
        ledger.close()


def test_the_pages_read_and_verify_a_postgresql_ledger(home: ConsoleHome, postgres_url: str) -> None:
    with TestClient(console_app(home.ledger(postgres_url), ConsoleAuth(token=TOKEN))) as client:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        listing = client.get("/", headers=headers).text
        page = client.get(f"/incidents/{home.regression}", headers=headers).text
        assert client.get("/readyz").text == "ok\n"
    assert set(re.findall(r'href="/incidents/(inc-[0-9a-f]{16})"', listing)) == {home.regression, home.risk}
    assert "all 7 events verified: signatures, hash chain, checkpoints" in page
    assert "<svg" in page and DEPLOYMENT in page and "NOT verified" not in page


def test_dead_letters_with_hostile_headers_are_kept_in_postgresql_and_shown_escaped(
    home: ConsoleHome, postgres_url: str
) -> None:
    """PostgreSQL refuses NUL in text: a header carrying one must not stop the ledger's dead-letter consumer."""
    store = DeadLetterStore(postgres_url)
    store.create_schema()
    raw = b"\x00<script>alert('bytes')</script>\xff"
    record = ConsumerRecord(
        topic=DEAD_LETTER_TOPIC,
        partition=3,
        offset=7,
        timestamp=1_760_000_000_000,
        timestamp_type=0,
        key=home.regression.encode(),
        value=raw,
        checksum=None,
        serialized_key_size=-1,
        serialized_value_size=len(raw),
        headers=[
            ("mg-dlq-reason", b"not-json"),
            ("mg-dlq-detail", b"a NUL \x00 here <b>and</b> there"),
            ("mg-dlq-service", b"detector\x00"),
            ("mg-dlq-source", b"modelguard.evaluation-reported.v1/0@9"),
        ],
    )
    assert keep_record(store, record) and not keep_record(store, record)
    with TestClient(console_app(home.ledger(postgres_url), ConsoleAuth(token=TOKEN))) as client:
        page = client.get("/operations", headers={"Authorization": f"Bearer {TOKEN}"}).text
    store.close()
    assert f"sha256:{hashlib.sha256(raw).hexdigest()}" in page and f"{len(raw)} bytes" in page
    assert "a NUL \ufffd here &lt;b&gt;and&lt;/b&gt; there" in page and "detector\ufffd" in page
    assert f'<a href="/incidents/{home.regression}">' in page and "alert(" not in page
