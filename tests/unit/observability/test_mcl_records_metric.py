"""modelguard_mcl_records_total is read from the intake's own counts, the ones kept with the mirror's offsets."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from services.context.intake_counts import IntakeCounts, Outcome
from services.context.mcl_metrics import MclRecordsCollector
from tests.unit.observability.scrape import value


def test_every_verdict_and_reason_is_a_series() -> None:
    counts = IntakeCounts()
    decided: list[tuple[Outcome, str]] = [
        ("applied", ""),
        ("applied", ""),
        ("skipped", "aspect-not-mirrored"),
        ("dead_lettered", "mcl-bad-magic"),
        ("dead_lettered", "mcl-bad-magic"),
        ("dead_lettered", "mcl-bad-urn"),
    ]
    for outcome, reason in decided:
        counts.add(outcome, reason)
    registry = CollectorRegistry()
    registry.register(MclRecordsCollector(lambda: counts))
    text = generate_latest(registry).decode()
    assert value(text, "modelguard_mcl_records_total", verdict="applied", reason="") == 2
    assert value(text, "modelguard_mcl_records_total", verdict="skipped", reason="aspect-not-mirrored") == 1
    assert value(text, "modelguard_mcl_records_total", verdict="dead_lettered", reason="mcl-bad-magic") == 2
    assert value(text, "modelguard_mcl_records_total", verdict="dead_lettered", reason="mcl-bad-urn") == 1
    counts.add("applied")
    assert value(generate_latest(registry).decode(), "modelguard_mcl_records_total", verdict="applied", reason="") == 3
