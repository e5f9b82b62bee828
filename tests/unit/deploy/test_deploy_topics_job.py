"""The topic-creation job (Kubernetes without Strimzi) against a real broker: every topic once, each with its
retention (the dead-letter topic bounded in time and size), the chart's config file honoured, a config that
cannot be set on existing topics one readable line; and the compose init's topics bounded the same way."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contracts.registry import DEAD_LETTER_TOPIC, all_topics
from libs.bus.embedded_broker import free_loopback_port
from libs.bus.topic_config import DEAD_LETTER_RETENTION_BYTES, HOUR_MS, default_topic_configs
from libs.bus.topics import topic_configs
from modelguard.stack import REPO_ROOT
from tests.support.broker import kafka_broker

pytestmark = pytest.mark.broker


def _job(bootstrap: str, **env: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MODELGUARD_KAFKA_BOOTSTRAP": bootstrap, "MODELGUARD_KAFKA_REPLICATION": "1", **env}
    return subprocess.run(
        [sys.executable, "-m", "libs.bus.topics_job"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_job_creates_every_topic_once_with_its_retention_and_is_idempotent(tmp_path: Path) -> None:
    with kafka_broker(tmp_path) as bootstrap:
        first, second = _job(bootstrap), _job(bootstrap)
        described = asyncio.run(topic_configs(bootstrap, all_topics()))
    assert first.returncode == 0, first.stderr
    created = first.stdout.split(": ", 2)[-1].strip().split(", ")
    assert sorted(created) == sorted(all_topics())
    assert second.returncode == 0 and second.stdout.strip().endswith(": none"), second.stdout
    dead = described[DEAD_LETTER_TOPIC]
    assert int(dead["retention.ms"]) > 0 and int(dead["retention.bytes"]) == DEAD_LETTER_RETENTION_BYTES
    for topic, wanted in default_topic_configs(all_topics()).items():
        assert {k: described[topic].get(k) for k in wanted} == wanted, topic


def test_the_charts_config_file_is_what_the_topics_get_and_a_config_that_cannot_be_set_is_one_line(
    tmp_path: Path,
) -> None:
    configs = default_topic_configs(all_topics())
    configs["modelguard.published.v1"] = {"retention.ms": str(720 * HOUR_MS)}
    chart_file = tmp_path / "topics.json"
    chart_file.write_text(json.dumps(configs))
    changed = {**configs, "modelguard.published.v1": {"retention.ms": str(24 * HOUR_MS)}}
    changed_file = tmp_path / "changed.json"
    changed_file.write_text(json.dumps(changed))
    with kafka_broker(tmp_path) as bootstrap:
        created = _job(bootstrap, MODELGUARD_TOPIC_CONFIG_FILE=str(chart_file))
        published = asyncio.run(topic_configs(bootstrap, ["modelguard.published.v1"]))["modelguard.published.v1"]
        again = _job(bootstrap, MODELGUARD_TOPIC_CONFIG_FILE=str(chart_file))
        altered = _job(bootstrap, MODELGUARD_TOPIC_CONFIG_FILE=str(changed_file))
    assert created.returncode == 0, created.stderr
    assert published["retention.ms"] == str(720 * HOUR_MS)
    assert again.returncode == 0 and "config set" not in again.stdout, "an unchanged config is not set again"
    # Tansu (the embedded broker) describes topic configs but does not implement AlterConfigs: the job says so
    if altered.returncode == 0:  # a broker that does (testcontainers Kafka, MODELGUARD_KAFKA_BOOTSTRAP)
        assert altered.stdout.strip().endswith("config set on 1 existing: modelguard.published.v1")
    else:
        assert altered.returncode == 1
        [line] = altered.stderr.strip().splitlines()
        assert line.startswith("topics: cannot create topics or set their config on ")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"modelguard.published.v1": {"retention.ms": "1"}}, "does not list ModelGuard's topics"),
        (
            {**default_topic_configs(all_topics()), DEAD_LETTER_TOPIC: {"retention.ms": "-1"}},
            f"{DEAD_LETTER_TOPIC} must be bounded",
        ),
        (
            {**default_topic_configs(all_topics()), "modelguard.published.v1": {"cleanup.policy": "compact"}},
            "the configs ModelGuard sets are retention.ms, retention.bytes, min.insync.replicas",
        ),
    ],
)
def test_a_config_file_that_cannot_be_used_is_exit_2_before_any_broker(
    tmp_path: Path, document: dict[str, dict[str, str]], message: str
) -> None:
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(document))
    done = _job(f"127.0.0.1:{free_loopback_port()}", MODELGUARD_TOPIC_CONFIG_FILE=str(path))
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("topics: ") and message in line


@pytest.mark.parametrize("variable", ["MODELGUARD_KAFKA_PARTITIONS", "MODELGUARD_KAFKA_REPLICATION"])
def test_a_count_that_is_not_an_integer_is_exit_2_before_any_broker(variable: str) -> None:
    done = _job(f"127.0.0.1:{free_loopback_port()}", **{variable: "three"})
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line == "topics: MODELGUARD_KAFKA_PARTITIONS and MODELGUARD_KAFKA_REPLICATION must be integers"


def test_an_unreachable_broker_is_one_readable_line() -> None:
    done = _job(f"127.0.0.1:{free_loopback_port()}")
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("topics: cannot create topics or set their config on 127.0.0.1:")
