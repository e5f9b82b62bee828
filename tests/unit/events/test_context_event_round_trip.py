"""The richest event on the wire: a real context snapshot of the churn scenario survives sign → bytes → verify."""

from __future__ import annotations

from contracts.common import PolicyRef
from contracts.events.context import ContextCollected
from libs.datahub.file_provider import FileContextProvider
from libs.events.codec import open_envelope, seal
from libs.events.factory import next_event
from modelguard.stack import SCENARIOS
from tests.support.sample_events import AT, Keys, artifact, gate, reported


def test_context_collected_round_trips_through_the_wire_format() -> None:
    keys = Keys("reporter", "context")
    cause = reported(keys)
    model = cause.event.payload.workspace.model_urn
    snapshot = FileContextProvider([SCENARIOS / "churn-monthly-spend" / "datahub" / "metadata.json"]).collect(
        model, AT.isoformat()
    )
    assert snapshot.deployments and snapshot.upstream_paths
    payload = ContextCollected(
        run_id="run-1",
        workspace=cause.event.payload.workspace,
        policy=PolicyRef(name="churn", artifact=artifact(b"policy")),
        gate=gate(),
        context=snapshot,
        context_digest=snapshot.digest().removeprefix("sha256:"),
    )
    event = next_event(payload, producer="context", producer_version="test", occurred_at=AT, causes=[cause])
    signed = seal(event, keys["context"])
    opened = open_envelope(signed.envelope_bytes, keys.registry)
    assert opened.event == signed.event
    assert opened.event.payload.context.digest() == snapshot.digest()
