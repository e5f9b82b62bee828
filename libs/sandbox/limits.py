"""The sandbox policy (``libs.policy.sandbox``), read from the ``sandbox:`` section of ModelGuard's central policy
(``policy/central.yaml``). Without a mechanism that can hide ModelGuard's keys (bubblewrap), no workspace command
runs unless ``allow_unconfined`` says so.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from libs.policy.central import CentralPolicyError, installed_central_policy, read_central_policy_document
from libs.policy.sandbox import SandboxPolicy


class SandboxPolicyError(ValueError):
    """The ``sandbox`` section is not a valid sandbox policy."""


def sandbox_policy_from(section: Any, origin: str = "sandbox") -> SandboxPolicy:
    """Validate a ``sandbox`` section (a mapping; missing or empty means the defaults)."""
    if section is None:
        return SandboxPolicy()
    if not isinstance(section, dict):
        raise SandboxPolicyError(f"{origin}: the sandbox section is a mapping")
    try:
        return SandboxPolicy.model_validate(section)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise SandboxPolicyError(f"{origin}: sandbox.{where}: {first['msg']}") from exc


def read_sandbox_policy(path: Path) -> SandboxPolicy:
    """The ``sandbox`` section of the central policy file at ``path``."""
    try:
        document = read_central_policy_document(path)
    except CentralPolicyError as exc:
        raise SandboxPolicyError(str(exc)) from exc
    return sandbox_policy_from(document.get("sandbox"), str(path))


@cache
def _cached_default(path: Path, mtime_ns: int) -> SandboxPolicy:
    return read_sandbox_policy(path)


def default_sandbox_policy(path: Path | None = None) -> SandboxPolicy:
    """The central policy's sandbox section (``path``, else ``$MODELGUARD_CENTRAL_POLICY`` or
    ``policy/central.yaml``); the built-in defaults when none was named and none is installed, a CentralPolicyError
    when the one named is not there."""
    installed = installed_central_policy(path)
    if installed is None:
        return SandboxPolicy()
    return _cached_default(*installed)
