"""The churn incident end to end over the real broker with every artifact in object storage (an S3-compatible
server started here): CI's uploads, the policy, the patch and the attestation go to the bucket, every phase reads
them back checked, and nothing is written to the local artifacts folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from libs.artifacts.open_store import artifact_store
from libs.attestation.verify import verify_attestation
from modelguard.submit import submit, wait_for_run
from tests.e2e.conftest import CHURN
from tests.support.running_stack import running_stack
from tests.support.s3_server import S3Server, s3_server

pytestmark = [pytest.mark.e2e, pytest.mark.broker]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with s3_server(tmp_path_factory.mktemp("moto")) as running:
        yield running


def test_the_churn_incident_runs_with_its_artifacts_in_object_storage(server: S3Server, tmp_path: Path) -> None:
    bucket = server.new_bucket()
    env = {
        "MODELGUARD_ARTIFACTS_URL": f"s3://{bucket}/modelguard",
        "MODELGUARD_S3_ENDPOINT_URL": server.endpoint_url,
        **server.environment(),
    }
    with running_stack(tmp_path / "home", env) as stack:
        reported = submit(stack.settings, CHURN, "s3-run-1", 42)
        events = wait_for_run(stack.settings, reported, timeout_s=600)
        types = [e.event.meta.event_type for e in events]
        assert types[-1] == "Published" and "DiagnosisCompleted" in types and "RepairValidated" in types
        published = events[-1].event.payload
        assert published.attestation is not None
        store = artifact_store(stack.settings)
        check = verify_attestation(store.get(published.attestation), stack.registry)
        assert check.ok, check.problems

        keys = {o["Key"] for o in server.client().list_objects_v2(Bucket=bucket, Prefix="modelguard/")["Contents"]}
        workspace = reported.evaluation.workspace
        for ref in (workspace.base_snapshot, workspace.candidate_snapshot, workspace.data, published.attestation):
            assert f"modelguard/{ref.sha256[:2]}/{ref.sha256[2:]}" in keys
        assert not stack.settings.artifacts_dir.exists(), "nothing in the local artifacts folder"
