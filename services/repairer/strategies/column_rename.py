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

Reads are also found where the name is held elsewhere (``column_access`` / ``column_names``: a class
attribute, a constructor or function default, a constant, a config value): on a frame they make the function
an entry point like any other read; otherwise the name follows the rename where it is written
(``column_holder_renames``), a config file included when the workspace config lets a repair edit it.

Refused when no permitted file reads the old column (naming the files that hold its name but may not be
edited), and when a permitted file the repairer cannot edit (a declared encoding other than UTF-8, bytes that are
no text, a file that does not parse) holds the old name as a quoted string: the rename would leave that read
behind, so it is refused naming the file and why, not proposed incomplete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from contracts.catalogue import RepairStrategy, answers
from libs.python_source.source_encoding import UnreadableSource, decode_source
from libs.python_source.source_text import Replacement, SourceText, apply_replacements
from services.repairer.repair_context import RepairContext
from services.repairer.strategies.column_access import ColumnAccess, column_accesses
from services.repairer.strategies.column_holder_renames import HolderRenames
from services.repairer.strategies.column_literal_renames import literal_replacements
from services.repairer.strategies.column_names import ColumnNames
from services.repairer.strategies.frame_entry_renames import Covered, FrameEntryRenames
from services.repairer.strategies.module_index import ModuleIndex
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit
from services.repairer.strategies.package_modules import PackageModules, ParsedModule

STRATEGY = RepairStrategy.COLUMN_RENAME
ANSWERS = answers(STRATEGY)
NEEDS = ("renamed_columns",)


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    renames = {rename.old: rename.new for rename in context.hints.renamed_columns if rename.old != rename.new}
    if not renames:
        return _refuse("the diagnosis names no renamed column")
    package = PackageModules(context)
    unedited = _unedited_readers(package, renames)
    if unedited:
        return _refuse(
            "; ".join(f"{path} names {old!r} but cannot be edited here ({why})" for path, old, why in unedited)
            + ": a rename that left it out would be incomplete"
        )
    holders = HolderRenames(package)
    plans = [_entry_plan(module, ColumnNames(module, package), renames) for module in package.permitted_modules()]
    for plan in plans:
        for accesses in plan.accesses.values():
            for access in accesses:
                if plan.covers(access):
                    holders.keep(access)
    kept = {node for _, node in holders.kept if isinstance(node, int)}
    for plan in plans:
        plan.covered.holders |= kept
        _fallback(plan, renames, holders)
    edits = _file_edits(package, plans, holders)
    translated = [f"{name} ({plan.module.path})" for plan in plans for name in plan.entries]
    literal_files = sorted(
        {plan.module.path for plan in plans if plan.literal}
        | {path for path in holders.replacements if path not in holders.config_files}
    )
    followed = set().union(*(plan.followed for plan in plans)) if plans else set()
    notes = [f"{plan.module.path}: {plan.note}" for plan in plans if plan.note]
    if not edits:
        names = ", ".join(repr(old) for old in sorted(renames))
        blocked = sorted(holders.blocked)
        verb = "names" if len(blocked) == 1 else "name"
        held = f" ({', '.join(blocked)} {verb} it, which a repair may not edit)" if blocked else ""
        return _refuse(
            f"no permitted file reads {names}: no column key, column constant or helper argument beside a frame "
            f"or record names it{held}"
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
    if holders.config_files:
        parts.append(f"the config values in {', '.join(sorted(holders.config_files))} name the new column")
    missing = sorted(set(renames) - followed)
    if missing:
        notes.append(f"not read by the permitted files: {', '.join(missing)}")
    note = f" ({'; '.join(notes)})" if notes else ""
    alone = len(translated) == 1 and not literal_files and not holders.config_files
    function = translated[0].split(" (")[0] if alone else None
    rationale = f"follows the upstream rename {summary}: {'; '.join(parts)}{note}"
    return multi_file_edit(STRATEGY, edits, rationale=rationale, function=function)


def _unedited_readers(package: PackageModules, renames: dict[str, str]) -> list[tuple[str, str, str]]:
    """(path, old column, why) for each permitted file the repairer cannot edit that holds an old column's name
    as a quoted string: its text as Python reads it (PEP 263), else its bytes one for one (Latin-1), so a name is
    found in a file no reader decodes."""
    found = []
    for path, why in package.unread().items():
        try:
            raw = (package.context.candidate.root / path).read_bytes()
        except OSError:
            continue
        try:
            text = decode_source(raw).text
        except UnreadableSource:
            text = raw.decode("latin-1")
        found += [(path, old, why) for old in sorted(renames) if re.search(rf"(['\"]){re.escape(old)}\1", text)]
    return found


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)


@dataclass
class _Plan:
    module: ParsedModule
    index: ModuleIndex
    text: SourceText
    accesses: dict[str, list[ColumnAccess]]
    """Per old column, the module's reads of it that ``column_access`` finds."""
    replacements: list[Replacement] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    """Qualified names of the functions that got the rename line."""
    covered: Covered = field(default_factory=Covered)
    literal: bool = False
    followed: set[str] = field(default_factory=set)
    note: str = ""

    def covers(self, access: ColumnAccess) -> bool:
        """Whether the access is in a function that receives a renamed frame."""
        return id(access.node) in self.covered.nodes


def _entry_plan(module: ParsedModule, names: ColumnNames, renames: dict[str, str]) -> _Plan:
    """The module's entry-point renames (a pandas module), and what they cover."""
    accesses = {old: column_accesses(module, names, old) for old in renames}
    plan = _Plan(module, ModuleIndex(module.tree), SourceText(module.source), accesses)
    if not plan.index.pandas:
        return plan
    entry_renames = FrameEntryRenames(plan.index, renames, accesses)
    inserted = list(entry_renames.insertions(plan.text, renames))
    failed = [reason for reason in inserted if isinstance(reason, str)]
    if failed:
        plan.note = f"no entry-point rename ({failed[0]}); column keys renamed instead"
        return plan
    for name, replacement, olds in (item for item in inserted if not isinstance(item, str)):
        plan.entries.append(name)
        plan.replacements.append(replacement)
        plan.followed |= olds
    plan.covered = entry_renames.covered
    return plan


def _fallback(plan: _Plan, renames: dict[str, str], holders: HolderRenames) -> None:
    """The column keys outside the covered functions, and the holders of the names their reads use."""
    for old, new in renames.items():
        literal = list(literal_replacements(plan.index, plan.text, old, new, plan.covered))
        if literal:
            plan.replacements.extend(literal)
            plan.literal = True
            plan.followed.add(old)
        for access in plan.accesses[old]:
            if not plan.covers(access) and holders.rename(access, old, new):
                plan.followed.add(old)


def _file_edits(package: PackageModules, plans: list[_Plan], holders: HolderRenames) -> list[FileEdit]:
    """One edit per file: a module's own replacements and the holders renamed in it (a span once)."""
    by_path: dict[str, dict[tuple[int, int], Replacement]] = {}
    for plan in plans:
        spans = by_path.setdefault(plan.module.path, {})
        for replacement in plan.replacements:
            spans.setdefault((replacement.start, replacement.end), replacement)
    for path, replacements in holders.replacements.items():
        spans = by_path.setdefault(path, {})
        for span, replacement in replacements.items():
            spans.setdefault(span, replacement)
    edits = []
    for path, spans in sorted(by_path.items()):
        if not spans:
            continue
        module = package.module(path)
        source = module.source if module is not None else package.context.candidate.read(path)
        if source is None:
            continue
        edits.append(FileEdit(path=path, old_text=source, new_text=apply_replacements(source, list(spans.values()))))
    return edits
