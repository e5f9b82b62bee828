"""The central patch-guard policy, and the effective policy for one workspace.

The central policy is ModelGuard's, in ``policy/central.yaml``; this module reads only its ``repair:``
section (other sections belong to other phases and are ignored here). A workspace's config can only
narrow it: the permitted paths are the central globs *and* the workspace's globs (a path must match
both), the protected paths are the union, the size limits are the smaller of the two. Nothing a
workspace says can permit a file type, a file operation, a path or a construct the central policy does
not, nor widen the allow-list of new code; it adds its label columns, which a repair may never name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from libs.patch_guard.constructs import CATEGORIES, Category
from libs.patch_guard.globs import matches_any
from libs.patch_guard.new_code_allowlist import NewCodeAllowList
from libs.patch_guard.workspace_config import WorkspaceRepairConfig
from libs.policy.central import (
    CENTRAL_POLICY_VARIABLE,
    CentralPolicyError,
    central_policy_path,
    read_central_policy_document,
)

CENTRAL_POLICY_ENV = CENTRAL_POLICY_VARIABLE

FileOperation = Literal["modify", "create", "delete", "rename", "copy", "mode_change"]


class GuardPolicyError(ValueError):
    """The central policy or a workspace config cannot be read."""


class CentralRepairPolicy(BaseModel):
    """The ``repair:`` section of the central policy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    permitted_paths: tuple[str, ...] = Field(min_length=1)
    protected_paths: tuple[str, ...]
    file_types: tuple[str, ...] = Field(min_length=1)
    file_operations: tuple[FileOperation, ...] = ("modify",)
    max_files: int = Field(ge=1)
    max_changed_lines: int = Field(ge=1)
    max_patch_bytes: int = Field(ge=1)
    forbidden_constructs: tuple[Category, ...] = CATEGORIES
    new_code: NewCodeAllowList = NewCodeAllowList()
    """What a repair may introduce beyond what the patched module already uses (none when absent)."""
    generated_paths: tuple[str, ...] = ()
    """Globs of generated files, never edited (besides files whose header or .gitattributes says so)."""
    strategies: tuple[str, ...] = ()
    """The repair strategies the platform permits (the repairer tries them; the guard checks the name)."""
    division: dict[str, Any] | None = None
    """Read by the repairer's guarded_division strategy (``services/repairer/repair_context.py``), not here."""


class EffectivePolicy(BaseModel):
    """The central policy narrowed by one workspace's config."""

    model_config = ConfigDict(frozen=True)

    central: CentralRepairPolicy
    path_scopes: tuple[tuple[str, ...], ...]
    """A path is permitted when it matches a glob of every scope (the first is the central one)."""
    protected_paths: tuple[str, ...]
    max_files: int
    max_changed_lines: int
    strategies: tuple[str, ...]
    labels: tuple[str, ...] = ()
    """The workspace's label columns: a repair never adds a reference to one."""

    def unpermitted_scope(self, path: str) -> tuple[str, ...] | None:
        """The first scope ``path`` matches no glob of, or None when it is permitted."""
        return next((scope for scope in self.path_scopes if matches_any(path, scope) is None), None)

    def protecting_pattern(self, path: str) -> str | None:
        """The protected glob that covers ``path`` (compared without case), or None."""
        return matches_any(path, self.protected_paths, casefold=True)


def effective_policy(central: CentralRepairPolicy, workspace: WorkspaceRepairConfig) -> EffectivePolicy:
    return EffectivePolicy(
        central=central,
        path_scopes=(central.permitted_paths, *workspace.path_scopes),
        protected_paths=tuple(dict.fromkeys((*central.protected_paths, *workspace.protected_globs()))),
        max_files=min(central.max_files, workspace.max_files or central.max_files),
        max_changed_lines=min(central.max_changed_lines, workspace.max_changed_lines or central.max_changed_lines),
        strategies=tuple(
            name for name in central.strategies if workspace.strategies is None or name in workspace.strategies
        ),
        labels=workspace.labels,
    )


def load_central_policy(path: Path | None = None) -> CentralRepairPolicy:
    source = central_policy_path(path)
    try:
        document = read_central_policy_document(source)
    except CentralPolicyError as error:
        raise GuardPolicyError(str(error)) from error
    if not isinstance(document.get("repair"), dict):
        raise GuardPolicyError(f"{source}: no 'repair:' section")
    try:
        return CentralRepairPolicy.model_validate(document["repair"])
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in ("repair", *first["loc"]))
        raise GuardPolicyError(f"{source}: {where}: {first['msg']}") from error
