"""The evaluation cache over object storage, against a real S3-compatible server started here (moto's server mode):
the detector's pod measures, the diagnoser's pod, sharing nothing but the bucket, reads it; whoever can write the
bucket can delete an entry but not forge one; a bucket that does not answer means measuring again, never a failed
incident."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from libs.artifacts.record_retention import prune_records
from libs.artifacts.records import ObjectRecords, RecordsUnavailable, record_store
from libs.settings import load_settings
from libs.workspace.evaluation_cache import EvaluationCache
from libs.workspace.model_evaluation import ModelEvaluation
from libs.workspace.runner import CommandResult
from modelguard.synthetic_incidents import SampleKeys
from tests.support.running_stack import environment
from tests.support.s3_server import S3Server, s3_server

KEYS = SampleKeys.generate(("detector", "diagnoser"))
KEY = "ab" * 32
MEASURED = ModelEvaluation(
    {"auc": 0.8125}, "self_reported", CommandResult(["python", "evaluate.py"], 0, "", "", duration_s=1.5)
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with s3_server(tmp_path_factory.mktemp("moto")) as running:
        yield running


def _records(server: S3Server, home: Path, url: str, endpoint: str | None = None) -> ObjectRecords:
    values = {
        "MODELGUARD_HOME": str(home),
        "MODELGUARD_ARTIFACTS_URL": url,
        "MODELGUARD_S3_ENDPOINT_URL": endpoint or server.endpoint_url,
        **server.environment(),
    }
    with environment(values):
        records = record_store(load_settings(), "evaluations")
    assert isinstance(records, ObjectRecords)
    return records


def test_one_pod_measures_and_another_reads_it_from_the_bucket(server: S3Server, tmp_path: Path) -> None:
    bucket = server.new_bucket()
    url = f"s3://{bucket}/modelguard/artifacts"
    detector = EvaluationCache(_records(server, tmp_path / "detector", url), KEYS.keys["detector"], KEYS.registry)
    diagnoser = EvaluationCache(_records(server, tmp_path / "diagnoser", url), KEYS.keys["diagnoser"], KEYS.registry)
    assert diagnoser.get(KEY) is None

    detector.put(KEY, MEASURED)

    listed = [o["Key"] for o in server.client().list_objects_v2(Bucket=bucket)["Contents"]]
    assert listed == [f"modelguard/artifacts/evaluations/{KEY}.json"]
    read = diagnoser.get(KEY)
    assert read is not None and (read.metrics, read.source, read.seconds) == ({"auc": 0.8125}, "self_reported", 1.5)


def test_an_entry_rewritten_in_the_bucket_is_not_read(server: S3Server, tmp_path: Path) -> None:
    bucket = server.new_bucket()
    cache = EvaluationCache(_records(server, tmp_path, f"s3://{bucket}"), KEYS.keys["detector"], KEYS.registry)
    cache.put(KEY, MEASURED)
    stored = json.loads(server.client().get_object(Bucket=bucket, Key=f"evaluations/{KEY}.json")["Body"].read())
    document = json.loads(base64.b64decode(stored["payload"]))
    forged = {**stored, "payload": base64.b64encode(json.dumps({**document, "metrics": {"auc": 0.99}}).encode())}
    body = json.dumps({**forged, "payload": forged["payload"].decode()}).encode()
    server.client().put_object(Bucket=bucket, Key=f"evaluations/{KEY}.json", Body=body)

    assert cache.get(KEY) is None


def test_a_bucket_that_does_not_answer_is_a_miss_and_keeps_nothing(server: S3Server, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    records = _records(server, tmp_path, "s3://nobody-home/artifacts", f"http://127.0.0.1:{closed}")
    with pytest.raises(RecordsUnavailable, match="cannot read s3://nobody-home/artifacts/evaluations/") as refused:
        records.read(KEY)
    assert "\n" not in str(refused.value)
    cache = EvaluationCache(records, KEYS.keys["detector"], KEYS.registry)
    cache.put(KEY, MEASURED)  # logged, not raised: the measurement stands, it is only not kept
    assert cache.get(KEY) is None


def test_pruning_removes_the_spaces_records_written_before_the_cutoff_and_nothing_else(
    server: S3Server, tmp_path: Path
) -> None:
    """In a bucket, `modelguard evaluations prune`'s removal lists and deletes the space's records only: another
    space's records, an object beside them that is not a record and anything outside the prefix stay."""
    bucket = server.new_bucket()
    records = _records(server, tmp_path, f"s3://{bucket}/modelguard/artifacts")
    names = [f"{n:064x}" for n in range(3)]
    for name in names:
        records.write(name, b"{}")
    client = server.client()
    beside = ["modelguard/artifacts/evaluations/notes.json", "modelguard/artifacts/other/" + "a" * 64 + ".json"]
    for key in [*beside, "elsewhere/evaluations/" + "b" * 64 + ".json"]:
        client.put_object(Bucket=bucket, Key=key, Body=b"{}")

    listed = sorted(record.name for record in records.listed())
    assert listed == names and records.where == f"s3://{bucket}/modelguard/artifacts/evaluations/"
    kept = prune_records(records, datetime.now(UTC) - timedelta(days=1), apply=True)
    assert (kept.examined, kept.stale, kept.removed) == (3, 0, 0)

    pruned = prune_records(records, datetime.now(UTC) + timedelta(days=1), apply=True)

    assert (pruned.examined, pruned.stale, pruned.stale_bytes, pruned.removed) == (3, 3, 6, 3)
    left = sorted(o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", []))
    assert left == sorted([*beside, "elsewhere/evaluations/" + "b" * 64 + ".json"])
    assert all(records.read(name) is None for name in names)


def test_a_bucket_that_cannot_be_listed_is_one_line(server: S3Server, tmp_path: Path) -> None:
    records = _records(server, tmp_path, "s3://modelguard-no-such-bucket/artifacts")
    with pytest.raises(RecordsUnavailable) as refused:
        prune_records(records, datetime.now(UTC), apply=False)
    assert "\n" not in str(refused.value) and "modelguard-no-such-bucket" in str(refused.value)
