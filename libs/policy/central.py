"""Where ModelGuard's central policy lives and how its sections are read.

``$MODELGUARD_CENTRAL_POLICY`` when set, else ``policy/central.yaml`` of this source tree: never a file
found from the working directory, which is the model repository and must not choose the policy that
judges it. Its sections are typed models of ``libs.policy`` (diagnosis, repair, sandbox, ci); a model's effective
policy carries them and is parsed once per incident (``libs.workspace.incident_workspace``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from libs.policy.yaml_documents import safe_load_once

DEFAULT_CENTRAL_POLICY = Path(__file__).resolve().parents[2] / "policy" / "central.yaml"
CENTRAL_POLICY_VARIABLE = "MODELGUARD_CENTRAL_POLICY"


class CentralPolicyError(ValueError):
    """The central policy file is missing, not YAML, or not a mapping; one readable line."""


def central_policy_path(explicit: Path | None = None) -> Path:
    if explicit is not None:
        return Path(explicit)
    configured = os.environ.get(CENTRAL_POLICY_VARIABLE, "").strip()
    return Path(configured) if configured else DEFAULT_CENTRAL_POLICY


def installed_central_policy(explicit: Path | None = None) -> tuple[Path, int] | None:
    """The central policy file the section readers read, with its modification time (ns) to cache a reading by:
    ``explicit``, else ``$MODELGUARD_CENTRAL_POLICY``, else this source tree's ``policy/central.yaml``. None only
    when no file was named and the source tree holds none (an install without it: each reader's own defaults). A
    file that was named and is not there is a CentralPolicyError: reading defaults instead would put the platform's
    limits aside without a word (a ConfigMap mounted without its key, a mistyped path)."""
    source = central_policy_path(explicit)
    try:
        return source, source.stat().st_mtime_ns
    except FileNotFoundError:
        named = explicit is not None or bool(os.environ.get(CENTRAL_POLICY_VARIABLE, "").strip())
        if not named:
            return None
        raise CentralPolicyError(f"cannot read the central policy {source}: No such file or directory") from None


def read_central_policy_document(path: Path | None = None) -> dict[str, Any]:
    """The whole central policy as a mapping."""
    source = central_policy_path(path)
    try:
        document = safe_load_once(source.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise CentralPolicyError(f"cannot read the central policy {source}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CentralPolicyError(f"{source}: not YAML: {' '.join(str(exc).split())}") from exc
    except RecursionError:  # PyYAML composes a node per level, recursively
        raise CentralPolicyError(f"{source}: not YAML this reader can take: nested past the parser's limit") from None
    if not isinstance(document, dict):
        raise CentralPolicyError(f"{source}: the central policy is a mapping")
    return document
