"""Divisions of a function and whether a zero guard protects a divisor.

A division is ``/``, ``//`` or ``%``, or one of their augmented forms, in the function's own body: nested
functions, lambdas and classes are their own scopes and are skipped. A division counts as zero-guarded for
a set of divisor names when one of those names is tested by:

- an enclosing ``if`` / ``while`` / conditional expression, in either branch (``if n: x / n`` and
  ``if n == 0: ... else: x / n`` are both guarded);
- an earlier ``if`` in an enclosing block whose body ends by leaving the block (``return``, ``raise``,
  ``continue``, ``break``), or an earlier ``assert``;

or when an enclosing ``try`` has the division in its body and a handler that catches ``ZeroDivisionError``
(see ``ZERO_DIVISION_CATCHERS``), whatever the names. The rule is a heuristic on purpose: it answers "did
anyone think about zero here?", not "can this ever be zero?".

Which names of a divisor to check, and whether a divisor is safe by construction (a non-zero constant,
``max(n, 1)``), is the caller's policy.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
ParentMap = Mapping[ast.AST, ast.AST]

DIVISION_OPERATORS: dict[type[ast.operator], str] = {ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}
ZERO_DIVISION_CATCHERS = frozenset({"ZeroDivisionError", "ArithmeticError", "Exception", "BaseException"})
"""Exception names whose ``except`` clause catches ``ZeroDivisionError``; a bare ``except:`` catches it too."""
BLOCK_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_GUARD_TESTS = (ast.If, ast.IfExp, ast.While)


@dataclass(frozen=True)
class Division:
    """One division: the ``BinOp``/``AugAssign`` node, its operator symbol and its divisor expression."""

    node: ast.BinOp | ast.AugAssign
    operator: str
    divisor: ast.expr

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def column(self) -> int:
        return self.node.col_offset


def divisions(function: FunctionNode) -> list[Division]:
    """Every division in ``function``'s own body, in source order (line, then column).

    Decorators, default values and annotations of ``function`` are not its body and are not searched.
    """
    found = [division for node in _own_body_nodes(function) if (division := division_of(node)) is not None]
    return sorted(found, key=lambda division: (division.line, division.column))


def division_of(node: ast.AST) -> Division | None:
    """The division ``node`` makes, or None when it is not a division."""
    if isinstance(node, ast.BinOp) and type(node.op) in DIVISION_OPERATORS:
        return Division(node=node, operator=DIVISION_OPERATORS[type(node.op)], divisor=node.right)
    if isinstance(node, ast.AugAssign) and type(node.op) in DIVISION_OPERATORS:
        return Division(node=node, operator=DIVISION_OPERATORS[type(node.op)], divisor=node.value)
    return None


def is_zero_guarded(
    node: ast.AST, divisor_names: Iterable[str], function: FunctionNode, *, parents: ParentMap | None = None
) -> bool:
    """Whether a zero guard in ``function`` protects ``node`` (a division) for any of ``divisor_names``.

    An enclosing ``try`` that catches ``ZeroDivisionError`` guards the node even when ``divisor_names`` is
    empty. Pass ``parents=parent_map(function)`` to reuse one parent map across many nodes.
    """
    names = frozenset(divisor_names)
    parents = parent_map(function) if parents is None else parents
    child = node
    while child is not function:
        parent = parents.get(child)
        if parent is None:
            raise ValueError(f"the node at line {getattr(node, 'lineno', '?')} is not inside {function.name}")
        if isinstance(parent, _GUARD_TESTS) and child is not parent.test and _mentions(parent.test, names):
            return True
        if isinstance(parent, ast.Try | ast.TryStar) and child in parent.body and catches_zero_division(parent):
            return True
        if _guarded_by_earlier_statement(parent, child, names):
            return True
        child = parent
    return False


def catches_zero_division(statement: ast.Try | ast.TryStar) -> bool:
    """Whether one of the ``try`` statement's handlers catches ``ZeroDivisionError`` (an ``except*`` handler catches
    it inside the group its body raises)."""
    for handler in statement.handlers:
        if handler.type is None:
            return True
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(item, ast.Name) and item.id in ZERO_DIVISION_CATCHERS for item in caught):
            return True
    return False


def parent_map(function: FunctionNode) -> dict[ast.AST, ast.AST]:
    """Each node under ``function`` mapped to its parent node."""
    return {child: parent for parent in ast.walk(function) for child in ast.iter_child_nodes(parent)}


def _own_body_nodes(function: FunctionNode) -> Iterator[ast.AST]:
    """The nodes of the function's body, breadth first, without nested functions, lambdas and classes."""
    pending: deque[ast.AST] = deque(node for node in function.body if not isinstance(node, _NESTED_SCOPES))
    while pending:
        node = pending.popleft()
        yield node
        pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _NESTED_SCOPES))


def _guarded_by_earlier_statement(block_owner: ast.AST, child: ast.AST, names: frozenset[str]) -> bool:
    """Whether a statement before ``child`` in one of ``block_owner``'s blocks asserts or leaves on a name."""
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


def _mentions(expression: ast.expr, names: frozenset[str]) -> bool:
    return any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(expression))
