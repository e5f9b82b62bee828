"""Where the demo's stack lives: ``MODELGUARD_HOME`` when the operator set it (so that ``incidents list`` and the
audit commands find the demo's ledger there afterwards), else ``OUT/stack``, emptied first as before. A home the
operator named is never emptied: one already used is refused."""

from __future__ import annotations

import os
from pathlib import Path


class UsedHome(ValueError):
    """MODELGUARD_HOME names a folder that holds something already."""


def default_home(out_dir: Path) -> Path:
    return (out_dir / "stack").resolve()


def demo_home(out_dir: Path) -> Path:
    """The home to run the demo in; UsedHome (one line) when MODELGUARD_HOME names a folder that is not empty."""
    configured = os.environ.get("MODELGUARD_HOME", "").strip()
    if not configured:
        return default_home(out_dir)
    home = Path(configured).resolve()
    if home.exists() and not home.is_dir():
        raise UsedHome(f"MODELGUARD_HOME={home} is not a folder")
    held = sorted(p.name for p in home.iterdir()) if home.is_dir() else []
    if held:
        shown = ", ".join(held[:4]) + (", …" if len(held) > 4 else "")
        raise UsedHome(
            f"MODELGUARD_HOME={home} has been used already (it holds {shown}); the demo needs a fresh home: "
            "set MODELGUARD_HOME to a new folder, or unset it to use OUT/stack"
        )
    return home
