"""Wiring of the publisher service: the channels, the attestation step and the handler.

``definition`` wires the handler to its ports only; ``services/publisher/bootstrap.py`` builds the production ports
from Settings (fixture files by default; the composition root)."""

from __future__ import annotations

from dataclasses import dataclass

from contracts.service_channels import SERVICE_CHANNELS
from libs.artifacts.store import ArtifactStore
from libs.bus.runtime import ServiceDefinition
from libs.clock import Clock, utc_now
from libs.events.codec import SignedEvent
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from services.publisher.attestation_step import attestor
from services.publisher.handler import DataHubChannel, GitHubChannel, publish
from services.publisher.notifier import Notifier

NAME = "publisher"


@dataclass(frozen=True)
class PublisherPorts:
    """Where the publisher publishes: GitHub, DataHub and the notifications (None: none configured), the artifact
    store its attestations are kept in, and the clock its events are stamped with."""

    github: GitHubChannel
    datahub: DataHubChannel
    artifacts: ArtifactStore
    notifier: Notifier | None = None
    clock: Clock = utc_now


def definition(ports: PublisherPorts, key: SigningKey) -> ServiceDefinition:
    """``key`` signs the attestation of each publication (the service's own key)."""
    attest = attestor(ports.artifacts, key)

    def handle(signed: SignedEvent) -> list:
        # The ledger position of the source is not known here (the ledger appends concurrently): links omit it.
        return [publish(signed, ports.github, ports.datahub, attest, notifier=ports.notifier)]

    return ServiceDefinition(NAME, MODELGUARD_VERSION, SERVICE_CHANNELS[NAME], handler=handle, clock=ports.clock)
