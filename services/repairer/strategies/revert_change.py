"""revert_change: restore what the candidate changed to the base text.

When the diagnosis isolated the change that carries the drop (delta debugging), exactly those hunks are
reverted (``isolated_revert``), nothing else. Otherwise the targets are the diagnosis's changed functions
(else its suspect). For each, the base and candidate
versions are aligned statement by statement and only the statements that differ are restored, so a
formatting-only change stays and a changed constant or keyword argument is a one-line revert. A function
whose signature changed is restored whole. ``function`` empty or ``<module>`` means the module's top-level
statements. A configuration file (YAML, JSON, TOML, INI) has no statements: its changed hunks are restored,
which for one file is its base text. The revert is refused when the function or file is not in the base
revision, when nothing differs, or when it would change more lines than the policy allows.
"""

from __future__ import annotations

from contracts.catalogue import RepairStrategy, answers
from contracts.events.diagnosis import Suspect
from libs.python_source.definitions import find_definition
from libs.python_source.source_text import OverlappingEdits, Replacement, SourceText, apply_replacements
from libs.python_source.statement_revert import CannotRevert, revert_block, revert_statement
from libs.python_source.untrusted_parsing import parse_module
from services.repairer.repair_context import RepairContext
from services.repairer.source_tree import SourceTree
from services.repairer.strategies.isolated_revert import revert_isolated
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit
from services.repairer.unified_diff import parse_unified_diff

STRATEGY = RepairStrategy.REVERT_CHANGE
ANSWERS = answers(STRATEGY)
NEEDS = ("base_tree", "changed_code")
MODULE_LEVEL = frozenset({"", "<module>"})
CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".ini", ".cfg")


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    assert context.base is not None
    if context.hints.isolated_changes:
        return _revert_isolated(context)
    targets = list(context.hints.changed_functions) or ([context.suspect] if context.suspect else [])
    by_file: dict[str, list[Suspect]] = {}
    for target in targets:
        by_file.setdefault(target.file, []).append(target)
    edits = []
    for file, file_targets in by_file.items():
        edit = revert_file(context.base, context.candidate, file, [t.function for t in file_targets])
        if isinstance(edit, StrategyRefusal):
            return edit
        edits.append(edit)
    names = ", ".join(f"{t.file}:{t.function or '<module>'}" for t in targets)
    outcome = multi_file_edit(STRATEGY, edits, rationale=f"restores {names} to the base revision", function=None)
    if isinstance(outcome, StrategyRefusal):
        return _refuse(f"{names} is the same in the base and candidate revisions")
    changed = sum(len(patch.added) + len(patch.removed) for patch in parse_unified_diff(outcome.unified_diff))
    if changed > context.max_changed_lines:
        return _refuse(f"the revert would change {changed} lines, more than the policy's {context.max_changed_lines}")
    if len(targets) == 1 and targets[0].function not in MODULE_LEVEL:
        return outcome.model_copy(update={"function": targets[0].function})
    return outcome


def _revert_isolated(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    assert context.base is not None
    changes = context.hints.isolated_changes
    edits = revert_isolated(context.base, context.candidate, changes, STRATEGY)
    if isinstance(edits, StrategyRefusal):
        return edits
    where = "; ".join(
        f"{c.path}: {', '.join(a for a in c.anchors if not a.startswith('<')) or 'lines'}" for c in changes
    )
    outcome = multi_file_edit(STRATEGY, edits, rationale=f"reverts the change that carries the drop ({where})")
    if isinstance(outcome, StrategyRefusal):
        return _refuse("the isolated change is already the base text")
    changed = sum(len(patch.added) + len(patch.removed) for patch in parse_unified_diff(outcome.unified_diff))
    if changed > context.max_changed_lines:
        return _refuse(f"the revert would change {changed} lines, more than the policy's {context.max_changed_lines}")
    return outcome


def revert_file(base: SourceTree, candidate: SourceTree, file: str, functions: list[str]) -> FileEdit | StrategyRefusal:
    base_source, candidate_source = base.read(file), candidate.read(file)
    if candidate_source is None:
        reason = candidate.unreadable_reason(file)
        return _refuse(f"{file} is not a readable file of the candidate revision: {reason}")
    if base_source is None:
        reason = base.unreadable_reason(file)
        return _refuse(
            f"{file} does not exist in the base revision"
            if reason == "not a file inside the revision"
            else f"{file} is not a readable file of the base revision: {reason}"
        )
    if file.endswith(CONFIG_SUFFIXES):  # no statements to align: every changed hunk goes back to the base text
        return FileEdit(path=file, old_text=candidate_source, new_text=base_source)
    try:
        base_tree, candidate_tree = parse_module(base_source), parse_module(candidate_source)
    except SyntaxError as error:
        return _refuse(f"{file} does not parse in one revision: {error.msg} (line {error.lineno})")
    base_text, candidate_text = SourceText(base_source), SourceText(candidate_source)
    replacements: list[Replacement] = []
    try:
        for function in dict.fromkeys(functions):
            if function in MODULE_LEVEL:
                replacements.extend(revert_block(base_text, base_tree.body, candidate_text, candidate_tree.body))
                continue
            base_node = find_definition(base_tree, function)
            candidate_node = find_definition(candidate_tree, function)
            if base_node is None:
                return _refuse(f"{function} does not exist in the base revision of {file}")
            if candidate_node is None:
                return _refuse(f"{function} does not exist in the candidate revision of {file}")
            replacements.extend(revert_statement(base_text, base_node, candidate_text, candidate_node))
        new_text = apply_replacements(candidate_source, set(replacements))
    except (CannotRevert, OverlappingEdits) as error:
        return _refuse(f"cannot restore {file} by whole statements: {error}")
    return FileEdit(path=file, old_text=candidate_source, new_text=new_text)


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)
