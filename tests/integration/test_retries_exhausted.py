"""An input that keeps failing for a reason outside the service (here: DataHub's GMS does not answer) is
retried with backoff up to the central policy's ``delivery.max_attempts``, then dead-lettered with
``retries-exhausted``: the partition moves on, so the next input is tried too instead of waiting behind it."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
import yaml

from contracts.registry import DEAD_LETTER_TOPIC
from libs.bus.producer import publish_signed
from libs.policy.central import DEFAULT_CENTRAL_POLICY
from libs.signing.keys import load_private_key
from tests.support.kafka_reader import read_topic
from tests.support.running_stack import running_stack
from tests.support.sample_events import detected, reported

pytestmark = pytest.mark.broker


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_input_that_always_fails_is_dead_lettered_after_the_policys_attempts(tmp_path: Path) -> None:
    central = yaml.safe_load(DEFAULT_CENTRAL_POLICY.read_text())
    central["delivery"] = {"max_attempts": 3, "backoff_base_s": 0.05, "backoff_cap_s": 0.2}
    policy = tmp_path / "central.yaml"
    policy.write_text(yaml.safe_dump(central))
    env = {
        "MODELGUARD_CENTRAL_POLICY": str(policy),
        "MODELGUARD_CONTEXT_PROVIDER": "sdk",
        "DATAHUB_GMS_URL": f"http://127.0.0.1:{closed_port()}",
    }
    with running_stack(tmp_path / "home", env=env, services=("context",)) as stack:

        class Keys:
            def __getitem__(self, owner: str):  # type: ignore[no-untyped-def]
                return load_private_key(owner, stack.settings.keys_dir / f"{owner}.key")

        keys = Keys()
        first = detected(keys, reported(keys, run_id="gms-away-1", seed="a"))  # type: ignore[arg-type]
        second = detected(keys, reported(keys, run_id="gms-away-2", seed="b"))  # type: ignore[arg-type]
        asyncio.run(publish_signed(stack.bootstrap, [first, second]))
        dead = read_topic(stack.bootstrap, DEAD_LETTER_TOPIC, expected=2, timeout_s=120)
    headers = [dict(record.headers) for record in dead]
    assert [h["mg-dlq-reason"] for h in headers] == [b"retries-exhausted", b"retries-exhausted"]
    assert all(h["mg-dlq-service"] == b"context" for h in headers)
    details = [h["mg-dlq-detail"].decode() for h in headers]
    assert all(detail.startswith("failed 3 times (delivery.max_attempts 3); last: ") for detail in details)
    assert sorted(record.value for record in dead) == sorted([first.envelope_bytes, second.envelope_bytes])
