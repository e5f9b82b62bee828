"""McpContextProvider: the port, and what it says when the MCP server cannot answer."""

from __future__ import annotations

import socket
import sys

import pytest

from libs.datahub.mcp_client import McpServerTarget
from libs.datahub.mcp_provider import McpContextProvider
from libs.datahub.provider import ContextProvider
from libs.datahub.sdk_errors import ContextUnavailable
from tests.support.fake_mcp_server import serving_http
from tests.unit.providers.provider_test_support import FETCHED_AT, MODEL, TOKEN


def _unused_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/mcp"


def test_the_provider_implements_the_context_provider_port() -> None:
    provider = McpContextProvider(McpServerTarget(url="http://127.0.0.1:1/mcp"))

    assert isinstance(provider, ContextProvider)
    assert provider.name == "mcp"


def test_an_unreachable_server_raises_context_unavailable_without_the_token() -> None:
    url = _unused_url()

    with pytest.raises(ContextUnavailable) as raised:
        McpContextProvider(McpServerTarget(url=url, token=TOKEN, timeout_sec=5)).collect(MODEL, FETCHED_AT)

    assert raised.value.provider == "mcp" and raised.value.target == url
    assert "Connect" in raised.value.reason
    assert TOKEN not in str(raised.value)


def test_a_stdio_command_that_is_not_an_mcp_server_raises_context_unavailable() -> None:
    target = McpServerTarget(command=(sys.executable, "-c", "pass"), timeout_sec=5)

    with pytest.raises(ContextUnavailable) as raised:
        McpContextProvider(target).collect(MODEL, FETCHED_AT)

    assert raised.value.target.startswith("stdio: ")


def test_a_server_without_the_lineage_tool_is_reported() -> None:
    with serving_http(tools=("search", "get_entities")) as url, pytest.raises(ContextUnavailable) as raised:
        McpContextProvider(McpServerTarget(url=url)).collect(MODEL, FETCHED_AT)

    assert "lacks the tools get_lineage" in raised.value.reason


def test_missing_optional_tools_become_warnings() -> None:
    with serving_http(tools=("search", "get_entities", "get_lineage")) as url:
        snapshot = McpContextProvider(McpServerTarget(url=url)).collect(MODEL, FETCHED_AT)

    assert snapshot.assertions == () and snapshot.schema_fields == ()
    assert any("no get_dataset_assertions tool" in w for w in snapshot.warnings)
    assert any("no get_aspect_history tool" in w for w in snapshot.warnings)
    assert {o.entity_urn for o in snapshot.owners} >= {MODEL}
