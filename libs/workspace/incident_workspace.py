"""What a phase after detection needs from an incident's artifacts: its policy and a private workspace copy (or
only the copy's two trees, for a phase that reads no data)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from contracts.common import IncidentState
from libs.artifacts.store import ArtifactCorrupted, ArtifactNotFound, ArtifactStore, ArtifactStoreUnavailable
from libs.bus.handler_errors import RejectedInput, TransientFailure
from libs.policy.errors import PolicyError
from libs.policy.model_policy import ModelPolicy, parse_policy
from libs.workspace.materialize import (
    MaterializedTrees,
    MaterializedWorkspace,
    materialized_trees,
    materialized_workspace,
)
from libs.workspace.snapshot import UnsafeSnapshot

UNAVAILABLE = (ArtifactNotFound, ArtifactCorrupted, UnsafeSnapshot, PolicyError, UnicodeDecodeError)


@contextmanager
def incident_workspace(
    artifacts: ArtifactStore, state: IncidentState, scratch: Path
) -> Iterator[tuple[ModelPolicy, MaterializedWorkspace]]:
    """The incident's policy (by digest) and both trees plus data, extracted for the block and removed after.

    Missing, corrupted or unsafe inputs reject the event (dead-lettered with the reason `inputs-unavailable`); a
    store that does not answer is a transient failure (the input is retried).
    """
    with _input_errors_translated():
        policy = parse_policy(artifacts.get(state.policy.artifact), state.policy.name)
        with materialized_workspace(artifacts, state.workspace, scratch) as workspace:
            yield policy, workspace


@contextmanager
def incident_trees(
    artifacts: ArtifactStore, state: IncidentState, scratch: Path
) -> Iterator[tuple[ModelPolicy, MaterializedTrees]]:
    """As ``incident_workspace``, with both trees and no data windows."""
    with _input_errors_translated():
        policy = parse_policy(artifacts.get(state.policy.artifact), state.policy.name)
        with materialized_trees(artifacts, state.workspace, scratch) as trees:
            yield policy, trees


@contextmanager
def _input_errors_translated() -> Iterator[None]:
    """Missing, corrupted or unsafe inputs as a rejection, a store that does not answer as a transient failure."""
    try:
        yield
    except UNAVAILABLE as exc:
        raise RejectedInput("inputs-unavailable", str(exc)) from exc
    except ArtifactStoreUnavailable as exc:
        raise TransientFailure(str(exc)) from exc
