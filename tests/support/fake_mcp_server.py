"""A loopback DataHub MCP server: the tool names and answer shapes of ``mcp-server-datahub`` 0.8.

Built with the ``mcp`` SDK's server side (``MCPServer``); serves the CHURN scenario's metadata (loaded
with :func:`libs.datahub.mcp_file.load_mcp_file`) over streamable HTTP on 127.0.0.1
(:func:`serving_http`) or over stdio (``python -m tests.support.fake_mcp_server``).

This module holds the runners; the rest is split by responsibility, and re-exported here:

- :mod:`tests.support.fake_mcp_tools`: :func:`build_server` (the tool registrations, :data:`TOOL_NAMES`,
  :data:`CHURN_METADATA`), the search, entity, schema and lineage tool bodies, and the list of tools and
  what each answers;
- :mod:`tests.support.fake_mcp_governance`: the ``get_aspect_history`` and ``get_dataset_assertions`` bodies;
- :mod:`tests.support.fake_mcp_answers`: the ``GetEntity`` shapes of each entity type and the answer cleaning.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from tests.support.fake_mcp_answers import GRAPHQL_TYPES, EntityShapes, clean
from tests.support.fake_mcp_governance import ASPECT_HISTORY_ALLOWLIST
from tests.support.fake_mcp_tools import CHURN_METADATA, TOOL_NAMES, FakeDataHubTools, build_server

__all__ = [
    "ASPECT_HISTORY_ALLOWLIST",
    "CHURN_METADATA",
    "GRAPHQL_TYPES",
    "TOOL_NAMES",
    "EntityShapes",
    "FakeDataHubTools",
    "build_server",
    "clean",
    "main",
    "serving_http",
]


@contextlib.contextmanager
def serving_http(metadata: Path = CHURN_METADATA, tools: tuple[str, ...] = TOOL_NAMES) -> Iterator[str]:
    """Serve streamable HTTP on 127.0.0.1 in a thread; yields the endpoint URL (``.../mcp``)."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = build_server(metadata, tools).streamable_http_app(host="127.0.0.1")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="fake-mcp-http", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the fake MCP server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description="Fake DataHub MCP server (mcp-server-datahub 0.8 tool shapes)")
    parser.add_argument("--metadata", type=Path, default=CHURN_METADATA)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    server = build_server(args.metadata)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
