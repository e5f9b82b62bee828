"""The bench probes the broker's share of a hop at the fetch wait the services got: the stack's short one on its own
broker, the variable's when set, the settings' on someone else's Kafka; by a doorbell on its own broker, as the
services take their inputs there, unless doorbells are switched off; and a probe that fails is a line, not a failed
bench."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from libs.settings import DOORBELLS_ENV, EMBEDDED_FETCH_MAX_WAIT_MS, FETCH_MAX_WAIT_ENV, load_settings
from modelguard import bench
from modelguard.bus_hop_probe import HopLatencies, ProbeFailed


@pytest.fixture
def probed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, int, Path | None]]:
    calls: list[tuple[Any, int, Path | None]] = []

    async def probe(target: Any, fetch_wait_ms: int, doorbells: Path | None = None) -> HopLatencies:
        calls.append((target, fetch_wait_ms, doorbells))
        return HopLatencies(fetch_wait_ms, [0.01, 0.02], rung=doorbells is not None)

    monkeypatch.setattr(bench, "hop_latencies", probe)
    return calls


@pytest.mark.parametrize(
    ("environment", "expected_wait"),
    [
        ({}, EMBEDDED_FETCH_MAX_WAIT_MS),
        ({FETCH_MAX_WAIT_ENV: "35"}, 35),
        ({"MODELGUARD_KAFKA_BOOTSTRAP": "kafka:9092"}, 500),
        ({"MODELGUARD_KAFKA_BOOTSTRAP": "kafka:9092", FETCH_MAX_WAIT_ENV: "70"}, 70),
    ],
)
def test_the_probe_waits_as_the_services_do(
    environment: dict[str, str],
    expected_wait: int,
    probed: list[tuple[Any, int, Path | None]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    for name in (FETCH_MAX_WAIT_ENV, "MODELGUARD_KAFKA_BOOTSTRAP", DOORBELLS_ENV):
        monkeypatch.delenv(name, raising=False)
    for name, value in {**environment, "MODELGUARD_HOME": str(tmp_path)}.items():
        monkeypatch.setenv(name, value)

    hop = bench._broker_hop("127.0.0.1:9", load_settings())

    assert isinstance(hop, HopLatencies) and hop.fetch_wait_ms == expected_wait
    assert [wait for _, wait, _ in probed] == [expected_wait]
    on_its_own_broker = "MODELGUARD_KAFKA_BOOTSTRAP" not in environment
    assert [bells for _, _, bells in probed] == [tmp_path / "run" / "doorbells" if on_its_own_broker else None]
    assert hop.rung == on_its_own_broker


def test_with_doorbells_switched_off_the_probe_waits_on_the_broker(
    probed: list[tuple[Any, int, Path | None]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("MODELGUARD_KAFKA_BOOTSTRAP", raising=False)
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.setenv(DOORBELLS_ENV, "")

    bench._broker_hop("127.0.0.1:9", load_settings())

    assert [bells for _, _, bells in probed] == [None]


def test_a_failed_probe_is_a_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async def failing(target: Any, fetch_wait_ms: int, doorbells: Path | None = None) -> HopLatencies:
        raise ProbeFailed("the probe's record b'3' did not come back within 6 s")

    monkeypatch.setattr(bench, "hop_latencies", failing)
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.delenv("MODELGUARD_KAFKA_BOOTSTRAP", raising=False)

    hop = bench._broker_hop("127.0.0.1:9", load_settings())

    assert hop == (
        "the broker's own share of a hop: not measured (ProbeFailed: the probe's record b'3' did not come back "
        "within 6 s)"
    )
