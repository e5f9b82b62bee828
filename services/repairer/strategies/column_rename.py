"""column_rename: follow a column renamed upstream in the code that reads it.

In a pandas module the rename is translated back where the data comes in. Every function (or method) that
receives a DataFrame parameter and reads the old column from it, or from a frame derived from it, gets one
line at the start of its body (after the docstring): ``raw = raw.rename(columns={"new": "old"})``. A read is
a column key on the frame (``raw["old"]``, ``raw.get("old")``, ``raw.drop(columns=["old"])``), a module-level
column constant that holds the old name used on the frame (``raw.reindex(columns=RAW_COLUMNS)``,
``raw[FEATURES]``, ``for c in RAW_COLUMNS: raw[c]``), or the old name passed beside the frame to a helper
(``self.numeric(frame, "old")``). ``rename`` returns a copy, so callers' frames are untouched, and frames still
in the old schema (the workspace's own tests) pass through unchanged. Only the outermost such functions get the
line: one whose frame parameter is fed, at every call in the module, from another such function's frame gets
none (a frame parameter passed on to such a function makes the caller one too).

Everywhere else (records: ``row["old"]``, ``float(row.get("old"))``; numpy structured arrays; frames a
function loads itself) every remaining string constant equal to the old name that is used as a column key,
or passed to a call beside the frame or record it names (``helper(row, "old")``), becomes the new name in its
original quote style; so does a module-level ``NAME = "old"`` used that way. Docstrings, comments and other
strings that happen to match are left alone.

Refused when no permitted file reads the old column.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from contracts.catalogue import RepairStrategy, answers
from libs.python_source.source_text import Replacement, SourceText, apply_replacements
from services.repairer.repair_context import RepairContext
from services.repairer.strategies.column_literal_renames import literal_replacements
from services.repairer.strategies.frame_entry_renames import Covered, FrameEntryRenames
from services.repairer.strategies.module_index import ModuleIndex
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit

STRATEGY = RepairStrategy.COLUMN_RENAME
ANSWERS = answers(STRATEGY)
NEEDS = ("renamed_columns",)


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    renames = {rename.old: rename.new for rename in context.hints.renamed_columns if rename.old != rename.new}
    if not renames:
        return _refuse("the diagnosis names no renamed column")
    edits: list[FileEdit] = []
    translated: list[str] = []
    literal_files: list[str] = []
    notes: list[str] = []
    followed: set[str] = set()
    for module in context.permitted_modules():
        path, source, tree = module.path, module.source, module.tree
        plan = _plan_module(tree, SourceText(source), renames)
        if not plan.replacements:
            continue
        edits.append(FileEdit(path=path, old_text=source, new_text=apply_replacements(source, plan.replacements)))
        followed |= plan.followed
        translated.extend(f"{name} ({path})" for name in plan.entries)
        if plan.literal:
            literal_files.append(path)
        if plan.note:
            notes.append(f"{path}: {plan.note}")
    if not edits:
        names = ", ".join(repr(old) for old in sorted(renames))
        return _refuse(
            f"no permitted file reads {names}: no column key, column constant or helper argument beside a frame "
            "or record names it"
        )
    summary = ", ".join(f"{old!r} -> {renames[old]!r}" for old in sorted(followed))
    parts = []
    if translated:
        mapping = ", ".join(f"{renames[old]!r} back to {old!r}" for old in sorted(followed))
        verb = "renames" if len(translated) == 1 else "rename"
        parts.append(
            f"{', '.join(translated)} {verb} {mapping} on the frame received (a copy), so frames in either schema work"
        )
    if literal_files:
        parts.append(f"the column keys in {', '.join(literal_files)} name the new column")
    missing = sorted(set(renames) - followed)
    if missing:
        notes.append(f"not read by the permitted files: {', '.join(missing)}")
    note = f" ({'; '.join(notes)})" if notes else ""
    function = translated[0].split(" (")[0] if len(translated) == 1 and not literal_files else None
    rationale = f"follows the upstream rename {summary}: {'; '.join(parts)}{note}"
    return multi_file_edit(STRATEGY, edits, rationale=rationale, function=function)


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)


@dataclass
class _Plan:
    replacements: list[Replacement] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    """Qualified names of the functions that got the rename line."""
    literal: bool = False
    followed: set[str] = field(default_factory=set)
    note: str = ""


def _plan_module(tree: ast.Module, text: SourceText, renames: dict[str, str]) -> _Plan:
    module = ModuleIndex(tree)
    plan = _Plan()
    covered = Covered()
    if module.pandas:
        entry_renames = FrameEntryRenames(module, renames)
        inserted = list(entry_renames.insertions(text, renames))
        failed = [reason for reason in inserted if isinstance(reason, str)]
        if failed:
            plan.note = f"no entry-point rename ({failed[0]}); column keys renamed instead"
        else:
            for name, replacement, olds in (item for item in inserted if not isinstance(item, str)):
                plan.entries.append(name)
                plan.replacements.append(replacement)
                plan.followed |= olds
            covered = entry_renames.covered
    for old, new in renames.items():
        literal = list(literal_replacements(module, text, old, new, covered))
        if literal:
            plan.replacements.extend(literal)
            plan.literal = True
            plan.followed.add(old)
    return plan
