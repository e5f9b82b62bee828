"""The functions of a revision's Python files by qualified name, each file read and parsed once.

The code-change evidence asks for every changed function of a file (its divisions in both revisions, the column
names it uses); a file that adds hundreds of functions (a generated module, a vendored library) was read and
parsed again for each of them, so its evidence grew with the square of the file's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libs.python_source.source_encoding import read_source
from libs.python_source.untrusted_parsing import parse_module
from services.diagnoser.code_diff import FunctionNode, iter_functions


@dataclass(frozen=True)
class FileFunctions:
    source: str
    functions: dict[str, FunctionNode]
    """Each function and method by qualified name (``Class.method``); of two with one name, the later."""


class RevisionFunctions:
    """A revision's files (under ``root``) read on first use; the trees are only read, never changed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: dict[str, FileFunctions | None] = {}

    def of(self, relpath: str) -> FileFunctions | None:
        """The file's text (as Python reads it, PEP 263) and functions; None when it is missing, its bytes are
        not text Python reads, or it does not parse."""
        if relpath not in self._files:
            self._files[relpath] = _read(self.root / relpath)
        return self._files[relpath]

    def function(self, relpath: str, qualified_name: str) -> tuple[str, FunctionNode] | None:
        """The file's text and its function ``qualified_name``; None when either is missing."""
        found = self.of(relpath)
        if found is None or qualified_name not in found.functions:
            return None
        return found.source, found.functions[qualified_name]


def _read(path: Path) -> FileFunctions | None:
    if not path.is_file():
        return None
    try:
        source = read_source(path).text
        tree = parse_module(source)
    except (OSError, SyntaxError):  # an UnreadableSource is a SyntaxError
        return None
    return FileFunctions(source, dict(iter_functions(tree)))
