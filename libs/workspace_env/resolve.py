"""The environment one workspace command runs in: the one its revision declares, built or taken from the cache,
or None (ModelGuard's own interpreter) when it declares none.

The first time a process meets a digest it says in the log whether the environment was built (and how long that
took) or reused from the cache; later commands in that process reuse it silently."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from libs.sandbox.workspace_interpreter import WorkspaceInterpreter
from libs.settings import EnvironmentSettings, load_environment_settings
from libs.workspace_env.build import BuiltEnvironment, ensure_environment
from libs.workspace_env.declaration import Declaration, detect_declaration
from libs.workspace_env.digest import environment_digest, package_source
from libs.workspace_env.failure import EnvironmentUnavailable
from libs.workspace_env.harness import harness_requirements
from libs.workspace_env.uv_process import UvRunner, run_uv, uv_version

log = logging.getLogger("modelguard.environments")
_known: dict[tuple[Path, str], BuiltEnvironment] = {}
_notes: set[str] = set()
_building: dict[tuple[Path, str], threading.Lock] = {}
_guard = threading.Lock()


def declared(tree: Path) -> Declaration | None:
    """The declaration of the revision at ``tree`` (EnvironmentUnavailable when refused); a note is logged once."""
    detected = detect_declaration(tree)
    with _guard:
        first = bool(detected.note) and detected.note not in _notes
        if first:
            _notes.add(detected.note)
    if first:
        log.info("workspace environment: %s", detected.note)
    return detected.declaration


def built_environment(
    declaration: Declaration,
    settings: EnvironmentSettings | None = None,
    run: UvRunner = run_uv,
    version: str | None = None,
) -> BuiltEnvironment:
    """The environment ``declaration`` asks for, from this process's memory, the cache, or a build."""
    settings = settings or load_environment_settings()
    if settings.wheelhouse is not None and not settings.wheelhouse.is_dir():
        missing = f"the wheelhouse {settings.wheelhouse} is not a folder"
        raise EnvironmentUnavailable(missing, declaration=declaration.names)
    source = package_source(settings.index_url, settings.wheelhouse)
    # a lock's packages are known once exported: the build leaves the test runner out when the lock has it
    harness = harness_requirements(r.name for r in declaration.requirements)
    digest = environment_digest(declaration, source, version or uv_version(), harness)
    key = (settings.cache_dir, digest)
    with _guard:
        one_at_a_time = _building.setdefault(key, threading.Lock())
    # commands that run at once (the referee's two revisions) and declare the same environment: the first builds
    # it or takes it from the cache, the others wait for it and take it from memory
    with one_at_a_time:
        with _guard:
            known = _known.get(key)
        if known is not None and known.root.is_dir():
            return known
        built = ensure_environment(declaration, digest, settings, source, run, harness)
        with _guard:
            _known[key] = built
    if built.reused:
        log.info(
            "workspace environment %s (%s, %d packages) reused from the cache %s",
            digest[:12], built.declaration, len(built.packages), built.root,
        )  # fmt: skip
    else:
        log.info(
            "workspace environment %s (%s, %d packages) built by uv in %.1f s into %s",
            digest[:12], built.declaration, len(built.packages), built.build_seconds, built.root,
        )  # fmt: skip
    return built


def workspace_interpreter(tree: Path, settings: EnvironmentSettings | None = None) -> WorkspaceInterpreter | None:
    """The interpreter a command in ``tree`` runs with; None for ModelGuard's own (no declaration)."""
    declaration = declared(tree)
    if declaration is None:
        return None
    settings = settings or load_environment_settings()
    built = built_environment(declaration, settings)
    return WorkspaceInterpreter(root=built.root, cache=settings.cache_dir)
