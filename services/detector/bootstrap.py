"""The detector's composition root: the production ports from Settings (used by ``main.py`` and the CLI's
in-process stack, nothing else)."""

from __future__ import annotations

from libs.artifacts.open_store import artifact_store
from libs.bus.runtime import ServiceDefinition
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.state.open_state import state_database
from libs.workspace.evaluation_cache import shared_evaluation_cache
from libs.workspace.usable_cpus import usable_cpus
from services.detector.policy_catalog import detector_catalog
from services.detector.referee import REFEREE_RUNS, artifact_referee
from services.detector.wiring import NAME, DetectorPorts, definition


def production_ports(settings: Settings, key: SigningKey) -> DetectorPorts:
    artifacts = artifact_store(settings)
    return DetectorPorts(
        artifacts=artifacts,
        policies=detector_catalog(settings.policy_dir, state_database(settings), settings.central_policy),
        referee=artifact_referee(
            artifacts,
            settings.scratch_dir(NAME),
            shared_evaluation_cache(settings, key),
            parallel=min(REFEREE_RUNS, usable_cpus()),
        ),
    )


def bootstrap(settings: Settings, key: SigningKey) -> ServiceDefinition:
    """The service as its process runs it (``serve``'s builder): the production ports, wired."""
    return definition(production_ports(settings, key))
