"""Divisions of a function whose divisor is a bare parameter, and whether a zero guard already covers them.

A division counts as guarded when the divisor parameter is tested by an enclosing ``if``/``while``/
conditional expression, by an earlier ``if`` in an enclosing block that returns, raises, breaks or
continues, or by an earlier ``assert``; or when an enclosing ``try`` catches ``ZeroDivisionError``
(or a base class of it). The repairer keeps its own copy of this narrow check so that it does not trust
the diagnosis blindly and never imports another service.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

DIVISIONS: dict[type[ast.operator], str] = {ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}
ZERO_DIVISION_CATCHERS = frozenset({"ZeroDivisionError", "ArithmeticError", "Exception", "BaseException"})
LEAVES_BLOCK = (ast.Return, ast.Raise, ast.Continue, ast.Break)


@dataclass(frozen=True)
class ParameterDivision:
    parameter: str
    operator: str
    line: int
    guarded: bool


def parameter_divisions(function: FunctionNode) -> list[ParameterDivision]:
    """Divisions in the function's own body (not nested functions) by one of its parameters, by line."""
    parameters = {arg.arg for arg in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    parents = {child: parent for parent in ast.walk(function) for child in ast.iter_child_nodes(parent)}
    found = []
    for node in ast.walk(function):
        division = _division(node)
        if division is None or not _own(node, parents, function):
            continue
        operator, divisor, line = division
        if isinstance(divisor, ast.Name) and divisor.id in parameters:
            found.append(
                ParameterDivision(
                    parameter=divisor.id,
                    operator=operator,
                    line=line,
                    guarded=_guarded(node, divisor.id, parents, function),
                )
            )
    return sorted(found, key=lambda division: division.line)


def _division(node: ast.AST) -> tuple[str, ast.expr, int] | None:
    """(operator, divisor, line) when ``node`` divides."""
    if isinstance(node, ast.BinOp) and type(node.op) in DIVISIONS:
        return DIVISIONS[type(node.op)], node.right, node.lineno
    if isinstance(node, ast.AugAssign) and type(node.op) in DIVISIONS:
        return DIVISIONS[type(node.op)], node.value, node.lineno
    return None


def _own(node: ast.AST, parents: dict[ast.AST, ast.AST], function: FunctionNode) -> bool:
    parent = parents.get(node)
    while parent is not None and parent is not function:
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            return False
        parent = parents.get(parent)
    return parent is function


def _guarded(node: ast.AST, name: str, parents: dict[ast.AST, ast.AST], function: FunctionNode) -> bool:
    child = node
    while child is not function:
        parent = parents[child]
        if (
            isinstance(parent, ast.If | ast.IfExp | ast.While)
            and child is not parent.test
            and _names(parent.test, name)
        ):
            return True
        if isinstance(parent, ast.Try) and child in parent.body and _catches_zero_division(parent):
            return True
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and child in block and _earlier_guard(block[: block.index(child)], name):
                return True
        child = parent
    return False


def _earlier_guard(statements: list[ast.stmt], name: str) -> bool:
    for statement in statements:
        if isinstance(statement, ast.Assert) and _names(statement.test, name):
            return True
        if (
            isinstance(statement, ast.If)
            and _names(statement.test, name)
            and isinstance(statement.body[-1], LEAVES_BLOCK)
        ):
            return True
    return False


def _catches_zero_division(statement: ast.Try) -> bool:
    for handler in statement.handlers:
        if handler.type is None:
            return True
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(item, ast.Name) and item.id in ZERO_DIVISION_CATCHERS for item in caught):
            return True
    return False


def _names(expression: ast.expr, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(expression))
