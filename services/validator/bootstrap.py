"""The validator's composition root: the production ports from Settings (used by ``main.py`` and the CLI's
in-process stack, nothing else)."""

from __future__ import annotations

from libs.artifacts.open_store import artifact_store
from libs.bus.runtime import ServiceDefinition
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.workspace.usable_cpus import usable_cpus
from services.validator.step_lanes import LANES
from services.validator.wiring import NAME, ValidatorPorts, definition

PARALLEL_STEPS = len(LANES)


def production_ports(settings: Settings) -> ValidatorPorts:
    return ValidatorPorts(
        artifacts=artifact_store(settings),
        scratch=settings.scratch_dir(NAME),
        parallel=min(PARALLEL_STEPS, usable_cpus()),
    )


def bootstrap(settings: Settings, key: SigningKey) -> ServiceDefinition:
    """The service as its process runs it (``serve``'s builder): the production ports, wired."""
    return definition(production_ports(settings))
