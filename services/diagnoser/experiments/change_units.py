"""The candidate's change cut into units that can be applied one by one to the base tree: an added file, a removed
file, a whole file that is not UTF-8 text, or an edit of a text file made of one or more changed regions
(hunks of a line diff without context). In a Python file the hunks that touch the same definition (a function,
a method, a class body statement, a module-level statement) form one unit, so a unit is a change a person would
name ("``Scaler.transform`` changed") and units rarely depend on each other. Units never overlap."""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from libs.python_source.source_encoding import UnreadableSource, decode_source
from libs.python_source.source_text import python_lines
from libs.python_source.untrusted_parsing import parse_module
from libs.sequence_alignment import aligned_opcodes
from services.diagnoser.code_diff import IGNORED_DIRECTORY_NAMES, IGNORED_SUFFIXES

UnitKind = Literal["edit", "file_added", "file_removed", "file_replaced"]


@dataclass(frozen=True)
class Hunk:
    base_start: int
    """First base line replaced (0-based); ``base_end`` is one past the last."""
    base_end: int
    candidate_start: int
    candidate_end: int
    replacement: tuple[str, ...]
    """The candidate's lines (with their line endings) that take the place of base lines [start, end)."""


@dataclass(frozen=True)
class ChangeUnit:
    id: int
    path: str
    kind: UnitKind
    hunks: tuple[Hunk, ...] = ()
    anchors: tuple[str, ...] = ()
    """The definitions the edit touches (``Class.method``, ``function``, ``<module line 12>``)."""

    def describe(self) -> str:
        if self.kind != "edit":
            return f"{self.path} ({self.kind.replace('_', ' ')})"
        named = [anchor for anchor in self.anchors if not anchor.startswith("<")]
        where = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
        if len(named) < len(self.anchors) or not named:
            where = f"{where}; {_lines(self.hunks)}" if where else _lines(self.hunks)
        return f"{self.path}: {where}"

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "path": self.path,
            "kind": self.kind,
            "anchors": list(self.anchors),
            "hunks": [
                {
                    "base_lines": [h.base_start + 1, h.base_end],
                    "candidate_lines": [h.candidate_start + 1, h.candidate_end],
                }
                for h in self.hunks
            ],
            "describe": self.describe(),
        }


