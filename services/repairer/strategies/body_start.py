"""Where a line inserted at the start of a function's body goes: after the docstring, at the body's indent."""

from __future__ import annotations

import ast

from libs.python_source.definitions import FunctionNode, docstring_statement
from libs.python_source.source_text import SourceText


def body_start(text: SourceText, function: FunctionNode) -> tuple[int, str] | str:
    """(line to insert before, the body's indent), or the reason a line cannot go there."""
    body = function.body
    docstring = docstring_statement(body)
    if docstring is not None:
        if len(body) < 2:
            return "the function has nothing but a docstring"
        after = docstring.end_lineno or docstring.lineno
        if body[1].lineno <= after:
            return "the docstring shares its last line with the next statement"
        return statement_indent(text, function, body[1], after + 1)
    if body[0].lineno <= function.lineno:
        return "the function body starts on the def line"
    return statement_indent(text, function, body[0], body[0].lineno)


def statement_indent(
    text: SourceText, function: FunctionNode, statement: ast.stmt, before_line: int
) -> tuple[int, str] | str:
    """(``before_line``, the statement's indent) when the statement starts its line inside the function."""
    indent = text.indent(statement.lineno)
    def_indent = text.indent(function.lineno)
    if len(indent) != statement.col_offset or not indent.startswith(def_indent) or indent == def_indent:
        return "the function body does not start on a line of its own"
    return before_line, indent


def indent_unit(text: SourceText, function: FunctionNode) -> str:
    """One level of the function's indentation (the body's indent less the def's)."""
    return text.indent(function.body[0].lineno)[len(text.indent(function.lineno)) :] or "    "
