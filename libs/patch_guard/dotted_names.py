"""Whether a qualified name is one of a set of names or something inside one (``os.path.join`` is inside
``os.path`` and ``os``): by looking up each of its dotted prefixes, not by trying every name of the set."""

from __future__ import annotations

from collections.abc import Container


def is_or_is_under(qualified: str, names: Container[str]) -> bool:
    """``qualified`` is in ``names``, or starts with one of them followed by a dot."""
    if qualified in names:
        return True
    dot = qualified.find(".")
    while dot != -1:
        if qualified[:dot] in names:
            return True
        dot = qualified.find(".", dot + 1)
    return False
