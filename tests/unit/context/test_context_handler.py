"""collect_context: a model urn and a provider in, a snapshot out (no transport, no other I/O)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.file_provider import FileContextProvider
from libs.datahub.provider import ContextProvider
from services.context.handler import collect_context

NOW = "2024-05-01T12:00:00+00:00"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn_model,PROD)"
GOLDEN_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "datahub-golden"


class RecordingProvider:
    """A stand-in provider (the SDK and MCP-server providers plug in the same way)."""

    def __init__(self, answer_for: str | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self._answer_for = answer_for

    @property
    def name(self) -> str:
        return "recording"

    def collect(self, model_urn: str, fetched_at: str) -> ContextSnapshot:
        self.calls.append((model_urn, fetched_at))
        return ContextSnapshot(model_urn=self._answer_for or model_urn, provider=self.name, fetched_at=fetched_at)


def test_the_handler_asks_the_provider_once_with_the_injected_time() -> None:
    provider = RecordingProvider()

    snapshot = collect_context(MODEL, provider, NOW)

    assert isinstance(provider, ContextProvider)
    assert provider.calls == [(MODEL, NOW)]
    assert (snapshot.model_urn, snapshot.provider, snapshot.fetched_at) == (MODEL, "recording", NOW)


def test_only_model_urns_are_accepted() -> None:
    provider = RecordingProvider()

    with pytest.raises(ValueError, match="not an mlModel urn"):
        collect_context("urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)", provider, NOW)
    assert provider.calls == []


def test_a_snapshot_for_another_model_is_refused() -> None:
    other = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,other,PROD)"

    with pytest.raises(ValueError, match="another model"):
        collect_context(MODEL, RecordingProvider(answer_for=other), NOW)


def test_the_handler_runs_with_the_file_provider_on_real_connector_output() -> None:
    sagemaker = GOLDEN_DIR / "sagemaker_mces_golden.json"
    if not sagemaker.is_file():
        pytest.skip(f"DataHub golden files not found in {GOLDEN_DIR}")
    model = "urn:li:mlModel:(urn:li:dataPlatform:sagemaker,the-second-model,PROD)"

    snapshot = collect_context(model, FileContextProvider([sagemaker]), NOW)

    assert snapshot.provider == "file"
    assert snapshot.model is not None and snapshot.model.training_jobs
    assert {p.direction for p in snapshot.downstream_paths} == {"downstream", "deployment"}
