"""Wiring of the diagnoser service: evidence computed on the incident's own code and data.

``definition`` wires the handler to its ports only; ``services/diagnoser/bootstrap.py`` builds the production ports
from Settings (the composition root)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import ContextCollected
from contracts.service_channels import SERVICE_CHANNELS
from libs.artifacts.store import ArtifactStore
from libs.bus.runtime import ServiceDefinition
from libs.clock import Clock, utc_now
from libs.events.codec import SignedEvent
from libs.version import MODELGUARD_VERSION
from libs.workspace.evaluation_cache import EvaluationCache
from libs.workspace.incident_workspace import incident_workspace
from services.diagnoser.diagnosis import diagnose_inputs
from services.diagnoser.inputs import IncidentInputs, MetadataChangeRecord
from services.diagnoser.report import diagnosis_event
from services.diagnoser.trials.parallelism import trial_runner

NAME = "diagnoser"


def change_records(context: ContextSnapshot | None) -> tuple[MetadataChangeRecord, ...]:
    if context is None:
        return ()
    return tuple(
        MetadataChangeRecord(
            entity_urn=change.entity_urn,
            entity_type=change.entity_type,
            aspect=change.aspect,
            change_type=change.change_type,
            time_ms=None,
            actor=change.actor,
            previous=change.previous,
            current=change.current,
        )
        for change in context.changes
    )


@dataclass(frozen=True)
class DiagnoserPorts:
    """What the diagnoser reads: the artifact store (the incident's trees, data and policy), a scratch folder the
    trees are extracted into, the evaluations measured before (None: every trial runs), and the clock its events
    are stamped with."""

    artifacts: ArtifactStore
    scratch: Path
    evaluations: EvaluationCache | None = None
    clock: Clock = utc_now


def definition(ports: DiagnoserPorts) -> ServiceDefinition:
    artifacts, scratch, evaluations = ports.artifacts, ports.scratch, ports.evaluations

    def handle(signed: SignedEvent) -> list:
        collected: ContextCollected = signed.event.payload
        with incident_workspace(artifacts, collected, scratch) as (policy, workspace):
            thresholds = policy.diagnosis_thresholds()
            inputs = IncidentInputs(
                base_dir=workspace.base,
                candidate_dir=workspace.candidate,
                approval=workspace.approval,
                incident=workspace.incident,
                workspace=policy.workspace,
                gate=policy.gate,
                trials=trial_runner(
                    policy.workspace, policy.gate, thresholds, scrub=(workspace.base.parent,), cache=evaluations
                ),
                context=collected.context,
                changes=change_records(collected.context),
            )
            generated = policy.generated_paths()
            outcome = diagnose_inputs(inputs, thresholds, generated)  # failed commands are evidence, not errors
        return [diagnosis_event(collected, outcome)]

    return ServiceDefinition(NAME, MODELGUARD_VERSION, SERVICE_CHANNELS[NAME], handler=handle, clock=ports.clock)
