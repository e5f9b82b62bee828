"""Each service of the embedded stack gets its own loopback health port (``/healthz``, ``/readyz``, ``/metrics``),
chosen free by ``stack up``, handed to the supervisor in one variable, kept across the service's restarts, and
recorded in ``stack.json`` so that ``stack status`` (and a scraper) can find it."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Mapping

HEALTH_PORTS_ENV = "MODELGUARD_STACK_HEALTH_PORTS"
"""``{"ledger": 41234, ...}``: set by ``stack up`` for the supervisor, read when it starts each service."""
HEALTH_HOST = "127.0.0.1"


def free_ports(names: Iterable[str]) -> dict[str, int]:
    """A free loopback port per name, all held until every one is chosen, so no two are the same."""
    sockets = {}
    try:
        for name in names:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((HEALTH_HOST, 0))
            sockets[name] = sock
        return {name: int(sock.getsockname()[1]) for name, sock in sockets.items()}
    finally:
        for sock in sockets.values():
            sock.close()


def health_ports_from(env: Mapping[str, str]) -> dict[str, int]:
    raw = env.get(HEALTH_PORTS_ENV, "")
    return {str(name): int(port) for name, port in json.loads(raw).items()} if raw else {}


def with_health_port(env: Mapping[str, str], name: str) -> dict[str, str]:
    """The service's environment with its own health port, when the stack chose one."""
    port = health_ports_from(env).get(name)
    if port is None:
        return dict(env)
    return {**env, "MODELGUARD_HEALTH_PORT": str(port), "MODELGUARD_HEALTH_HOST": HEALTH_HOST}


def metrics_url(port: int) -> str:
    return f"http://{HEALTH_HOST}:{port}/metrics"
