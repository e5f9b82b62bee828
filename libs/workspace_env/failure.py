"""Why a workspace's environment could not be had: a declaration ModelGuard refuses, or a build that failed.

A ``CommandNotAllowed``: wherever a command that cannot run is handled (a failed evaluation in the diagnoser, a
failed check in the validator) this is handled too; the detector's referee turns it into the incident's
``EnvironmentFailed`` event (outcome ``environment_failed``), never a dead letter."""

from __future__ import annotations

from libs.sandbox.process import CommandNotAllowed

MESSAGE_CHARS = 1500


def trimmed(text: str, limit: int = MESSAGE_CHARS) -> str:
    """The last ``limit`` characters of ``text`` (a resolver's message ends with what went wrong), whitespace
    collapsed onto single lines."""
    lines = [" ".join(line.split()) for line in text.strip().splitlines()]
    joined = "\n".join(line for line in lines if line)
    return joined if len(joined) <= limit else "…" + joined[-limit:]


class EnvironmentUnavailable(CommandNotAllowed):
    def __init__(self, reason: str, *, declaration: str = "", digest: str = "", resolver_message: str = "") -> None:
        self.reason = reason
        self.declaration = declaration
        """The declaration files, as ``uv.lock + pyproject.toml`` or ``requirements.txt``; empty when none was read."""
        self.digest = digest
        self.resolver_message = trimmed(resolver_message)
        detail = f": {self.resolver_message}" if self.resolver_message else ""
        super().__init__(f"the workspace environment could not be built: {reason}{detail}")
