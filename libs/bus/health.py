"""A service's health endpoint for probes: `GET /healthz` (alive) and `GET /readyz` (consuming); and `GET /metrics`,
the service's Prometheus metrics (``libs/bus/prometheus.py``), when it has any.

A tiny HTTP server on its own thread, on `MODELGUARD_HEALTH_PORT` (off when unset or 0; ``HealthSettings``, parsed
once with the process's settings). Alive means the
service's event loop has beaten recently (handlers run on worker threads, so a long handler does not stop
the beat; a wedged loop does). Ready means the broker is connected and the subscribers started, until shutdown.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from libs.observability.settings import HealthSettings


class HealthState:
    def __init__(self, stale_after_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ready = False
        self.stale_after_s = stale_after_s
        self._clock = clock
        self._last_beat = clock()

    def beat(self) -> None:
        self._last_beat = self._clock()

    @property
    def alive(self) -> bool:
        return self._clock() - self._last_beat < self.stale_after_s


async def beat_forever(state: HealthState, every_s: float = 5.0) -> None:
    while True:
        state.beat()
        await asyncio.sleep(every_s)


PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"
Exposition = Callable[[], bytes]
"""The metrics in Prometheus's text format, made at each scrape."""


def _handler_for(state: HealthState, metrics: Exposition | None = None) -> type[BaseHTTPRequestHandler]:
    class Probe(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/metrics" and metrics is not None:
                self._send(200, metrics(), PROMETHEUS_TEXT)
                return
            checks = {"/healthz": state.alive, "/readyz": state.alive and state.ready}
            if self.path not in checks:
                self._answer(404, "not found")
            else:
                self._answer(200, "ok") if checks[self.path] else self._answer(503, "not ready")

        def _answer(self, status: int, text: str) -> None:
            self._send(status, (text + "\n").encode(), "text/plain; charset=utf-8")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # probes every few seconds: not logged
            return

    return Probe


class HealthServer:
    def __init__(self, state: HealthState, port: int, host: str = "0.0.0.0", metrics: Exposition | None = None) -> None:
        self._server = ThreadingHTTPServer((host, port), _handler_for(state, metrics))
        self._thread = threading.Thread(target=self._server.serve_forever, name="health", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> HealthServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def start_health_server(
    state: HealthState, settings: HealthSettings, metrics: Exposition | None = None
) -> HealthServer | None:
    """The probe server on ``settings``' address, started; None when no port is configured."""
    if settings.port is None:
        return None
    return HealthServer(state, settings.port, settings.host, metrics).start()
