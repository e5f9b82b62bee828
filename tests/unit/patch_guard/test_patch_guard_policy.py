"""The central policy's repair section, and a workspace's config that can only narrow it."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.catalogue import RepairStrategy
from libs.patch_guard.policy import (
    CENTRAL_POLICY_ENV,
    GuardPolicyError,
    central_policy_path,
    load_central_policy,
    narrowed_policy,
)
from libs.patch_guard.structure_checks import check_strategy
from libs.patch_guard.workspace_config import (
    WorkspaceConfigError,
    WorkspaceRepairConfig,
    entry_point_globs,
    load_workspace_config,
    workspace_config_from_document,
)
from libs.policy.central import DEFAULT_CENTRAL_POLICY

REPAIR = """repair:
  permitted_paths: ["src/**"]
  protected_paths: ["**/tests/**"]
  file_types: [".py"]
  max_files: 2
  max_changed_lines: 10
  max_patch_bytes: 4096
  strategies: [guarded_division, revert_change]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "central.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_central_policy_loads() -> None:
    central = load_central_policy(DEFAULT_CENTRAL_POLICY)
    assert ".py" in central.file_types and ".csv" not in central.file_types
    assert central.file_operations == ("modify",)
    assert "**/pytest.ini" in central.protected_paths and "**/pyproject.toml" in central.protected_paths
    assert "**/conftest.py" in central.protected_paths and "tests/**" in central.protected_paths


def test_the_shipped_allow_list_and_generated_paths() -> None:
    central = load_central_policy(DEFAULT_CENTRAL_POLICY)
    assert {"abs", "min", "max", "round", "len", "float", "int", "str", "bool", "isinstance"} <= set(
        central.new_code.builtins
    )
    assert {
        "numpy.where",
        "numpy.isfinite",
        "numpy.nan_to_num",
        "numpy.clip",
        "pandas.to_numeric",
        "pandas.isna",
    } <= set(central.new_code.module_names)
    assert {"fillna", "replace", "astype", "where", "clip", "map", "rename", "get"} <= set(central.new_code.methods)
    assert not {"eval", "exec", "open", "getattr", "print", "input"} & set(central.new_code.builtins)
    assert "**/*_pb2.py" in central.generated_paths


def test_without_new_code_nothing_is_admitted_beyond_the_module(tmp_path: Path) -> None:
    central = load_central_policy(write(tmp_path, REPAIR))
    assert central.new_code.builtins == () and central.generated_paths == ()


def test_other_sections_are_ignored_and_only_repair_is_read(tmp_path: Path) -> None:
    text = "diagnosis: {abstain_below: 0.6, anything: [1]}\nsandbox: {memory_mb: 512}\n" + REPAIR
    central = load_central_policy(write(tmp_path, text))
    assert central.permitted_paths == ("src/**",) and central.max_files == 2


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("diagnosis: {}\n", "no 'repair:' section"),
        (REPAIR + "  protected_path: ['typo']\n", "repair.protected_path"),
        (REPAIR + "  forbidden_constructs: [telepathy]\n", "repair.forbidden_constructs"),
        (REPAIR + "  new_code: {builtins: [__import__]}\n", "repair.new_code.builtins"),
        (REPAIR + "  new_code: {functions: [numpy.where]}\n", "repair.new_code.functions"),
        ("repair: [", "not YAML"),
        (
            REPAIR.replace("revert_change]", "rewrite_everything]"),
            "repair.strategies: unknown repair strategy 'rewrite_everything'$",
        ),
    ],
)
def test_a_bad_central_policy_is_named(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(GuardPolicyError, match=says.replace("[", r"\[")):
        load_central_policy(write(tmp_path, text))


def test_the_central_policy_is_never_found_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CENTRAL_POLICY_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "central.yaml").write_text(REPAIR, encoding="utf-8")
    assert central_policy_path() == DEFAULT_CENTRAL_POLICY
    monkeypatch.setenv(CENTRAL_POLICY_ENV, str(tmp_path / "policy" / "central.yaml"))
    assert central_policy_path() == tmp_path / "policy" / "central.yaml"


def test_a_workspace_can_only_narrow(tmp_path: Path) -> None:
    central = load_central_policy(write(tmp_path, REPAIR))
    wide = WorkspaceRepairConfig(
        path_scopes=(("**",), ("src/**", "tests/**", "other/**")),
        max_files=50,
        max_changed_lines=5,
        strategies=(RepairStrategy.GUARDED_DIVISION, RepairStrategy.COLUMN_RENAME),
    )
    policy = narrowed_policy(central, wide)
    assert policy.unpermitted_scope("src/a.py") is None
    assert policy.unpermitted_scope("other/a.py") == ("src/**",)
    assert policy.protecting_pattern("src/tests/test_a.py") == "**/tests/**"
    assert (policy.max_files, policy.max_changed_lines) == (2, 5)
    assert policy.strategies == ("guarded_division",)


