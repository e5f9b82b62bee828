"""The repairer's view of the patch guard (``libs/patch_guard``): a strategy's patch in, a verdict out.

``repair_policy`` is the policy's typed ``repair`` section (``libs.policy.repair``). In a bundle's effective
policy it *is* the central section (``permitted_paths``, ``protected_paths``, ``file_types``...), stored by
digest with the incident, and the workspace's ``repair_paths`` narrow it. In a model policy of the older shape
(``allowed_paths``, ``protected_paths``, limits) it is the workspace's narrowing, and the central section is read
from ``policy/central.yaml`` (so too when the section is absent). Either way the workspace's evaluation entry
point and test targets are protected.

The verdict keeps the repairer's rule names (``path_protected``, ``unsafe_token``...) for its events.
Without ``workspace`` the guard judges the hunks alone; give it the candidate tree to judge whole files.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, computed_field

from contracts.catalogue import RepairStrategy
from libs.patch_guard.diff_headers import MalformedDiff
from libs.patch_guard.diff_parse import parse_diff
from libs.patch_guard.guard import GuardRequest
from libs.patch_guard.guard import check_patch as run_guard
from libs.patch_guard.policy import EffectivePolicy, GuardPolicyError, load_central_policy, narrowed_policy
from libs.patch_guard.report import GuardReport
from libs.patch_guard.source_trees import SourceTrees
from libs.patch_guard.workspace_config import WorkspaceConfigError, command_protected_paths, workspace_repair_config
from libs.policy.model_policy import WorkspacePolicy
from libs.policy.repair import RepairNarrowing, RepairPolicy

RULE_OF_CHECK = {
    "patch_readable": "malformed_patch",
    "diff_parses": "malformed_patch",
    "not_empty": "empty_patch",
    "no_binary": "binary_patch",
    "no_symlinks": "symbolic_link",
    "paths_inside_workspace": "path_outside_workspace",
    "file_operations": "file_created_deleted_or_renamed",
    "file_types": "file_type_not_permitted",
    "permitted_paths": "path_not_allowed",
    "protected_paths": "path_protected",
    "generated_code": "generated_file",
    "max_files": "too_many_files",
    "max_changed_lines": "too_many_changed_lines",
    "strategy_permitted": "strategy_not_permitted",
    "declared_files": "declared_files_mismatch",
    "no_hidden_text": "hidden_text",
    "applies_cleanly": "patch_does_not_apply",
    "python_syntax": "syntax_error",
    "allowed_new_code": "not_in_allow_list",
    "always_refused": "always_refused",
    "forbidden_constructs": "unsafe_token",
}
"""The guard's check names in the repairer's rule vocabulary (``unsafe_token`` is now an AST finding)."""


class ProposedPatch(BaseModel):
    model_config = ConfigDict(frozen=True)

    strategy: RepairStrategy
    unified_diff: str
    files: tuple[str, ...] = ()
    """Files the strategy says it changed; they must be exactly the files of the diff."""


class GuardViolation(BaseModel):
    model_config = ConfigDict(frozen=True)

    rule: str
    detail: str
    path: str | None = None


class GuardVerdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    allowed: bool
    violations: tuple[GuardViolation, ...]
    files: tuple[str, ...]
    added_lines: int
    removed_lines: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def changed_lines(self) -> int:
        return self.added_lines + self.removed_lines


def changed_lines_of(unified_diff: str) -> int | None:
    """The lines the diff adds and removes, as the guard's verdict will count them when it permits the patch; None
    when the guard's diff reader cannot read it (the guard refuses it)."""
    try:
        changes = parse_diff(unified_diff)
    except MalformedDiff:
        return None
    return sum(len(change.added) + len(change.removed) for change in changes)


def check_patch(
    patch: ProposedPatch,
    repair_policy: RepairPolicy | RepairNarrowing | None,
    workspace_spec: WorkspacePolicy | None = None,
    workspace: Path | None = None,
    approved: Path | None = None,
    trees: SourceTrees | None = None,
) -> GuardVerdict:
    """Every rule the patch breaks; ``allowed`` only when it breaks none. ``approved`` is the base revision's
    tree: names its version of a file used count as already used (so a revert may bring them back). ``trees``: the
    parsed files shared by the guard calls of one handling (each file's text parsed and analysed once)."""
    try:
        policy = guard_policy(repair_policy, workspace_spec)
    except (GuardPolicyError, WorkspaceConfigError) as error:
        violation = GuardViolation(rule="policy_unreadable", detail=str(error))
        return GuardVerdict(allowed=False, violations=(violation,), files=(), added_lines=0, removed_lines=0)
    request = GuardRequest(
        patch=patch.unified_diff,
        policy=policy,
        workspace=workspace,
        strategy=patch.strategy,
        declared_files=patch.files or None,
        approved=approved,
        trees=trees,
    )
    return verdict_of(run_guard(request))


def guard_policy(
    repair_policy: RepairPolicy | RepairNarrowing | None, workspace_spec: WorkspacePolicy | None
) -> EffectivePolicy:
    """The effective guard policy for a repair section and a workspace config (see the module docstring)."""
    if isinstance(repair_policy, RepairPolicy):
        return narrowed_policy(repair_policy, workspace_repair_config(workspace_spec, None))
    return narrowed_policy(load_central_policy(), workspace_repair_config(workspace_spec, repair_policy))


def spec_protected_paths(workspace_spec: WorkspacePolicy) -> list[str]:
    """The evaluation entry point and the test targets named by the workspace's own commands."""
    return command_protected_paths(workspace_spec.evaluate or (), workspace_spec.tests or ())


def verdict_of(report: GuardReport) -> GuardVerdict:
    violations = tuple(
        GuardViolation(rule=RULE_OF_CHECK[check.name], detail=finding.detail, path=finding.path)
        for check in report.failed()
        for finding in check.findings or ()
    )
    return GuardVerdict(
        allowed=report.accepted,
        violations=violations,
        files=report.files,
        added_lines=report.added_lines,
        removed_lines=report.removed_lines,
    )
