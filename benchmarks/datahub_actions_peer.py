"""The peer: datahub-actions' own pipeline (its Kafka event source) reading the benchmark's MCL stream.

``python -m benchmarks.datahub_actions_peer --bootstrap B --registry URL --versioned T --timeseries T --group G
--expect N --out result.json [--aspects a,b,…]`` runs one pipeline until its action has received ``N`` events,
then writes ``{"first": t, "last": t, "events": N, "cpu_seconds": s}`` (wall-clock seconds of the first and the
N-th event, and the CPU time the process used between them, all its threads) and exits. The action only counts:
the figure is what datahub-actions costs to deliver an event to an action
(consume, Avro decode against the registry's schema, ``MetadataChangeLogClass.from_obj``, the envelope), the
floor under any action written on it. ``--aspects`` adds an ``event_type`` filter on those aspect names, which
datahub-actions applies before its deserialisation (its pre-deserialisation filter).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from datahub_actions.action.action import Action
from datahub_actions.event.event_envelope import EventEnvelope
from datahub_actions.pipeline.pipeline import Pipeline
from datahub_actions.pipeline.pipeline_context import PipelineContext

_result_path: Path | None = None
_expected = 0


class CountingAction(Action):  # type: ignore[misc]
    def __init__(self) -> None:
        self.events = 0
        self.first = 0.0
        self.first_cpu = 0.0

    @classmethod
    def create(cls, config_dict: dict[str, Any], ctx: PipelineContext) -> CountingAction:
        return cls()

    def act(self, event: EventEnvelope) -> None:
        now, cpu = time.time(), time.process_time()
        self.events += 1
        if self.events == 1:
            self.first, self.first_cpu = now, cpu
        if self.events == _expected and _result_path is not None:
            result = {"first": self.first, "last": now, "events": self.events, "cpu_seconds": cpu - self.first_cpu}
            _result_path.write_text(json.dumps(result))
            os._exit(0)  # measured: nothing after the last event is part of the figure

    def close(self) -> None:
        return None


def pipeline_config(arguments: argparse.Namespace) -> dict[str, Any]:
    config: dict[str, Any] = {
        "name": arguments.group,
        "source": {
            "type": "kafka",
            "config": {
                "connection": {
                    "bootstrap": arguments.bootstrap,
                    "schema_registry_url": arguments.registry,
                    "consumer_config": {"auto.offset.reset": "earliest"},
                },
                "topic_routes": {"mcl": arguments.versioned, "mcl_timeseries": arguments.timeseries},
            },
        },
        "action": {"type": f"{__name__}:CountingAction", "config": {}},
    }
    if arguments.aspects:
        aspects = arguments.aspects.split(",")
        config["filter"] = {"event_type": "MetadataChangeLogEvent_v1", "event": {"aspectName": aspects}}
    return config


def main() -> None:
    global _result_path, _expected
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    for name in ("--bootstrap", "--registry", "--versioned", "--timeseries", "--group", "--out"):
        parser.add_argument(name, required=True)
    parser.add_argument("--expect", type=int, required=True)
    parser.add_argument("--aspects", default="")
    arguments = parser.parse_args()
    _result_path, _expected = Path(arguments.out), arguments.expect
    Pipeline.create(pipeline_config(arguments)).run()


if __name__ == "__main__":
    main()
