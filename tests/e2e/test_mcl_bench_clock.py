"""The MCL broker bench times ModelGuard over the stream it was given, as it times datahub-actions.

The context service consumes before the stack reports it ready; the bench's clock used to start at its first
reading after that, by which time about half of the stream had been handled and was left out of the figure. Now
only the first settled batch is left out (the peer's first event is, the same way)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.local_schema_registry import local_schema_registry
from benchmarks.mcl_broker import MODELGUARD, run_rounds
from benchmarks.mcl_workload import burst_stream
from libs.bus.embedded_broker import start_embedded_broker

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

RECORDS = 6_000
BATCH = 500


def test_modelguard_is_timed_from_its_first_settled_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_MCL_BATCH_MAX_RECORDS", str(BATCH))
    stream = burst_stream(RECORDS)
    broker = start_embedded_broker(tmp_path / "broker.log")
    try:
        with local_schema_registry() as registry:
            (run,) = run_rounds(broker.bootstrap, registry, stream, 1, tmp_path, [MODELGUARD])
    finally:
        broker.stop()
    assert run.side == MODELGUARD
    # every record but those of the first batch (the watcher may see one more batch settled by its first look)
    assert RECORDS - 2 * BATCH <= run.records < RECORDS
    assert run.seconds > 0
    assert run.cpu_seconds > 0
