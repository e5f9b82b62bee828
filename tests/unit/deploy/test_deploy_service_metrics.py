"""A service's metrics reach the metrics file: events in, out, dead-lettered, and handler latency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from libs.bus.service_metrics import (
    EVENTS_DEAD_LETTERED,
    EVENTS_IN,
    EVENTS_OUT,
    HANDLER_DURATION,
    ServiceMetrics,
)
from libs.settings import load_settings
from libs.telemetry import meter_provider, metrics_file


def test_counts_and_latency_are_exported_per_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODELGUARD_METRICS_FILE", raising=False)
    trace_file = tmp_path / "traces.jsonl"
    telemetry = load_settings().telemetry
    provider = meter_provider("validator", trace_file, telemetry)
    metrics = ServiceMetrics(provider.get_meter("test"))

    for _ in range(3):
        metrics.received("modelguard.repair-proposed.v1")
    metrics.published("RepairValidated")
    metrics.dead_lettered("bad-signature")
    metrics.handled("RepairProposed", 0.25, "ok")
    metrics.handled("RepairProposed", 0.75, "ok")
    provider.shutdown()  # the last export happens at shutdown

    file = metrics_file(trace_file, telemetry)
    assert file == tmp_path / "metrics.jsonl"
    points = [json.loads(line) for line in file.read_text().splitlines()]
    by_name = {p["name"]: p for p in points}
    assert {p["service"] for p in points} == {"modelguard-validator"}
    assert by_name[EVENTS_IN]["value"] == 3
    assert by_name[EVENTS_IN]["attributes"] == {"topic": "modelguard.repair-proposed.v1"}
    assert by_name[EVENTS_OUT]["attributes"] == {"event_type": "RepairValidated"}
    assert by_name[EVENTS_DEAD_LETTERED]["attributes"] == {"reason": "bad-signature"}
    latency = by_name[HANDLER_DURATION]
    assert (latency["count"], latency["sum"], latency["max"]) == (2, 1.0, 0.75)
