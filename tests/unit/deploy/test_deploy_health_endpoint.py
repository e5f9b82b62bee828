"""The probes' endpoint, over real HTTP: alive while the loop beats, ready once consuming."""

from __future__ import annotations

import httpx
import pytest

from libs.bus.health import HealthServer, HealthState, start_health_server
from libs.observability.settings import HealthSettings
from libs.settings import SettingsError, load_settings


def _status(port: int, path: str) -> int:
    return httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5).status_code


def test_ready_only_after_startup_and_not_alive_when_the_loop_stops_beating() -> None:
    now = [100.0]
    state = HealthState(stale_after_s=30.0, clock=lambda: now[0])
    server = HealthServer(state, 0, "127.0.0.1").start()
    try:
        assert (_status(server.port, "/healthz"), _status(server.port, "/readyz")) == (200, 503)
        state.ready = True
        assert _status(server.port, "/readyz") == 200
        now[0] += 31.0
        assert (_status(server.port, "/healthz"), _status(server.port, "/readyz")) == (503, 503)
        state.beat()
        assert _status(server.port, "/healthz") == 200
        assert _status(server.port, "/metrics") == 404
    finally:
        server.stop()


@pytest.mark.parametrize(("raw", "port"), [("", None), ("0", None), ("8080", 8080)])
def test_the_port_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, raw: str, port: int | None) -> None:
    monkeypatch.setenv("MODELGUARD_HEALTH_PORT", raw)
    monkeypatch.setenv("MODELGUARD_HEALTH_HOST", "127.0.0.1")
    assert load_settings().health == HealthSettings(port, "127.0.0.1")


def test_a_bad_port_is_one_readable_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HEALTH_PORT", "http")
    with pytest.raises(SettingsError, match="MODELGUARD_HEALTH_PORT must be a TCP port number, got 'http'"):
        load_settings()


def test_no_port_is_no_server() -> None:
    assert start_health_server(HealthState(), HealthSettings(None)) is None
