"""Each Python text of one patch check parsed once.

Four checks read whole files as syntax trees: the allow-list of new code, the always-refused constructs, the
forbidden constructs and the syntax check. Each parsed the file before and after the patch again, and each tree
was walked again (``libs.python_source.tree_walk`` keeps one walk per tree, not per text). One `SourceTrees` lives
for one check of one patch and hands every check the same tree for the same text. The trees are never changed
after parsing (``tree_walk``'s rule), so sharing them changes no check's answer.
"""

from __future__ import annotations

import ast

from libs.python_source.untrusted_parsing import parse_module


class SourceTrees:
    """The module each distinct text parses to, parsed on first use; the reason it does not parse otherwise."""

    def __init__(self) -> None:
        self._parsed: dict[str, ast.Module | SyntaxError | ValueError] = {}

    def tree(self, text: str) -> ast.Module | None:
        """The module `text` parses to, or None when it does not parse."""
        parsed = self.parsed(text)
        return parsed if isinstance(parsed, ast.Module) else None

    def parsed(self, text: str) -> ast.Module | SyntaxError | ValueError:
        """The module `text` parses to, or the error parsing it raised (a SyntaxError; for a NUL byte, a ValueError
        on older Pythons)."""
        known = self._parsed.get(text)
        if known is None:
            try:
                known = parse_module(text.encode("utf-8"))
            except (SyntaxError, ValueError) as error:
                known = error.with_traceback(None)  # nothing of the parser's frames kept alive
            self._parsed[text] = known
        return known
