"""A tree that is the base revision with some units of the candidate's change applied, written to a fresh
folder: the subject of one change experiment."""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path

from libs.python_source.source_text import python_lines
from services.diagnoser.code_diff import IGNORED_DIRECTORY_NAMES
from services.diagnoser.experiments.change_units import ChangeUnit, file_encoding


def assemble_tree(base: Path, candidate: Path, units: Collection[ChangeUnit], destination: Path) -> Path:
    """``destination`` (which must not exist) holds ``base`` with ``units`` applied."""
    shutil.copytree(base, destination, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED_DIRECTORY_NAMES))
    by_path: dict[str, list[ChangeUnit]] = {}
    for unit in units:
        by_path.setdefault(unit.path, []).append(unit)
    for path, selected in by_path.items():
        target = destination / path
        whole = [unit for unit in selected if unit.kind != "edit"]
        if whole:
            _apply_whole(whole[0], Path(candidate) / path, target)
            continue
        raw = target.read_bytes()
        encoding = file_encoding(path, raw)  # a Latin-1 file with a coding declaration is written back in Latin-1
        lines = python_lines(raw.decode(encoding))
        hunks = [hunk for unit in selected for hunk in unit.hunks]
        for hunk in sorted(hunks, key=lambda h: h.base_start, reverse=True):
            lines[hunk.base_start : hunk.base_end] = list(hunk.replacement)
        target.write_bytes("".join(lines).encode(encoding))
    return destination


def _apply_whole(unit: ChangeUnit, source: Path, target: Path) -> None:
    if unit.kind == "file_removed":
        target.unlink()
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
