"""Artifacts in object storage (MODELGUARD_ARTIFACTS_URL=s3://…), against a real S3-compatible server started
here (moto's server mode): content-addressed, written once, every read checked against its name."""

from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from contracts.common import ArtifactRef, IncidentState, PolicyRef
from libs.artifacts.open_store import artifact_store
from libs.artifacts.s3_store import S3ArtifactStore
from libs.artifacts.store import ArtifactCorrupted, ArtifactNotFound, ArtifactStoreUnavailable
from libs.bus.runtime import TransientFailure
from libs.settings import SettingsError, load_settings
from libs.workspace.incident_workspace import incident_workspace
from tests.support.running_stack import environment
from tests.support.s3_server import S3Server, s3_server
from tests.support.sample_events import gate, workspace


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with s3_server(tmp_path_factory.mktemp("moto")) as running:
        yield running


def _store(server: S3Server, tmp_path: Path, url: str) -> S3ArtifactStore:
    values = {
        "MODELGUARD_HOME": str(tmp_path),
        "MODELGUARD_ARTIFACTS_URL": url,
        "MODELGUARD_S3_ENDPOINT_URL": server.endpoint_url,
        **server.environment(),
    }
    with environment(values):
        store = artifact_store(load_settings())
    assert isinstance(store, S3ArtifactStore)
    return store


def test_a_blob_is_stored_once_under_its_digest_and_read_back(server: S3Server, tmp_path: Path) -> None:
    bucket = server.new_bucket()
    store = _store(server, tmp_path, f"s3://{bucket}/modelguard/artifacts/")
    data = b"a workspace snapshot\x00\xff"
    digest = hashlib.sha256(data).hexdigest()
    assert not store.exists(digest)
    ref = store.put(data, "application/x-tar")
    assert (ref.sha256, ref.size, ref.media_type) == (digest, len(data), "application/x-tar")
    assert store.exists(digest) and store.get(ref) == data and store.get(digest) == data
    listed = server.client().list_objects_v2(Bucket=bucket)["Contents"]
    assert [o["Key"] for o in listed] == [f"modelguard/artifacts/{digest[:2]}/{digest[2:]}"]
    written = listed[0]["LastModified"]
    time.sleep(1.1)
    store.put(data, "application/x-tar")
    again = server.client().list_objects_v2(Bucket=bucket)["Contents"]
    assert len(again) == 1 and again[0]["LastModified"] == written, "a blob already stored is not written again"
    assert not (tmp_path / "artifacts").exists(), "nothing lands in the local folder"


def test_an_object_changed_in_the_bucket_is_refused_with_the_reason(server: S3Server, tmp_path: Path) -> None:
    bucket = server.new_bucket()
    store = _store(server, tmp_path, f"s3://{bucket}")
    ref = store.put(b'{"policy": "strict"}', "application/json")
    server.client().put_object(Bucket=bucket, Key=f"{ref.sha256[:2]}/{ref.sha256[2:]}", Body=b'{"policy": "loose"}')
    with pytest.raises(ArtifactCorrupted) as refused:
        store.get(ref)
    reason = str(refused.value)
    assert "does not match its digest" in reason and "refused" in reason and ref.sha256 in reason
    assert "\n" not in reason and "modelguard-test-secret" not in reason


def test_a_missing_blob_and_a_name_that_is_no_digest_are_not_found(server: S3Server, tmp_path: Path) -> None:
    store = _store(server, tmp_path, f"s3://{server.new_bucket()}/p")
    with pytest.raises(ArtifactNotFound, match="is not in s3://"):
        store.get("0" * 64)
    for hostile in ("../../etc/passwd", "A" * 64, "0" * 63):
        with pytest.raises(ArtifactNotFound, match="not a sha256 digest"):
            store.get(hostile)


def test_a_store_that_does_not_answer_is_a_transient_failure(server: S3Server, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    values = {
        "MODELGUARD_HOME": str(tmp_path),
        "MODELGUARD_ARTIFACTS_URL": "s3://nobody-home/artifacts",
        "MODELGUARD_S3_ENDPOINT_URL": f"http://127.0.0.1:{closed}",
        **server.environment(),
    }
    with environment(values):
        store = artifact_store(load_settings())
    started = time.monotonic()
    with pytest.raises(ArtifactStoreUnavailable, match="cannot read artifact") as unavailable:
        store.get("1" * 64)
    assert time.monotonic() - started < 60 and "\n" not in str(unavailable.value)
    state = IncidentState(
        run_id="r",
        workspace=workspace(),
        policy=PolicyRef(name="p", artifact=ArtifactRef(sha256="1" * 64, media_type="application/yaml", size=1)),
        gate=gate(),
    )
    with pytest.raises(TransientFailure), incident_workspace(store, state, tmp_path / "scratch"):
        pass  # the bus retries the input later, instead of dead-lettering it as missing


def test_credentials_come_from_files_and_bad_settings_are_one_line(server: S3Server, tmp_path: Path) -> None:
    key_file, secret_file = tmp_path / "key", tmp_path / "secret"
    key_file.write_text(server.environment()["AWS_ACCESS_KEY_ID"] + "\n")
    secret_file.write_text(server.environment()["AWS_SECRET_ACCESS_KEY"] + "\n")
    bucket = server.new_bucket()
    values = {
        "MODELGUARD_HOME": str(tmp_path),
        "MODELGUARD_ARTIFACTS_URL": f"s3://{bucket}/a",
        "MODELGUARD_S3_ENDPOINT_URL": server.endpoint_url,
        "AWS_ACCESS_KEY_ID": "",
        "AWS_SECRET_ACCESS_KEY": "",
        "AWS_ACCESS_KEY_ID_FILE": str(key_file),
        "AWS_SECRET_ACCESS_KEY_FILE": str(secret_file),
    }
    with environment(values):
        settings = load_settings()
        store = artifact_store(settings)
    assert store.get(store.put(b"x", "text/plain")) == b"x"
    assert set(settings.s3_credential_files) == {key_file, secret_file}

    for broken, says in (
        ({"AWS_ACCESS_KEY_ID": "AKIA-inline"}, "AWS_ACCESS_KEY_ID and AWS_ACCESS_KEY_ID_FILE are both set"),
        ({"AWS_SECRET_ACCESS_KEY_FILE": str(tmp_path / "absent")}, "AWS_SECRET_ACCESS_KEY_FILE: cannot read"),
    ):
        with environment({**values, **broken}), pytest.raises(SettingsError, match=says) as refused:
            artifact_store(load_settings())
        assert "\n" not in str(refused.value) and "modelguard-test-secret" not in str(refused.value)
