"""The console over a PostgreSQL ledger (the deployed kind): the same signed events as the SQLite home the real
handlers filled, appended in their order, and a checkpoint sealed; the pages read and verify them alike."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from libs.events.codec import open_envelope
from libs.ledger import LedgerStore, write_checkpoint
from modelguard.console.app import console_app
from modelguard.console.config import ConsoleAuth
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