def test_protected_paths_are_compared_without_case(tmp_path: Path) -> None:
    policy = narrowed_policy(load_central_policy(write(tmp_path, REPAIR)), WorkspaceRepairConfig())
    assert policy.protecting_pattern("src/TESTS/test_a.py") == "**/tests/**"


def test_a_bundle_workspace_section_narrows_and_protects_its_commands() -> None:
    document = {
        "workspace": {
            "evaluate": ["python", "-m", "pkg.evaluate", "--train", "{train}"],
            "tests": ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", "{junit}", "checks"],
            "repair_paths": ["pkg/*.py"],
        }
    }
    config = workspace_config_from_document({"workspace": {**document["workspace"], "label": "churned"}}, "bundle.yaml")
    assert config.labels == ("churned",)
    assert narrowed_policy(load_central_policy(DEFAULT_CENTRAL_POLICY), config).labels == ("churned",)
    config = workspace_config_from_document(document, "bundle.yaml")
    assert config.labels == ()
    assert config.path_scopes == (("pkg/*.py",),)
    assert config.protected_globs() == ["pkg/evaluate.py", "pkg/evaluate/**", "checks", "checks/**"]


def test_a_model_policy_narrows_with_its_repair_section() -> None:
    document = {
        "workspace": {"evaluate": ["python", "evaluate.py", "--data", "{data}"]},
        "repair": {"allowed_paths": ["churn_model/*.py"], "max_files": 1, "protected_paths": ["x.py"]},
    }
    config = workspace_config_from_document(document, "policy.yaml")
    assert config.path_scopes == (("churn_model/*.py",),) and config.max_files == 1
    assert config.protected_globs() == ["x.py", "evaluate.py"]


@pytest.mark.parametrize(
    ("argv", "globs"),
    [
        (["python", "evaluate.py", "--data", "{data}"], ["evaluate.py"]),
        (["python", "-m", "pkg.evaluate"], ["pkg/evaluate.py", "pkg/evaluate/**"]),
        (["./bin/evaluate", "--fast"], ["bin/evaluate"]),
        ([], []),
    ],
)
def test_the_evaluation_entry_point(argv: list[str], globs: list[str]) -> None:
    assert entry_point_globs(argv) == globs


@pytest.mark.parametrize("glob", ["/etc/**", "../**", "pkg/../../x.py"])
def test_repair_paths_stay_inside_the_workspace(glob: str) -> None:
    with pytest.raises(WorkspaceConfigError):
        workspace_config_from_document({"workspace": {"repair_paths": [glob]}}, "bundle.yaml")


def test_a_workspace_naming_a_strategy_not_in_the_catalogue_is_refused_in_one_line() -> None:
    document = {"workspace": {}, "repair": {"strategies": ["guarded_division", "rewrite_everything"]}}
    with pytest.raises(WorkspaceConfigError) as raised:
        workspace_config_from_document(document, "bundle.yaml")
    assert str(raised.value) == "bundle.yaml: unknown repair strategy 'rewrite_everything'"


def test_a_strategy_the_policy_does_not_permit_is_named_with_the_permitted_names(tmp_path: Path) -> None:
    """The permitted strategies are enum members; the finding names them as the policy file does."""
    policy = narrowed_policy(load_central_policy(write(tmp_path, REPAIR)), WorkspaceRepairConfig())
    assert check_strategy("guarded_division", policy).findings == ()
    assert check_strategy(RepairStrategy.REVERT_CHANGE, policy).reason == "'revert_change' is permitted"
    (finding,) = check_strategy("rewrite_everything", policy).findings
    assert finding.detail == "'rewrite_everything' is not in ('guarded_division', 'revert_change')"


@pytest.mark.parametrize(
    "text",
    ["workspace: " + "[" * 5_000 + "]" * 5_000 + "\n", "workspace: " + "{a: " * 3_000 + "1" + "}" * 3_000 + "\n"],
)
def test_a_workspace_config_nested_past_the_parser_is_refused_with_the_reason(tmp_path: Path, text: str) -> None:
    """The config ``modelguard guard`` reads is the workspace's (a bundle.yaml, a model policy): nesting past
    PyYAML's recursion is a WorkspaceConfigError, which the command reports as unreadable (exit 2)."""
    path = tmp_path / "bundle.yaml"
    path.write_text(text)
    with pytest.raises(WorkspaceConfigError, match="nested past the parser's limit") as raised:
        load_workspace_config(path)
    assert "\n" not in str(raised.value)
