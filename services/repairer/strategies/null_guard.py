"""null_guard: fill the nulls of a column with the value the workspace config declares for it.

Where the column is read (``services.repairer.strategies.column_access``: a key, a constant, a class
attribute, a default or a config value naming it, ``row.get``, a frame helper taking the name, a column list
holding it), or where a frame enters whole a scikit-learn model whose ColumnTransformer selects it
(``column_transformers``):

- in a pandas module, on a frame the function receives as a parameter: one line at the start of the
  function, ``frame = frame.fillna({"c": <fill>})`` (a copy: the caller's frame is not changed; one line per
  frame with every column it reads);
- a scalar conversion of a field (``float(row["c"])``, ``int(row.get("c"))``): ``float(row["c"] or <fill>)``,
  so a blank or missing field takes the fill;
- in a pandas module otherwise: ``frame["c"].fillna(<fill>)`` at the read;
- in a numpy module, an array of the column with a numeric fill:
  ``np.where(np.isnan(columns["c"]), <fill>, columns["c"])`` at the read.

A column list handed to a ColumnTransformer is not a read: only frames are. Refused without a declared fill
for one of the null columns, or when no read of them is found.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from contracts.catalogue import RepairStrategy, answers
from libs.python_source.definitions import FunctionNode
from libs.python_source.imports import module_alias
from libs.python_source.literals import literal_like
from libs.python_source.source_text import Replacement, SourceText, apply_replacements
from services.repairer.repair_context import RepairContext
from services.repairer.strategies.body_start import body_start
from services.repairer.strategies.column_access import ColumnAccess, column_accesses, frame_parameter, is_record
from services.repairer.strategies.column_names import ColumnNames
from services.repairer.strategies.column_transformers import ColumnTransformers
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit
from services.repairer.strategies.package_modules import PackageModules, ParsedModule
from services.repairer.strategies.quote_example import quote_example

STRATEGY = RepairStrategy.NULL_GUARD
ANSWERS = answers(STRATEGY)
NEEDS = ("null_columns", "null_fill")

SCALAR_CONVERSIONS = frozenset({"float", "int"})


@dataclass
class _Entry:
    """The fill line at the start of a function for one of its frame parameters."""

    function: FunctionNode
    frame: str
    columns: list[str] = field(default_factory=list)
    reads: list[tuple[ColumnAccess, str, Any]] = field(default_factory=list)
    """The reads the line guards (each with its fill as written and its fill), to guard at the read when the
    line cannot go at the start of the function."""


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    fills = {col: context.null_fills[col] for col in context.hints.null_columns if col in context.null_fills}
    package = PackageModules(context)
    edits: list[FileEdit] = []
    for module in package.permitted_modules():
        replacements = list(_module_replacements(module, ColumnNames(module, package), fills))
        if replacements:
            new_text = apply_replacements(module.source, replacements)
            edits.append(FileEdit(path=module.path, old_text=module.source, new_text=new_text))
    if not edits:
        return _refuse(f"no permitted file reads {', '.join(sorted(fills))} at a site a fill can guard")
    summary = ", ".join(f"{column} with {fill!r}" for column, fill in sorted(fills.items()))
    return multi_file_edit(STRATEGY, edits, rationale=f"nulls are filled where the column is read: {summary}")


def _module_replacements(module: ParsedModule, names: ColumnNames, fills: dict[str, Any]) -> Iterator[Replacement]:
    text = SourceText(module.source)
    pandas = module_alias(module.tree, "pandas")
    numpy = module_alias(module.tree, "numpy")
    transformers = ColumnTransformers(module, names) if pandas is not None else None
    entries: dict[tuple[int, str], _Entry] = {}

    def enter(function: FunctionNode, frame: str, column: str) -> _Entry:
        entry = entries.setdefault((id(function), frame), _Entry(function, frame))
        if column not in entry.columns:
            entry.columns.append(column)
        return entry

    for column, fill in fills.items():
        written = literal_like(fill, quote_example(module.tree, text, column))
        for access in column_accesses(module, names, column):
            frame = frame_parameter(access, module.parents, pandas) if pandas is not None else None
            if frame is not None and access.function is not None:
                enter(access.function, frame, column).reads.append((access, written, fill))
            elif access.single:
                replacement = _read_replacement(module, text, access, written, fill, pandas, numpy)
                if replacement is not None:
                    yield replacement
        for whole in transformers.whole_frames(column) if transformers is not None else []:
            enter(whole.function, whole.parameter, column)
    for entry in entries.values():
        line = _fill_at_start(module, text, entry, fills)
        if line is not None:
            yield line
            continue
        for access, written, fill in entry.reads:
            replacement = (
                _read_replacement(module, text, access, written, fill, pandas, numpy) if access.single else None
            )
            if replacement is not None:
                yield replacement


def _read_replacement(
    module: ParsedModule,
    text: SourceText,
    access: ColumnAccess,
    written: str,
    fill: Any,
    pandas: str | None,
    numpy: str | None,
) -> Replacement | None:
    node = access.node
    parent = module.parents.get(node)
    start, end = text.span(node)
    segment = text.segment(node)
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in SCALAR_CONVERSIONS
        and parent.args == [node]
    ):
        return Replacement(start, end, f"{segment} or {written}")
    if is_record(access, module.parents):
        return None
    if pandas is not None:
        return Replacement(start, end, f"{segment}.fillna({written})")
    if numpy is not None and isinstance(fill, int | float) and not isinstance(fill, bool):
        return Replacement(start, end, f"{numpy}.where({numpy}.isnan({segment}), {written}, {segment})")
    return None


def _fill_at_start(module: ParsedModule, text: SourceText, entry: _Entry, fills: dict[str, Any]) -> Replacement | None:
    """The fill line, or None when no line can go at the start of the function (``body_start``)."""
    placement = body_start(text, entry.function)
    if isinstance(placement, str):
        return None
    line, indent = placement
    point = text.line_start(line)
    pairs = []
    for column in entry.columns:
        example = quote_example(module.tree, text, column)
        pairs.append(f"{literal_like(column, example)}: {literal_like(fills[column], example)}")
    frame = entry.frame
    return Replacement(point, point, f"{indent}{frame} = {frame}.fillna({{{', '.join(pairs)}}}){text.newline}")


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)
