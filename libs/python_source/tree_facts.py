"""What a reader derives from a syntax tree (its walk, its parents, its name resolution...), derived once per tree and
kept on the tree itself.

The fact is an attribute outside the node's ``_fields``, which ``compile``, ``ast.dump`` and ``ast.unparse`` do not
read, so it lives exactly as long as the tree: a cache beside the trees would hold them alive, since most facts
contain nodes of their tree. A fact is right only while the tree is not changed: the readers that keep facts never
change a tree after parsing, and a reader that did would have to parse its own.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TypeVar

Fact = TypeVar("Fact")

_PREFIX = "_modelguard_"


def kept_with(tree: ast.AST, name: str, derive: Callable[[], Fact]) -> Fact:
    """The fact ``name`` of ``tree``: ``derive()`` on the first call for this tree, the same object after."""
    attribute = _PREFIX + name
    known: Fact | None = getattr(tree, attribute, None)
    if known is None:
        known = derive()
        setattr(tree, attribute, known)
    return known


def keep_with(tree: ast.AST, name: str, fact: object) -> None:
    """Keep ``fact`` as the fact ``name`` of ``tree`` (a reader that derived it on its way)."""
    setattr(tree, _PREFIX + name, fact)
