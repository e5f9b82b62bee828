"""How many partitions the topics get on a broker ModelGuard owns (``modelguard/embedded_partitions.py``)."""

from __future__ import annotations

import pytest

from modelguard.embedded_partitions import embedded_partitions

ONE_EACH = {"detector": 1, "diagnoser": 1, "validator": 1}


@pytest.mark.parametrize(
    ("environ", "replicas", "expected"),
    [
        ({}, ONE_EACH, 1),
        ({}, {}, 1),
        ({"MODELGUARD_KAFKA_PARTITIONS": "3"}, ONE_EACH, 3),
        ({"MODELGUARD_KAFKA_PARTITIONS": " "}, ONE_EACH, 1),
        ({}, {**ONE_EACH, "diagnoser": 2}, 3),
        ({"MODELGUARD_KAFKA_PARTITIONS": "4"}, {**ONE_EACH, "diagnoser": 2}, 4),
    ],
)
def test_one_partition_unless_a_service_runs_replicas_or_the_variable_is_set(
    environ: dict[str, str], replicas: dict[str, int], expected: int
) -> None:
    configured = int(environ.get("MODELGUARD_KAFKA_PARTITIONS", "").strip() or 3)

    assert embedded_partitions(environ, replicas, configured) == expected
