"""`modelguard bench environment`: how long a workspace environment takes to have, on the public bundle whose model
needs lightgbm (fixtures/repos/hotel-cancellation-lightgbm): built cold with nothing cached (uv downloads every
wheel from the configured index, or takes it from the wheelhouse), built cold with the wheels in uv's download
cache, and taken from the environment cache. Every figure is a real build with uv in a folder of its own."""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from pathlib import Path

from libs.settings import load_environment_settings
from libs.workspace_env.build import ensure_environment
from libs.workspace_env.declaration import detect_declaration
from libs.workspace_env.digest import environment_digest, package_source
from libs.workspace_env.harness import harness_requirements
from libs.workspace_env.uv_process import run_uv, uv_version
from modelguard.stack import REPO_ROOT

BUNDLE = REPO_ROOT / "fixtures" / "repos" / "hotel-cancellation-lightgbm"


def run_environment_bench(as_json: bool = False) -> int:
    declaration = detect_declaration(BUNDLE / "workspace" / "base").declaration
    if declaration is None:
        raise RuntimeError(f"{BUNDLE.name} declares no environment: nothing to bench")
    configured = load_environment_settings()
    source = package_source(configured.index_url, configured.wheelhouse)
    harness = harness_requirements(r.name for r in declaration.requirements)
    digest = environment_digest(declaration, source, uv_version(), harness)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="modelguard-bench-env-") as folder:
        empty = dataclasses.replace(configured, cache_dir=Path(folder) / "cold", uv_cache_dir=Path(folder) / "uv")
        warm = dataclasses.replace(configured, cache_dir=Path(folder) / "warm")
        for name, settings in (("cold_nothing_cached_s", empty), ("cold_uv_cache_s", warm), ("cached_s", warm)):
            started = time.monotonic()
            built = ensure_environment(declaration, digest, settings, source, run_uv, harness)
            figures[name] = round(time.monotonic() - started, 3)
            if built.reused != (name == "cached_s"):
                raise RuntimeError(f"{name}: the environment was {'reused' if built.reused else 'built'}")
    where = f"wheelhouse {configured.wheelhouse}" if configured.wheelhouse else "the package index"
    if as_json:
        print(json.dumps({"bundle": BUNDLE.name, "packages": len(built.packages), **figures}))
        return 0
    print(f"workspace environment of {BUNDLE.name} ({declaration.names}, {len(built.packages)} packages, {where}):")
    print(f"  cold, nothing cached (every wheel fetched): {figures['cold_nothing_cached_s']:.2f} s")
    print(f"  cold, wheels in uv's download cache:        {figures['cold_uv_cache_s']:.2f} s")
    print(f"  cached (the environment reused):            {figures['cached_s'] * 1000:.1f} ms")
    return 0
