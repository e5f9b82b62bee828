"""A call's arguments, and whether a node is a given string constant."""

from __future__ import annotations

import ast


def call_arguments(call: ast.Call) -> list[ast.expr]:
    """The positional arguments, then the keyword values."""
    return [*call.args, *(keyword.value for keyword in call.keywords)]


def is_text(node: ast.AST, value: str) -> bool:
    """Whether ``node`` is the string constant ``value``."""
    return isinstance(node, ast.Constant) and node.value == value
