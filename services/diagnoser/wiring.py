"""Wiring of the diagnoser service: evidence computed on the incident's own code and data."""

from __future__ import annotations

from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import ContextCollected
from contracts.service_channels import SERVICE_CHANNELS
from libs.artifacts.open_store import artifact_store
from libs.bus.runtime import ServiceDefinition
from libs.events.codec import SignedEvent
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from libs.workspace.evaluation_cache import shared_evaluation_cache
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


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    artifacts = artifact_store(settings)
    scratch = settings.state_dir(NAME) / "scratch"
    evaluations = shared_evaluation_cache(settings)

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

    return ServiceDefinition(NAME, MODELGUARD_VERSION, SERVICE_CHANNELS[NAME], handler=handle)
