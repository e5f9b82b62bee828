"""A bundle's effective policy: its gate and workspace config inside ModelGuard's central policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from libs.bundle.load import Bundle
from libs.policy import PolicyError

DEFAULT_CENTRAL_POLICY = Path(__file__).resolve().parents[2] / "policy" / "central.yaml"
CENTRAL_SECTIONS = ("diagnosis", "repair", "sandbox")


def read_central_policy(path: Path | None = None) -> dict[str, Any]:
    source = Path(path) if path is not None else DEFAULT_CENTRAL_POLICY
    try:
        document = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise PolicyError(f"{source}: central policy not readable: {' '.join(str(exc).split())}") from exc
    if not isinstance(document, dict):
        raise PolicyError(f"{source}: the central policy is a mapping")
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
