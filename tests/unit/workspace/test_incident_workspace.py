"""A phase's inputs from the artifact store: a missing or corrupted one rejects the event with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.common import IncidentState, PolicyRef
from libs.artifacts.store import LocalArtifactStore
from libs.bundle.load import load_bundle
from libs.bus.handler_errors import RejectedInput
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.workspace.incident_workspace import incident_workspace
from tests.support.sample_events import gate, workspace


def _state(store: LocalArtifactStore, policy: bytes) -> IncidentState:
    return IncidentState(
        run_id="r", workspace=workspace(), policy=PolicyRef(name="p", artifact=store.put(policy, "x")), gate=gate()
    )


def test_a_missing_snapshot_rejects_the_input(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "artifacts")
    bundle = load_bundle(Path(__file__).resolve().parents[3] / "fixtures/scenarios/churn-monthly-spend")
    policy = effective_policy_bytes(bundle, read_central_policy())
    with pytest.raises(RejectedInput) as caught, incident_workspace(store, _state(store, policy), tmp_path):
        pass
    assert caught.value.reason == "inputs-unavailable" and "not in" in caught.value.detail


def test_an_unreadable_policy_rejects_the_input(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "artifacts")
    with (
        pytest.raises(RejectedInput, match="inputs-unavailable"),
        incident_workspace(store, _state(store, b"gate: [not, a, mapping"), tmp_path),
    ):
        pass
