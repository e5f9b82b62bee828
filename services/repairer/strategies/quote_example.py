"""A string literal of a module to write new text in its quotes (``literal_like(value, example)``): the first
literal equal to the value, else the module's first string literal (not a docstring, not part of an
f-string), else ``""``."""

from __future__ import annotations

import ast

from libs.python_source.definitions import docstring_statement
from libs.python_source.source_text import SourceText


def quote_example(tree: ast.Module, text: SourceText, value: str) -> str:
    skipped = {id(statement.value) for statement in _docstrings(tree)}
    skipped |= {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    strings = sorted(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped
        ),
        key=lambda node: (node.lineno, node.col_offset),
    )
    for node in strings:
        if node.value == value:
            return text.segment(node)
    for node in strings:
        segment = text.segment(node)
        if segment[:1] in ("'", '"'):
            return segment
    return '""'


def _docstrings(tree: ast.Module) -> list[ast.Expr]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            statement = docstring_statement(node.body)
            if statement is not None:
                found.append(statement)
    return found
