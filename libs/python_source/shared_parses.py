"""Trees shared by the readers of one handling: a text parsed once however many readers ask for it.

Within ``shared_parses()`` (one handling's scope, carried by a context variable into the threads it starts with its
context), ``parse_module`` and ``parse_expression`` keep each tree they make, keyed by the exact text ``ast.parse``
read (after the bytes are decoded by Python's rule and a byte order mark is dropped) and the mode. A reader of bytes
and a reader of the text they decode to get the same tree; a file whose coding declaration makes its bytes read as
other text gets its own. A text that does not parse is parsed again by each reader, so each gets its own refusal.

The trees are shared: no reader may change one (none does; ``tree_walk``'s parent maps are kept beside a tree, not
in it). Outside the scope nothing is kept, and what a scope keeps goes with it: a handling never sees another's
trees. A scope keeps at most ``MAX_CHARS`` characters of text's trees, so a workspace of many large files cannot make
one handling hold all their trees at once.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

MAX_CHARS = 1_000_000
"""Characters of text whose trees one scope keeps; beyond, a tree is made and not kept. A tree, with the walk and
parents kept beside it, takes about 40 bytes per character of its text: a scope holds at most about 40 MB."""


@dataclass
class _Kept:
    trees: dict[tuple[str, str], ast.AST] = field(default_factory=dict)
    chars: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    """The scope's threads keep trees at once."""


_SCOPE: ContextVar[_Kept | None] = ContextVar("modelguard_shared_parses", default=None)


@contextmanager
def shared_parses() -> Iterator[None]:
    """Share parsed trees among the readers of this block (nested blocks share the outer one's)."""
    if _SCOPE.get() is not None:
        yield
        return
    token = _SCOPE.set(_Kept())
    try:
        yield
    finally:
        _SCOPE.reset(token)


def kept_tree(text: str, mode: str) -> ast.AST | None:
    """The tree this scope keeps for ``text`` in ``mode``; None outside a scope or when it keeps none."""
    kept = _SCOPE.get()
    return None if kept is None else kept.trees.get((text, mode))


def keep_tree(text: str, mode: str, tree: ast.AST) -> None:
    """Keep ``tree`` for the rest of this scope, while the scope holds fewer than ``MAX_CHARS`` characters."""
    kept = _SCOPE.get()
    if kept is None:
        return
    with kept.lock:
        if (text, mode) in kept.trees or kept.chars + len(text) > MAX_CHARS:
            return
        kept.trees[(text, mode)] = tree
        kept.chars += len(text)
