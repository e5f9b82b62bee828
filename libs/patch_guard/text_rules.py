"""Characters a reviewer cannot see, and source encodings that are not UTF-8.

Bidirectional controls reorder what an editor shows (Trojan Source, CVE-2021-42574); zero-width, tag and
other format characters split, join or smuggle text a reader does not see; a ``\\r`` inside a line is a
line break to Python but not to git or a diff viewer (on a terminal, what follows it overwrites what precedes it).
Python's tokenizer ends a line at every ``\\r``, ``\\r\\n`` and ``\\n``, so a ``\\r`` is measured against the file it
is in: where the file's own lines end in a lone ``\\r`` (old Mac style, which Python reads like any other file), it is
a line ending there, not hidden text; in a file whose lines end only in ``\\n`` or ``\\r\\n``, a ``\\r`` before the end
of a line is hidden text. A PEP 263 coding declaration other than UTF-8 makes
Python decode the file differently from every tool that shows it (``# coding: utf-7`` hides code in
``+AG...`` runs).
"""

from __future__ import annotations

import codecs
import re
import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cn"})
"""Control, format (bidi, zero-width, tags), line and paragraph separators, private use, unassigned."""
CODING_DECLARATION = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def hidden_characters(
    text: str, *, first_line_of_file: bool = False, carriage_returns_end_lines: bool = False
) -> list[str]:
    """Each character of one line (as git splits lines, on ``\\n``) a reviewer would not see, described with its
    column. ``carriage_returns_end_lines``: the file's lines end in a lone ``\\r``, so each ``\\r`` of the line is a
    line ending (Python ends a line at every one), not a hidden character."""
    found: list[str] = []
    for column, char in enumerate(text, start=1):
        if char == "\t" or (char == "\r" and (column == len(text) or carriage_returns_end_lines)):
            continue  # indentation, a CRLF line ending, a line ending of a file whose lines end in \r
        if char == "\ufeff" and column == 1 and first_line_of_file:
            continue  # a byte-order mark
        category = unicodedata.category(char)
        if category in HIDDEN_CATEGORIES:
            name = unicodedata.name(char, f"category {category}")
            found.append(f"U+{ord(char):04X} {name} at column {column}")
    return found


def foreign_coding(text: str) -> str | None:
    """The encoding a coding declaration on this line names, when it is not UTF-8."""
    match = CODING_DECLARATION.match(text)
    if match is None:
        return None
    try:
        name = codecs.lookup(match.group(1)).name
    except LookupError:
        return match.group(1)
    return None if name == "utf-8" else match.group(1)
