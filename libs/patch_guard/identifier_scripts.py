"""Identifiers a reviewer can misread: letters of several scripts in one identifier (a Latin ``o`` next to
a Cyrillic U+043E), and any non-ASCII identifier the module did not already use.

Identifiers are read as written, with :mod:`tokenize`, before Python's NFKC normalisation (and from the
syntax tree as well, for those inside f-strings) (which makes
``eval`` written in fullwidth letters the name ``eval``). A letter's script is the first word of its Unicode
name, after a ``FULLWIDTH``/``HALFWIDTH`` prefix (``CYRILLIC SMALL LETTER O`` is Cyrillic,
``MATHEMATICAL BOLD SMALL A`` is a script of its own); digits and ``_`` have none.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import unicodedata
from collections.abc import Iterator

from libs.python_source.source_text import python_lines
from libs.python_source.tree_walk import nodes_of

WIDTH_PREFIXES = frozenset({"FULLWIDTH", "HALFWIDTH"})
WORD = re.compile(r"[^\W\d]\w*")
NAMING_NODES = ast.Name | ast.Attribute | ast.arg | ast.keyword | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
NAMING_NODES |= ast.alias
"""The nodes that hold an identifier."""


def tree_identifiers(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, identifier) of every name the syntax tree holds, after NFKC: also those inside an f-string,
    which :mod:`tokenize` leaves in one string token before Python 3.12."""
    for node in nodes_of(tree, NAMING_NODES):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name):
            yield line, node.id
        elif isinstance(node, ast.Attribute):
            yield line, node.attr
        elif isinstance(node, ast.arg | ast.keyword):
            if node.arg is not None:  # a keyword's arg is None for **mapping
                yield line, node.arg
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield line, node.name
        elif isinstance(node, ast.alias):
            yield line, node.asname or node.name


def identifiers(source: str) -> Iterator[tuple[int, str]]:
    """(line, identifier as written) of every name token of ``source``; what does not tokenize is read as
    words (strings and comments included: more, never fewer). Lines are numbered as Python numbers them (a lone
    ``\\r`` ends one, a form feed does not), as the syntax tree's are: the pure-Python tokenizer would read a file
    whose lines end in ``\\r`` as one line."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source, newline=None).readline):
            if token.type == tokenize.NAME:
                yield token.start[0], token.string
    except (tokenize.TokenError, SyntaxError):
        for number, line in enumerate(python_lines(source), start=1):
            for match in WORD.finditer(line):
                yield number, match.group()


def scripts(identifier: str) -> list[str]:
    """The scripts of an identifier's letters, in order of first appearance."""
    found: dict[str, None] = {}
    for char in identifier:
        if char == "_" or char.isdigit() or not char.isalpha():
            continue
        words = unicodedata.name(char, "UNKNOWN").split()
        if words[0] in WIDTH_PREFIXES and len(words) > 1:
            words = words[1:]
        found.setdefault(words[0])
    return list(found)


def identifier_problem(identifier: str, known: frozenset[str]) -> str | None:
    """Why a reviewer could misread ``identifier``, or None; ``known`` are the module's identifiers before."""
    if identifier.isascii():
        return None
    used = scripts(identifier)
    odd = ", ".join(
        f"U+{ord(char):04X} {unicodedata.name(char, '?')}" for char in dict.fromkeys(identifier) if not char.isascii()
    )
    if len(used) > 1:
        return f"identifier {identifier!r} mixes the scripts {' and '.join(used)} ({odd})"
    if identifier not in known:
        return f"non-ASCII identifier {identifier!r} the module did not use before ({odd})"
    return None
