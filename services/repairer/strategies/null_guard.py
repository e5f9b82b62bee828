"""null_guard: fill the nulls of a column with the value the workspace config declares for it.

Where the column is read (``frame["c"]``):

- in a pandas module, inside a function that receives the frame as a parameter: one line at the start of
  the function, ``frame = frame.fillna({"c": <fill>})`` (a copy: the caller's frame is not changed);
- in a pandas module otherwise: ``frame["c"].fillna(<fill>)`` at the read;
- a scalar conversion of a record's field (``float(row["c"])``, ``int(row["c"])``): ``float(row["c"] or
  <fill>)``, so a blank or missing field takes the fill.

Refused without a declared fill for one of the null columns, or when no read of them is found.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from contracts.catalogue import RepairStrategy, answers
from libs.python_source.column_reads import ColumnRead, column_reads, module_parents
from libs.python_source.imports import module_alias
from libs.python_source.literals import literal_like
from libs.python_source.source_text import Replacement, SourceText, apply_replacements
from services.repairer.repair_context import RepairContext
from services.repairer.strategies.body_start import body_start
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit
from services.repairer.strategies.zero_guards import parameters_of

STRATEGY = RepairStrategy.NULL_GUARD
ANSWERS = answers(STRATEGY)
NEEDS = ("null_columns", "null_fill")

SCALAR_CONVERSIONS = frozenset({"float", "int"})


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    fills = {col: context.null_fills[col] for col in context.hints.null_columns if col in context.null_fills}
    edits: list[FileEdit] = []
    for module in context.permitted_modules():
        path, source, tree = module.path, module.source, module.tree
        replacements = list(_module_replacements(tree, SourceText(source), fills))
        if replacements:
            edits.append(FileEdit(path=path, old_text=source, new_text=apply_replacements(source, replacements)))
    if not edits:
        return _refuse(f"no permitted file reads {', '.join(sorted(fills))} at a site a fill can guard")
    summary = ", ".join(f"{column} with {fill!r}" for column, fill in sorted(fills.items()))
    return multi_file_edit(STRATEGY, edits, rationale=f"nulls are filled where the column is read: {summary}")


def _module_replacements(tree: ast.Module, text: SourceText, fills: dict[str, Any]) -> Iterator[Replacement]:
    parents = module_parents(tree)
    pandas = module_alias(tree, "pandas") is not None
    guarded: dict[tuple[int, str], list[str]] = {}
    for column, fill in fills.items():
        for read in column_reads(tree, column, parents):
            if not read.by_constant:
                continue
            frame = _frame_parameter(read)
            if pandas and frame is not None:
                guarded.setdefault((id(read.function), frame), [])
                if column not in guarded[(id(read.function), frame)]:
                    guarded[(id(read.function), frame)].append(column)
                    yield from _fill_at_start(text, read, frame, column, fill)
                continue
            parent = parents.get(read.node)
            start, end = text.span(read.node)
            segment = text.segment(read.node)
            written = literal_like(fill, text.segment(read.node.slice))
            if (
                isinstance(parent, ast.Call)
                and isinstance(parent.func, ast.Name)
                and parent.func.id in SCALAR_CONVERSIONS
                and parent.args == [read.node]
            ):
                yield Replacement(start, end, f"{segment} or {written}")
            elif pandas:
                yield Replacement(start, end, f"{segment}.fillna({written})")


def _frame_parameter(read: ColumnRead) -> str | None:
    frame = read.node.value
    if read.function is not None and isinstance(frame, ast.Name) and frame.id in parameters_of(read.function):
        return frame.id
    return None


def _fill_at_start(text: SourceText, read: ColumnRead, frame: str, column: str, fill: Any) -> Iterator[Replacement]:
    assert read.function is not None
    placement = body_start(text, read.function)
    if isinstance(placement, str):
        return
    line, indent = placement
    point = text.line_start(line)
    example = text.segment(read.node.slice)
    mapping = f"{{{literal_like(column, example)}: {literal_like(fill, example)}}}"
    yield Replacement(point, point, f"{indent}{frame} = {frame}.fillna({mapping}){text.newline}")


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)
