"""A handled input is remembered with the envelopes it produced, across a restart of the service."""

from __future__ import annotations

from pathlib import Path

from libs.bus.processed_inputs import ProcessedInputs


def test_outputs_are_remembered_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "processed.sqlite"
    store = ProcessedInputs(path)
    assert store.outputs_of("a" * 32) is None
    store.mark("a" * 32, [b'{"payload":"x"}', b'{"payload":"y"}'])
    store.mark("b" * 32, [])
    store.mark("a" * 32, [b"ignored: first record wins"])
    store.close()
    reopened = ProcessedInputs(path)
    assert reopened.outputs_of("a" * 32) == [b'{"payload":"x"}', b'{"payload":"y"}']
    assert reopened.outputs_of("b" * 32) == []
