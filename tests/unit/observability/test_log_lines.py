"""A service's log lines: JSON on anything but a terminal, each naming the service and, inside an input's handling,
its incident, run, trace and span; plain text on a terminal; never a colour code."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from libs.observability.log_context import incident_log_context, set_log_context
from libs.observability.log_format import JsonLineFormatter, TextLineFormatter, formatter_for, log_format
from libs.settings import SettingsError, load_settings

REPO = Path(__file__).resolve().parents[3]

SERVICE_PROCESS = """
import asyncio, logging
from faststream.kafka import KafkaBroker
from libs.observability.logging_setup import FASTSTREAM_LOGGER, configure_logging
from libs.observability.log_context import set_log_context
from libs.settings import load_settings

configure_logging("diagnoser", load_settings().logging)
logging.getLogger("faststream").warning("faststream's own logger")
KafkaBroker("127.0.0.1:1", logger=logging.getLogger(FASTSTREAM_LOGGER))
logging.getLogger(FASTSTREAM_LOGGER).info("broker line")

async def handle():
    set_log_context("inc-123", "run-9")
    await asyncio.to_thread(lambda: logging.getLogger("modelguard.diagnoser").info("in the handler's thread"))

asyncio.run(handle())
"""


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_service_process_writes_json_lines_to_a_file(tmp_path: Path) -> None:
    log_file = tmp_path / "diagnoser.log"
    with log_file.open("wb") as out:
        subprocess.run(
            [sys.executable, "-c", SERVICE_PROCESS], cwd=REPO, stdout=out, stderr=subprocess.STDOUT, check=True
        )
    raw = log_file.read_bytes()
    assert b"\x1b[" not in raw  # no ANSI escape anywhere
    lines = [json.loads(line) for line in raw.decode().splitlines()]
    assert {line["service"] for line in lines} == {"diagnoser"}
    by_message = {line["message"]: line for line in lines}
    assert set(by_message) >= {"faststream's own logger", "broker line", "in the handler's thread"}
    handled = by_message["in the handler's thread"]
    assert (handled["incident_id"], handled["run_id"], handled["level"]) == ("inc-123", "run-9", "INFO")
    assert "incident_id" not in by_message["broker line"]


def test_the_format_follows_the_terminal_unless_the_variable_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODELGUARD_LOG_FORMAT", raising=False)
    configured = load_settings().logging.format
    assert (log_format(io.StringIO(), configured), log_format(Terminal(), configured)) == ("json", "text")
    monkeypatch.setenv("MODELGUARD_LOG_FORMAT", "text")
    assert isinstance(formatter_for("ledger", io.StringIO(), load_settings().logging.format), TextLineFormatter)
    monkeypatch.setenv("MODELGUARD_LOG_FORMAT", "JSON")
    assert isinstance(formatter_for("ledger", Terminal(), load_settings().logging.format), JsonLineFormatter)
    monkeypatch.setenv("MODELGUARD_LOG_FORMAT", "yaml")
    with pytest.raises(SettingsError, match="MODELGUARD_LOG_FORMAT must be one of json, text, got 'yaml'"):
        load_settings()


def _record(message: str) -> logging.LogRecord:
    return logging.LogRecord("modelguard.bus", logging.WARNING, __file__, 1, message, None, None)


def test_a_line_inside_a_span_names_the_trace_and_the_span() -> None:
    tracer = TracerProvider().get_tracer("test")
    with incident_log_context("inc-1", None), tracer.start_as_current_span("handle") as span:
        line = json.loads(JsonLineFormatter("context").format(_record("inside")))
        context = span.get_span_context()
    assert line["trace_id"] == f"{context.trace_id:032x}"
    assert line["span_id"] == f"{context.span_id:016x}"
    assert (line["incident_id"], line["service"]) == ("inc-1", "context")
    assert "run_id" not in line
    outside = json.loads(JsonLineFormatter("context").format(_record("outside")))
    assert {"incident_id", "trace_id", "span_id"}.isdisjoint(outside)


def test_text_lines_name_the_incident_and_run_without_colour() -> None:
    async def line() -> str:
        set_log_context("inc-7", "ci-3")
        return TextLineFormatter("publisher").format(_record("published"))

    text = asyncio.run(line())
    assert text.endswith(" publisher WARNING modelguard.bus [inc-7 ci-3]: published")
    assert "\x1b[" not in text


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("MODELGUARD_LOG_FORMAT", "yaml", "MODELGUARD_LOG_FORMAT must be one of json, text, got 'yaml'"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "udp", "OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, grpc"),
        ("MODELGUARD_STUCK_AFTER_S", "soon", "MODELGUARD_STUCK_AFTER_S must be a number, got 'soon'"),
    ],
)
def test_a_service_refuses_a_bad_setting_in_one_line(tmp_path: Path, variable: str, value: str, says: str) -> None:
    import os

    from libs.signing.keys import provision_keys

    provision_keys(["repairer"], tmp_path / "keys")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODELGUARD_", "OTEL_"))}
    env.update(MODELGUARD_HOME=str(tmp_path), MODELGUARD_KAFKA_BOOTSTRAP="127.0.0.1:1", **{variable: value})
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:1"  # the protocol is read when there is a collector
    done = subprocess.run(
        [sys.executable, "-m", "services.repairer.main"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"repairer: {says}")
    assert len(done.stderr.strip().splitlines()) == 1
