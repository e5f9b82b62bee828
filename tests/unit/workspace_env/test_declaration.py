"""Which environment a revision declares, and which declarations are refused before anything is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.workspace_env.declaration import detect_declaration
from libs.workspace_env.failure import EnvironmentUnavailable
from libs.workspace_env.requirement_lines import RequirementRefused, index_requirements, pinned_requirements

PROJECT = '[project]\nname = "m"\nversion = "1"\ndependencies = ["numpy", "scikit-learn>=1.3"]\n'


def test_nothing_declared_runs_with_modelguards_interpreter(tmp_path: Path) -> None:
    assert detect_declaration(tmp_path).declaration is None


def test_a_lock_with_its_project_is_the_declaration_and_wins_over_requirements(tmp_path: Path) -> None:
    (tmp_path / "uv.lock").write_text("version = 1\n")
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    (tmp_path / "requirements.txt").write_text("numpy==2.4.6\n")
    declaration = detect_declaration(tmp_path).declaration
    assert declaration is not None and declaration.kind == "uv_lock"
    assert declaration.names == "uv.lock + pyproject.toml"


def test_a_lock_without_its_project_is_refused(tmp_path: Path) -> None:
    (tmp_path / "uv.lock").write_text("version = 1\n")
    with pytest.raises(EnvironmentUnavailable, match=r"uv\.lock without pyproject\.toml"):
        detect_declaration(tmp_path)


def test_a_project_with_dependencies_but_no_lock_is_not_built_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    detected = detect_declaration(tmp_path)
    assert detected.declaration is None
    assert "no uv.lock pins them" in detected.note


def test_requirements_are_read_line_by_line(tmp_path: Path) -> None:
    text = "# model\nlightgbm==4.7.0  # gbm\nnumpy>=1.24,<3\npandas[performance] == 3.1.1 ; python_version >= '3.10'\n"
    (tmp_path / "requirements.txt").write_text(text)
    declaration = detect_declaration(tmp_path).declaration
    assert declaration is not None and declaration.kind == "requirements"
    assert [(r.name, r.specifiers, r.pinned) for r in declaration.requirements] == [
        ("lightgbm", "==4.7.0", True),
        ("numpy", ">=1.24,<3", False),
        ("pandas", "==3.1.1", True),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "-e .",
        "./vendor/thing",
        "git+https://example.com/x.git#egg=x",
        "thing @ https://example.com/thing-1.0.tar.gz",
        "--index-url https://elsewhere.example/simple",
        "--extra-index-url https://elsewhere.example/simple",
        "-r other.txt",
        "--find-links /tmp/wheels",
    ],
)
def test_sources_other_than_the_configured_index_are_refused(tmp_path: Path, line: str) -> None:
    (tmp_path / "requirements.txt").write_text(f"numpy==2.4.6\n{line}\n")
    with pytest.raises(EnvironmentUnavailable, match=r"requirements\.txt line 2 is not a package from the index"):
        detect_declaration(tmp_path)


def test_hashes_and_continuations_are_allowed() -> None:
    text = "numpy==2.4.6 \\\n    --hash=sha256:abcdef0123\n"
    assert [r.name for r in index_requirements(text, "r.txt")] == ["numpy"]


def test_a_locks_export_must_pin_every_package() -> None:
    assert [r.name for r in pinned_requirements("a==1\nb===2.0\n", "lock")] == ["a", "b"]
    with pytest.raises(RequirementRefused, match="b>=2 is not pinned"):
        pinned_requirements("a==1\nb>=2\n", "lock")


def test_a_declaration_that_is_a_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.txt").write_text("numpy==2.4.6\n")
    (tmp_path / "requirements.txt").symlink_to(tmp_path / "elsewhere.txt")
    with pytest.raises(EnvironmentUnavailable, match="symbolic link"):
        detect_declaration(tmp_path)


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("a = " + "[" * 5_000 + "]" * 5_000 + "\n", "nested past the parser's limit"),
        ("a = " + "{b = " * 3_000 + "1" + "}" * 3_000 + "\n", "nested past the parser's limit"),
        ('project = "m"\n', r"\[project\] is not a table"),
        ("project = [1, 2]\n", r"\[project\] is not a table"),
    ],
)
def test_a_hostile_project_file_is_refused_with_the_reason(tmp_path: Path, text: str, refusal: str) -> None:
    """A pull request's pyproject.toml: nesting past tomllib's recursion, or a [project] that is not a table, is
    the declaration refused, not a RecursionError or AttributeError escaping the environment's resolution."""
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(EnvironmentUnavailable, match=refusal) as refused:
        detect_declaration(tmp_path)
    assert "\n" not in str(refused.value)
