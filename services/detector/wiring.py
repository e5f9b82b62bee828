"""Wiring of the detector service: wires the gate handler to Kafka.

``definition`` wires the handler to its ports only; ``services/detector/bootstrap.py`` builds the production ports
from Settings (the composition root)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from contracts.common import PolicyRef
from contracts.service_channels import SERVICE_CHANNELS
from libs.artifacts.store import ArtifactStore
from libs.bus.handler_errors import RejectedInput
from libs.bus.runtime import ServiceDefinition
from libs.clock import Clock, utc_now
from libs.events.codec import SignedEvent
from libs.policy.errors import PolicyError
from libs.version import MODELGUARD_VERSION
from services.detector.gate import MetricMissing
from services.detector.handler import NoPolicy, Referee, RefereeFailed, detect
from services.detector.policy_catalog import LoadedPolicy

NAME = "detector"


class PolicySource(Protocol):
    """The policy that applies to a model, or None (production: ``PolicyCatalog``, the policy folder and pins)."""

    def policy_for(self, model_urn: str) -> LoadedPolicy | None: ...


@dataclass(frozen=True)
class DetectorPorts:
    """What the detector reads and writes: the artifact store (the policy it applied is stored there), the policy
    of each model, the referee that measures both revisions itself, and the clock its events are stamped with."""

    artifacts: ArtifactStore
    policies: PolicySource
    referee: Referee
    clock: Clock = utc_now


def definition(ports: DetectorPorts) -> ServiceDefinition:
    artifacts, policies, referee = ports.artifacts, ports.policies, ports.referee

    def store_policy(loaded: LoadedPolicy) -> PolicyRef:
        return PolicyRef(name=loaded.policy.name, artifact=artifacts.put(loaded.raw, "application/yaml"))

    def handle(signed: SignedEvent) -> list:
        evaluation = signed.event.payload
        try:
            policy = policies.policy_for(evaluation.workspace.model_urn)
            return [detect(evaluation, policy, store_policy, referee)]
        except NoPolicy as exc:
            raise RejectedInput("no-policy", str(exc)) from exc
        except (MetricMissing, PolicyError) as exc:
            raise RejectedInput("bad-evaluation", str(exc)) from exc
        except RefereeFailed as exc:
            raise RejectedInput("referee-failed", str(exc)) from exc

    return ServiceDefinition(NAME, MODELGUARD_VERSION, SERVICE_CHANNELS[NAME], handler=handle, clock=ports.clock)
