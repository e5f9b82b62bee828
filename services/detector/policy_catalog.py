"""The detector's policies: YAML files in a folder, chosen by the model they apply to."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libs.policy import ModelPolicy, PolicyError, parse_policy


@dataclass(frozen=True)
class LoadedPolicy:
    policy: ModelPolicy
    raw: bytes
    origin: str


def load_policies(folder: Path) -> list[LoadedPolicy]:
    if not folder.is_dir():
        raise PolicyError(f"policy folder {folder} does not exist")
    loaded = []
    for path in sorted(folder.glob("*.yaml")):
        raw = path.read_bytes()
        loaded.append(LoadedPolicy(parse_policy(raw, str(path)), raw, path.name))
    return loaded


def policy_for(policies: list[LoadedPolicy], model_urn: str) -> LoadedPolicy | None:
    """The first policy (by file name) whose `applies_to` matches the model."""
    for loaded in policies:
        if loaded.policy.applies(model_urn):
            return loaded
    return None
