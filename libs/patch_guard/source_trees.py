"""Each Python text the guard reads parsed once, for every check of a patch and every patch of one repair handling.

Four checks read whole files as syntax trees: the allow-list of new code, the always-refused constructs, the
forbidden constructs and the syntax check. Each parsed the file before and after the patch again, and each tree
was walked again. One `SourceTrees` hands every check the same tree for the same text, and with it what was derived
from the tree (its walk, parents and name resolution are kept on it: ``libs.python_source.tree_facts``). The
trees are never changed after parsing, so sharing them changes no check's answer.

A guard call makes its own unless it is given one: the repairer gives the guard calls of one handling the same one,
so the files before the patch (and the approved revision's) are parsed and analysed once for all its candidate
patches. A text is found by the SHA-256 of its UTF-8 bytes, so only the exact same text gets the same tree, and at
most ``max_texts`` texts of at most ``max_chars`` characters in all are kept, the least recently used going first:
a text parsed again gives an equal tree, so the bound changes no answer either.
"""

from __future__ import annotations

import ast
import hashlib
from collections import OrderedDict

from libs.python_source.untrusted_parsing import parse_module

MAX_TEXTS = 64
MAX_CHARS = 16 * 1024 * 1024


class SourceTrees:
    """The module each distinct text parses to, parsed on first use; the reason it does not parse otherwise."""

    def __init__(self, max_texts: int = MAX_TEXTS, max_chars: int = MAX_CHARS) -> None:
        self._parsed: OrderedDict[bytes, tuple[int, ast.Module | SyntaxError | ValueError]] = OrderedDict()
        self._max_texts = max_texts
        self._max_chars = max_chars
        self._chars = 0

    def tree(self, text: str) -> ast.Module | None:
        """The module `text` parses to, or None when it does not parse."""
        parsed = self.parsed(text)
        return parsed if isinstance(parsed, ast.Module) else None

    def parsed(self, text: str) -> ast.Module | SyntaxError | ValueError:
        """The module `text` parses to, or the error parsing it raised (a SyntaxError; for a NUL byte, a ValueError
        on older Pythons)."""
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        known = self._parsed.get(key)
        if known is not None:
            self._parsed.move_to_end(key)
            return known[1]
        try:
            parsed: ast.Module | SyntaxError | ValueError = parse_module(text.encode("utf-8"))
        except (SyntaxError, ValueError) as error:
            parsed = error.with_traceback(None)  # nothing of the parser's frames kept alive
        self._keep(key, len(text), parsed)
        return parsed

    def _keep(self, key: bytes, chars: int, parsed: ast.Module | SyntaxError | ValueError) -> None:
        self._parsed[key] = (chars, parsed)
        self._chars += chars
        while len(self._parsed) > 1 and (len(self._parsed) > self._max_texts or self._chars > self._max_chars):
            _, (dropped, _) = self._parsed.popitem(last=False)
            self._chars -= dropped
