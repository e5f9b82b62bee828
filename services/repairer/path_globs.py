"""Glob matching on relative POSIX paths; the implementation is the patch guard's (``libs/patch_guard``)."""

from __future__ import annotations

from libs.patch_guard.globs import matches_any, matches_glob

__all__ = ["matches_any", "matches_glob"]
