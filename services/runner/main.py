"""Entrypoint of the workspace runner: `python -m services.runner.main`.

Listens on ``MODELGUARD_RUNNER_HOST``:``MODELGUARD_RUNNER_PORT`` (0: any free port; the line ``listening on
http://host:port`` says which), probes on ``MODELGUARD_HEALTH_PORT`` as every service does, runs at most
``MODELGUARD_RUNNER_CONCURRENCY`` commands at once in folders under the temporary folder. No Kafka, no keys."""

from __future__ import annotations

import logging
import signal
import sys
import tempfile
from pathlib import Path

from libs.bus.health import HealthState, start_health_server
from libs.sandbox.spare_slots import keep_spares
from libs.settings import SettingsError, load_runner_settings
from services.runner.readiness import describe, sandbox_readiness
from services.runner.server import RunnerServer, RunnerState


def main() -> None:
    try:
        settings = load_runner_settings()
    except SettingsError as exc:  # a bad port, level or count: one line, not a trace
        print(f"runner: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    logging.basicConfig(level=settings.logging.level, format="%(asctime)s runner %(levelname)s %(name)s: %(message)s")
    health = HealthState()
    state = RunnerState(
        workdir=Path(tempfile.gettempdir()),
        concurrency=settings.concurrency,
        health=health,
        not_ready=sandbox_readiness(),
    )
    server = RunnerServer((settings.host, settings.port), state)
    keep_spares()  # it runs commands for as long as it lives: their slots are made ahead
    health.ready = state.not_ready is None
    probes = start_health_server(health, settings.health)
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    logging.getLogger("modelguard.runner").info("sandbox: %s", describe())
    print(f"listening on {server.url}", flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
        if probes is not None:
            probes.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
