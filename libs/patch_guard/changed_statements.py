"""Whether a node of the patched file lies in a statement the patch adds or changes.

A simple statement is changed when any of its lines is an added line; a compound statement (``if``,
``while``, ``for``, ``def``, ``class``, ``with``, ``try``...) when a line of its header is (its decorators,
its first line, up to the line before its body); the statements of its body are judged on their own. So a
call split over lines is changed when only its argument line changes, and a ``while`` loop is changed when
its ``while`` line is, not when a line of its body is.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

from libs.python_source.tree_walk import walked


class ChangedStatements:
    def __init__(self, tree: ast.AST, added_lines: Collection[int] | None) -> None:
        """``added_lines`` None: every statement counts as changed (a hunk parsed alone is all added)."""
        self.added = None if added_lines is None else frozenset(added_lines)
        self.span_of: dict[ast.AST, tuple[int, int]] = {}
        for block in walked(tree):
            if isinstance(block, ast.stmt | ast.ExceptHandler | ast.match_case):
                span = own_lines(block)
                for node in _own_nodes(block):
                    self.span_of[node] = span

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
    body_start = min(part[0].lineno for part in bodies)
    return first, max(block.lineno, body_start - 1)


def _own_nodes(block: ast.AST) -> list[ast.AST]:
    """The nodes of a statement or clause that are not inside one of its body statements or clauses."""
    nodes: list[ast.AST] = []
    pending = [child for child in ast.iter_child_nodes(block) if not _is_block(child)]
    while pending:
        node = pending.pop()
        nodes.append(node)
        pending.extend(child for child in ast.iter_child_nodes(node) if not _is_block(child))
    return nodes


def _is_block(node: ast.AST) -> bool:
    return isinstance(node, ast.stmt | ast.ExceptHandler | ast.match_case)
