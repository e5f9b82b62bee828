"""The ledger service's incident metrics, counted from the events its sink appends to a real store and read
back in Prometheus's text format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.registry import Collector

from libs.settings import Settings, load_settings
from services.ledger.bootstrap import bootstrap
from services.ledger.incident_metrics import INCIDENT_OUTCOMES, IncidentMetrics
from tests.support.sample_events import (
    PRODUCERS,
    START,
    SampleKeys,
    abstained_incident,
    passed_incident,
    repaired_incident,
)
from tests.unit.observability.scrape import value


@pytest.fixture
def keys() -> SampleKeys:
    return SampleKeys.generate([*PRODUCERS, "ledger"])


def _ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stuck_after_s: str = "900") -> Settings:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MODELGUARD_LEDGER_URL", raising=False)
    monkeypatch.setenv("MODELGUARD_STUCK_AFTER_S", stuck_after_s)
    return load_settings()


def _scrape(collectors: tuple[Collector, ...]) -> str:
    registry = CollectorRegistry()
    for collector in collectors:
        registry.register(collector)
    return generate_latest(registry).decode()


def test_outcomes_diagnoses_and_phase_times_from_the_appended_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: SampleKeys
) -> None:
    settings = _ledger(tmp_path, monkeypatch)
    service = bootstrap(settings, keys.keys["ledger"])
    assert service.sink is not None
    repaired, passed, abstained = (
        repaired_incident(keys, "repaired"),
        passed_incident(keys, "passed"),
        abstained_incident(keys, "abstained"),
    )
    for signed in [*repaired, *passed, *abstained, repaired[-1]]:  # the last one redelivered: appended once
        service.sink(signed)

    text = _scrape(service.collectors)
    assert value(text, "modelguard_incidents_total", outcome="repair_validated") == 1
    assert value(text, "modelguard_incidents_total", outcome="gate_passed") == 1
    assert value(text, "modelguard_incidents_total", outcome="environment_failed") == 0
    assert {o for o in INCIDENT_OUTCOMES} >= {"environment_failed", "upstream_risk", "abstained"}
    assert value(text, "modelguard_diagnoses_total", result="completed") == 1
    assert value(text, "modelguard_diagnoses_total", result="abstained") == 1
    # the samples are one second apart: every phase took exactly 1 s, each event counted once
    assert value(text, "modelguard_phase_duration_seconds_count", phase="validate") == 1
    assert value(text, "modelguard_phase_duration_seconds_sum", phase="validate") == 1.0
    assert value(text, "modelguard_phase_duration_seconds_count", phase="detect") == 3  # one per incident
    assert value(text, "modelguard_phase_duration_seconds_count", phase="publish") == 1
    # the abstained incident has no outcome yet (nothing published): unfinished, and not stuck for 900 s
    assert value(text, "modelguard_incidents_unfinished") == 1
    assert value(text, "modelguard_incidents_stuck") == 0


def test_a_ci_retry_is_not_a_second_incident(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: SampleKeys) -> None:
    settings = _ledger(tmp_path, monkeypatch)
    service = bootstrap(settings, keys.keys["ledger"])
    assert service.sink is not None
    for signed in passed_incident(keys, "twice"):
        service.sink(signed)
    retry = passed_incident(keys, "twice", start=START + timedelta(hours=1), run_id="ci-twice-retry")
    for signed in retry:
        service.sink(signed)  # a new run: new events of the same incident
    text = _scrape(service.collectors)
    assert value(text, "modelguard_incidents_total", outcome="gate_passed") == 1
    assert value(text, "modelguard_phase_duration_seconds_count", phase="detect") == 2  # each run's detection


def test_an_unfinished_incident_idle_past_the_threshold_is_stuck(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: SampleKeys
) -> None:
    settings = _ledger(tmp_path, monkeypatch, stuck_after_s="60")
    assert settings.stuck_after_s == 60
    from libs.ledger import LedgerStore

    store = LedgerStore(settings.ledger_url)
    store.create_schema()
    for signed in abstained_incident(keys, "idle"):
        store.append(signed)
    now = [datetime.now(UTC)]
    metrics = IncidentMetrics(store, settings.stuck_after_s, clock=lambda: now[0])
    assert value(_scrape(metrics.collectors), "modelguard_incidents_stuck") == 0
    now[0] += timedelta(seconds=61)
    text = _scrape(metrics.collectors)
    assert value(text, "modelguard_incidents_stuck") == 1
    assert value(text, "modelguard_incidents_unfinished") == 1


def test_a_bad_stuck_threshold_is_one_readable_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from libs.settings import SettingsError

    monkeypatch.setenv("MODELGUARD_STUCK_AFTER_S", "soon")
    with pytest.raises(SettingsError, match="MODELGUARD_STUCK_AFTER_S must be a number, got 'soon'"):
        load_settings()
