"""Build a declared environment with uv, once per digest: ``uv venv`` on ModelGuard's base interpreter (no
system site packages: the command imports what the workspace declared, and the standard library), then the
declared packages, wheels only, from the configured index or the offline wheelhouse, copied (not linked) into
the environment so that it does not depend on uv's cache. A lock is first exported by ``uv export --frozen`` from
a folder holding only ``pyproject.toml`` and ``uv.lock`` (no code of the workspace), and installed exactly
(``uv pip sync``), then the harness (``libs/workspace_env/harness.py``) constrained to the locked versions; a
requirements file is installed with the harness and what they need in one resolution (``uv pip install``). The
environment's record lists every package installed."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from libs.settings import EnvironmentSettings
from libs.workspace_env.cache import EnvironmentCache
from libs.workspace_env.declaration import LOCK, PROJECT, REQUIREMENTS, Declaration
from libs.workspace_env.digest import PackageSource, without_credentials
from libs.workspace_env.failure import EnvironmentUnavailable
from libs.workspace_env.requirement_lines import Requirement, RequirementRefused, pinned_requirements
from libs.workspace_env.uv_process import UvOutcome, UvRunner

log = logging.getLogger("modelguard.environments")
ONLY_WHEELS = ("--only-binary", ":all:")


@dataclass(frozen=True)
class BuiltEnvironment:
    root: Path
    digest: str
    declaration: str
    packages: tuple[str, ...]
    """``name==version`` of every package installed."""
    build_seconds: float
    reused: bool
    """True when the environment came from the cache."""


class _Build:
    """The uv steps of one build, with the settings and the runner they share."""

    def __init__(self, settings: EnvironmentSettings, source: PackageSource, run_uv: UvRunner, digest: str) -> None:
        self.settings = settings
        self.source = source
        self.run_uv = run_uv
        self.digest = digest
        self.deadline = time.monotonic() + settings.build_timeout_s
        self.extra = {"UV_DEFAULT_INDEX": settings.index_url} if settings.wheelhouse is None else {}
        if settings.uv_cache_dir is not None:
            self.extra["UV_CACHE_DIR"] = str(settings.uv_cache_dir)

    def redacted(self, text: str) -> str:
        """``text`` without the index URL's credentials, however uv printed them."""
        parts = urlsplit(self.settings.index_url)
        text = text.replace(self.settings.index_url, without_credentials(self.settings.index_url))
        for secret in (parts.password, parts.username):
            if secret:
                text = text.replace(secret, "***")
        return text

    def uv(self, step: str, arguments: Sequence[str], declaration: str) -> UvOutcome:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise self.failed(f"{step}: the build ran out of its {self.settings.build_timeout_s:.0f} s", declaration)
        done = self.run_uv(arguments, self.extra, remaining)
        if done.timed_out:
            raise self.failed(
                f"{step} did not finish within the build's {self.settings.build_timeout_s:.0f} s",
                declaration,
                done.stderr,
            )
        if done.returncode != 0:
            raise self.failed(f"{step} failed (uv exit {done.returncode})", declaration, done.stderr or done.stdout)
        return done

    def failed(self, reason: str, declaration: str, message: str = "") -> EnvironmentUnavailable:
        return EnvironmentUnavailable(
            reason, declaration=declaration, digest=self.digest, resolver_message=self.redacted(message)
        )

    def source_arguments(self) -> list[str]:
        if self.settings.wheelhouse is not None:
            return ["--no-index", "--find-links", str(self.settings.wheelhouse)]
        return []

    def install_arguments(self, python: Path) -> list[str]:
        return ["--python", str(python), *ONLY_WHEELS, "--link-mode", "copy", "--no-progress", *self.source_arguments()]


