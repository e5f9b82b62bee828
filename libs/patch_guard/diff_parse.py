"""A unified diff, including git's extended headers, read into one :class:`FileChange` per file.

Hunks are read strictly by their line counts, so a removed line that starts with ``--`` is never taken for
a header. Git's extended headers are kept because they change files without a single ``+`` line:
``new file mode 120000`` creates a symbolic link, ``old mode``/``new mode`` flips the executable bit,
``rename from``/``rename to`` moves a file, ``deleted file mode`` removes one, ``Binary files ... differ``
and ``GIT binary patch`` carry bytes nobody can review. Text between file sections is ignored, as
``git apply`` ignores it; a hunk outside a file section, a file patched twice, or a git file section that
says nothing (no hunk, no binary content, no creation, deletion, rename, copy or mode change) is malformed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict

from libs.patch_guard.diff_headers import DEV_NULL, MalformedDiff, git_header_names, header_name, strip_prefix, unquote

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
BINARY_FILES = re.compile(r"^Binary files (.+) and (.+) differ$")
SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"

FileOperation = Literal["modify", "create", "delete", "rename", "copy"]


class HunkLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    marker: Literal[" ", "-", "+"]
    text: str
    newline: bool = True
    """False when git's ``\\ No newline at end of file`` follows the line."""

    @property
    def with_ending(self) -> str:
        return self.text + ("\n" if self.newline else "")


class Hunk(BaseModel):
    model_config = ConfigDict(frozen=True)

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[HunkLine, ...]

    def old_side(self) -> list[str]:
        return [line.with_ending for line in self.lines if line.marker != "+"]

    def new_side(self) -> list[str]:
        return [line.with_ending for line in self.lines if line.marker != "-"]

    def numbered(self, markers: str) -> Iterator[tuple[int, str]]:
        """(line number, text) of the lines whose marker is in ``markers``, numbered on the new side when
        ``-`` is not among them, else on the old side."""
        old_side = "-" in markers
        old_number, new_number = self.old_start, self.new_start
        for line in self.lines:
            if line.marker in markers:
                yield (old_number if old_side else new_number), line.text
            if line.marker != "+":
                old_number += 1
            if line.marker != "-":
                new_number += 1


class FileChange(BaseModel):
    model_config = ConfigDict(frozen=True)

    old_path: str | None
    """None when the file is created (``/dev/null``)."""
    new_path: str | None
    """None when the file is deleted."""
    names: tuple[str, ...]
    """Every file name the section gives (git header, ``---``/``+++``, rename/copy lines)."""
    operation: FileOperation
    old_mode: str | None = None
    new_mode: str | None = None
    binary: bool = False
    hunks: tuple[Hunk, ...] = ()

    @property
    def path(self) -> str:
        path = self.new_path or self.old_path
        assert path is not None
        return path

    @property
    def added(self) -> tuple[str, ...]:
        return tuple(line.text for hunk in self.hunks for line in hunk.lines if line.marker == "+")

    @property
    def removed(self) -> tuple[str, ...]:
        return tuple(line.text for hunk in self.hunks for line in hunk.lines if line.marker == "-")

    @property
    def mode_changed(self) -> bool:
        return self.old_mode is not None and self.new_mode is not None and self.old_mode != self.new_mode

    @property
    def links(self) -> bool:
        """The section creates, keeps or edits a symbolic link (or a submodule link)."""
        return bool({self.old_mode, self.new_mode} & {SYMLINK_MODE, GITLINK_MODE})


class _Section:
    """What a file section said, as it is read."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)
        self.old_path: str | None = names[0] if names else None
        self.new_path: str | None = names[1] if len(names) > 1 else self.old_path
        self.operation: FileOperation | None = None
        self.old_mode: str | None = None
        self.new_mode: str | None = None
        self.binary = False
        self.hunks: list[Hunk] = []

    def change(self) -> FileChange:
        operation = self.operation or _operation_from_paths(self.old_path, self.new_path)
        if operation == "create":
            self.old_path = None
        elif operation == "delete":
            self.new_path = None
        return FileChange(
            old_path=self.old_path,
            new_path=self.new_path,
            names=tuple(dict.fromkeys(self.names)),
            operation=operation,
            old_mode=self.old_mode,
            new_mode=self.new_mode,
            binary=self.binary,
            hunks=tuple(self.hunks),
        )


def parse_diff(text: str) -> list[FileChange]:
    """Every file section of ``text``; raises :class:`MalformedDiff` on anything it cannot read exactly."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    changes: list[FileChange] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("diff --git "):
            section, index = _git_section(lines, index)
            _refuse_a_section_that_says_nothing(section)
        elif line.startswith("--- "):
            section = _Section([])
            index = _plain_headers(lines, index, section)
            index = _hunks(lines, index, section)
            if not section.hunks:
                raise MalformedDiff(f"file {section.new_path or section.old_path} has no hunks")
        elif match := BINARY_FILES.match(line):
            section = _binary_section(match)
            index += 1
        elif line.startswith("@@"):
            raise MalformedDiff(f"hunk without a file header at line {index + 1}")
        else:
            index += 1
            continue
        changes.append(section.change())
    _refuse_repeated_files(changes)
    return changes


def _git_section(lines: list[str], index: int) -> tuple[_Section, int]:
    section = _Section(list(git_header_names(lines[index])))
    index += 1
    while index < len(lines):
        line = lines[index]
        if line.startswith("--- "):
            index = _plain_headers(lines, index, section)
            break
        if line.startswith("GIT binary patch"):
            section.binary = True
            index += 1
            while index < len(lines) and not lines[index].startswith("diff --git "):
                index += 1
            return section, index
        if BINARY_FILES.match(line):
            section.binary = True
        elif not _extended_header(line, section):
            break
        index += 1
    return section, _hunks(lines, index, section)


