"""Whether a node of the patched file lies in a statement the patch adds or changes.

A simple statement is changed when any of its lines is an added line; a compound statement (``if``,
``while``, ``for``, ``def``, ``class``, ``with``, ``try``...) when a line of its header is (its decorators,
its first line, up to the line before its body); the statements of its body are judged on their own. So a
call split over lines is changed when only its argument line changes, and a ``while`` loop is changed when
its ``while`` line is, not when a line of its body is.

A node belongs to the nearest statement (or clause) above it, read from the tree's kept walk and parents
(:mod:`libs.python_source.tree_walk`), not from another walk of each statement. Context and operator nodes
(``Load``, ``Add``...: nodes without fields) are not any one statement's: CPython shares one of each between all
trees, and nothing is judged on them.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

from libs.python_source.tree_walk import parents_of, walked


class ChangedStatements:
    def __init__(self, tree: ast.AST, added_lines: Collection[int] | None) -> None:
        """``added_lines`` None: every statement counts as changed (a hunk parsed alone is all added)."""
        self.added = None if added_lines is None else frozenset(added_lines)
        self.span_of: dict[ast.AST, tuple[int, int]] = {}
        parents = parents_of(tree)
        spans: dict[ast.AST, tuple[int, int]] = {}
        for node in walked(tree):  # a parent comes before its children
            parent = parents.get(node)
            if parent is None or _is_block(node) or not node._fields:
                continue
            if isinstance(parent, ast.stmt | ast.ExceptHandler | ast.match_case):
                span = spans.get(parent)
                if span is None:
                    span = spans[parent] = own_lines(parent)
                self.span_of[node] = span
            elif parent in self.span_of:
                self.span_of[node] = self.span_of[parent]

    def changed(self, node: ast.AST) -> bool:
        if self.added is None:
            return True
        span = own_lines(node) if isinstance(node, ast.stmt) else self.span_of.get(node)
        if span is None:
            return False
        return any(line in self.added for line in range(span[0], span[1] + 1))


def own_lines(block: ast.stmt | ast.ExceptHandler | ast.match_case) -> tuple[int, int]:
    """The first and last line of a statement (or an ``except``/``case`` clause), without its body."""
    if isinstance(block, ast.match_case):
        first = block.pattern.lineno
        return first, max(first, block.body[0].lineno - 1)
    decorators = getattr(block, "decorator_list", [])
    first = min([block.lineno, *(decorator.lineno for decorator in decorators)])
    bodies = [
        getattr(block, field)
        for field in ("body", "orelse", "finalbody", "handlers", "cases")
        if getattr(block, field, None)
    ]
    if not bodies:
        return first, block.end_lineno or block.lineno
    body_start = min(_first_line(part[0]) for part in bodies)
    return first, max(block.lineno, body_start - 1)


def _first_line(node: ast.AST) -> int:
    """Where a body's first statement or clause starts: a ``case`` clause has no position of its own in the tree
    (Python gives it none), its pattern has."""
    return node.pattern.lineno if isinstance(node, ast.match_case) else node.lineno  # type: ignore[attr-defined]


def _is_block(node: ast.AST) -> bool:
    return isinstance(node, ast.stmt | ast.ExceptHandler | ast.match_case)
