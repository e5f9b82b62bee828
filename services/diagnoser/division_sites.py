"""Division sites of a function and whether each divisor is guarded against zero.

A division (``/``, ``//``, ``%`` and their augmented forms) counts as guarded when a name in its divisor
is tested by:

- an enclosing ``if`` / conditional expression (either branch: ``if n: x / n`` and
  ``if n == 0: ... else: x / n`` are both guarded);
- an earlier statement in an enclosing block that leaves the block when the test holds
  (``if n <= 0: return 0.0``, ``... raise``, ``continue``, ``break``) or an ``assert`` on it;
- an enclosing ``try`` whose handlers catch ``ZeroDivisionError``, ``ArithmeticError`` or ``Exception``;

or when the divisor is a non-zero constant or ``max(..., <positive constant>)``. The rule is a heuristic
on purpose: it answers "did anyone think about zero here?", not "can this ever be zero?".
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict

from services.diagnoser.code_diff import parameter_names

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

DIVISION_OPERATORS: dict[type[ast.operator], str] = {ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}
ZERO_DIVISION_HANDLERS = frozenset({"ZeroDivisionError", "ArithmeticError", "Exception", "BaseException"})
BLOCK_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


class DivisionSite(BaseModel):
    model_config = ConfigDict(frozen=True)

    function: str
    line: int
    column: int
    operator: str
    divisor: str
    divisor_names: tuple[str, ...]
    divisor_parameters: tuple[str, ...]
    guarded: bool


def division_sites(function: FunctionNode, source: str | None = None) -> list[DivisionSite]:
    """Every division in ``function``'s own body (nested functions are their own functions)."""
    parents = _parent_map(function)
    parameters = set(parameter_names(function))
    sites = []
    for node in sorted(_own_nodes(function), key=_position):
        operator, divisor = _division_parts(node)
        if operator is None or divisor is None:
            continue
        names = tuple(sorted({name.id for name in ast.walk(divisor) if isinstance(name, ast.Name)}))
        text = (ast.get_source_segment(source, divisor) if source else None) or ast.unparse(divisor)
        sites.append(
            DivisionSite(
                function=function.name,
                line=node.lineno,
                column=node.col_offset,
                operator=operator,
                divisor=text,
                divisor_names=names,
                divisor_parameters=tuple(name for name in names if name in parameters),
                guarded=_constant_safe(divisor) or _guarded_by_context(node, set(names), parents, function),
            )
        )
    return sites


def unguarded_division_sites(function: FunctionNode, source: str | None = None) -> list[DivisionSite]:
    return [site for site in division_sites(function, source) if not site.guarded]


def _own_nodes(function: FunctionNode) -> Iterator[ast.AST]:
    """The function's own nodes in source order; nested functions, lambdas and classes are skipped."""
    nested = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
    pending: list[ast.AST] = [node for node in function.body if not isinstance(node, nested)]
    while pending:
        node = pending.pop(0)
        yield node
        pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, nested))


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _division_parts(node: ast.AST) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.BinOp) and type(node.op) in DIVISION_OPERATORS:
        return DIVISION_OPERATORS[type(node.op)], node.right
    if isinstance(node, ast.AugAssign) and type(node.op) in DIVISION_OPERATORS:
        return DIVISION_OPERATORS[type(node.op)], node.value
    return None, None


def _constant_safe(divisor: ast.expr) -> bool:
    if isinstance(divisor, ast.Constant) and isinstance(divisor.value, int | float) and divisor.value != 0:
        return True
    if isinstance(divisor, ast.Call) and isinstance(divisor.func, ast.Name) and divisor.func.id == "max":
        return any(
            isinstance(arg, ast.Constant) and isinstance(arg.value, int | float) and arg.value > 0
            for arg in divisor.args
        )
    return False


def _guarded_by_context(
    node: ast.AST, names: set[str], parents: dict[ast.AST, ast.AST], function: FunctionNode
) -> bool:
    if not names:
        return False
    child = node
    while child is not function:
        parent = parents[child]
        if (
            isinstance(parent, ast.If | ast.IfExp | ast.While)
            and child is not parent.test
            and _mentions(parent.test, names)
        ):
            return True
        if isinstance(parent, ast.Try) and child in parent.body and _catches_zero_division(parent):
            return True
        if _guarded_by_earlier_statement(parent, child, names):
            return True
        child = parent
    return False


def _guarded_by_earlier_statement(block_owner: ast.AST, child: ast.AST, names: set[str]) -> bool:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(block_owner, field, None)
        if not isinstance(block, list) or child not in block:
            continue
        for statement in block[: block.index(child)]:
            if isinstance(statement, ast.Assert) and _mentions(statement.test, names):
                return True
            if (
                isinstance(statement, ast.If)
                and _mentions(statement.test, names)
                and statement.body
                and isinstance(statement.body[-1], BLOCK_EXITS)
            ):
                return True
    return False


def _catches_zero_division(statement: ast.Try) -> bool:
    for handler in statement.handlers:
        if handler.type is None:
            return True
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(name, ast.Name) and name.id in ZERO_DIVISION_HANDLERS for name in caught):
            return True
    return False


def _mentions(expression: ast.expr, names: set[str]) -> bool:
    return any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(expression))


def _parent_map(function: FunctionNode) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(function) for child in ast.iter_child_nodes(parent)}
