"""Characters a reviewer cannot see, and source encodings that are not UTF-8.

Bidirectional controls reorder what an editor shows (Trojan Source, CVE-2021-42574); zero-width, tag and
other format characters split, join or smuggle text a reader does not see; a ``\\r`` inside a line is a
line break to Python but not to git or a diff viewer. A PEP 263 coding declaration other than UTF-8 makes
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


def hidden_characters(text: str, *, first_line_of_file: bool = False) -> list[str]:
    """Each character of one line a reviewer would not see, described with its column."""
    found: list[str] = []
    for column, char in enumerate(text, start=1):
        if char == "\t" or (char == "\r" and column == len(text)):
            continue  # indentation, a CRLF line ending
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
