"""Talk to the DataHub MCP server (``mcp-server-datahub``) with the ``mcp`` client library.

Two transports: streamable HTTP (``McpServerTarget(url=...)``; a token goes in ``Authorization: Bearer``)
and stdio (``McpServerTarget(command=(...))``; a token goes to the server process as
``DATAHUB_GMS_TOKEN``). Tool answers are parsed from the JSON text block FastMCP sends (or from the
structured content); a tool error becomes :class:`McpToolError`, a transport failure
:class:`~libs.datahub.sdk_errors.ContextUnavailable`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import copy_context
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from libs.canonical_json import canonical_bytes, strict_loads

MCP_PROVIDER = "mcp"
_T = TypeVar("_T")


class McpToolError(Exception):
    """A tool answered with ``isError`` (the server's message is kept)."""

    def __init__(self, tool: str, message: str) -> None:
        self.tool = tool
        self.message = message
        super().__init__(f"tool {tool} failed: {message}")


@dataclass(frozen=True)
class McpServerTarget:
    """Where the MCP server is: a streamable HTTP ``url`` or a stdio ``command``. Never prints the token."""

    url: str | None = None
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    token: str | None = field(default=None, repr=False)
    timeout_sec: float = 30.0

    def __post_init__(self) -> None:
        if (self.url is None) == (not self.command):
            raise ValueError("an MCP server target needs exactly one of url (streamable HTTP) or command (stdio)")

    def describe(self) -> str:
        return self.url if self.url is not None else "stdio: " + " ".join(self.command)

    def connect(self) -> AbstractAsyncContextManager[Any]:
        if self.url is not None:
            return _http_transport(self.url, self.token, self.timeout_sec)
        env = dict(self.env)
        if self.token:
            env["DATAHUB_GMS_TOKEN"] = self.token
        command, *args = self.command
        return _StdioTarget(StdioServerParameters(command=command, args=args, env=env or None, cwd=self.cwd))


@dataclass(frozen=True)
class _StdioTarget:
    parameters: StdioServerParameters

    async def __aenter__(self) -> StdioServerParameters:
        return self.parameters

    async def __aexit__(self, *exc: object) -> None:
        return None


@asynccontextmanager
async def _http_transport(url: str, token: str | None, timeout_sec: float) -> AsyncIterator[Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    timeout = httpx2.Timeout(timeout_sec)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http_client:
        yield streamable_http_client(url, http_client=http_client)


class McpToolSession:
    """One open connection: the tools the server lists, and ``call`` that returns parsed JSON."""

    def __init__(self, client: Client, tool_names: frozenset[str], timeout_sec: float) -> None:
        self._client = client
        self.tool_names = tool_names
        self._timeout_sec = timeout_sec

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """One tool call, as a span of the current trace (the MCP SDK's ``httpx2`` has no instrumentation)."""
        tracer = trace.get_tracer("modelguard.datahub")
        attributes = {"rpc.system": "mcp", "rpc.method": tool}
        with tracer.start_as_current_span(f"datahub mcp {tool}", kind=SpanKind.CLIENT, attributes=attributes):
            result = await self._client.call_tool(tool, arguments, read_timeout_seconds=self._timeout_sec)
            return parse_tool_answer(tool, result)


@asynccontextmanager
async def open_session(target: McpServerTarget) -> AsyncIterator[McpToolSession]:
    async with target.connect() as server, Client(server, read_timeout_seconds=target.timeout_sec) as client:
        listed = await client.list_tools()
        yield McpToolSession(client, frozenset(tool.name for tool in listed.tools), target.timeout_sec)


def parse_tool_answer(tool: str, result: CallToolResult) -> Any:
    """The tool's answer: its one JSON text block, else its structured content, else one JSON value per text block.
    Read strictly, as every document that goes into a signed event is: NaN, Infinity and numbers too large for a
    float are refused here, with their reason, rather than when the context event is sealed."""
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    if result.is_error:
        raise McpToolError(tool, " ".join(texts) or "no message")
    if len(texts) == 1:
        try:
            return strict_loads(texts[0])
        except ValueError:
            pass  # the structured content answers, if there is one
    structured = result.structured_content
    if isinstance(structured, dict):
        return _writable(tool, structured["result"] if set(structured) == {"result"} else structured)
    try:
        return [strict_loads(text) for text in texts]
    except ValueError as error:
        raise McpToolError(tool, f"the answer is not JSON: {str(error)[:200]}") from None


def _writable(tool: str, answer: Any) -> Any:
    """`answer` when canonical JSON can write it (the MCP library parsed it, and may have read Infinity)."""
    try:
        canonical_bytes(answer)
    except (ValueError, TypeError) as error:
        raise McpToolError(tool, f"the structured answer cannot be written as JSON: {str(error)[:200]}") from None
    return answer


def run_blocking(work: Callable[[], Awaitable[_T]]) -> _T:
    """Run async ``work`` to completion from sync code, also when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(work)

    def run_in_new_loop() -> _T:
        return anyio.run(work)

    # Context.run(anyio.run, work) is not written out directly: mypy 2.4 crashes (NotImplementedError in
    # expand_type) solving Context.run's ParamSpec against anyio.run's TypeVarTuple (*args: Unpack[PosArgsT]).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-client") as pool:  # in this thread's context, so
        return pool.submit(copy_context().run, run_in_new_loop).result()  # its HTTP spans join the caller's trace
