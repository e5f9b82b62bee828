"""Cutting a pull request into change units: a line diff per changed file. The diff is Python's SequenceMatcher
without its junk heuristic, whose time grows with how often lines repeat: two files of a few thousand alternating
lines took over a minute (a generated table, a fixture of repeated rows). A file whose alignment costs more than the
matcher's budget is one unit, replaced whole, as a file that is not UTF-8 already is."""

from __future__ import annotations

from pathlib import Path

from services.diagnoser.experiments.change_units import change_units


def _trees(tmp_path: Path, path: str, before: str, after: str) -> tuple[Path, Path]:
    base, candidate = tmp_path / "base", tmp_path / "candidate"
    for root, text in ((base, before), (candidate, after)):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return base, candidate


def test_a_file_of_repeated_lines_too_costly_to_align_is_one_unit_replaced_whole(tmp_path: Path) -> None:
    before = "TABLE = [\n" + "    0,\n    1,\n" * 1_500 + "]\n"
    after = "TABLE = [\n" + "    1,\n    2,\n    0,\n" * 1_500 + "]\n"
    units = change_units(*_trees(tmp_path, "pkg/table.py", before, after))
    assert [(unit.path, unit.kind) for unit in units] == [("pkg/table.py", "file_replaced")]


def test_an_ordinary_edit_is_cut_into_its_hunks(tmp_path: Path) -> None:
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(400))
    changed = body.replace("return x + 7\n", "return x - 7\n").replace("return x + 300\n", "return x * 300\n")
    units = change_units(*_trees(tmp_path, "pkg/model.py", body, changed))
    assert [(unit.kind, unit.anchors) for unit in units] == [("edit", ("f7",)), ("edit", ("f300",))]


def test_hunks_count_lines_as_python_does_so_an_edit_after_a_form_feed_belongs_to_its_function(
    tmp_path: Path,
) -> None:
    """A form feed (``^L``, which older modules put between sections) or a Unicode line separator in a string ends a
    line for ``str.splitlines`` but not for Python: hunks cut by ``splitlines`` were a line off the syntax tree's
    lines after one, so an edit inside ``c`` belonged to no definition."""
    before = "def a():\n    return 1\n\x0c\ndef b():\n    return '\u2028'\n\n\ndef c():\n    return 3\n"
    after = before.replace("return 3", "return 4")
    [unit] = change_units(*_trees(tmp_path, "pkg/model.py", before, after))
    assert unit.anchors == ("c",)
    assert [(hunk.base_start, hunk.base_end, hunk.replacement) for hunk in unit.hunks] == [(8, 9, ("    return 4\n",))]
