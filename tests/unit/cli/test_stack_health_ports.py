"""Each service of the embedded stack has its own health port, kept in stack.json and printed by `stack status`."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from modelguard.cli import main
from modelguard.health_ports import HEALTH_PORTS_ENV, free_ports, health_ports_from, with_health_port
from modelguard.stack import SERVICES, StackState, read_state, write_state


def test_every_service_gets_a_distinct_free_loopback_port() -> None:
    ports = free_ports(SERVICES)
    assert sorted(ports) == sorted(SERVICES)
    assert len(set(ports.values())) == len(SERVICES)
    for port in ports.values():  # free: each can be bound now
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_a_service_is_started_with_its_own_port_and_the_others_without_one() -> None:
    env = {"PATH": "/bin", HEALTH_PORTS_ENV: json.dumps({"ledger": 4101, "context": 4102})}
    assert health_ports_from(env) == {"ledger": 4101, "context": 4102}
    ledger = with_health_port(env, "ledger")
    assert (ledger["MODELGUARD_HEALTH_PORT"], ledger["MODELGUARD_HEALTH_HOST"]) == ("4101", "127.0.0.1")
    assert "MODELGUARD_HEALTH_PORT" not in with_health_port(env, "publisher")
    assert "MODELGUARD_HEALTH_PORT" not in with_health_port({"PATH": "/bin"}, "ledger")


def test_status_prints_each_services_metrics_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    state = StackState(
        "127.0.0.1:9092",
        None,
        {"ledger": os.getpid(), "context": None},
        supervisor_pid=os.getpid(),
        health_ports={"ledger": 4101, "context": 4102},
    )
    write_state(tmp_path, state)
    assert read_state(tmp_path) == state
    assert main(["stack", "status"]) == 1  # context is not running
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["ledger"].endswith("metrics http://127.0.0.1:4101/metrics")
    assert "STOPPED" in lines["context"]
    assert lines["context"].endswith("metrics http://127.0.0.1:4102/metrics")
    assert "metrics" not in lines["supervisor"]
