"""The repairer's composition root: the production ports from Settings (used by ``main.py`` and the CLI's
in-process stack, nothing else)."""

from __future__ import annotations

from libs.artifacts.open_store import artifact_store
from libs.bus.runtime import ServiceDefinition
from libs.settings import Settings
from libs.signing.keys import SigningKey
from services.repairer.wiring import NAME, RepairerPorts, definition


def production_ports(settings: Settings) -> RepairerPorts:
    return RepairerPorts(artifacts=artifact_store(settings), scratch=settings.scratch_dir(NAME))


def bootstrap(settings: Settings, key: SigningKey) -> ServiceDefinition:
    """The service as its process runs it (``serve``'s builder): the production ports, wired."""
    return definition(production_ports(settings))
