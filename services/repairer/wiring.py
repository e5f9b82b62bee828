"""Wiring of the repairer service: a bounded patch from a named strategy, or a reasoned refusal."""

from __future__ import annotations

from contracts.common import ArtifactRef
from contracts.events.diagnosis import DiagnosisCompleted
from contracts.service_channels import SERVICE_CHANNELS
from libs.artifacts.open_store import artifact_store
from libs.bus.runtime import ServiceDefinition
from libs.events.codec import SignedEvent
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from libs.workspace.incident_workspace import incident_workspace
from services.repairer.events import repair_event, withheld_after_abstention
from services.repairer.handler import propose_repair

NAME = "repairer"


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    artifacts = artifact_store(settings)
    scratch = settings.state_dir(NAME) / "scratch"

    def store_patch(diff: bytes) -> ArtifactRef:
        return artifacts.put(diff, "text/x-diff")

    def handle(signed: SignedEvent) -> list:
        if signed.event.meta.event_type == "DiagnosisAbstained":
            return [withheld_after_abstention(signed.event.payload)]
        diagnosed: DiagnosisCompleted = signed.event.payload
        with incident_workspace(artifacts, diagnosed, scratch) as (policy, workspace):
            outcome = propose_repair(
                diagnosed,
                workspace.candidate,
                policy.repair,
                policy.workspace,
                base_dir=workspace.base,
            )
        return [repair_event(diagnosed, outcome, store_patch)]

    return ServiceDefinition(NAME, MODELGUARD_VERSION, SERVICE_CHANNELS[NAME], handler=handle)
