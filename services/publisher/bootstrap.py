"""The publisher's composition root: the production ports from Settings and the environment's tokens (used by
``main.py`` and the CLI's in-process stack, nothing else)."""

from __future__ import annotations

from libs.artifacts.open_store import artifact_store
from libs.bus.runtime import ServiceDefinition
from libs.settings import Settings
from libs.signing.keys import SigningKey
from services.publisher.publication_channels import publication_channels
from services.publisher.wiring import PublisherPorts, definition


def production_ports(settings: Settings) -> PublisherPorts:
    channels = publication_channels(settings)
    return PublisherPorts(
        github=channels.github,
        datahub=channels.datahub,
        artifacts=artifact_store(settings),
        notifier=channels.notifier,
    )


def bootstrap(settings: Settings, key: SigningKey) -> ServiceDefinition:
    """The service as its process runs it (``serve``'s builder): the production ports, wired."""
    return definition(production_ports(settings), key)
