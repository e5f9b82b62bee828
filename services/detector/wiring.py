"""Wiring of the detector service: wires the gate handler to Kafka."""

from __future__ import annotations

from contracts.common import PolicyRef
from contracts.service_channels import SERVICE_CHANNELS
from libs.artifacts.open_store import artifact_store
from libs.bus.handler_errors import RejectedInput
from libs.bus.runtime import ServiceDefinition
from libs.events.codec import SignedEvent
from libs.policy.errors import PolicyError
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.state.open_state import state_database
from libs.version import MODELGUARD_VERSION
from libs.workspace.evaluation_cache import shared_evaluation_cache
from services.detector.gate import MetricMissing
from services.detector.handler import NoPolicy, RefereeFailed, detect
from services.detector.policy_catalog import LoadedPolicy, detector_catalog
from services.detector.referee import artifact_referee

NAME = "detector"


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    artifacts = artifact_store(settings)
    policies = detector_catalog(settings.policy_dir, state_database(settings), settings.central_policy)
    referee = artifact_referee(artifacts, settings.state_dir(NAME) / "scratch", shared_evaluation_cache(settings))

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

    return ServiceDefinition(NAME, MODELGUARD_VERSION, SERVICE_CHANNELS[NAME], handler=handle)
