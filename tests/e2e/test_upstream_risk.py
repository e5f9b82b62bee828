"""Issue 3 end to end over the real broker: an MCL from DataHub in, an UpstreamRiskDetected out naming the
churn model and its deployment; bad MCL bytes are dead-lettered with a reason and the mirror keeps going."""

from __future__ import annotations

import asyncio
import time

import pytest

from libs.bus.dead_letters import read_dead_letters
from libs.bus.producer import publish_raw
from modelguard.emit_mcl import OFFLINE_SCHEMA_ID, emit_change, encode_change
from modelguard.incident_log import incident_events
from modelguard.upstream_act import run_upstream_act
from tests.e2e.conftest import CHURN, RunningStack

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

CHANGE = CHURN / "datahub" / "changes" / "rename-account-age.yaml"
METADATA = [CHURN / "datahub" / "metadata.json"]
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)"
DEPLOYMENT = "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,churn-endpoint,PROD)"


def test_bad_mcl_bytes_are_dead_lettered_and_a_schema_change_names_the_model_at_risk(stack: RunningStack) -> None:
    topic = stack.settings.mcl_topics[0]
    good, urn = encode_change(CHANGE, METADATA, OFFLINE_SCHEMA_ID)

    async def send_garbage() -> None:
        await publish_raw(stack.bootstrap, topic, good[:40], key=b"truncated")
        await publish_raw(stack.bootstrap, topic, b"\x07" + good[1:], key=b"bad-magic")
        await publish_raw(stack.bootstrap, topic, b'{"entityUrn": NaN}', key=b"nan-json")

    asyncio.run(send_garbage())
    risk = run_upstream_act(stack.settings, stack.bootstrap, CHANGE, METADATA)
    assert risk["cause"] == "schema_change"
    assert risk["models"] == [MODEL]
    assert risk["deployments"] == [DEPLOYMENT]
    assert risk["owners"], "the model's owners come from DataHub ownership"
    assert risk["publication"]["datahub"] == "created"

    letters = {d.key: d.reason for d in read_dead_letters(stack.bootstrap) if d.service == "context"}
    assert letters["truncated"].startswith("mcl-") and letters["bad-magic"] == "mcl-bad-magic"
    assert letters["nan-json"].startswith("mcl-")

    # the same change again is deduplicated: no second UpstreamRiskDetected in the incident
    emit_change(stack.bootstrap, topic, good, urn)
    time.sleep(3)  # give the context service time to consume the repeat (it answers with nothing)
    events = incident_events(stack.ledger, risk["incident_id"], stack.registry)
    assert [e.event.meta.event_type for e in events] == ["UpstreamRiskDetected", "Published"]
