"""Each topic's Kafka config: retention for ModelGuard's topics, the dead-letter topic bounded in time and size.

The ledger keeps every event for good; the topics only carry them. So the contract topics keep a week (a consumer
down longer loses what it had not read: ``modelguard republish`` re-sends from the ledger) and the dead-letter
topic two weeks and at most 1 GiB per partition: malformed input must not fill a broker's disk. The Helm chart
renders the same defaults (deploy/helm/modelguard/values.yaml, ``topics``; a test holds them equal) into the file
``MODELGUARD_TOPIC_CONFIG_FILE`` the topic Job reads; docker-compose's init uses these defaults.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from contracts.registry import DEAD_LETTER_TOPIC

HOUR_MS = 3_600_000
EVENT_RETENTION_HOURS = 168
DEAD_LETTER_RETENTION_HOURS = 336
DEAD_LETTER_RETENTION_BYTES = 1 << 30
MANAGED = ("retention.ms", "retention.bytes", "min.insync.replicas")
"""The configs ModelGuard sets; any other config of a topic is left as the broker has it."""

TopicConfigs = dict[str, dict[str, str]]


class TopicConfigError(ValueError):
    """A topic config file that cannot be used; one line."""


def default_topic_configs(topics: Iterable[str]) -> TopicConfigs:
    configs: TopicConfigs = {}
    for topic in topics:
        if topic == DEAD_LETTER_TOPIC:
            configs[topic] = {
                "retention.ms": str(DEAD_LETTER_RETENTION_HOURS * HOUR_MS),
                "retention.bytes": str(DEAD_LETTER_RETENTION_BYTES),
            }
        else:
            configs[topic] = {"retention.ms": str(EVENT_RETENTION_HOURS * HOUR_MS)}
    return configs


def read_topic_configs(path: Path, topics: Iterable[str]) -> TopicConfigs:
    """The configs in ``path`` (JSON: topic name to {config name: value}), one for every topic in ``topics``; a
    topic missing, an unknown one, a config ModelGuard does not set, a value that is not an integer, or an
    unbounded dead-letter topic is refused."""
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise TopicConfigError(f"cannot read the topic config {path}: {exc}") from None
    wanted = sorted(topics)
    if not isinstance(document, dict) or sorted(document) != wanted:
        named = sorted(document) if isinstance(document, dict) else []
        missing, unknown = sorted(set(wanted) - set(named)), sorted(set(named) - set(wanted))
        raise TopicConfigError(
            f"the topic config {path} does not list ModelGuard's topics: missing {missing}, unknown {unknown}"
        )
    configs: TopicConfigs = {}
    for topic, config in document.items():
        if not isinstance(config, dict) or not set(config) <= set(MANAGED):
            raise TopicConfigError(f"{topic}: the configs ModelGuard sets are {', '.join(MANAGED)}; got {config!r}")
        for name, value in config.items():
            if not isinstance(value, str | int) or not str(value).lstrip("-").isdigit():
                raise TopicConfigError(f"{topic}: {name} must be an integer, got {value!r}")
        configs[topic] = {name: str(value) for name, value in config.items()}
    dead = configs.get(DEAD_LETTER_TOPIC, {})
    if int(dead.get("retention.ms", "-1")) <= 0 or int(dead.get("retention.bytes", "-1")) <= 0:
        raise TopicConfigError(f"{DEAD_LETTER_TOPIC} must be bounded: retention.ms and retention.bytes above 0")
    return configs


def config_drift(wanted: Mapping[str, str], current: Mapping[str, str]) -> dict[str, tuple[str | None, str]]:
    """The configs whose value on the broker (``current``) is not the wanted one: name to (current, wanted)."""
    return {name: (current.get(name), value) for name, value in wanted.items() if current.get(name) != value}
