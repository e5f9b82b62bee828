"""A bundle's effective policy: its gate and workspace config inside ModelGuard's central policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from libs.bundle.load import Bundle
from libs.policy.central import CentralPolicyError, read_central_policy_document
from libs.policy.errors import PolicyError

CENTRAL_SECTIONS = ("diagnosis", "repair", "sandbox", "validation", "ci")


def read_central_policy(path: Path | None = None) -> dict[str, Any]:
    """The central policy's sections a model's effective policy carries."""
    try:
        document = read_central_policy_document(path)
    except CentralPolicyError as exc:
        raise PolicyError(str(exc)) from exc
    return {section: document.get(section) or {} for section in CENTRAL_SECTIONS}


def effective_policy(bundle: Bundle, central: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": bundle.name,
        "applies_to": [bundle.spec.model.urn],
        "gate": bundle.spec.gate.model_dump(mode="json"),
        "workspace": bundle.spec.workspace.model_dump(mode="json"),
        **{section: central.get(section, {}) for section in CENTRAL_SECTIONS},
    }


def effective_policy_bytes(bundle: Bundle, central: dict[str, Any]) -> bytes:
    document = effective_policy(bundle, central)
    return yaml.safe_dump(document, sort_keys=True, allow_unicode=True).encode("utf-8")
