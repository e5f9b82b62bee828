"""Wiring of the repairer service: a bounded patch from a named strategy, or a reasoned refusal.

``definition`` wires the handler to its ports only; ``services/repairer/bootstrap.py`` builds the production ports
from Settings (the composition root)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contracts.common import ArtifactRef
from contracts.events.diagnosis import DiagnosisCompleted
from contracts.service_channels import SERVICE_CHANNELS
from libs.artifacts.store import ArtifactStore
from libs.bus.runtime import ServiceDefinition
from libs.clock import Clock, utc_now
from libs.events.codec import SignedEvent
from libs.version import MODELGUARD_VERSION
from libs.workspace.incident_workspace import incident_trees
from services.repairer.events import repair_event, withheld_after_abstention
from services.repairer.handler import propose_repair

NAME = "repairer"


@dataclass(frozen=True)
class RepairerPorts:
    """What the repairer reads and writes: the artifact store (the incident's trees, policy and the patch it
    proposes), a scratch folder the trees are extracted into, and the clock its events are stamped with."""

    artifacts: ArtifactStore
    scratch: Path
    clock: Clock = utc_now


def definition(ports: RepairerPorts) -> ServiceDefinition:
    artifacts = ports.artifacts

    def store_patch(diff: bytes) -> ArtifactRef:
        return artifacts.put(diff, "text/x-diff")

    def handle(signed: SignedEvent) -> list:
        if signed.event.meta.event_type == "DiagnosisAbstained":
            return [withheld_after_abstention(signed.event.payload)]
        diagnosed: DiagnosisCompleted = signed.event.payload
        with incident_trees(artifacts, diagnosed, ports.scratch) as (policy, trees):  # it reads no data
            outcome = propose_repair(diagnosed, trees.candidate, policy.repair, policy.workspace, base_dir=trees.base)
        return [repair_event(diagnosed, outcome, store_patch)]

    return ServiceDefinition(NAME, MODELGUARD_VERSION, SERVICE_CHANNELS[NAME], handler=handle, clock=ports.clock)
