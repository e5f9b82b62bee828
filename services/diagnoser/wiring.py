"""Wiring of the diagnoser service: evidence computed on the incident's own code and data."""

from __future__ import annotations

from contracts.events.context import ContextCollected
from libs.artifacts.store import LocalArtifactStore
from libs.bus.runtime import ServiceDefinition
from libs.events.codec import SignedEvent
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from libs.workspace.commands import WorkspaceCommandFailed
from libs.workspace.incident_workspace import incident_workspace
from services.diagnoser.handler import diagnose_incident
from services.diagnoser.report import abstention_for_failed_command, diagnosis_event

NAME = "diagnoser"


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    artifacts = LocalArtifactStore(settings.artifacts_dir)
    scratch = settings.state_dir(NAME) / "scratch"

    def handle(signed: SignedEvent) -> list:
        collected: ContextCollected = signed.event.payload
        gate = collected.gate
        with incident_workspace(artifacts, collected, scratch) as (policy, workspace):
            try:
                outcome = diagnose_incident(
                    workspace.base,
                    workspace.candidate,
                    workspace.data,
                    policy.workspace.model_dump(),
                    policy.diagnosis.model_dump(),
                    collected.context,
                    gate_policy=policy.gate.model_dump(),
                    reported_metrics={
                        "base": {gate.metric: gate.baseline},
                        "candidate": {gate.metric: gate.candidate},
                    },
                )
            except WorkspaceCommandFailed as exc:
                # scratch paths out, so the same failure always reads (and hashes) the same
                tail = exc.result.stderr[-2000:] if exc.result else ""
                tail = tail.replace(str(workspace.base.parent), "<workspace>")
                return [abstention_for_failed_command(collected, exc.name, exc.reason, tail)]
        return [diagnosis_event(collected, outcome)]

    return ServiceDefinition(NAME, MODELGUARD_VERSION, ("ContextCollected",), handler=handle)
