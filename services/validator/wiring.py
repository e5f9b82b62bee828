"""Wiring of the validator service: every proposed repair re-checked in an isolated copy.

``definition`` wires the handler to its ports only; ``services/validator/bootstrap.py`` builds the production ports
from Settings (the composition root)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contracts.events.repair import RepairProposed
from contracts.service_channels import SERVICE_CHANNELS
from libs.artifacts.store import ArtifactStore
from libs.bus.runtime import ServiceDefinition
from libs.clock import Clock, utc_now
from libs.events.codec import SignedEvent
from libs.policy.model_policy import ModelPolicy
from libs.version import MODELGUARD_VERSION
from libs.workspace.incident_workspace import incident_workspace
from services.validator.events import validation_event
from services.validator.handler import ValidationRequest, validate_repair

NAME = "validator"


def approved_code_on_incident(proposed: RepairProposed) -> float | None:
    """For a cause in the code: the base revision's metric on the incident window, as the diagnosis computed it."""
    if proposed.diagnosis.cause_location != "code":
        return None
    return proposed.diagnosis.counterfactual.get("base_on_incident")


@dataclass(frozen=True)
class ValidatorPorts:
    """What the validator reads: the artifact store (the incident's trees, data, policy and the proposed patch), a
    scratch folder the trees are extracted into, and the clock its events are stamped with."""

    artifacts: ArtifactStore
    scratch: Path
    clock: Clock = utc_now
    parallel: int = 1
    """Validation steps run at once at most (the production wiring: as many as the CPUs allow, up to 2); the model's
    ``diagnosis.max_parallel_evaluations`` bounds it further."""


def definition(ports: ValidatorPorts) -> ServiceDefinition:
    artifacts, scratch = ports.artifacts, ports.scratch

    def handle(signed: SignedEvent) -> list:
        proposed: RepairProposed = signed.event.payload
        gate = proposed.gate
        with incident_workspace(artifacts, proposed, scratch) as (policy, workspace):
            report = validate_repair(
                ValidationRequest(
                    candidate_dir=workspace.candidate,
                    patch=artifacts.get(proposed.patch.artifact).decode(),
                    data_csv=workspace.data,
                    workspace=policy.workspace,
                    gate=policy.gate,
                    baseline_metrics={gate.metric: gate.baseline},
                    expected_patch_sha256=proposed.patch.artifact.sha256,
                    evaluate_placeholders=workspace.incident.placeholders(),
                    features_data=workspace.incident.eval,
                    same_window_reference=approved_code_on_incident(proposed),
                    approved_invalid_total=proposed.diagnosis.invalid_values.get("base"),
                    window=workspace.incident,
                    require_predict=policy.validation.require_predict,
                    parallel=_parallel_steps(ports.parallel, policy),
                )
            )
        return [validation_event(proposed, report)]

    return ServiceDefinition(NAME, MODELGUARD_VERSION, SERVICE_CHANNELS[NAME], handler=handle, clock=ports.clock)


def _parallel_steps(allowed: int, policy: ModelPolicy) -> int:
    if policy.diagnosis is not None:
        allowed = min(allowed, policy.diagnosis.max_parallel_evaluations)
    return allowed
