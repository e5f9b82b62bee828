"""revert_change after change isolation: exactly the hunks the diagnosis isolated go back to the base text, with
the units that define what they need (a constant and an import the candidate deleted elsewhere), and the
repaired module runs as the base did; the guard lets a revert bring back what the approved revision used."""

from __future__ import annotations

from pathlib import Path

from contracts.events.diagnosis import ChangeRef, LineSpan, RepairHints
from libs.policy.central import read_central_policy_document
from services.diagnoser.experiments.change_units import change_units
from services.diagnoser.experiments.revert_closure import revert_closure
from services.repairer.patch_guard import ProposedPatch, check_patch
from services.repairer.strategies import revert_change
from tests.support.typed_policy import repair_section, workspace_policy
from tests.unit.repairer.strategies.patched_trees import (
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
    write_tree,
)

FEATURES = "pkg/features.py"
BASE = '''"""Local request hour of a booking."""

from datetime import timedelta

OFFSETS = {"SAO": -3, "NBO": 3}


def local_hour(hour_utc: int, city: str) -> int:
    return (hour_utc + OFFSETS.get(city, 0)) % 24


def unchanged(value: int) -> int:
    return value + 1


def window() -> timedelta:
    return timedelta(hours=1)
'''
CANDIDATE = '''"""Local request hour of a booking (times are UTC end to end now)."""


def local_hour(hour_utc: int, city: str) -> int:
    return hour_utc % 24


def unchanged(value: int) -> int:
    return value + 1


def window() -> int:
    return 1
'''


def _hints(tmp_path: Path) -> RepairHints:
    """The hints the diagnosis would give: ``local_hour`` isolated, closed over what it needs."""
    base, candidate = write_tree(tmp_path / "b", {FEATURES: BASE}), write_tree(tmp_path / "c", {FEATURES: CANDIDATE})
    units = change_units(base, candidate)
    minimal = [unit.id for unit in units if "local_hour" in unit.anchors]
    closure = set(revert_closure(units, minimal, base, candidate))
    return RepairHints(
        isolated_changes=[
            ChangeRef(
                path=unit.path,
                kind=unit.kind,
                anchors=list(unit.anchors),
                hunks=[LineSpan(**{k: getattr(h, k) for k in LineSpan.model_fields}) for h in unit.hunks],
            )
            for unit in units
            if unit.id in closure
        ]
    )


def test_the_closure_adds_the_deleted_constant_and_nothing_unrelated(tmp_path: Path) -> None:
    base, candidate = write_tree(tmp_path / "b", {FEATURES: BASE}), write_tree(tmp_path / "c", {FEATURES: CANDIDATE})
    units = change_units(base, candidate)
    minimal = [unit.id for unit in units if "local_hour" in unit.anchors]
    closure = revert_closure(units, minimal, base, candidate)
    chosen = [unit for unit in units if unit.id in closure]
    assert any("local_hour" in unit.anchors for unit in chosen)
    assert all("window" not in unit.anchors for unit in chosen)  # window's change carries nothing: it stays
    assert len(chosen) > len(minimal)  # OFFSETS came back with it


def test_the_isolated_revert_runs_as_the_base_and_leaves_the_rest(tmp_path: Path) -> None:
    hints = _hints(tmp_path)
    context = repair_context(tmp_path / "ctx", {FEATURES: CANDIDATE}, base={FEATURES: BASE}, hints=hints)
    edit = edit_of(revert_change.propose(context))
    repaired = load_module(git_applied(tmp_path, {FEATURES: CANDIDATE}, edit.unified_diff) / FEATURES)
    assert repaired.local_hour(23, "NBO") == 2 and repaired.local_hour(1, "SAO") == 22
    assert repaired.window() == 1  # the candidate's other change is not touched
    verdict = check_patch(
        ProposedPatch(strategy="revert_change", unified_diff=edit.unified_diff, files=edit.files),
        repair_section(read_central_policy_document()["repair"]),
        workspace_policy(repair_paths=["pkg/*.py"], label="y"),
        workspace=context.candidate.root,
        approved=context.base.root if context.base else None,
    )
    assert verdict.allowed, verdict.violations


def test_without_the_approved_revision_the_guard_sees_names_the_module_never_used(tmp_path: Path) -> None:
    hints = _hints(tmp_path)
    context = repair_context(tmp_path / "ctx", {FEATURES: CANDIDATE}, base={FEATURES: BASE}, hints=hints)
    edit = edit_of(revert_change.propose(context))
    policy = repair_section(read_central_policy_document()["repair"])
    spec = workspace_policy(repair_paths=["pkg/*.py"], label="y")
    patch = ProposedPatch(strategy="revert_change", unified_diff=edit.unified_diff, files=edit.files)
    alone = check_patch(patch, policy, spec, workspace=context.candidate.root)
    assert not alone.allowed and {v.rule for v in alone.violations} == {"not_in_allow_list"}


def test_an_isolated_whole_file_change_is_refused(tmp_path: Path) -> None:
    hints = RepairHints(isolated_changes=[ChangeRef(path="pkg/new.py", kind="file_added")])
    context = repair_context(tmp_path, {FEATURES: CANDIDATE}, base={FEATURES: BASE}, hints=hints)
    assert "only modifies files in place" in refusal_of(revert_change.propose(context))
