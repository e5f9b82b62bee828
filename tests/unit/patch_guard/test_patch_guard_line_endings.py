"""Files whose lines end in a lone ``\\r`` (old Mac style), which Python reads as it reads any other file.

Git and a diff split lines on ``\\n`` only, so such a file is one long line to them, full of carriage returns. A
``\\r`` is a line ending where the file's own lines end in it (the file before the patch): a legitimate edit of
such a file passes the guard, and every other check still reads its lines as Python does. In a file whose lines
do not end in ``\\r``, a ``\\r`` inside a line still hides what follows it on a terminal, and is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from libs.patch_guard.guard import GuardRequest, check_patch
from libs.patch_guard.policy import load_central_policy, narrowed_policy
from libs.patch_guard.report import GuardReport
from libs.policy.central import DEFAULT_CENTRAL_POLICY
from services.repairer.unified_diff import render_unified_diff
from tests.unit.patch_guard.model_workspace import CONFIG, FEATURES, build_workspace

POLICY = narrowed_policy(load_central_policy(DEFAULT_CENTRAL_POLICY), CONFIG)
PATH = "pkg/features.py"
DOCSTRING = '    """Average spend per month of account life."""\n'
RETURN = "    return total / months\n"
GUARDED = FEATURES.replace(DOCSTRING, DOCSTRING + "    if months <= 0:\n        return 0.0\n")
CONSTANT = FEATURES.replace("months < 6", "months < 12")


def lone_cr(text: str) -> str:
    return text.replace("\n", "\r")


def half_and_half(text: str, second: str = "\n") -> str:
    """The first half of the lines end in ``\\r``, the rest in ``second`` (a file edited in two editors)."""
    lines = text.split("\n")
    middle = len(lines) // 2
    return "\r".join(lines[:middle]) + "\r" + second.join(lines[middle:])


def judged(tmp_path: Path, before: str, after: str, *, workspace: bool = True) -> GuardReport:
    root = build_workspace(tmp_path)
    (root / PATH).write_bytes(before.encode("utf-8"))
    patch = render_unified_diff(PATH, before, after)
    return check_patch(GuardRequest(patch=patch, policy=POLICY, workspace=root if workspace else None))


def failed(report: GuardReport) -> list[str]:
    return [check.name for check in report.failed()]


def half_and_half_crlf(text: str) -> str:
    return half_and_half(text, "\r\n")


ENDINGS: dict[str, Callable[[str], str]] = {
    "lone CR": lone_cr,
    "lone CR and LF": half_and_half,
    "lone CR and CRLF": half_and_half_crlf,
}


@pytest.mark.parametrize("after", [GUARDED, CONSTANT], ids=["added guard", "changed constant"])
@pytest.mark.parametrize("endings", list(ENDINGS))
def test_a_legitimate_edit_of_a_file_whose_lines_end_in_cr_passes(tmp_path: Path, endings: str, after: str) -> None:
    convert = ENDINGS[endings]
    report = judged(tmp_path, convert(FEATURES), convert(after))
    assert failed(report) == [], report.failed()


@pytest.mark.parametrize("after", [GUARDED, CONSTANT], ids=["added guard", "changed constant"])
@pytest.mark.parametrize("endings", list(ENDINGS))
def test_without_a_workspace_the_cr_endings_of_the_hunks_old_side_are_line_endings(
    tmp_path: Path, endings: str, after: str
) -> None:
    """Judged by its hunks alone, a lone-CR file's hunk is the whole file as one line; its ``\\r`` are not hidden
    text, but the hunk reader still cannot read a line with a triple quote alone (it fails closed, as for any file)."""
    convert = ENDINGS[endings]
    report = judged(tmp_path, convert(FEATURES), convert(after), workspace=False)
    assert "no_hidden_text" not in failed(report)


def test_an_edit_that_keeps_a_file_s_cr_endings_is_one_changed_line_to_git(tmp_path: Path) -> None:
    """What the repairer writes for such a file: one line removed and one added, the whole file."""
    report = judged(tmp_path, lone_cr(FEATURES), lone_cr(GUARDED))
    assert (report.added_lines, report.removed_lines) == (1, 1)


STRAY = {
    "code behind a comment": "    o.system('id')\r    # keep months as given\n",
    "a comment ending early": RETURN.replace("\n", "  # tidy\ro.system('id')\n"),
    "inside a triple-quoted string": '    """\r"""; o.system("id")\n' + RETURN,
    "an extra empty line": RETURN.replace("\n", "\r\r\n"),
}


@pytest.mark.parametrize("workspace", [True, False], ids=["workspace", "hunks"])
@pytest.mark.parametrize("added", list(STRAY))
def test_a_stray_cr_in_a_file_whose_lines_end_in_lf_is_hidden_text(tmp_path: Path, added: str, workspace: bool) -> None:
    report = judged(tmp_path, FEATURES, FEATURES.replace(RETURN, STRAY[added]), workspace=workspace)
    [finding] = report.check("no_hidden_text").findings
    assert "U+000D" in finding.detail and finding.line == 10


def test_a_stray_cr_in_a_crlf_file_is_hidden_text(tmp_path: Path) -> None:
    before = FEATURES.replace("\n", "\r\n")
    after = before.replace("    return total / months\r\n", "    o.system('id')\r    # keep months as given\r\n")
    assert "no_hidden_text" in failed(judged(tmp_path, before, after))


def test_a_created_file_s_lone_cr_is_hidden_text(tmp_path: Path) -> None:
    """A new file has no lines of its own before the patch to say that they end in ``\\r``."""
    root = build_workspace(tmp_path)
    patch = "--- /dev/null\n+++ b/pkg/extra.py\n@@ -0,0 +1 @@\n+x = 1\r# harmless\n"
    report = check_patch(GuardRequest(patch=patch, policy=POLICY, workspace=root))
    assert "no_hidden_text" in failed(report)


@pytest.mark.parametrize(
    "hidden", ["\u200b", "\u202e", "\x0b", "\x0c", "\u2028", "\x1b[2K"], ids=["ZWSP", "RLO", "VT", "FF", "LS", "ESC"]
)
@pytest.mark.parametrize("endings", list(ENDINGS))
def test_other_hidden_characters_in_a_cr_file_are_still_refused(tmp_path: Path, endings: str, hidden: str) -> None:
    convert = ENDINGS[endings]
    after = GUARDED.replace("        return 0.0\n", f"        return 0.0  # zero{hidden}months\n")
    report = judged(tmp_path, convert(FEATURES), convert(after))
    assert failed(report) == ["no_hidden_text"]


@pytest.mark.parametrize("workspace", [True, False], ids=["workspace", "hunks"])
def test_new_code_in_a_cr_file_is_judged_as_python_reads_it(tmp_path: Path, workspace: bool) -> None:
    after = GUARDED.replace("        return 0.0\n", "        return 0.0\n    o.system('id')\n")
    report = judged(tmp_path, lone_cr(FEATURES), lone_cr(after), workspace=workspace)
    assert "no_hidden_text" not in failed(report)
    assert {"allowed_new_code", "forbidden_constructs"} <= set(failed(report))


def test_an_exit_moved_into_a_changed_function_of_a_cr_file_is_refused(tmp_path: Path) -> None:
    """The file already exits somewhere; the patch moves the exit into ``monthly_spend``. The count of exits is the
    same, so only the lines the patch adds tell: they are counted as Python counts lines, not as git does."""
    exits = FEATURES + "\n\ndef main() -> None:\n    raise SystemExit(0)\n"
    moved = exits.replace("    raise SystemExit(0)\n", "    pass\n").replace(RETURN, "    raise SystemExit(0)\n")
    assert failed(judged(tmp_path / "lf", exits, moved)) == ["always_refused"]
    report = judged(tmp_path / "cr", lone_cr(exits), lone_cr(moved))
    assert failed(report) == ["always_refused"]
    assert [finding.line for finding in report.check("always_refused").findings] == [10]


def test_an_existing_exit_elsewhere_in_a_cr_file_does_not_refuse_an_edit(tmp_path: Path) -> None:
    """A whole lone-CR file is one line to git; only the Python lines the edit changes count as added."""
    exits = FEATURES + "\n\ndef main() -> None:\n    raise SystemExit(0)\n"
    guarded = exits.replace(DOCSTRING, DOCSTRING + "    if months <= 0:\n        return 0.0\n")
    assert failed(judged(tmp_path, lone_cr(exits), lone_cr(guarded))) == []


def test_a_look_alike_identifier_added_to_a_cr_file_is_refused(tmp_path: Path) -> None:
    after = FEATURES.replace(RETURN, "    m\u043enths = max(months, 1)\n" + RETURN)
    report = judged(tmp_path, lone_cr(FEATURES), lone_cr(after))
    assert failed(report) == ["always_refused"]
    [finding] = report.check("always_refused").findings
    assert "CYRILLIC" in finding.detail and finding.line == 10


def test_a_fullwidth_identifier_added_to_a_cr_file_is_refused(tmp_path: Path) -> None:
    """Only the tokens show it (the syntax tree holds the name after NFKC, plain ``months``): they are numbered as
    Python numbers lines too."""
    after = FEATURES.replace(RETURN, "    \uff4donths = max(months, 1)\n" + RETURN)
    assert failed(judged(tmp_path / "lf", FEATURES, after)) == ["always_refused"]
    report = judged(tmp_path / "cr", lone_cr(FEATURES), lone_cr(after))
    assert failed(report) == ["always_refused"]
    [finding] = report.check("always_refused").findings
    assert "\uff4donths" in finding.detail and finding.line == 10


def test_a_cr_file_s_changed_lines_are_counted_as_python_counts_them(tmp_path: Path) -> None:
    """A whole lone-CR file is one line to git: +1 -1 for any edit. The limit counts Python's lines instead."""
    report = judged(tmp_path / "small", lone_cr(FEATURES), lone_cr(GUARDED))
    assert report.check("max_changed_lines").reason.startswith("2 of at most")
    rewritten = lone_cr(FEATURES).replace("import os as o\r", "import os as o\r" + "x = 1\r" * 50)
    report = judged(tmp_path / "large", lone_cr(FEATURES), rewritten)
    assert "max_changed_lines" in failed(report)
    assert report.check("max_changed_lines").findings[0].detail.startswith("50 lines changed")
