"""The error every live DataHub context provider (sdk, mcp) raises when it cannot read the context."""

from __future__ import annotations


class ContextUnavailable(Exception):
    """DataHub (GMS or the MCP server) could not be reached or answered something unusable.

    ``provider`` is the provider name ("sdk", "mcp"), ``target`` where it was talking to (a URL or a
    command, never a token), ``reason`` one line a person can act on.
    """

    def __init__(self, provider: str, target: str, reason: str) -> None:
        self.provider = provider
        self.target = target
        self.reason = reason
        super().__init__(f"{provider} provider: DataHub context unavailable from {target}: {reason}")


def describe_error(error: BaseException, limit: int = 300) -> str:
    """``TypeName: message`` cut to ``limit`` characters, for one-line error reasons."""
    text = str(error) or repr(error)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(error).__name__}: {text}"
