"""Parsing a workspace's Python, which is untrusted.

``ast.parse`` raises more than SyntaxError on text a hostile (or merely generated) file can hold: ValueError or
SyntaxError for a null byte, UnicodeEncodeError for a lone surrogate, RecursionError for an expression nested beyond
the parser's limit (a sum of about 3,000 terms), MemoryError. And a tree it does build can still be too deep for a
recursive reader: ``ast.unparse`` fails on a sum of about 330 terms, ``compile`` on about 1,000. Every caller here
already handles "does not parse" as a SyntaxError (the file's analysis is skipped, a repair refused), so each of
these is turned into one, with its reason, and so is a tree deeper than ``MAX_DEPTH`` levels. Code people write stays
far inside it: the deepest tree among the model repositories under ``fixtures/repos`` has 19 levels.

Text that starts with a UTF-8 byte order mark (U+FEFF, which Windows editors write) is read as Python reads the file:
without the mark, the columns of line 1 counted after it (``SourceText`` puts the mark on no line). ``ast.parse``
of a str refuses the mark, so every reader took such a file, which runs, for one that does not parse.

Bytes are decoded by Python's own rule (``source_encoding.decode_source``: the mark, else a PEP 263 coding
declaration, else UTF-8), the one every reader of a workspace's Python shares; bytes Python refuses raise its
UnreadableSource, a SyntaxError with the shared reason.

The depth is measured by the walk every reader of the tree shares (``tree_walk.walked``), so the check costs no extra
pass for them.

Within ``shared_parses()`` (``shared_parses.py``), a text one reader parsed is not parsed again for the next: the tree
is shared, and no reader changes it.
"""

from __future__ import annotations

import ast

from libs.python_source.shared_parses import keep_tree, kept_tree
from libs.python_source.source_encoding import decode_source
from libs.python_source.tree_walk import TooDeep, walked_within

MAX_DEPTH = 100
"""Levels a parsed tree may have (the module is level 1): room for a recursive reader of three frames a level, even
from a stack a few hundred frames deep."""
BYTE_ORDER_MARK = "\ufeff"
"""What a UTF-8 file may start with; it is no Python text (``ast.parse`` of a str refuses it)."""


def parse_module(source: str | bytes) -> ast.Module:
    """``ast.parse(source)``; raises SyntaxError for anything that cannot be read safely, with the reason."""
    tree = _parsed(source, "exec")
    assert isinstance(tree, ast.Module)
    return tree


def parse_expression(source: str | bytes) -> ast.expr:
    """``ast.parse(source, mode="eval").body``; raises SyntaxError as ``parse_module`` does."""
    tree = _parsed(source, "eval")
    assert isinstance(tree, ast.Expression)
    return tree.body


def _parsed(source: str | bytes, mode: str) -> ast.AST:
    if isinstance(source, bytes):
        source = decode_source(source).text  # raises UnreadableSource, a SyntaxError, with the shared reason
    source = source.removeprefix(BYTE_ORDER_MARK)
    shared = kept_tree(source, mode)
    if shared is not None:
        return shared
    try:
        tree = ast.parse(source, mode=mode)
    except (ValueError, RecursionError, MemoryError) as error:  # UnicodeEncodeError is a ValueError
        reason = str(error) or type(error).__name__
        raise SyntaxError(f"cannot be parsed safely: {reason[:200]}") from None
    try:
        walked_within(tree, MAX_DEPTH)
    except TooDeep as deep:
        line = getattr(deep.node, "lineno", None)
        refusal = SyntaxError(f"nested deeper than {MAX_DEPTH} levels: too deep to read safely")
        refusal.lineno = line
        raise refusal from None
    keep_tree(source, mode, tree)
    return tree
