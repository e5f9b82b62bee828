"""How many processes of each service the stack runs: MODELGUARD_REPLICAS_<SERVICE> or --replicas, one by
default; each replica an instance with its own name; a count the topics or the service cannot carry refused."""

from __future__ import annotations

import pytest

from modelguard.cli import main
from modelguard.replicas import ReplicaCountError, instance_names, parse_replicas, replica_counts, service_of
from modelguard.stack import SERVICES


def test_counts_come_from_the_option_then_the_variable_then_one() -> None:
    environ = {"MODELGUARD_REPLICAS_DIAGNOSER": "2", "MODELGUARD_REPLICAS_VALIDATOR": "3"}
    counts = replica_counts(environ, SERVICES, {"validator": 2}, partitions=3)
    assert counts == {**dict.fromkeys(SERVICES, 1), "diagnoser": 2, "validator": 2}


def test_instances_are_named_for_their_service() -> None:
    assert instance_names("diagnoser", 3) == ["diagnoser", "diagnoser-2", "diagnoser-3"]
    assert [service_of(name) for name in instance_names("diagnoser", 3)] == ["diagnoser"] * 3
    assert service_of("ledger") == "ledger"


@pytest.mark.parametrize(
    ("environ", "requested", "says"),
    [
        ({"MODELGUARD_REPLICAS_DIAGNOSER": "two"}, None, "must be a whole number"),
        ({"MODELGUARD_REPLICAS_DIAGNOSER": "0"}, None, "between 1 and"),
        ({"MODELGUARD_REPLICAS_DIAGNOSER": "4"}, None, "4 but the topics have 3 partitions"),
        ({}, {"context": 2}, "metadata mirror"),
        ({}, {"runner": 2}, "not a service of this stack"),
    ],
)
def test_a_count_the_stack_cannot_run_is_refused_in_one_line(
    environ: dict[str, str], requested: dict[str, int] | None, says: str
) -> None:
    with pytest.raises(ReplicaCountError, match=says) as refused:
        replica_counts(environ, SERVICES, requested, partitions=3)
    assert "\n" not in str(refused.value)


def test_the_command_line_refuses_a_bad_option_before_starting_anything(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    assert parse_replicas(["diagnoser=2", " repairer = 2"]) == {"diagnoser": 2, "repairer": 2}
    assert main(["stack", "up", "--replicas", "diagnoser"]) == 2
    assert "SERVICE=COUNT" in capsys.readouterr().err
    monkeypatch.setenv("MODELGUARD_KAFKA_PARTITIONS", "1")
    assert main(["stack", "up", "--replicas", "diagnoser=2"]) == 2
    assert "partitions" in capsys.readouterr().err
