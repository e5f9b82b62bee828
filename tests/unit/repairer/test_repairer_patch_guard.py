"""The patch guard: every rule a proposed patch can break, read from the diff text itself."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from services.repairer.patch_guard import ProposedPatch, check_patch, spec_protected_paths
from tests.support.typed_policy import repair_section, workspace_policy

POLICY = repair_section(
    {
        "strategies": ["guarded_division"],
        "allowed_paths": ["churn_model/*.py", "tests/*.py", "evaluate.py", "setup.py", "churn_model/*.txt"],
        "max_files": 1,
        "max_changed_lines": 6,
        "protected_paths": ["churn_model/secret.py"],
    }
)
SPEC = workspace_policy(
    evaluate=["python", "evaluate.py", "--data", "{data}"],
    tests=["python", "-m", "pytest", "-q", "--junitxml", "{junit}", "tests"],
)


def diff(path: str, added: list[str], removed: list[str] | None = None, old: str | None = None) -> str:
    removed = removed or []
    old_header = "/dev/null" if old == "/dev/null" else f"a/{old or path}"
    context = [] if old == "/dev/null" else [" def f(x):"]
    header = f"@@ -1,{len(context) + len(removed)} +1,{len(context) + len(added)} @@\n"
    body = "".join(f"{line}\n" for line in context + [f"-{r}" for r in removed] + [f"+{a}" for a in added])
    return f"--- {old_header}\n+++ b/{path}\n{header}{body}"


GOOD = diff("churn_model/features.py", ["    if x <= 0:", "        return 0.0"])


def rules(unified_diff: str, strategy: str = "guarded_division", files: tuple[str, ...] = ()) -> list[str]:
    verdict = check_patch(ProposedPatch(strategy=strategy, unified_diff=unified_diff, files=files), POLICY, SPEC)
    return [violation.rule for violation in verdict.violations]


def test_a_small_patch_to_an_allowed_file_passes() -> None:
    verdict = check_patch(ProposedPatch(strategy="guarded_division", unified_diff=GOOD), POLICY, SPEC)
    assert verdict.allowed
    assert (verdict.files, verdict.added_lines, verdict.removed_lines, verdict.changed_lines) == (
        ("churn_model/features.py",),
        2,
        0,
        2,
    )


def test_strategy_must_be_in_the_policy() -> None:
    """A catalogue strategy the policy does not permit (a name outside the catalogue is no ProposedPatch at all)."""
    assert rules(GOOD, strategy="revert_change") == ["strategy_not_permitted"]
    with pytest.raises(ValidationError):
        ProposedPatch(strategy="rewrite_everything", unified_diff=GOOD)


def test_too_many_files() -> None:
    assert "too_many_files" in rules(GOOD + diff("churn_model/other.py", ["    pass"]))


def test_too_many_changed_lines() -> None:
    assert rules(diff("churn_model/features.py", ["    x = 1"] * 4, ["    y = 2"] * 3)) == ["too_many_changed_lines"]


def test_only_python_files() -> None:
    assert rules(diff("churn_model/notes.txt", ["hello"])) == ["file_type_not_permitted"]


def test_path_must_match_an_allowed_glob_without_crossing_folders() -> None:
    assert rules(diff("other/features.py", ["    pass"])) == ["path_not_allowed"]
    assert rules(diff("churn_model/sub/features.py", ["    pass"])) == ["path_not_allowed"]


@pytest.mark.parametrize(
    "path",
    [
        "churn_model/secret.py",  # the policy's own protected list
        "tests/test_features.py",  # always: tests
        "evaluate.py",  # always: the evaluation entry point named by the workspace spec
        "setup.py",  # always: build hooks
        "churn_model/conftest.py",  # always: test configuration, at any depth
    ],
)
def test_protected_paths_are_refused_even_when_allowed(path: str) -> None:
    assert "path_protected" in rules(diff(path, ["    pass"]))


def test_workspace_spec_names_the_evaluation_entry_point_and_test_targets() -> None:
    assert spec_protected_paths(SPEC) == ["evaluate.py", "tests", "tests/**"]
    module_spec = workspace_policy(evaluate=["python", "-m", "churn_model.evaluate"])
    assert spec_protected_paths(module_spec) == ["churn_model/evaluate.py", "churn_model/evaluate/**"]


@pytest.mark.parametrize(
    "line",
    [
        "    import subprocess",
        "    os.system('rm -rf /')",
        "    return eval(expression)",
        "    exec(code)",
        "    open('/etc/passwd', 'w').write('x')",
        "    with open(path, mode='a') as handle:",
        "    import socket",
        "    __import__('os')",
        "    Path('x').write_text('y')",
        "    import pickle",
    ],
)
def test_unsafe_tokens_in_added_lines_are_refused(line: str) -> None:
    """Both layers refuse: the allow-list (nothing here is used by the hunk's module) and the deny-list."""
    assert {"not_in_allow_list", "unsafe_token"} <= set(rules(diff("churn_model/features.py", [line])))


def test_unsafe_tokens_in_removed_lines_do_not_count() -> None:
    assert rules(diff("churn_model/features.py", ["    return 0.0"], ["    import subprocess"])) == []


def test_new_files_are_refused() -> None:
    assert "file_created_deleted_or_renamed" in rules(diff("churn_model/new.py", ["X = 1"], old="/dev/null"))


def test_paths_leaving_the_workspace_are_refused() -> None:
    assert "path_outside_workspace" in rules(diff("../outside.py", ["X = 1"], old="../outside.py"))


def test_declared_files_must_match_the_diff() -> None:
    assert rules(GOOD, files=("churn_model/other.py",)) == ["declared_files_mismatch"]


def test_malformed_and_empty_patches() -> None:
    assert rules("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-x\n") == ["malformed_patch"]
    assert rules("") == ["empty_patch"]
