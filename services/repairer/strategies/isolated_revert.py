"""Revert exactly the hunks the diagnosis isolated: the smallest part of the candidate's change that carries
the drop (delta debugging), each hunk's candidate lines replaced by the base lines they replaced. Hunks that
depend on each other were already joined into one unit by the diagnosis (a renamed helper and its callers),
so what is reverted compiles as the base did; the validator proves it. A unit that adds, removes or replaces a
whole file is refused: a repair may only modify files in place."""

from __future__ import annotations

from collections.abc import Sequence

from contracts.catalogue import RepairStrategy
from contracts.events.diagnosis import ChangeRef
from libs.python_source.source_text import python_lines
from services.repairer.source_tree import SourceTree
from services.repairer.strategies.outcome import FileEdit, StrategyRefusal


def revert_isolated(
    base: SourceTree, candidate: SourceTree, changes: Sequence[ChangeRef], strategy: RepairStrategy
) -> list[FileEdit] | StrategyRefusal:
    by_path: dict[str, list[ChangeRef]] = {}
    for change in changes:
        if change.kind != "edit":
            return StrategyRefusal(
                strategy=strategy,
                reason=f"the isolated change {change.path} is a {change.kind.replace('_', ' ')}: a repair only "
                "modifies files in place",
            )
        by_path.setdefault(change.path, []).append(change)
    edits = []
    for path, refs in sorted(by_path.items()):
        base_text, candidate_text = base.read(path), candidate.read(path)
        if base_text is None or candidate_text is None:
            reason = (base if base_text is None else candidate).unreadable_reason(path)
            return StrategyRefusal(strategy=strategy, reason=f"{path} is not readable in both revisions: {reason}")
        base_lines = python_lines(base_text)
        lines = python_lines(candidate_text)
        spans = sorted((span for ref in refs for span in ref.hunks), key=lambda s: s.candidate_start, reverse=True)
        for span in spans:
            if span.candidate_end > len(lines) or span.base_end > len(base_lines):
                return StrategyRefusal(strategy=strategy, reason=f"the isolated hunks do not match {path}")
            lines[span.candidate_start : span.candidate_end] = base_lines[span.base_start : span.base_end]
        edits.append(FileEdit(path=path, old_text=candidate_text, new_text="".join(lines)))
    return edits
