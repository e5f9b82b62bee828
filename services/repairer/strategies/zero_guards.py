"""Divisions of a function by a bare name, and whether a zero guard already covers them.

The guard rules are the shared analysis in ``libs.python_source.division_guards`` (enclosing ``if``/
``while``/conditional expression, an earlier leaving ``if`` or ``assert``, an enclosing ``try`` that
catches ``ZeroDivisionError`` or a base class of it). The repairer's own policy is the narrow part: only a
divisor that is a bare name is considered, either one of the function's parameters or a local assigned in
the function. The repairer runs this check itself so that it does not trust the diagnosis blindly; it never
imports another service.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from libs.python_source.division_guards import FunctionNode, divisions, is_zero_guarded, parent_map

__all__ = ["FunctionNode", "NameDivision", "name_divisions", "parameters_of"]


@dataclass(frozen=True)
class NameDivision:
    divisor: str
    operator: str
    line: int
    guarded: bool
    is_parameter: bool
    statement: ast.stmt
    """The statement of the function's own body (top level) that holds the division."""


def parameters_of(function: FunctionNode) -> set[str]:
    arguments = function.args
    names = {arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    names.update(arg.arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None)
    return names


def name_divisions(function: FunctionNode) -> list[NameDivision]:
    """Divisions in the function's own body (not nested functions) by a bare name, in source order."""
    parameters = parameters_of(function)
    parents = parent_map(function)
    found = []
    for division in divisions(function):
        if not isinstance(division.divisor, ast.Name):
            continue
        name = division.divisor.id
        found.append(
            NameDivision(
                divisor=name,
                operator=division.operator,
                line=division.line,
                guarded=is_zero_guarded(division.node, {name}, function, parents=parents),
                is_parameter=name in parameters,
                statement=_body_statement(division.node, function, parents),
            )
        )
    return found


def _body_statement(node: ast.AST, function: FunctionNode, parents: dict[ast.AST, ast.AST]) -> ast.stmt:
    child = node
    while parents[child] is not function:
        child = parents[child]
    assert isinstance(child, ast.stmt)
    return child
