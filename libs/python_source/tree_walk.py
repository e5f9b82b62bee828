"""One walk per syntax tree: its nodes in ``ast.walk``'s order and each node's parent, kept with the tree.

The patch guard reads each file's tree in a dozen passes (imports, assignments, other bindings, module uses,
forbidden constructs, always-refused constructs, identifiers, path values...), each of which walked the whole tree
again, and built its parents map three times: ~25 walks of every tree per check, most of the repairer's own time.
Every pass now reads the same walk. The trees are never changed after parsing; a pass that changed one would have
to parse its own.

The walk is kept on the tree itself (an attribute outside the node's ``_fields``, which ``compile``, ``ast.dump``
and ``ast.unparse`` do not read), so it lives exactly as long as the tree: a cache beside the trees would hold
them alive, since a walk contains its root.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from types import MappingProxyType

_NODES = "_modelguard_walk"
_PARENTS = "_modelguard_parents"


def walked(tree: ast.AST) -> tuple[ast.AST, ...]:
    """``tuple(ast.walk(tree))``, walked once per tree."""
    known: tuple[ast.AST, ...] | None = getattr(tree, _NODES, None)
    if known is None:
        known = tuple(ast.walk(tree))
        setattr(tree, _NODES, known)
    return known


def parents_of(tree: ast.AST) -> Mapping[ast.AST, ast.AST]:
    """Each node under ``tree`` (not ``tree`` itself) to its parent; read-only, built once per tree."""
    known: Mapping[ast.AST, ast.AST] | None = getattr(tree, _PARENTS, None)
    if known is None:
        known = MappingProxyType({child: parent for parent in walked(tree) for child in ast.iter_child_nodes(parent)})
        setattr(tree, _PARENTS, known)
    return known


class TooDeep(Exception):
    """A tree nested deeper than a walk was allowed to go; ``node`` is the first node below the limit."""

    def __init__(self, node: ast.AST, max_depth: int) -> None:
        super().__init__(f"nested deeper than {max_depth} levels")
        self.node = node
        self.max_depth = max_depth


def walked_within(tree: ast.AST, max_depth: int) -> tuple[ast.AST, ...]:
    """``walked(tree)``, raising TooDeep for a tree with more than ``max_depth`` levels (the root is level 1). The
    walk goes level by level, which is ``ast.walk``'s order, and is kept as the tree's walk."""
    nodes: list[ast.AST] = []
    level = [tree]
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            raise TooDeep(level[0], max_depth)
        nodes.extend(level)
        level = [child for node in level for child in ast.iter_child_nodes(node)]
    known = tuple(nodes)
    setattr(tree, _NODES, known)
    return known
