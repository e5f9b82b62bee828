"""One parse per text for the whole-file checks of one patch check, with the reason a text does not parse."""

from __future__ import annotations

import ast

from libs.patch_guard.content_checks import check_python_syntax
from libs.patch_guard.diff_parse import parse_diff
from libs.patch_guard.file_images import FileImage
from libs.patch_guard.source_trees import SourceTrees


def test_the_same_text_gives_the_same_tree() -> None:
    trees = SourceTrees()
    first = trees.tree("x = 1\n")
    assert isinstance(first, ast.Module)
    assert trees.tree("x = 1\n") is first
    assert trees.tree("x = 2\n") is not first


def test_a_text_that_does_not_parse_keeps_its_reason() -> None:
    trees = SourceTrees()
    broken = trees.parsed("def f(:\n    pass\n")
    assert isinstance(broken, SyntaxError) and broken.lineno == 1
    assert broken.__traceback__ is None, "no parser frame kept alive"
    assert trees.tree("def f(:\n    pass\n") is None
    assert isinstance(trees.parsed("x = '\0'"), (SyntaxError, ValueError)), "a NUL byte: either, by Python version"
    assert trees.tree("x = '\0'") is None


def test_the_syntax_check_reads_the_shared_parse() -> None:
    [change] = parse_diff("--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+def f(:\n+    pass\n")
    image = FileImage(path="pkg/new.py", change=change, before="", after="def f(:\n    pass\n", known=True)
    trees = SourceTrees()
    result = check_python_syntax([image], trees)
    assert result.status == "failed"
    [finding] = result.findings
    assert finding.line == 1 and finding.detail.startswith("syntax error: ")
    assert trees.tree(image.after or "") is None
