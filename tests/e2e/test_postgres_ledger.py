"""The production ledger under the real pipeline: the stack's ledger service appending the churn incident to
PostgreSQL, the chain verifying, and the database itself refusing to rewrite history."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from libs.ledger import LedgerStore, verify_incident
from libs.ledger.schema import REFUSAL
from modelguard.submit import submit, wait_for_run
from tests.e2e.conftest import CHURN
from tests.support.postgres import fresh_schema, libpq_url, postgres_server
from tests.support.running_stack import RunningStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.broker, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pg_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    home = tmp_path_factory.mktemp("pg")
    with (
        postgres_server() as server,
        fresh_schema(server) as url,
        running_stack(home, {"MODELGUARD_LEDGER_URL": url}) as running,
    ):
        yield running


def test_the_pipeline_appends_to_postgresql_which_refuses_rewrites(pg_stack: RunningStack) -> None:
    reported = submit(pg_stack.settings, CHURN, "pg-run-1", 42)
    events = wait_for_run(pg_stack.settings, reported, timeout_s=600)
    incident = reported.signed.event.meta.incident_id
    store = LedgerStore(pg_stack.settings.ledger_url)
    assert store.backend == "postgresql"
    report = verify_incident(store, incident, pg_stack.registry)
    assert report.ok and report.events_checked == len(events) == 7

    with psycopg.connect(libpq_url(pg_stack.settings.ledger_url), autocommit=True) as connection:
        for statement in ("UPDATE ledger_events SET envelope = envelope", "DELETE FROM ledger_events"):
            with pytest.raises(psycopg.Error, match=REFUSAL):
                connection.execute(statement)
    assert verify_incident(store, incident, pg_stack.registry).events_checked == 7
