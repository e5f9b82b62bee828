"""numeric_coercion: parse formatted numeric text safely where a text column is converted to a number.

Conversion sites of a column read (``frame["c"]``, or ``record[name]`` in a loop over a column list holding
``c``), and their one-line change:

- ``float(R)`` / ``int(R)``                    -> ``float(_parse_number_text(R))``
- ``pd.to_numeric(R, ...)``                    -> ``pd.to_numeric(R.map(_parse_number_text), ...)``
- ``R.astype(...)`` in a pandas module         -> ``R.map(_parse_number_text).astype(...)``
- ``R.astype(...)`` in a numpy module          -> ``np.array([_parse_number_text(v) for v in R]).astype(...)``
- ``np.asarray(R, dtype=...)`` / ``np.array``  -> ``np.asarray([_parse_number_text(v) for v in R], dtype=...)``

plus the module-level helper ``_parse_number_text`` (currency signs, spaces and thousands separators
stripped; "1.234,5" and "1,234.5" both read as 1234.5, a lone "1,234" as thousands; blanks are NaN),
inserted once before the module's first definition. No import is added.
"""

from __future__ import annotations

import ast

from contracts.catalogue import RepairStrategy, answers
from libs.python_source.column_reads import ColumnRead, column_reads, module_parents
from libs.python_source.imports import module_alias
from libs.python_source.source_text import Replacement, SourceText, apply_replacements
from services.repairer.repair_context import RepairContext
from services.repairer.strategies.number_text_helper import (
    HELPER_NAME,
    has_helper,
    helper_insertion_line,
    helper_text,
)
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit

STRATEGY = RepairStrategy.NUMERIC_COERCION
ANSWERS = answers(STRATEGY)
NEEDS = ("text_numeric_columns",)

SCALAR_CONVERSIONS = frozenset({"float", "int"})
ARRAY_CONSTRUCTORS = frozenset({"asarray", "array"})


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    columns = list(context.hints.text_numeric_columns)
    edits: list[FileEdit] = []
    covered: set[str] = set()
    for module in context.permitted_modules():
        path, source, tree = module.path, module.source, module.tree
        edit = _coerce_module(path, source, tree, columns, covered)
        if isinstance(edit, StrategyRefusal):
            return edit
        if edit is not None:
            edits.append(edit)
    if not edits:
        return _refuse(f"no permitted file converts {', '.join(columns)} to a number at a site it can parse safely")
    missing = sorted(set(columns) - covered)
    note = f"; no conversion found for {', '.join(missing)}" if missing else ""
    return multi_file_edit(
        STRATEGY,
        edits,
        rationale=f"{', '.join(sorted(covered))} arrive as formatted text; they are now parsed with {HELPER_NAME}"
        f" (currency signs, spaces and thousands separators stripped, blanks as NaN){note}",
    )


def _coerce_module(
    path: str, source: str, tree: ast.Module, columns: list[str], covered: set[str]
) -> FileEdit | StrategyRefusal | None:
    text = SourceText(source)
    parents = module_parents(tree)
    pandas, numpy = module_alias(tree, "pandas"), module_alias(tree, "numpy")
    replacements: dict[int, Replacement] = {}
    for column in columns:
        for read in column_reads(tree, column, parents):
            replacement = _site_replacement(read, parents, text, pandas, numpy)
            if replacement is not None:
                replacements.setdefault(id(read.node), replacement)
                covered.add(column)
    if not replacements:
        return None
    edits = list(replacements.values())
    if not has_helper(tree):
        line = helper_insertion_line(tree)
        if line is None:
            return _refuse(f"{path} has no top-level definition to put {HELPER_NAME} before")
        point = text.line_start(line)
        edits.append(Replacement(point, point, helper_text(text.newline)))
    return FileEdit(path=path, old_text=source, new_text=apply_replacements(source, edits))


def _site_replacement(
    read: ColumnRead, parents: dict[ast.AST, ast.AST], text: SourceText, pandas: str | None, numpy: str | None
) -> Replacement | None:
    node = read.node
    segment = text.segment(node)
    start, end = text.span(node)
    parent = parents.get(node)
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
        function = parent.func
        if isinstance(function, ast.Name) and function.id in SCALAR_CONVERSIONS and len(parent.args) == 1:
            return Replacement(start, end, f"{HELPER_NAME}({segment})")
        if isinstance(function, ast.Attribute) and function.attr == "to_numeric":
            return Replacement(start, end, f"{segment}.map({HELPER_NAME})")
        if (
            isinstance(function, ast.Attribute)
            and function.attr in ARRAY_CONSTRUCTORS
            and isinstance(function.value, ast.Name)
            and function.value.id == numpy
        ):
            return Replacement(start, end, f"[{HELPER_NAME}(value) for value in {segment}]")
    if isinstance(parent, ast.Attribute) and parent.attr == "astype" and isinstance(parents.get(parent), ast.Call):
        if pandas is not None:
            return Replacement(start, end, f"{segment}.map({HELPER_NAME})")
        if numpy is not None:
            return Replacement(start, end, f"{numpy}.array([{HELPER_NAME}(value) for value in {segment}])")
    return None


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)