def _extended_header(line: str, section: _Section) -> bool:
    """Apply one git extended header line to ``section``; False when ``line`` is not one."""
    word, _, value = line.partition(" ")
    if line.startswith("new file mode "):
        section.operation, section.new_mode = "create", line.rsplit(" ", 1)[1]
    elif line.startswith("deleted file mode "):
        section.operation, section.old_mode = "delete", line.rsplit(" ", 1)[1]
    elif line.startswith("old mode "):
        section.old_mode = line.rsplit(" ", 1)[1]
    elif line.startswith("new mode "):
        section.new_mode = line.rsplit(" ", 1)[1]
    elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
        kind, direction, name = line.split(" ", 2)
        name = unquote(name)[0] if name.startswith('"') else name
        section.names.append(name)
        section.operation = "rename" if kind == "rename" else "copy"
        if direction == "from":
            section.old_path = name
        else:
            section.new_path = name
    elif word == "index":
        _, _, mode = value.partition(" ")
        if mode:
            section.old_mode = section.old_mode or mode
            section.new_mode = section.new_mode or mode
    elif not line.startswith(("similarity index ", "dissimilarity index ")):
        return False
    return True


def _plain_headers(lines: list[str], index: int, section: _Section) -> int:
    if index + 1 >= len(lines) or not lines[index + 1].startswith("+++ "):
        raise MalformedDiff(f"'---' header without '+++' at line {index + 1}")
    old, new = header_name(lines[index], "a/"), header_name(lines[index + 1], "b/")
    section.names.extend(name for name in (old, new) if name is not None)
    if section.operation in (None, "modify"):
        section.old_path, section.new_path = old, new
    return index + 2


def _hunks(lines: list[str], index: int, section: _Section) -> int:
    while index < len(lines) and (match := HUNK_HEADER.match(lines[index])):
        index, hunk = _read_hunk(lines, index + 1, match)
        section.hunks.append(hunk)
    if index < len(lines) and lines[index].startswith("@@"):
        raise MalformedDiff(f"unreadable hunk header at line {index + 1}: {lines[index][:80]!r}")
    return index


def _read_hunk(lines: list[str], index: int, match: re.Match[str]) -> tuple[int, Hunk]:
    old_start, new_start = int(match.group(1)), int(match.group(3))
    old_count = int(match.group(2)) if match.group(2) is not None else 1
    new_count = int(match.group(4)) if match.group(4) is not None else 1
    old_left, new_left = old_count, new_count
    read: list[HunkLine] = []
    while old_left > 0 or new_left > 0:
        if index >= len(lines):
            raise MalformedDiff("diff ends inside a hunk")
        line = lines[index]
        marker, content = line[:1], line[1:]
        if marker == "\\" and read:
            read[-1] = read[-1].model_copy(update={"newline": False})
        elif marker == "+" and new_left > 0:
            read.append(HunkLine(marker="+", text=content))
            new_left -= 1
        elif marker == "-" and old_left > 0:
            read.append(HunkLine(marker="-", text=content))
            old_left -= 1
        elif marker in (" ", "") and old_left > 0 and new_left > 0:
            read.append(HunkLine(marker=" ", text=content))
            old_left -= 1
            new_left -= 1
        else:
            raise MalformedDiff(f"unexpected line in hunk at line {index + 1}: {line[:80]!r}")
        index += 1
    while index < len(lines) and lines[index].startswith("\\"):
        if read:
            read[-1] = read[-1].model_copy(update={"newline": False})
        index += 1
    hunk = Hunk(old_start=old_start, old_count=old_count, new_start=new_start, new_count=new_count, lines=tuple(read))
    return index, hunk


def _operation_from_paths(old_path: str | None, new_path: str | None) -> FileOperation:
    if old_path is None and new_path is None:
        raise MalformedDiff("a file section from /dev/null to /dev/null")
    if old_path is None:
        return "create"
    if new_path is None:
        return "delete"
    return "modify" if old_path == new_path else "rename"


def _binary_section(match: re.Match[str]) -> _Section:
    """A plain ``Binary files a/x and b/x differ`` line, without a git header."""
    old, new = _binary_name(match.group(1), "a/"), _binary_name(match.group(2), "b/")
    section = _Section([name for name in (old, new) if name is not None])
    section.old_path, section.new_path, section.binary = old, new, True
    return section


def _binary_name(name: str, prefix: str) -> str | None:
    if name.startswith('"'):
        name = unquote(name)[0]
    return None if name == DEV_NULL else strip_prefix(name, prefix)


def _refuse_a_section_that_says_nothing(section: _Section) -> None:
    """A ``diff --git`` header with no hunk changes no line: either the patch was cut, or the section is there
    to make a reviewer, a tool and ``git apply`` count its files differently."""
    if section.hunks or section.binary or section.operation is not None:
        return
    if section.old_mode is not None and section.new_mode is not None and section.old_mode != section.new_mode:
        return
    name = section.new_path or section.old_path
    raise MalformedDiff(f"git file section for {name} has no hunks and changes nothing")


def _refuse_repeated_files(changes: list[FileChange]) -> None:
    seen: set[str] = set()
    for change in changes:
        for name in {change.old_path, change.new_path} - {None}:
            assert name is not None
            if name in seen:
                raise MalformedDiff(f"{name} is patched twice (git apply would stack the sections)")
            seen.add(name)