def _exported_lock(build: _Build, declaration: Declaration, folder: Path) -> tuple[Path, list[Requirement]]:
    project = folder / "project"
    project.mkdir()
    for name in (PROJECT, LOCK):
        (project / name).write_bytes(declaration.file(name).content)
    exported = folder / "locked-requirements.txt"
    build.uv(
        "uv export of uv.lock",
        [
            "export",
            "--frozen",
            "--no-emit-project",
            "--no-emit-workspace",
            "--no-hashes",
            "--format",
            "requirements-txt",
            "--project",
            str(project),
            "--output-file",
            str(exported),
            "--quiet",
        ],
        declaration.names,
    )
    try:
        locked = pinned_requirements(exported.read_text(), f"the packages {LOCK} pins")
    except (OSError, RequirementRefused) as error:
        raise build.failed(str(error), declaration.names) from error
    return exported, locked


def build_into(
    build: _Build, declaration: Declaration, folder: Path, harness: tuple[str, ...]
) -> tuple[Path, tuple[str, ...]]:
    """The environment built in ``folder / "env"`` and the packages installed in it."""
    environment = folder / "env"
    base = os.path.realpath(sys.executable)
    build.uv(
        "uv venv",
        ["venv", "--python", base, "--relocatable", "--no-project", "--quiet", str(environment)],
        declaration.names,
    )
    python = environment / "bin" / "python"
    if declaration.kind == "uv_lock":
        exported, locked = _exported_lock(build, declaration, folder)
        build.uv("uv pip sync", ["pip", "sync", *build.install_arguments(python), str(exported)], declaration.names)
        wanted = [line for line in harness if line.split("==")[0] not in {r.name for r in locked}]
        if wanted:
            arguments = ["pip", "install", *build.install_arguments(python), "--constraint", str(exported), *wanted]
            build.uv("uv pip install of the test runner", arguments, declaration.names)
    else:
        requirements = folder / REQUIREMENTS
        requirements.write_bytes(declaration.file(REQUIREMENTS).content)
        build.uv(
            "uv pip install",
            ["pip", "install", *build.install_arguments(python), "-r", str(requirements), *harness],
            declaration.names,
        )
    frozen = build.uv("uv pip freeze", ["pip", "freeze", "--python", str(python)], declaration.names)
    packages = tuple(sorted(line.strip() for line in frozen.stdout.splitlines() if line.strip()))
    return environment, packages


def ensure_environment(
    declaration: Declaration,
    digest: str,
    settings: EnvironmentSettings,
    source: PackageSource,
    run_uv: UvRunner,
    harness: tuple[str, ...] = (),
) -> BuiltEnvironment:
    """The environment ``digest`` from the cache, or built now (under the digest's lock; a process that waited for
    another's build reuses it). EnvironmentUnavailable with the resolver's message when uv fails."""
    cache = EnvironmentCache(settings.cache_dir)
    started = time.monotonic()
    with cache.locked(digest, settings.build_timeout_s):
        record = cache.record(digest)
        if record is not None:
            return _from_record(cache.root(digest), digest, record, reused=True)
        build = _Build(settings, source, run_uv, digest)
        with cache.build_folder(digest) as folder:
            environment, packages = build_into(build, declaration, folder, harness)
            seconds = round(time.monotonic() - started, 3)
            record = {
                "declaration": declaration.names,
                "files": {file.name: file.sha256 for file in declaration.files},
                "packages": list(packages),
                "harness": list(harness),
                "build_seconds": seconds,
                "built_at": datetime.now(UTC).isoformat(),
                "source": without_credentials(settings.index_url)
                if settings.wheelhouse is None
                else f"wheelhouse {settings.wheelhouse}",
            }
            root = cache.publish(environment, digest, record)
    return _from_record(root, digest, record, reused=False)


def _from_record(root: Path, digest: str, record: dict[str, Any], *, reused: bool) -> BuiltEnvironment:
    return BuiltEnvironment(
        root=root,
        digest=digest,
        declaration=str(record.get("declaration", "")),
        packages=tuple(str(p) for p in record.get("packages", [])),
        build_seconds=float(record.get("build_seconds", 0.0)),
        reused=reused,
    )
