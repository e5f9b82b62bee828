"""Test support for the repair strategies: revision trees on disk, a repair context over them, the patch
applied with ``git apply`` in a scratch repository, and the patched module imported and run."""

from __future__ import annotations

import importlib.util
import subprocess
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from contracts.events.diagnosis import RepairHints, Suspect
from libs.patch_guard.globs import matches_any
from libs.policy.effective import read_central_policy
from libs.policy.repair import DivisionPolicy
from services.repairer.patch_guard import GuardVerdict, ProposedPatch, check_patch
from services.repairer.repair_context import RepairContext
from services.repairer.source_tree import SourceTree
from services.repairer.strategies.outcome import MultiFileEdit, StrategyRefusal
from tests.support.typed_policy import repair_section, workspace_policy


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


def repair_context(
    tmp_path: Path,
    candidate: dict[str, str],
    *,
    base: dict[str, str] | None = None,
    hypothesis: str = "feature_transformation",
    suspect: Suspect | None = None,
    hints: RepairHints | None = None,
    categorical_defaults: dict[str, Any] | None = None,
    null_fills: dict[str, Any] | None = None,
    repair_paths: tuple[str, ...] = ("pkg/*.py",),
    max_changed_lines: int = 40,
    division: DivisionPolicy | None = None,
    number_examples: dict[str, tuple[str, ...]] | None = None,
) -> RepairContext:
    return RepairContext(
        candidate=SourceTree(write_tree(tmp_path / "candidate", candidate)),
        base=SourceTree(write_tree(tmp_path / "base", base)) if base is not None else None,
        hypothesis=hypothesis,
        suspect=suspect,
        hints=hints or RepairHints(),
        categorical_defaults=categorical_defaults or {},
        null_fills=null_fills or {},
        editable=lambda path: matches_any(path, repair_paths) is not None,
        max_changed_lines=max_changed_lines,
        division=division or DivisionPolicy(),
        number_examples=number_examples or {},
    )


def edit_of(outcome: MultiFileEdit | StrategyRefusal) -> MultiFileEdit:
    assert isinstance(outcome, MultiFileEdit), outcome
    return outcome


def refusal_of(outcome: MultiFileEdit | StrategyRefusal) -> str:
    assert isinstance(outcome, StrategyRefusal), outcome.unified_diff
    return outcome.reason


def git_applied(tmp_path: Path, files: dict[str, str], diff: str) -> Path:
    """A scratch git repository holding ``files`` with ``diff`` checked and applied by ``git apply``."""
    root = write_tree(tmp_path / f"applied-{uuid.uuid4().hex[:8]}", files)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    patch = tmp_path / "repair.patch"
    patch.write_text(diff, encoding="utf-8")
    subprocess.run(["git", "apply", "--check", str(patch)], cwd=root, check=True, capture_output=True)
    subprocess.run(["git", "apply", str(patch)], cwd=root, check=True, capture_output=True)
    return root


def load_module(path: Path) -> ModuleType:
    """The Python file at ``path`` imported under a fresh module name."""
    spec = importlib.util.spec_from_file_location(f"patched_{uuid.uuid4().hex}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def diff_lines(diff: str) -> list[str]:
    """The diff's added and removed lines (with their ``+``/``-``), headers left out."""
    return [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))]


def guard_verdict(
    context: RepairContext, edit: MultiFileEdit, repair_paths: tuple[str, ...] = ("pkg/*.py",)
) -> GuardVerdict:
    """The patch guard's verdict on ``edit`` as the repairer asks for it: the central policy's ``repair``
    section, a workspace config permitting ``repair_paths``, the candidate tree as the workspace."""
    central = repair_section(read_central_policy()["repair"])
    patch = ProposedPatch(strategy=edit.strategy, unified_diff=edit.unified_diff, files=edit.files)
    return check_patch(
        patch, central, workspace_policy(repair_paths=list(repair_paths)), workspace=context.candidate.root
    )


def assert_guard_accepts(
    context: RepairContext, edit: MultiFileEdit, repair_paths: tuple[str, ...] = ("pkg/*.py",)
) -> None:
    verdict = guard_verdict(context, edit, repair_paths)
    assert verdict.allowed, [f"{v.rule}: {v.detail}" for v in verdict.violations]
