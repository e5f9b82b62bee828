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
