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

from pydantic import BaseModel, ConfigDict, ValidationError

from contracts.catalogue import RepairStrategy
from libs.patch_guard.globs import matches_any
from libs.patch_guard.workspace_config import WorkspaceRepairConfig
from libs.policy.central import (
    CENTRAL_POLICY_VARIABLE,
    CentralPolicyError,
    central_policy_path,
    read_central_policy_document,
)
from libs.policy.errors import first_problem
from libs.policy.repair import RepairPolicy

CENTRAL_POLICY_ENV = CENTRAL_POLICY_VARIABLE


class GuardPolicyError(ValueError):
    """The central policy or a workspace config cannot be read."""


class EffectivePolicy(BaseModel):
    """The central policy narrowed by one workspace's config."""

    model_config = ConfigDict(frozen=True)

    central: RepairPolicy
    path_scopes: tuple[tuple[str, ...], ...]
    """A path is permitted when it matches a glob of every scope (the first is the central one)."""
    protected_paths: tuple[str, ...]
    max_files: int
    max_changed_lines: int
    strategies: tuple[RepairStrategy, ...]
    labels: tuple[str, ...] = ()
    """The workspace's label columns: a repair never adds a reference to one."""

    def unpermitted_scope(self, path: str) -> tuple[str, ...] | None:
        """The first scope ``path`` matches no glob of, or None when it is permitted."""
        return next((scope for scope in self.path_scopes if matches_any(path, scope) is None), None)

    def protecting_pattern(self, path: str) -> str | None:
        """The protected glob that covers ``path`` (compared without case), or None."""
        return matches_any(path, self.protected_paths, casefold=True)


def narrowed_policy(central: RepairPolicy, workspace: WorkspaceRepairConfig) -> EffectivePolicy:
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


def load_central_policy(path: Path | None = None) -> RepairPolicy:
    source = central_policy_path(path)
    try:
        document = read_central_policy_document(source)
    except CentralPolicyError as error:
        raise GuardPolicyError(str(error)) from error
    if not isinstance(document.get("repair"), dict):
        raise GuardPolicyError(f"{source}: no 'repair:' section")
    try:
        return RepairPolicy.model_validate(document["repair"])
    except ValidationError as error:
        raise GuardPolicyError(f"{source}: {first_problem(error, ('repair',))}") from error
