"""Diffs read exactly as ``git apply`` reads them: git's extended headers, quoted names, strict hunks."""

from __future__ import annotations

import re

import pytest

from libs.patch_guard.diff_headers import MalformedDiff
from libs.patch_guard.diff_parse import parse_diff
from libs.patch_guard.hunk_apply import HunkMismatch, apply_hunks, apply_hunks_marking_added


def test_a_plain_unified_diff() -> None:
    [change] = parse_diff("--- a/pkg/a.py\t2025-01-01\n+++ b/pkg/a.py\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n")
    assert (change.old_path, change.new_path, change.operation) == ("pkg/a.py", "pkg/a.py", "modify")
    assert (change.added, change.removed) == (("new",), ("old",))


def test_git_extended_headers() -> None:
    text = (
        "diff --git a/pkg/a.py b/pkg/b.py\nsimilarity index 90%\nrename from pkg/a.py\nrename to pkg/b.py\n"
        "diff --git a/pkg/c.py b/pkg/c.py\nold mode 100644\nnew mode 100755\n"
        "diff --git a/pkg/d.py b/pkg/d.py\ndeleted file mode 100644\n--- a/pkg/d.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        "diff --git a/pkg/e.py b/pkg/e.py\nnew file mode 120000\n--- /dev/null\n+++ b/pkg/e.py\n@@ -0,0 +1 @@\n+../x\n"
        "\\ No newline at end of file\n"
    )
    rename, mode, delete, link = parse_diff(text)
    assert (rename.operation, rename.old_path, rename.new_path) == ("rename", "pkg/a.py", "pkg/b.py")
    assert mode.operation == "modify" and mode.mode_changed
    assert (delete.operation, delete.new_path) == ("delete", None)
    assert link.operation == "create" and link.links and not link.hunks[0].lines[-1].newline


def test_quoted_names_are_unquoted() -> None:
    [change] = parse_diff('--- "a/pkg/caf\\303\\251.py"\n+++ "b/pkg/caf\\303\\251.py"\n@@ -1 +1 @@\n-a\n+b\n')
    assert change.path == "pkg/café.py"


def test_binary_sections() -> None:
    git_binary = "diff --git a/m.bin b/m.bin\nindex 1..2 100644\nGIT binary patch\nliteral 3\nKcmZ?wX8-{\n\nliteral 0\n"
    [change] = parse_diff(git_binary)
    assert change.binary and change.path == "m.bin"
    [change] = parse_diff("Binary files /dev/null and b/n.bin differ\n")
    assert change.binary and (change.operation, change.path) == ("create", "n.bin")


def test_a_removed_line_that_looks_like_a_header_stays_a_removed_line() -> None:
    [change] = parse_diff("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,1 @@\n--- not a header\n keep\n")
    assert change.removed == ("-- not a header",)


def test_a_carriage_return_stays_inside_its_line() -> None:
    [change] = parse_diff("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\rimport os\n")
    assert change.added == ("b\rimport os",)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n keep\n", "ends inside a hunk"),
        ("@@ -1 +1 @@\n-a\n+b\n", "hunk without a file header"),
        ("--- x.py\n+++ x.py\n@@ -1 +1 @@\n-a\n+b\n", "prefix"),
        ("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-b\n+c\n", "twice"),
        ("--- a/x.py\nnot a header\n", "without '+++'"),
        ("--- a/x.py\n+++ b/x.py\n", "no hunks"),
        ("diff --git a/x.py b/x.py\nindex 1..2 100644\n", "no hunks and changes nothing"),
        ("diff --git a/x.py b/x.py\nold mode 100644\nnew mode 100644\n", "no hunks and changes nothing"),
        ("diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\ndiff --git a/y.py b/y.py\n", "changes nothing"),
    ],
)
def test_malformed(text: str, says: str) -> None:
    with pytest.raises(MalformedDiff, match=re.escape(says)):
        parse_diff(text)


def test_hunks_apply_at_their_line_or_the_nearest_offset() -> None:
    [change] = parse_diff("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,3 @@\n a\n+A\n b\n")
    assert apply_hunks("a\nb\nc\n", change.hunks) == "a\nA\nb\nc\n"
    assert apply_hunks("z\na\nb\n", change.hunks) == "z\na\nA\nb\n"
    with pytest.raises(HunkMismatch):
        apply_hunks("x\ny\n", change.hunks)


def test_a_git_section_without_hunks_is_read_when_its_headers_change_something() -> None:
    """A mode change, a rename, a deletion: judged by file_operations, not malformed."""
    text = (
        "diff --git a/m.py b/m.py\nold mode 100644\nnew mode 100755\n"
        "diff --git a/r.py b/s.py\nsimilarity index 100%\nrename from r.py\nrename to s.py\n"
        "diff --git a/e.py b/e.py\ndeleted file mode 100644\nindex 1..0\n"
    )
    assert [change.operation for change in parse_diff(text)] == ["modify", "rename", "delete"]


def test_the_added_lines_are_where_the_hunks_really_landed() -> None:
    """The hunk says line 1; the file has two more lines above, so git (and the guard) place it at line 3."""
    [change] = parse_diff("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,3 @@\n a\n+A\n b\n@@ -5 +6,2 @@\n e\n+E\n")
    after, added = apply_hunks_marking_added("y\nz\na\nb\nc\nd\ne\n", change.hunks)
    assert after == "y\nz\na\nA\nb\nc\nd\ne\nE\n"
    assert added == {4, 9}


def test_missing_final_newline_is_kept() -> None:
    [change] = parse_diff("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-x = 1\n\\ No newline at end of file\n+x = 2\n")
    assert apply_hunks("x = 1", change.hunks) == "x = 2\n"
