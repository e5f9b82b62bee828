"""One walk per syntax tree: its nodes in ``ast.walk``'s order, each node's parent, and its nodes by type, kept with
the tree (:mod:`libs.python_source.tree_facts`).

The patch guard reads each file's tree in a dozen passes (imports, assignments, other bindings, module uses,
forbidden constructs, always-refused constructs, identifiers, path values...), each of which walked the whole tree
again, and built its parents map three times: ~25 walks of every tree per check, most of the repairer's own time.
Every pass now reads the same walk, and a pass that reads a few kinds of node reads only those
(:func:`nodes_of`), in the walk's order. A tree parsed by :mod:`libs.python_source.untrusted_parsing` is walked
once, with its parents, while its depth is measured. The trees are never changed after parsing; a pass that changed
one would have to parse its own.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from types import MappingProxyType, UnionType

from libs.python_source.tree_facts import keep_with, kept_with

NodeKinds = type[ast.AST] | UnionType | tuple[type[ast.AST], ...]
"""What ``isinstance`` takes for node classes: one class (concrete or abstract: ``ast.stmt``), a union, a tuple."""

_WALK = "walk"
_PARENTS = "parents"
_POSITIONS = "positions_by_type"
_OF_KINDS = "nodes_of_kinds"


def walked(tree: ast.AST) -> tuple[ast.AST, ...]:
    """``tuple(ast.walk(tree))``, walked once per tree."""
    return kept_with(tree, _WALK, lambda: tuple(ast.walk(tree)))


def parents_of(tree: ast.AST) -> Mapping[ast.AST, ast.AST]:
    """Each node under ``tree`` (not ``tree`` itself) to its parent; read-only, built once per tree."""
    return kept_with(
        tree,
        _PARENTS,
        lambda: MappingProxyType({child: parent for parent in walked(tree) for child in ast.iter_child_nodes(parent)}),
    )


def nodes_of(tree: ast.AST, kinds: NodeKinds) -> tuple[ast.AST, ...]:
    """``tuple(node for node in walked(tree) if isinstance(node, kinds))``: the same nodes in the same order, read
    from an index of the walk by node type made once per tree, and kept per ``kinds``."""
    by_kinds: dict[NodeKinds, tuple[ast.AST, ...]] = kept_with(tree, _OF_KINDS, dict)
    known = by_kinds.get(kinds)
    if known is None:
        nodes = walked(tree)
        positions = _positions_by_type(tree)
        matching = [found for node_type, found in positions.items() if issubclass(node_type, kinds)]
        if len(matching) == 1:
            known = tuple(nodes[position] for position in matching[0])
        else:
            known = tuple(nodes[position] for position in sorted(p for found in matching for p in found))
        by_kinds[kinds] = known
    return known


def _positions_by_type(tree: ast.AST) -> dict[type[ast.AST], list[int]]:
    """Each node type of the walk to the positions its nodes hold in it, in order."""

    def index() -> dict[type[ast.AST], list[int]]:
        positions: dict[type[ast.AST], list[int]] = {}
        for position, node in enumerate(walked(tree)):
            positions.setdefault(type(node), []).append(position)
        return positions

    return kept_with(tree, _POSITIONS, index)


class TooDeep(Exception):
    """A tree nested deeper than a walk was allowed to go; ``node`` is the first node below the limit."""

    def __init__(self, node: ast.AST, max_depth: int) -> None:
        super().__init__(f"nested deeper than {max_depth} levels")
        self.node = node
        self.max_depth = max_depth


def walked_within(tree: ast.AST, max_depth: int) -> tuple[ast.AST, ...]:
    """``walked(tree)``, raising TooDeep for a tree with more than ``max_depth`` levels (the root is level 1). The
    walk goes level by level, which is ``ast.walk``'s order, and is kept as the tree's walk; the parents it meets
    on the way are kept as the tree's ``parents_of`` (the same map: the same parents, children, in the same order)."""
    nodes: list[ast.AST] = []
    parents: dict[ast.AST, ast.AST] = {}
    level = [tree]
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            raise TooDeep(level[0], max_depth)
        nodes.extend(level)
        below: list[ast.AST] = []
        for parent in level:
            for child in ast.iter_child_nodes(parent):
                below.append(child)
                parents[child] = parent
        level = below
    known = tuple(nodes)
    keep_with(tree, _WALK, known)
    keep_with(tree, _PARENTS, MappingProxyType(parents))
    return known
