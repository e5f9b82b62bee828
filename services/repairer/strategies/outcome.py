"""What a repair strategy returns: minimal edits of one or more files with their unified diff, or a refusal."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from contracts.catalogue import RepairStrategy
from services.repairer.unified_diff import parse_unified_diff, render_unified_diff


class FileEdit(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    """Relative POSIX path inside the workspace."""
    old_text: str
    new_text: str


class MultiFileEdit(BaseModel):
    model_config = ConfigDict(frozen=True)

    strategy: RepairStrategy
    edits: tuple[FileEdit, ...]
    unified_diff: str
    """``a/`` / ``b/`` unified diff of every edit, in path order; ``git apply`` applies it to the candidate."""
    rationale: str
    function: str | None = None
    """The function the edit is about, when there is one."""

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(edit.path for edit in self.edits)

    @property
    def added_lines(self) -> tuple[str, ...]:
        return tuple(line for patch in parse_unified_diff(self.unified_diff) for line in patch.added)


class StrategyRefusal(BaseModel):
    model_config = ConfigDict(frozen=True)

    strategy: RepairStrategy
    reason: str


def multi_file_edit(
    strategy: RepairStrategy, edits: Iterable[FileEdit], rationale: str, function: str | None = None
) -> MultiFileEdit | StrategyRefusal:
    """The edits that change something, with their diff; a refusal when none does."""
    changed = sorted((edit for edit in edits if edit.old_text != edit.new_text), key=lambda edit: edit.path)
    if not changed:
        return StrategyRefusal(strategy=strategy, reason="the edit would change nothing")
    diff = "".join(render_unified_diff(edit.path, edit.old_text, edit.new_text) for edit in changed)
    return MultiFileEdit(
        strategy=strategy, edits=tuple(changed), unified_diff=diff, rationale=rationale, function=function
    )
