"""Whether this runner can run workspace commands: bubblewrap starts here with the view and uid a command gets
(``libs.sandbox.run.require_sandbox`` under the central policy's sandbox section). Probed once at start; a runner
without a sandbox stays up to say why (``/readyz`` answers 503 with the refusal) and refuses every command."""

from __future__ import annotations

from libs.sandbox.isolation import SandboxUnavailable
from libs.sandbox.limits import SandboxPolicyError, default_sandbox_policy
from libs.sandbox.run import require_sandbox


def sandbox_readiness() -> str | None:
    """None when commands can run here, else the one-line refusal."""
    try:
        require_sandbox(default_sandbox_policy())
    except (SandboxUnavailable, SandboxPolicyError) as error:
        return str(error)
    return None


def describe() -> str:
    """What a command gets here, for the start-up log line."""
    try:
        isolation = require_sandbox(default_sandbox_policy())
    except (SandboxUnavailable, SandboxPolicyError) as error:
        return str(error)
    return f"{isolation.mechanism}: {isolation.network_status()}"
