"""One bundle through both transports: the churn incident through `modelguard investigate` (every service's runtime
over the in-memory Kafka, one process) and through the stack (seven processes over the embedded broker) is the same
incident, event for event: the same event ids, producers, versions and causes, and payloads equal up to what a
clock wrote (tests/support/transport_parity.py says exactly what that is, and why)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from libs.ledger import LedgerStore, verify_checkpoints, verify_incident
from libs.settings import load_settings
from libs.signing.keys import KeyRegistry
from modelguard.investigate import investigate
from modelguard.stack import REPO_ROOT
from modelguard.submit import submit, wait_for_run
from tests.e2e.conftest import CHURN
from tests.support.running_stack import environment, running_stack
from tests.support.sample_events import REPAIRED_INCIDENT_EVENTS
from tests.support.transport_parity import compare, side

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

RUN_ID, PULL_REQUEST = "parity-1", 42


def test_the_churn_incident_is_the_same_through_investigate_and_through_kafka(tmp_path: Path) -> None:
    # the stack reads the bundle's own DataHub files, named as investigate names them (relative to the repository,
    # the services' working directory), so both sides see the same metadata
    datahub = {
        "MODELGUARD_DATAHUB_FILES": str((CHURN / "datahub" / "metadata.json").relative_to(REPO_ROOT)),
        "MODELGUARD_DATAHUB_CHANGES": str((CHURN / "datahub" / "changes.json").relative_to(REPO_ROOT)),
    }
    with running_stack(tmp_path / "stack", env=datahub) as stack:
        reported = submit(stack.settings, CHURN, RUN_ID, PULL_REQUEST)
        over_kafka = wait_for_run(stack.settings, reported, timeout_s=900)
    assert verify_incident(stack.ledger, reported.signed.event.meta.incident_id, stack.registry).ok

    # investigate in a home of its own, with the stack's keys (a signature is compared as it is, not normalised)
    home = tmp_path / "investigate"
    shutil.copytree(stack.settings.keys_dir, home / "keys")
    with environment({"MODELGUARD_HOME": str(home)}):
        settings = load_settings()
    in_memory = investigate(settings, CHURN, RUN_ID, PULL_REQUEST, lambda _event: None)
    store, registry = LedgerStore(settings.ledger_url), KeyRegistry.load(settings.key_registry_path)
    assert verify_incident(store, in_memory[0].event.meta.incident_id, registry).ok
    assert verify_checkpoints(store, registry).ok

    memory = side(in_memory, settings.artifacts_dir, settings.publish_dir)
    kafka = side(over_kafka, stack.settings.artifacts_dir, stack.settings.publish_dir)
    rows = compare(memory, kafka)
    for row in rows:
        print(
            f"{row.event_type:20} {row.event_id}  payload digest equal: {row.payload_equal!s:5}  "
            f"equal once normalised: {row.normalised_equal!s:5}  normalised fields: {len(row.normalised_paths)}"
        )
    assert [row.event_type for row in rows] == [*REPAIRED_INCIDENT_EVENTS]
    assert {e.event.meta.event_id for e in over_kafka} == {e.event.meta.event_id for e in in_memory}
    assert all(row.normalised_equal for row in rows), [r for r in rows if not r.normalised_equal]
    # what a clock wrote first reaches a payload in the context snapshot; the phases before it are equal as they are
    assert [row.payload_equal for row in rows[:2]] == [True, True]
