"""The diagnoser's composition root: the production ports from Settings (used by ``main.py`` and the CLI's
in-process stack, nothing else)."""

from __future__ import annotations

from libs.artifacts.open_store import artifact_store
from libs.bus.runtime import ServiceDefinition
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.workspace.evaluation_cache import shared_evaluation_cache
from services.diagnoser.wiring import NAME, DiagnoserPorts, definition


def production_ports(settings: Settings, key: SigningKey) -> DiagnoserPorts:
    return DiagnoserPorts(
        artifacts=artifact_store(settings),
        scratch=settings.scratch_dir(NAME),
        evaluations=shared_evaluation_cache(settings, key),
    )


def bootstrap(settings: Settings, key: SigningKey) -> ServiceDefinition:
    """The service as its process runs it (``serve``'s builder): the production ports, wired."""
    return definition(production_ports(settings, key))
