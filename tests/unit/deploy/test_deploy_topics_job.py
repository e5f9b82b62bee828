"""The topic-creation job (Kubernetes without Strimzi, docker-compose) against a real broker: every topic once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contracts.registry import all_topics
from libs.bus.embedded_broker import free_loopback_port
from modelguard.stack import REPO_ROOT
from tests.support.broker import kafka_broker

pytestmark = pytest.mark.broker


def _job(bootstrap: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MODELGUARD_KAFKA_BOOTSTRAP": bootstrap, "MODELGUARD_KAFKA_REPLICATION": "1"}
    return subprocess.run(
        [sys.executable, "-m", "libs.bus.topics_job"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_job_creates_every_topic_once_and_is_idempotent(tmp_path: Path) -> None:
    with kafka_broker(tmp_path) as bootstrap:
        first, second = _job(bootstrap), _job(bootstrap)
    assert first.returncode == 0, first.stderr
    created = first.stdout.split(": ", 2)[-1].strip().split(", ")
    assert sorted(created) == sorted(all_topics())
    assert second.returncode == 0 and second.stdout.strip().endswith(": none")


def test_an_unreachable_broker_is_one_readable_line() -> None:
    done = _job(f"127.0.0.1:{free_loopback_port()}")
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("topics: cannot create topics on 127.0.0.1:")
