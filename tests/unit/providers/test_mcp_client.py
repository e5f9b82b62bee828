"""Parsing MCP tool answers and describing MCP server targets."""

from __future__ import annotations

import json

import pytest
from mcp.types import CallToolResult, TextContent

from libs.datahub.mcp_client import McpServerTarget, McpToolError, parse_tool_answer
from tests.unit.providers.provider_test_support import TOKEN


def _text(*texts: str, structured: dict | None = None, error: bool = False) -> CallToolResult:
    blocks = [TextContent(type="text", text=text) for text in texts]
    return CallToolResult(content=blocks, structured_content=structured, is_error=error)


def test_one_json_text_block_is_the_answer() -> None:
    assert parse_tool_answer("get_entities", _text(json.dumps([{"urn": "urn:li:x:1"}]))) == [{"urn": "urn:li:x:1"}]


def test_structured_content_wrapping_a_list_is_unwrapped() -> None:
    answer = _text(structured={"result": [{"urn": "urn:li:x:1"}]})

    assert parse_tool_answer("get_entities", answer) == [{"urn": "urn:li:x:1"}]


def test_one_block_per_list_item_is_read_as_a_list() -> None:
    answer = _text(json.dumps({"urn": "urn:li:x:1"}), json.dumps({"urn": "urn:li:x:2"}))

    assert parse_tool_answer("get_entities", answer) == [{"urn": "urn:li:x:1"}, {"urn": "urn:li:x:2"}]


def test_a_tool_error_keeps_the_server_message() -> None:
    with pytest.raises(McpToolError, match="Entity urn:li:x:1 not found"):
        parse_tool_answer("get_entities", _text("Entity urn:li:x:1 not found", error=True))


def test_a_target_needs_exactly_one_transport() -> None:
    with pytest.raises(ValueError):
        McpServerTarget()
    with pytest.raises(ValueError):
        McpServerTarget(url="http://127.0.0.1:1/mcp", command=("mcp-server-datahub",))


def test_a_target_never_shows_its_token() -> None:
    target = McpServerTarget(url="http://127.0.0.1:1/mcp", token=TOKEN)

    assert TOKEN not in repr(target) and TOKEN not in target.describe()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('[{"urn": "urn:li:x:1", "rows": NaN}]', "not valid JSON"),
        ('{"rows": Infinity}', "not valid JSON"),
        ('{"rows": 1e999}', "too large for a float"),
    ],
)
def test_a_text_answer_with_a_number_json_cannot_carry_is_refused_with_its_reason(text: str, why: str) -> None:
    """Such a number would fail only later, when the context event is signed; the tool call names it instead."""
    with pytest.raises(McpToolError, match=why):
        parse_tool_answer("get_entities", _text(text))


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_structured_answer_with_a_number_json_cannot_carry_is_refused(value: float) -> None:
    answer = _text("not json", structured={"result": [{"urn": "urn:li:x:1", "rows": value}]})

    with pytest.raises(McpToolError, match="cannot be written as JSON"):
        parse_tool_answer("get_entities", answer)


def test_finite_numbers_still_read() -> None:
    answer = _text(json.dumps({"rows": 1.5e300, "tiny": 5e-324, "count": 2**70}))

    assert parse_tool_answer("get_entities", answer) == {"rows": 1.5e300, "tiny": 5e-324, "count": 2**70}
