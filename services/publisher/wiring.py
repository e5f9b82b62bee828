"""Wiring of the publisher service: channels from settings (fixture files by default), attestation, handler."""

from __future__ import annotations

from contracts.service_channels import SERVICE_CHANNELS
from libs.artifacts.open_store import artifact_store
from libs.bus.runtime import ServiceDefinition
from libs.events.codec import SignedEvent
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from services.publisher.attestation_step import attestor
from services.publisher.handler import publish
from services.publisher.publication_channels import publication_channels

NAME = "publisher"


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    channels = publication_channels(settings)
    attest = attestor(artifact_store(settings), key)

    def handle(signed: SignedEvent) -> list:
        # The ledger position of the source is not known here (the ledger appends concurrently): links omit it.
        return [publish(signed, channels.github, channels.datahub, attest, notifier=channels.notifier)]

    return ServiceDefinition(NAME, MODELGUARD_VERSION, SERVICE_CHANNELS[NAME], handler=handle)
