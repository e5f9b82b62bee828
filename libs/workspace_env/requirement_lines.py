"""The lines of a requirements file ModelGuard installs: each one package from the index, by name, with extras,
version specifiers (``==1.2.3``, ``>=1.24,<3``), an environment marker and ``--hash`` options. Refused: an
editable or a path, a URL or a VCS source (they bypass the configured index and are built from source), another
file (``-r``, ``-c``) and any other option (``--index-url``, ``--find-links``, ``--trusted-host``, ``--pre``, ...:
where packages come from is ModelGuard's setting, not the workspace's)."""

from __future__ import annotations

import re
from dataclasses import dataclass

VERSION = r"[A-Za-z0-9*][A-Za-z0-9.+!*_-]*"
SPECIFIER = rf"(?:===|==|!=|~=|>=|<=|>|<)\s*{VERSION}"
LINE = re.compile(
    r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r"\s*(?:\[[A-Za-z0-9._,\s-]*\])?"
    rf"\s*(?P<specifiers>{SPECIFIER}(?:\s*,\s*{SPECIFIER})*)?"
    r"\s*(?:;\s*(?P<marker>[^#]+?))?\s*$"
)
EXACT = re.compile(r"^(?:===|==)\s*(?P<version>[A-Za-z0-9][A-Za-z0-9.+!_-]*)$")
HASH = re.compile(r"\s--hash[=\s]+[a-z0-9]+:[0-9a-fA-F]+")


class RequirementRefused(ValueError):
    """A line of a requirements file that is not one package from the index."""


@dataclass(frozen=True)
class Requirement:
    name: str
    """Normalised: lower case, ``_`` and ``.`` as ``-``."""
    specifiers: str
    """As written, spaces removed; empty for any version."""

    @property
    def pinned(self) -> bool:
        """One exact version (``==1.2.3``): the same on every build."""
        return EXACT.match(self.specifiers) is not None


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement: comments removed, ``\\`` continuations joined."""
    found: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        joined = " ".join([*pending, line]).strip()
        pending = []
        if joined:
            found.append((start, joined))
    if pending and " ".join(pending).strip():
        found.append((start, " ".join(pending).strip()))
    return found


def index_requirements(text: str, source: str) -> list[Requirement]:
    """Every requirement of ``text`` (the file ``source``), or RequirementRefused naming the first line refused."""
    found = []
    for number, line in logical_lines(text):
        bare = HASH.sub("", f" {line}").strip()
        match = LINE.match(bare)
        if match is None:
            shown = line if len(line) <= 80 else line[:77] + "..."
            raise RequirementRefused(
                f"{source} line {number} is not a package from the index ({shown!r}): URLs, paths, editables, "
                "other files and index options are refused"
            )
        found.append(Requirement(normalised(match["name"]), re.sub(r"\s+", "", match["specifiers"] or "")))
    return found


def pinned_requirements(text: str, source: str) -> list[Requirement]:
    """As ``index_requirements``, every one pinned to one version (what a lock's export must be)."""
    found = index_requirements(text, source)
    loose = next((r for r in found if not r.pinned), None)
    if loose is not None:
        raise RequirementRefused(f"{source}: {loose.name}{loose.specifiers} is not pinned to one version")
    return found
