"""Wiring of the validator service: every proposed repair re-checked in an isolated copy."""

from __future__ import annotations

from contracts.events.repair import RepairProposed
from libs.artifacts.store import ArtifactCorrupted, ArtifactNotFound, LocalArtifactStore
from libs.bus.runtime import RejectedInput, ServiceDefinition
from libs.events.codec import SignedEvent
from libs.policy import PolicyError, parse_policy
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from libs.workspace.materialize import materialized_workspace
from libs.workspace.snapshot import UnsafeSnapshot
from services.validator.events import validation_event
from services.validator.handler import validate_repair

NAME = "validator"


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    artifacts = LocalArtifactStore(settings.artifacts_dir)
    scratch = settings.state_dir(NAME) / "scratch"

    def handle(signed: SignedEvent) -> list:
        proposed: RepairProposed = signed.event.payload
        gate = proposed.gate
        try:
            policy = parse_policy(artifacts.get(proposed.policy.artifact), proposed.policy.name)
            patch = artifacts.get(proposed.patch.artifact).decode()
            with materialized_workspace(artifacts, proposed.workspace, scratch) as workspace:
                report = validate_repair(
                    workspace.candidate,
                    patch,
                    workspace.data,
                    policy.workspace.model_dump(),
                    policy.gate.model_dump(),
                    {gate.metric: gate.baseline},
                    expected_patch_sha256=proposed.patch.artifact.sha256,
                )
        except (ArtifactNotFound, ArtifactCorrupted, UnsafeSnapshot, PolicyError, UnicodeDecodeError) as exc:
            raise RejectedInput("inputs-unavailable", str(exc)) from exc
        return [validation_event(proposed, report)]

    return ServiceDefinition(NAME, MODELGUARD_VERSION, ("RepairProposed",), handler=handle)
