"""SdkContextProvider against the loopback GMS (tests/support/fake_gms.py)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from libs.datahub.file_provider import FileContextProvider
from libs.datahub.mcp_file import load_mcp_file
from libs.datahub.provider import ContextProvider
from libs.datahub.sdk_errors import ContextUnavailable
from libs.datahub.sdk_provider import GmsConnection, SdkContextProvider
from libs.datahub.sdk_snapshot_diff import snapshot_differences
from tests.support.fake_gms import FakeGms, GmsStore
from tests.unit.datahub.datahub_test_inputs import Churn, write_churn_metadata
from tests.unit.providers.provider_test_support import FETCHED_AT, MODEL, RAW, TOKEN


def _provider(url: str, token: str | None = None) -> SdkContextProvider:
    return SdkContextProvider(GmsConnection(url, token=token, timeout_sec=5, retry_max_times=0))


def _free_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_the_provider_implements_the_context_provider_port() -> None:
    provider = _provider("http://127.0.0.1:1")

    assert isinstance(provider, ContextProvider)
    assert provider.name == "sdk"


def test_sdk_snapshot_of_the_scenario_reads_through_the_rest_api() -> None:
    with FakeGms.serving(token=TOKEN) as gms:
        snapshot = _provider(gms.url, TOKEN).collect(MODEL, FETCHED_AT)
        paths = {request.split("?")[0] for request in gms.requests}

    assert snapshot.provider == "sdk"
    assert {p.urns[0] for p in snapshot.upstream_paths} == {RAW}
    assert [d.status for d in snapshot.deployments] == ["IN_SERVICE"]
    assert [a.latest_result for a in snapshot.assertions] == ["SUCCESS"]
    assert all(e.provenance.provider == "sdk" and e.provenance.location.startswith(gms.url) for e in snapshot.entities)
    assert {"GET /config", "GET /openapi/relationships/v1/", "POST /aspects"} <= paths
    assert any(path.startswith("GET /entitiesV2/") for path in paths)


def test_sdk_equals_file_on_metadata_with_profiles_incidents_and_partitioned_runs(tmp_path: Path) -> None:
    metadata = write_churn_metadata(tmp_path)
    store = GmsStore()
    store.ingest(load_mcp_file(metadata).records)
    expected = FileContextProvider([metadata]).collect(Churn.MODEL, FETCHED_AT)

    with FakeGms.serving(store) as gms:
        snapshot = _provider(gms.url).collect(Churn.MODEL, FETCHED_AT)

    assert snapshot.profiles and snapshot.incidents and snapshot.assertions
    assert snapshot_differences(expected, snapshot) == []


def test_a_model_datahub_does_not_know_gives_a_snapshot_that_says_so() -> None:
    unknown = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,nobody,PROD)"
    with FakeGms.serving() as gms:
        snapshot = _provider(gms.url).collect(unknown, FETCHED_AT)

    assert snapshot.model is None and snapshot.entities[0].known_aspects == ()
    assert f"model {unknown} has no metadata in the source" in snapshot.warnings


def test_gms_down_raises_context_unavailable_naming_the_server() -> None:
    url = _free_port_url()

    with pytest.raises(ContextUnavailable) as raised:
        _provider(url, TOKEN).collect(MODEL, FETCHED_AT)

    assert raised.value.provider == "sdk" and raised.value.target == url
    assert "GET /config" in raised.value.reason
    assert TOKEN not in str(raised.value)


def test_a_wrong_token_is_reported_without_printing_it() -> None:
    with FakeGms.serving(token="the-right-one") as gms, pytest.raises(ContextUnavailable) as raised:
        _provider(gms.url, TOKEN).collect(MODEL, FETCHED_AT)

    assert "authentication" in raised.value.reason
    assert TOKEN not in str(raised.value) and "the-right-one" not in str(raised.value)


def test_a_failing_relationships_endpoint_raises_context_unavailable() -> None:
    with FakeGms.serving(failing_paths=("/openapi/relationships",)) as gms, pytest.raises(ContextUnavailable) as raised:
        _provider(gms.url).collect(MODEL, FETCHED_AT)

    assert "relationships" in raised.value.reason


def test_the_connection_repr_hides_the_token() -> None:
    assert TOKEN not in repr(GmsConnection("http://gms:8080", token=TOKEN))
