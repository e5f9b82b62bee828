"""The build with a fake uv: what uv is asked to do, the digest, the cache and its reuse, and a failed build."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from libs.settings import EnvironmentSettings
from libs.workspace_env.build import ensure_environment
from libs.workspace_env.declaration import Declaration, DeclarationFile
from libs.workspace_env.digest import environment_digest, package_source, without_credentials
from libs.workspace_env.failure import EnvironmentUnavailable
from libs.workspace_env.uv_process import UvOutcome, uv_environment

INDEX = "https://build:s3cr3t-token@packages.example/simple"


def requirements(text: str = "lightgbm==4.7.0\n") -> Declaration:
    return Declaration("requirements", (DeclarationFile("requirements.txt", text.encode()),))


class FakeUv:
    """Makes a venv-shaped folder for ``uv venv``, answers ``pip freeze``, fails the install when told to."""

    def __init__(self, fail_install: str = "") -> None:
        self.calls: list[tuple[list[str], dict[str, str]]] = []
        self.fail_install = fail_install

    def __call__(self, arguments: Sequence[str], extra: Mapping[str, str], timeout_s: float) -> UvOutcome:
        self.calls.append((list(arguments), dict(extra)))
        if arguments[0] == "venv":
            root = Path(arguments[-1])
            (root / "bin").mkdir(parents=True)
            (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
            os.symlink(os.path.realpath(sys.executable), root / "bin" / "python")
        if arguments[:2] == ["pip", "install"] and self.fail_install:
            return UvOutcome(1, "", self.fail_install, 0.1)
        if arguments[:2] == ["pip", "freeze"]:
            return UvOutcome(0, "lightgbm==4.7.0\nnumpy==2.4.6\n", "", 0.1)
        return UvOutcome(0, "", "", 0.1)


def settings(tmp_path: Path, wheelhouse: Path | None = None) -> EnvironmentSettings:
    return EnvironmentSettings(cache_dir=tmp_path / "envs", index_url=INDEX, wheelhouse=wheelhouse)


def build(tmp_path: Path, uv: FakeUv, wheelhouse: Path | None = None, declaration: Declaration | None = None):
    declaration = declaration or requirements()
    chosen = settings(tmp_path, wheelhouse)
    source = package_source(chosen.index_url, chosen.wheelhouse)
    digest = environment_digest(declaration, source, "uv 0.13.9", ("pytest==9.2.0",))
    return ensure_environment(declaration, digest, chosen, source, uv, ("pytest==9.2.0",))


def test_only_wheels_are_installed_from_the_index_named_outside_the_command_line(tmp_path: Path) -> None:
    uv = FakeUv()
    built = build(tmp_path, uv)
    install = next(args for args, _ in uv.calls if args[:2] == ["pip", "install"])
    assert install[install.index("--only-binary") + 1] == ":all:"
    assert install[-1] == "pytest==9.2.0" and "--no-index" not in install
    assert all("s3cr3t" not in " ".join(args) for args, _ in uv.calls)
    assert {extra["UV_DEFAULT_INDEX"] for _, extra in uv.calls} == {INDEX}
    assert built.root.parent == tmp_path / "envs" and not built.reused
    assert built.packages == ("lightgbm==4.7.0", "numpy==2.4.6")
    assert [p.name for p in (tmp_path / "envs").iterdir() if p.name.startswith(".building")] == []


def test_a_wheelhouse_is_offline_and_the_index_is_not_used(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    uv = FakeUv()
    build(tmp_path, uv, wheelhouse=wheels)
    install = next(args for args, _ in uv.calls if args[:2] == ["pip", "install"])
    assert install[install.index("--find-links") + 1] == str(wheels) and "--no-index" in install
    assert all("UV_DEFAULT_INDEX" not in extra for _, extra in uv.calls)


def test_the_second_build_of_a_digest_reuses_the_cache_without_running_uv(tmp_path: Path) -> None:
    first = build(tmp_path, FakeUv())
    again = FakeUv()
    second = build(tmp_path, again)
    assert again.calls == [] and second.reused and second.root == first.root
    assert second.packages == first.packages


def test_the_digest_follows_the_declaration_the_source_and_the_harness(tmp_path: Path) -> None:
    source = package_source(INDEX, None)
    base = environment_digest(requirements(), source, "uv 0.13.9")
    assert base == environment_digest(requirements(), source, "uv 0.13.9")
    assert base != environment_digest(requirements("lightgbm==4.6.0\n"), source, "uv 0.13.9")
    mirror = package_source("https://mirror.example/simple", None)
    assert base != environment_digest(requirements(), mirror, "uv 0.13.9")
    assert base != environment_digest(requirements(), source, "uv 0.13.9", ("pytest==9.2.0",))
    assert base == environment_digest(requirements(), package_source(without_credentials(INDEX), None), "uv 0.13.9")


def test_a_wheel_added_to_the_wheelhouse_changes_the_digest(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    before = environment_digest(requirements(), package_source(INDEX, wheels), "uv")
    (wheels / "numpy-2.4.6-cp311-cp311-manylinux_2_17_x86_64.whl").write_bytes(b"x")
    assert before != environment_digest(requirements(), package_source(INDEX, wheels), "uv")


def test_a_failed_resolution_carries_the_resolvers_message_without_credentials(tmp_path: Path) -> None:
    message = (
        "  x No solution found when resolving dependencies:\n"
        "  `-> Because lightgbm==99.0 has no wheels with a matching platform tag and you require lightgbm==99.0,\n"
        f"      we can conclude that your requirements are unsatisfiable. (index {INDEX})\n"
    )
    with pytest.raises(EnvironmentUnavailable) as failure:
        build(tmp_path, FakeUv(fail_install=message))
    error = failure.value
    assert error.reason == "uv pip install failed (uv exit 1)" and error.declaration == "requirements.txt"
    assert "No solution found" in error.resolver_message and "unsatisfiable" in str(error)
    assert "s3cr3t" not in str(error) and "build:" not in str(error)
    assert "https://packages.example/simple" in error.resolver_message
    leftovers = [p.name for p in (tmp_path / "envs").iterdir() if not p.name.endswith(".lock")]
    assert leftovers == []  # neither the build folder nor a half-built environment stays


def test_a_lock_is_exported_then_synced_exactly(tmp_path: Path) -> None:
    lock = Declaration(
        "uv_lock", (DeclarationFile("uv.lock", b"version = 1\n"), DeclarationFile("pyproject.toml", b"[project]\n"))
    )

    class ExportingUv(FakeUv):
        def __call__(self, arguments: Sequence[str], extra: Mapping[str, str], timeout_s: float) -> UvOutcome:
            if arguments[0] == "export":
                project = Path(arguments[arguments.index("--project") + 1])
                assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml", "uv.lock"]
                Path(arguments[arguments.index("--output-file") + 1]).write_text("numpy==2.4.6\npytest==9.2.0\n")
            return super().__call__(arguments, extra, timeout_s)

    uv = ExportingUv()
    build(tmp_path, uv, declaration=lock)
    steps = [args[:2] for args, _ in uv.calls]
    assert steps == [["venv", "--python"], ["export", "--frozen"], ["pip", "sync"], ["pip", "freeze"]]


def test_a_lock_exporting_a_path_source_is_refused(tmp_path: Path) -> None:
    lock = Declaration(
        "uv_lock", (DeclarationFile("uv.lock", b"version = 1\n"), DeclarationFile("pyproject.toml", b"[project]\n"))
    )

    class PathUv(FakeUv):
        def __call__(self, arguments: Sequence[str], extra: Mapping[str, str], timeout_s: float) -> UvOutcome:
            if arguments[0] == "export":
                Path(arguments[arguments.index("--output-file") + 1]).write_text("-e ./vendor/thing\n")
            return super().__call__(arguments, extra, timeout_s)

    uv = PathUv()
    with pytest.raises(EnvironmentUnavailable, match="not a package from the index"):
        build(tmp_path, uv, declaration=lock)
    assert not any(args[:2] == ["pip", "sync"] for args, _ in uv.calls)


def test_uv_gets_no_token_nor_modelguard_variable() -> None:
    environ = {"GITHUB_TOKEN": "t", "MODELGUARD_HOME": "/x", "UV_INDEX_URL": "https://evil.example", "HOME": "/root"}
    env = uv_environment({"UV_DEFAULT_INDEX": "https://pypi.org/simple"}, environ)
    assert env["UV_NO_CONFIG"] == "1" and env["UV_PYTHON_DOWNLOADS"] == "never"
    assert not {"GITHUB_TOKEN", "MODELGUARD_HOME", "UV_INDEX_URL"} & set(env)
