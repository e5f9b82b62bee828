"""The approved (base) revision's version of the file a division guard edits, read for what it already did: which
divisions it left unguarded, and what it returns where a division has no answer. Parsed once for every question a
proposal asks of it; each question used to parse it again (twice for a division by a name, once more per
vectorised division). The tree is only read."""

from __future__ import annotations

import ast
from functools import cached_property

from libs.python_source.source_text import SourceText
from libs.python_source.untrusted_parsing import parse_module


class BaseFile:
    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def tree(self) -> ast.Module | None:
        """The file's module; None when it does not parse (then nothing is read from it)."""
        try:
            return parse_module(self.text)
        except SyntaxError:
            return None

    @cached_property
    def source(self) -> SourceText:
        return SourceText(self.text)
