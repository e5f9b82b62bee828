"""Which source columns the model's code reads: string constants of the revisions' Python files (outside
tests and docstrings) that name a column of the windows' CSVs, with how each is used (subscript,
``.get``/keyword argument, a list of names)."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from libs.python_source.untrusted_parsing import parse_module
from services.diagnoser.behavioural_paths import is_test_or_documentation
from services.diagnoser.code_diff import IGNORED_DIRECTORY_NAMES
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence

METHOD = (
    "AST of every Python file of both revisions (tests excluded): string constants outside docstrings, kept when "
    "they equal a column name of the windows' CSV headers"
)


def read_columns_evidence(trees: Iterable[Path], columns: set[str], label: str) -> Evidence:
    uses: dict[str, set[str]] = defaultdict(set)
    files: dict[str, set[str]] = defaultdict(set)
    by_text: dict[bytes, list[tuple[str, str]]] = {}  # a file both revisions hold alike is parsed once
    for tree in trees:
        for path in sorted(tree.rglob("*.py")):
            relative = path.relative_to(tree).as_posix()
            if any(part in IGNORED_DIRECTORY_NAMES for part in path.relative_to(tree).parts):
                continue
            if is_test_or_documentation(relative):
                continue
            try:
                raw = path.read_bytes()
            except OSError:
                continue
            if raw not in by_text:
                by_text[raw] = text_mentions(raw, columns)
            for name, use in by_text[raw]:
                uses[name].add(use)
                files[name].add(relative)
    read = sorted(name for name in uses if name != label)
    return make_evidence(
        EvidenceKind.READ_COLUMNS,
        subject="workspace",
        values={
            "columns": read,
            "label_read": label in uses,
            "uses": {name: sorted(uses[name]) for name in read},
            "files": {name: sorted(files[name]) for name in read},
        },
        summary=f"the code names {len(read)} source column(s): {', '.join(read) or 'none'}",
        source=EvidenceSource.CODE,
        strength=1.0 if read else 0.0,
        method=METHOD,
    )


def text_mentions(raw: bytes, columns: set[str]) -> list[tuple[str, str]]:
    """(column, use) for each string constant of a Python file (its bytes decoded as Python decodes them, PEP 263)
    that names a column, in the order ``ast.walk`` meets them; none when the file does not read or parse."""
    try:
        tree = parse_module(raw)
    except SyntaxError:
        return []
    docstrings = _docstring_nodes(tree)
    found = []
    for parent in ast.walk(tree):  # each node's children in order, parents in walk order: the walk's own order
        for node in ast.iter_child_nodes(parent):
            if not isinstance(node, ast.Constant) or id(node) in docstrings:
                continue
            if isinstance(node.value, str) and node.value in columns:
                found.append((node.value, _use(parent)))
    return found


def _use(parent: ast.AST) -> str:
    if isinstance(parent, ast.Subscript):
        return "subscript"
    if isinstance(parent, ast.Call | ast.keyword):
        return "argument"
    if isinstance(parent, ast.Tuple | ast.List | ast.Set):
        return "list_of_names"
    if isinstance(parent, ast.Dict):
        return "dict"
    if isinstance(parent, ast.Compare):
        return "comparison"
    return "other"


def _docstring_nodes(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found
