"""Typed policy sections for tests that build them by hand, as ``libs.policy`` parses them from a policy file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter

from libs.policy.model_policy import WorkspacePolicy
from libs.policy.repair import RepairNarrowing, RepairPolicy, RepairSection

WORKSPACE_DEFAULTS: dict[str, Any] = {
    "label": "target",
    "evaluate": ["python", "evaluate.py"],
    "feature_modules": ["pkg"],
    "repair_paths": ["**"],
}
"""What a test's workspace does not care about: its label, an evaluate command, its feature code, and
``repair_paths`` that permit every path (the central policy's own bound then decides)."""


def repair_section(section: Mapping[str, Any]) -> RepairPolicy | RepairNarrowing:
    """A ``repair:`` section as a model policy's parse reads it (the central shape or the older narrowing)."""
    return TypeAdapter(RepairSection).validate_python(dict(section))


def workspace_policy(**fields: Any) -> WorkspacePolicy:
    """A workspace config with ``fields`` over ``WORKSPACE_DEFAULTS``."""
    return WorkspacePolicy.model_validate({**WORKSPACE_DEFAULTS, **fields})
