"""The three context providers on the same metadata: file, sdk (loopback GMS), mcp (loopback MCP server).

file and sdk give equal snapshots (provenance aside). The mcp provider gives the same snapshot except
where the MCP server's tools do not carry the data; every such difference is one the mcp provider states
in its warnings (its capability gaps), and nothing is invented.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.file_provider import FileContextProvider
from libs.datahub.mcp_client import McpServerTarget
from libs.datahub.mcp_provider import McpContextProvider
from libs.datahub.sdk_provider import GmsConnection, SdkContextProvider
from libs.datahub.sdk_snapshot_diff import SnapshotDifference, capability_statements, snapshot_differences
from tests.support.fake_gms import FakeGms
from tests.support.fake_mcp_server import serving_http

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "fixtures/scenarios/churn-monthly-spend/datahub/metadata.json"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)"
FETCHED_AT = "2025-03-12T08:00:00+00:00"
# What the MCP server's tools cannot carry (see libs.datahub.mcp_provider.CAPABILITY_GAPS).
MODEL_FIELDS_NOT_EXPOSED = {"version", "hyper_params", "training_metrics", "deployment_urns", "deployment_statuses"}
SECTIONS_THE_MCP_PROVIDER_MATCHES = (
    "schema_fields", "owners", "assertions", "jobs", "feature_tables", "model_groups", "upstream_paths", "profiles",
    "incidents",
)  # fmt: skip


@pytest.fixture(scope="module")
def file_snapshot() -> ContextSnapshot:
    return FileContextProvider([SCENARIO]).collect(MODEL, FETCHED_AT)


@pytest.fixture(scope="module")
def sdk_snapshot() -> Iterator[ContextSnapshot]:
    with FakeGms.serving() as gms:
        yield SdkContextProvider(GmsConnection(gms.url, retry_max_times=0)).collect(MODEL, FETCHED_AT)


@pytest.fixture(scope="module")
def mcp_http_snapshot() -> Iterator[ContextSnapshot]:
    with serving_http(SCENARIO) as url:
        yield McpContextProvider(McpServerTarget(url=url)).collect(MODEL, FETCHED_AT)


@pytest.fixture(scope="module")
def mcp_stdio_snapshot() -> ContextSnapshot:
    command = (sys.executable, "-m", "tests.support.fake_mcp_server", "--metadata", str(SCENARIO))
    return McpContextProvider(McpServerTarget(command=command, cwd=str(REPO))).collect(MODEL, FETCHED_AT)


def _explained_by_a_stated_gap(difference: SnapshotDifference) -> bool:
    if difference.right is not None and difference.field is None:
        return False  # the mcp provider never has something the files do not
    if difference.section == "model":
        return difference.field in MODEL_FIELDS_NOT_EXPOSED
    if difference.section == "features":
        return difference.field == "data_type"
    if difference.section == "field_lineage":
        return difference.left["declared_by"].startswith("urn:li:dataJob:")
    return "urn:li:mlModelDeployment:" in difference.key


def test_file_and_sdk_snapshots_are_equal(file_snapshot: ContextSnapshot, sdk_snapshot: ContextSnapshot) -> None:
    assert sdk_snapshot.provider == "sdk"
    assert snapshot_differences(file_snapshot, sdk_snapshot) == []


def test_mcp_over_http_differs_from_file_only_where_it_says_it_cannot_see(
    file_snapshot: ContextSnapshot, mcp_http_snapshot: ContextSnapshot
) -> None:
    differences = snapshot_differences(file_snapshot, mcp_http_snapshot)

    unexplained = [d.describe("file", "mcp") for d in differences if not _explained_by_a_stated_gap(d)]
    assert unexplained == []
    assert {d.section for d in differences}.isdisjoint(SECTIONS_THE_MCP_PROVIDER_MATCHES)
    gaps = " ".join(capability_statements(mcp_http_snapshot))
    assert "deployments are unknown" in gaps and "feature data types" in gaps and "version, hyper-parameters" in gaps
    assert "dataJobInputOutput.fineGrainedLineages" in gaps


def test_mcp_snapshot_keeps_the_lineage_schemas_and_assertions(mcp_http_snapshot: ContextSnapshot) -> None:
    s = mcp_http_snapshot

    assert {p.urns[0] for p in s.upstream_paths} == {
        "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.crm.customers,PROD)"
    }
    assert {f.normalised_type for f in s.schema_fields} == {"string", "number", "boolean"}
    assert [(a.latest_result, a.latest_partition_results) for a in s.assertions] == [
        ("SUCCESS", {"FULL_TABLE_SNAPSHOT": "SUCCESS"})
    ]
    assert s.deployments == () and all(e.provenance.provider == "mcp" for e in s.entities)


def test_mcp_over_stdio_equals_mcp_over_http(
    mcp_http_snapshot: ContextSnapshot, mcp_stdio_snapshot: ContextSnapshot
) -> None:
    assert snapshot_differences(mcp_http_snapshot, mcp_stdio_snapshot) == []


def test_sdk_and_mcp_differ_as_file_and_mcp_do(
    file_snapshot: ContextSnapshot, sdk_snapshot: ContextSnapshot, mcp_http_snapshot: ContextSnapshot
) -> None:
    def as_keys(differences: list[SnapshotDifference]) -> set[tuple[str, str, str | None]]:
        return {(d.section, d.key, d.field) for d in differences if d.section != "warnings"}

    assert as_keys(snapshot_differences(sdk_snapshot, mcp_http_snapshot)) == as_keys(
        snapshot_differences(file_snapshot, mcp_http_snapshot)
    )
