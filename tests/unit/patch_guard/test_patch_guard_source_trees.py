"""One parse per text for the whole-file checks of one patch check, and of the patch checks of one repair handling
that share their trees, with the reason a text does not parse; the texts kept are bounded."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from libs.patch_guard.content_checks import check_python_syntax
from libs.patch_guard.diff_parse import parse_diff
from libs.patch_guard.file_images import FileImage, file_images
from libs.patch_guard.guard import GuardRequest, check_patch
from libs.patch_guard.policy import EffectivePolicy, load_central_policy, narrowed_policy
from libs.patch_guard.source_trees import SourceTrees
from tests.unit.patch_guard.model_workspace import CONFIG, FILES, build_workspace


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


CORPUS = Path(__file__).parent / "corpus"
EDITED = "pkg/frame_features.py"
ZERO_GUARD = (CORPUS / "accept_frame_np_where_zero_guard.patch").read_bytes()
NAN_TO_NUM = (CORPUS / "accept_frame_nan_to_num.patch").read_bytes()


@pytest.fixture
def module_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts ``ast.parse`` is given as whole modules (``mode="exec"``), in order, while the test runs."""
    seen: list[str] = []
    real = ast.parse

    def counting(source: str | bytes, *args: Any, **kwargs: Any) -> ast.AST:
        if kwargs.get("mode", "exec") == "exec":
            seen.append(source.decode("utf-8") if isinstance(source, bytes) else source)
        tree: ast.AST = real(source, *args, **kwargs)
        return tree

    monkeypatch.setattr(ast, "parse", counting)
    return seen


@pytest.fixture(scope="module")
def policy() -> EffectivePolicy:
    return narrowed_policy(load_central_policy(), CONFIG)


@pytest.fixture(scope="module")
def revisions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The corpus workspace, and an approved revision whose version of the edited file differs from it."""
    workspace = build_workspace(tmp_path_factory.mktemp("candidate"))
    approved = build_workspace(tmp_path_factory.mktemp("approved"))
    (approved / EDITED).write_text(FILES[EDITED].replace("return out", "return out.copy()"), encoding="utf-8")
    return workspace, approved


def patched_text(workspace: Path, patch: bytes) -> str:
    [image] = file_images(parse_diff(patch.decode("utf-8")), workspace)
    assert image.known and image.after is not None
    return image.after


def test_one_guard_call_parses_each_file_image_once(
    revisions: tuple[Path, Path], policy: EffectivePolicy, module_parses: list[str]
) -> None:
    """The file before the patch, after it and in the approved revision: three texts, three parses, whatever the
    number of checks that read them."""
    workspace, approved = revisions
    before, approved_text = (workspace / EDITED).read_text(encoding="utf-8"), (approved / EDITED).read_text("utf-8")
    after = patched_text(workspace, ZERO_GUARD)
    module_parses.clear()
    report = check_patch(GuardRequest(patch=ZERO_GUARD, policy=policy, workspace=workspace, approved=approved))
    assert report.accepted, report.failed()
    assert sorted(module_parses) == sorted([before, after, approved_text])


def test_the_guard_calls_of_one_handling_parse_a_shared_text_once_and_judge_as_alone(
    revisions: tuple[Path, Path], policy: EffectivePolicy, module_parses: list[str]
) -> None:
    workspace, approved = revisions
    alone = [
        check_patch(GuardRequest(patch=patch, policy=policy, workspace=workspace, approved=approved))
        for patch in (ZERO_GUARD, NAN_TO_NUM, ZERO_GUARD)
    ]
    module_parses.clear()
    trees = SourceTrees()
    shared = [
        check_patch(GuardRequest(patch=patch, policy=policy, workspace=workspace, approved=approved, trees=trees))
        for patch in (ZERO_GUARD, NAN_TO_NUM, ZERO_GUARD)
    ]
    assert shared == alone
    before, approved_text = (workspace / EDITED).read_text(encoding="utf-8"), (approved / EDITED).read_text("utf-8")
    first, second = patched_text(workspace, ZERO_GUARD), patched_text(workspace, NAN_TO_NUM)
    assert sorted(module_parses) == sorted([before, first, approved_text, second]), "each text once, for all calls"


def test_a_text_is_found_by_its_exact_text_and_the_kept_texts_are_bounded(module_parses: list[str]) -> None:
    trees = SourceTrees(max_texts=2, max_chars=1_000)
    a, b, c = trees.tree("a = 1\n"), trees.tree("b = 1\n"), trees.tree("a = 1 \n")
    assert a is not None and b is not None and c is not None
    assert len({id(a), id(b), id(c)}) == 3, "a text one space apart is another text"
    assert trees.tree("b = 1\n") is b and trees.tree("a = 1 \n") is c, "the two most recently used are kept"
    again = trees.tree("a = 1\n")
    assert again is not a and again is not None and ast.dump(again) == ast.dump(a), "the oldest went; parsed again"
    long = "x = 1\n" * 200
    assert trees.tree(long) is not None and trees.tree(long) is trees.tree(long), "a text over the bound is kept alone"
    assert trees.tree("a = 1\n") is not again, "the texts before it went to make room"
    assert module_parses == ["a = 1\n", "b = 1\n", "a = 1 \n", "a = 1\n", long, "a = 1\n"]
