"""The context service decodes its metadata files when it starts, not at its first incident."""

from __future__ import annotations

from pathlib import Path

import pytest

import libs.datahub.file_provider as file_provider
from libs.datahub.file_provider import FileContextProvider
from libs.settings import load_settings
from services.context.bootstrap import production_ports
from tests.support.running_stack import environment
from tests.unit.datahub.datahub_test_inputs import Churn, write_churn_metadata


def test_the_service_starts_with_its_files_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    churn = write_churn_metadata(tmp_path)
    with environment({"MODELGUARD_HOME": str(tmp_path / "home"), "MODELGUARD_DATAHUB_FILES": str(churn)}):
        settings = load_settings()
    decoded: list[Path] = []
    real = file_provider.decode_mcp_text
    monkeypatch.setattr(file_provider, "decode_mcp_text", lambda path, text: decoded.append(path) or real(path, text))
    ports = production_ports(settings, {})
    try:
        assert isinstance(ports.provider, FileContextProvider)
        assert decoded == [churn]
        snapshot = ports.provider.collect(Churn.MODEL, "2024-05-01T12:00:00+00:00")
        assert decoded == [churn]  # the first incident decodes nothing
        assert (
            snapshot.digest() == FileContextProvider([churn]).collect(Churn.MODEL, "2024-05-01T12:00:00+00:00").digest()
        )
    finally:
        ports.mirror.close()
