"""Python source as text with the AST's coordinates: map a node to its character span, and splice edits.

The AST gives lines (1-based) and columns in UTF-8 bytes; an edit made through these spans changes only
the characters it names, so the file keeps its formatting, comments and line endings. Lines are split the
way the Python tokenizer splits them (``\\r\\n``, ``\\r``, ``\\n``), not the way ``str.splitlines`` does. A leading
byte order mark belongs to no line, as Python reads it: line 1 starts after it, and an edit of line 1 keeps it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_LONE_CARRIAGE_RETURN = re.compile(r"\r(?!\n)")
_BYTE_ORDER_MARK = "\ufeff"


def python_lines(text: str) -> list[str]:
    """The text's lines with their endings, split where Python's tokenizer ends a line (``\\r\\n``, ``\\r``,
    ``\\n``), so line ``n`` of the syntax tree is item ``n - 1``; ``str.splitlines`` also splits at form feeds,
    vertical tabs and Unicode separators, which Python's lines (and the AST's line numbers) run through."""
    return _LINE.findall(text)


def ends_lines_in_carriage_return(text: str) -> bool:
    """Whether a line of ``text`` ends in a lone ``\\r`` (old Mac style): one not followed by ``\\n``, where Python's
    tokenizer ends a line and git, which splits on ``\\n`` only, does not."""
    return _LONE_CARRIAGE_RETURN.search(text) is not None


class OverlappingEdits(ValueError):
    """Two edits change the same characters."""


@dataclass(frozen=True)
class Replacement:
    """Replace the characters ``[start, end)`` of the source with ``text`` (``start == end`` inserts)."""

    start: int
    end: int
    text: str


class SourceText:
    def __init__(self, source: str) -> None:
        self.source = source
        offset = 1 if source.startswith(_BYTE_ORDER_MARK) else 0
        self.lines: list[str] = python_lines(source[offset:])
        self._starts: list[int] = []
        for line in self.lines:
            self._starts.append(offset)
            offset += len(line)
        self._starts.append(offset)

    @property
    def newline(self) -> str:
        """The file's first line ending (``\\n`` when it has none)."""
        for line in self.lines:
            stripped = line.rstrip("\r\n")
            if stripped != line:
                return line[len(stripped) :]
        return "\n"

    def line(self, lineno: int) -> str:
        """Line ``lineno`` (1-based) with its line ending."""
        return self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""

    def line_start(self, lineno: int) -> int:
        """Offset of the first character of line ``lineno``; past the end for ``len(lines) + 1``."""
        return self._starts[min(max(lineno, 1), len(self.lines) + 1) - 1]

    def line_end(self, lineno: int) -> int:
        """Offset just after line ``lineno``'s line ending."""
        return self.line_start(lineno + 1)

    def offset(self, lineno: int, byte_column: int) -> int:
        """The character offset of an AST position (line, column in UTF-8 bytes)."""
        text = self.line(lineno)
        return self.line_start(lineno) + len(text.encode("utf-8")[:byte_column].decode("utf-8"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        """The characters ``[start, end)`` of an expression or statement node."""
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def indent(self, lineno: int) -> str:
        text = self.line(lineno)
        return text[: len(text) - len(text.lstrip(" \t"))]

    def owns_lines(self, first: int, last: int, start: int, end: int) -> bool:
        """Whether ``[start, end)`` covers lines ``first..last`` but for indentation and a trailing comment."""
        before = self.source[self.line_start(first) : start]
        after = self.source[end : self.line_end(last)].strip()
        return not before.strip() and (not after or after.startswith("#"))


def apply_replacements(source: str, replacements: Iterable[Replacement]) -> str:
    """The source with every replacement made; they must not overlap (insertions at one point keep order)."""
    ordered = sorted(replacements, key=lambda item: (item.start, item.end))
    pieces: list[str] = []
    position = 0
    for item in ordered:
        if item.start < position or item.end < item.start:
            raise OverlappingEdits(f"edit at {item.start}-{item.end} overlaps an earlier one")
        pieces.extend([source[position : item.start], item.text])
        position = item.end
    pieces.append(source[position:])
    return "".join(pieces)
