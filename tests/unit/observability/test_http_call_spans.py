"""Outgoing HTTP calls (httpx for GitHub and the MCP server, requests for the DataHub SDK) are spans of the
current trace and carry its traceparent to the server. In a process of its own, since instrumenting is global."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from libs.telemetry import incident_trace_id
from tests.support.loopback_http import LoopbackServer, Reply, Request

REPO = Path(__file__).resolve().parents[3]

PROCESS = """
import sys
from pathlib import Path
import httpx, requests
from libs.observability.settings import TelemetrySettings
from libs.telemetry import incident_context, service_telemetry

telemetry = service_telemetry("publisher", Path(sys.argv[1]), TelemetrySettings())
telemetry.install()
telemetry.install()  # a second install is harmless
tracer = telemetry.tracer_provider.get_tracer("test")
with tracer.start_as_current_span("handle RepairValidated", context=incident_context("inc-http")):
    httpx.get(sys.argv[2] + "/repos/example/model")
    requests.get(sys.argv[2] + "/openapi/v2/entity", timeout=10)
telemetry.shutdown()
"""


class Recorder(LoopbackServer):
    def route(self, request: Request) -> Reply:
        return Reply(200, {})


def test_httpx_and_requests_calls_are_child_spans_that_propagate_the_trace(tmp_path: Path) -> None:
    trace_file = tmp_path / "traces.jsonl"
    with Recorder() as server:
        subprocess.run([sys.executable, "-c", PROCESS, str(trace_file), server.base_url], cwd=REPO, check=True)
        requests = list(server.requests)
    spans = [json.loads(line) for line in trace_file.read_text().splitlines()]
    [handler] = [s for s in spans if s["name"] == "handle RepairValidated"]
    calls = [s for s in spans if s["name"] == "GET"]
    assert len(calls) == 2
    assert {s["parent_span_id"] for s in calls} == {handler["span_id"]}
    assert {s["trace_id"] for s in calls} == {incident_trace_id("inc-http")}
    assert [r.headers.get("traceparent", "").split("-")[1] for r in requests] == [incident_trace_id("inc-http")] * 2


MCP_PROCESS = """
import asyncio, sys
from pathlib import Path
from mcp.types import CallToolResult, TextContent
from libs.datahub.mcp_client import McpToolSession
from libs.observability.settings import TelemetrySettings
from libs.telemetry import incident_context, service_telemetry

class Client:
    async def call_tool(self, tool, arguments, read_timeout_seconds):
        return CallToolResult(content=[TextContent(type="text", text='[{"urn": "urn:li:x:1"}]')], is_error=False)

telemetry = service_telemetry("context", Path(sys.argv[1]), TelemetrySettings())
telemetry.install()
with telemetry.tracer_provider.get_tracer("test").start_as_current_span(
    "handle RegressionDetected", context=incident_context("inc-mcp")
):
    answer = asyncio.run(McpToolSession(Client(), frozenset({"get_entities"}), 5.0).call("get_entities", {}))
assert answer == [{"urn": "urn:li:x:1"}]
telemetry.shutdown()
"""


def test_each_datahub_mcp_tool_call_is_a_span_of_the_current_trace(tmp_path: Path) -> None:
    trace_file = tmp_path / "traces.jsonl"
    subprocess.run([sys.executable, "-c", MCP_PROCESS, str(trace_file)], cwd=REPO, check=True)
    spans = {s["name"]: s for s in (json.loads(line) for line in trace_file.read_text().splitlines())}
    call, handler = spans["datahub mcp get_entities"], spans["handle RegressionDetected"]
    assert call["parent_span_id"] == handler["span_id"]
    assert call["trace_id"] == incident_trace_id("inc-mcp")
    assert call["attributes"]["rpc.method"] == "get_entities"