def tree_files(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in sorted(Path(root).rglob("*")):
        relative = path.relative_to(root)
        if any(part in IGNORED_DIRECTORY_NAMES for part in relative.parts) or path.suffix in IGNORED_SUFFIXES:
            continue
        if path.is_file() and not path.is_symlink():
            files[relative.as_posix()] = path.read_bytes()
    return files


def change_units(base: Path, candidate: Path) -> list[ChangeUnit]:
    """Every unit of the change from ``base`` to ``candidate``, ordered by path then position."""
    before, after = tree_files(base), tree_files(candidate)
    units: list[ChangeUnit] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if old is None:
            units.append(ChangeUnit(len(units), path, "file_added"))
        elif new is None:
            units.append(ChangeUnit(len(units), path, "file_removed"))
        else:
            units.extend(_edits(path, old, new, first_id=len(units)))
    return units


def _edits(path: str, old: bytes, new: bytes, first_id: int) -> list[ChangeUnit]:
    texts = _line_texts(path, old, new)
    if texts is None:
        return [ChangeUnit(first_id, path, "file_replaced")]
    a_text, b_text = texts
    a, b = python_lines(a_text), python_lines(b_text)
    opcodes = aligned_opcodes(a, b)
    if opcodes is None:  # lines repeated so often that aligning them costs more than the budget: one unit
        return [ChangeUnit(first_id, path, "file_replaced")]
    hunks = [Hunk(i1, i2, j1, j2, tuple(b[j1:j2])) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]
    if not path.endswith(".py"):
        return [ChangeUnit(first_id + index, path, "edit", (hunk,)) for index, hunk in enumerate(hunks)]
    base_defs, candidate_defs = _definitions(a_text), _definitions(b_text)
    groups: list[tuple[list[Hunk], set[str]]] = []
    for hunk in hunks:
        anchors = _anchors(base_defs, hunk.base_start, hunk.base_end, "base") | _anchors(
            candidate_defs, hunk.candidate_start, hunk.candidate_end, "candidate"
        )
        joined = [group for group in groups if group[1] & anchors]
        merged_hunks = [h for group in joined for h in group[0]] + [hunk]
        merged_anchors = set().union(anchors, *(group[1] for group in joined))
        groups = [group for group in groups if group not in joined] + [(merged_hunks, merged_anchors)]
    groups = _merge_dependent(groups, base_defs, candidate_defs, a)
    groups.sort(key=lambda group: min(h.base_start for h in group[0]))
    return [
        ChangeUnit(
            first_id + index,
            path,
            "edit",
            tuple(sorted(group_hunks, key=lambda h: h.base_start)),
            tuple(sorted(a for a in anchors if not a.startswith("<"))) or tuple(sorted(anchors)),
        )
        for index, (group_hunks, anchors) in enumerate(groups)
    ]


def _line_texts(path: str, old: bytes, new: bytes) -> tuple[str, str] | None:
    """Both versions as text whose lines can be mixed and written back byte for byte, or None (the file is then
    replaced whole). A Python file is read as Python reads it (PEP 263: a Latin-1 file with a coding declaration is
    text), in one encoding in both versions, each line of which encodes back to its own bytes (``file_encoding``
    writes an assembled tree's file in it); any other file as UTF-8."""
    if not path.endswith(".py"):
        try:
            return old.decode("utf-8"), new.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        before, after = decode_source(old), decode_source(new)
    except UnreadableSource:
        return None
    if before.encoding != after.encoding:
        return None
    for text, raw in ((before.text, old), (after.text, new)):
        if b"".join(line.encode(before.encoding) for line in python_lines(text)) != raw:
            return None
    return before.text, after.text


def file_encoding(path: str, raw: bytes) -> str:
    """The encoding ``change_units`` read a file's lines in (it cut hunks only where this is well defined)."""
    return decode_source(raw).encoding if path.endswith(".py") else "utf-8"


Definition = tuple[int, int, str]
Group = tuple[list[Hunk], set[str]]
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _merge_dependent(
    groups: list[Group], base_defs: list[Definition] | None, candidate_defs: list[Definition] | None, base: list[str]
) -> list[Group]:
    """Join edits that cannot be applied apart: one that uses a name another defines anew, or one whose replaced
    base lines use a name another removes (a rename of a helper and its callers is one change). Without this,
    delta debugging spends its budget on subsets that do not import."""
    if base_defs is None or candidate_defs is None:
        return groups
    before = {name.split(".")[-1] for _, _, name in base_defs if not name.startswith("<")}
    after = {name.split(".")[-1] for _, _, name in candidate_defs if not name.startswith("<")}
    merged = list(groups)
    changed = True
    while changed:
        changed = False
        for i, j in itertools.combinations(range(len(merged)), 2):
            if _depends(merged[i], merged[j], before, after, base) or _depends(
                merged[j], merged[i], before, after, base
            ):
                joined = (merged[i][0] + merged[j][0], merged[i][1] | merged[j][1])
                merged = [g for k, g in enumerate(merged) if k not in (i, j)] + [joined]
                changed = True
                break
    return merged


def _depends(user: Group, owner: Group, before: set[str], after: set[str], base: list[str]) -> bool:
    owned = {name.split(".")[-1] for name in owner[1] if not name.startswith("<")}
    introduced, removed = owned & (after - before), owned & (before - after)
    if not introduced and not removed:
        return False
    used_new = {m for h in user[0] for line in h.replacement for m in IDENTIFIER.findall(line)}
    used_old = {m for h in user[0] for line in base[h.base_start : h.base_end] for m in IDENTIFIER.findall(line)}
    return bool(introduced & used_new or removed & used_old)


def _definitions(text: str) -> list[Definition] | None:
    """(first line, last line, name) of each definition a hunk can belong to, 1-based; None when the file does
    not parse (its hunks then stay apart)."""
    try:
        module = parse_module(text)
    except SyntaxError:
        return None
    found: list[Definition] = []
    for node in module.body:
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                name = getattr(child, "name", None)
                label = f"{node.name}.{name}" if name else f"{node.name}<line {child.lineno}>"
                found.append((_first_line(child), child.end_lineno or child.lineno, label))
            found.append((_first_line(node), node.lineno, node.name))
        else:
            name = getattr(node, "name", None) or f"<module line {node.lineno}>"
            found.append((_first_line(node), node.end_lineno or node.lineno, name))
    return found


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _anchors(definitions: list[Definition] | None, start: int, end: int, side: str) -> set[str]:
    """Names of the definitions lines [start, end) (0-based) overlap; a pure insertion belongs to the
    definition around its position. Module-level statements are only comparable within one side."""
    if definitions is None:
        return {f"<{side} unparsed {start}>"}
    first, last = start + 1, max(end, start + 1)
    names = set()
    for low, high, name in definitions:
        if low <= last and first <= high:
            names.add(f"<{side} {name}>" if name.startswith("<") else name)
    return names or {f"<{side} between definitions at {start}>"}


def _lines(hunks: tuple[Hunk, ...]) -> str:
    spans = [
        f"{h.base_start + 1}-{h.base_end}" if h.base_end > h.base_start else f"after {h.base_start}" for h in hunks
    ]
    shown = ", ".join(spans[:3]) + (f" and {len(spans) - 3} more" if len(spans) > 3 else "")
    return f"base lines {shown}"
