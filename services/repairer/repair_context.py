"""Everything a repair strategy may look at: both revisions (read-only), the diagnosis, its repair hints,
and what the workspace config and the policy declare (defaults, fills, permitted paths, limits)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from contracts.catalogue import Hypothesis
from contracts.events.diagnosis import RepairHints, Suspect
from libs.patch_guard.policy import EffectivePolicy
from libs.policy.model_policy import WorkspacePolicy
from libs.policy.repair import DivisionPolicy, RepairNarrowing, RepairPolicy
from libs.python_source.untrusted_parsing import parse_module
from services.repairer.source_tree import SourceTree


@dataclass(frozen=True)
class RepairContext:
    candidate: SourceTree
    base: SourceTree | None
    hypothesis: Hypothesis
    suspect: Suspect | None
    hints: RepairHints
    categorical_defaults: Mapping[str, Any] = field(default_factory=dict)
    null_fills: Mapping[str, Any] = field(default_factory=dict)
    editable: Callable[[str], bool] = lambda path: False
    """Whether the patch guard lets a repair edit a workspace path (permitted and not protected)."""
    max_changed_lines: int = 40
    division: DivisionPolicy = field(default_factory=DivisionPolicy)
    number_examples: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per numeric column arriving as text, formatted values the diagnosis saw in it (none: not known)."""

    def permitted_files(self) -> list[str]:
        """The candidate's Python files a repair may edit, sorted."""
        return [path for path in self.candidate.python_files() if self.editable(path)]

    def permitted_modules(self) -> Iterator[PermittedModule]:
        """Each permitted file that reads and parses, with its source and syntax tree; others are skipped."""
        for path in self.permitted_files():
            source = self.candidate.read(path)
            if source is None:
                continue
            try:
                tree = parse_module(source)
            except SyntaxError:
                continue
            yield PermittedModule(path, source, tree)


@dataclass(frozen=True)
class PermittedModule:
    path: str
    source: str
    tree: ast.Module


def build_context(
    *,
    candidate: SourceTree,
    base: SourceTree | None,
    hypothesis: Hypothesis,
    suspect: Suspect | None,
    hints: RepairHints,
    repair_policy: RepairPolicy | RepairNarrowing | None,
    workspace: WorkspacePolicy,
    guard: EffectivePolicy,
    number_examples: Mapping[str, tuple[str, ...]] | None = None,
) -> RepairContext:
    """The context of one repair: ``guard`` is the patch guard's effective policy for this workspace."""

    def editable(path: str) -> bool:
        return guard.unpermitted_scope(path) is None and guard.protecting_pattern(path) is None

    return RepairContext(
        candidate=candidate,
        base=base,
        hypothesis=hypothesis,
        suspect=suspect,
        hints=hints,
        categorical_defaults=dict(workspace.categorical_defaults),
        null_fills=dict(workspace.null_fills),
        editable=editable,
        max_changed_lines=guard.max_changed_lines,
        division=(repair_policy.division if repair_policy is not None else None) or DivisionPolicy(),
        number_examples=dict(number_examples or {}),
    )
