"""File names in diff headers, read the way ``git apply`` reads them.

``git apply`` strips one leading component from ``---``/``+++`` names (``-p1``), so ``--- pkg/run.py``
patches ``run.py``, not ``pkg/run.py``. To read exactly the file git will write, these names must carry
git's ``a/`` and ``b/`` prefixes (or be ``/dev/null``); anything else is refused as malformed rather than
guessed. Names with special characters are C-quoted by git (``"a/caf\\303\\251.py"``) and unquoted here;
a name that is not UTF-8 is malformed.
"""

from __future__ import annotations

DEV_NULL = "/dev/null"

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


class MalformedDiff(ValueError):
    """The text is not a diff the guard can read exactly as ``git apply`` would."""


def unquote(text: str) -> tuple[str, str]:
    """Split a C-quoted name at the start of ``text`` from the rest: (name, rest)."""
    if not text.startswith('"'):
        raise MalformedDiff(f"not a quoted name: {text[:80]!r}")
    raw = bytearray()
    index = 1
    while index < len(text):
        char = text[index]
        if char == '"':
            return _utf8(bytes(raw)), text[index + 1 :]
        if char != "\\":
            raw.extend(char.encode("utf-8"))
            index += 1
            continue
        escape = text[index + 1 : index + 2]
        if escape in _ESCAPES:
            raw.append(_ESCAPES[escape])
            index += 2
        elif len(octal := text[index + 1 : index + 4]) == 3 and all(c in "01234567" for c in octal):
            raw.append(int(octal, 8) & 0xFF)
            index += 4
        else:
            raise MalformedDiff(f"bad escape in quoted name: {text[:80]!r}")
    raise MalformedDiff(f"unterminated quoted name: {text[:80]!r}")


def header_name(line: str, prefix: str) -> str | None:
    """The path of a ``--- a/...`` or ``+++ b/...`` line without its prefix; None for ``/dev/null``."""
    rest = line[4:]
    if rest.startswith('"'):
        name, _ = unquote(rest)
    else:
        name = rest.split("\t", 1)[0]
    if name == DEV_NULL:
        return None
    return strip_prefix(name, prefix)


def strip_prefix(name: str, prefix: str) -> str:
    if not name.startswith(prefix):
        raise MalformedDiff(f"{name[:80]!r} lacks git's {prefix!r} prefix (git apply would strip a component)")
    return name[len(prefix) :]


def git_header_names(line: str) -> tuple[str, str]:
    """The old and new path of a ``diff --git a/<old> b/<new>`` line."""
    rest = line[len("diff --git ") :]
    if rest.startswith('"'):
        old, rest = unquote(rest)
        rest = rest.removeprefix(" ")
        new = unquote(rest)[0] if rest.startswith('"') else rest
        return strip_prefix(old, "a/"), strip_prefix(new, "b/")
    if rest.endswith('"'):
        split = rest.find(' "')
        if split < 0:
            raise MalformedDiff(f"unreadable git header: {line[:80]!r}")
        return strip_prefix(rest[:split], "a/"), strip_prefix(unquote(rest[split + 1 :])[0], "b/")
    # unquoted: "a/<name> b/<name>"; the names are the same unless it is a rename, which names them again
    half = (len(rest) - 1) // 2
    if (
        len(rest) % 2 == 1
        and rest[half] == " "
        and rest[:half].removeprefix("a/") == rest[half + 1 :].removeprefix("b/")
    ):
        return strip_prefix(rest[:half], "a/"), strip_prefix(rest[half + 1 :], "b/")
    split = rest.find(" b/")
    if split < 0:
        raise MalformedDiff(f"unreadable git header: {line[:80]!r}")
    return strip_prefix(rest[:split], "a/"), rest[split + 3 :]


def _utf8(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise MalformedDiff("a file name is not UTF-8") from error
