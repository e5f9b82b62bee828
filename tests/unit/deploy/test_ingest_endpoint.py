"""POST /evaluations over real HTTP: the token, one readable reason for a bad body, and a signed report handed
to the publisher with the incident id answered; the artifacts it names must have been uploaded first."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from contracts.events.evaluation import EvaluationReported
from libs.events.codec import SignedEvent, open_envelope
from modelguard.reporter import incident_of
from tests.support.sample_events import Keys, evaluation
from tests.unit.deploy.loopback_ingestion import TOKEN, loopback_ingestion


@dataclass
class Endpoint:
    url: str
    published: list[SignedEvent]
    keys: Keys

    def call(self, method: str, path: str, token: str | None = TOKEN, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.request(method, self.url + path, headers=headers | kwargs.pop("headers", {}), **kwargs)

    def upload(self, content: bytes, media_type: str) -> httpx.Response:
        digest = hashlib.sha256(content).hexdigest()
        return self.call("PUT", f"/artifacts/{digest}", content=content, headers={"Content-Type": media_type})


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[Endpoint]:
    with loopback_ingestion(tmp_path) as running:
        yield Endpoint(running.url, running.published, running.keys)


def _body(report: EvaluationReported) -> dict[str, Any]:
    return report.model_dump(mode="json")


def _upload_artifacts_of(endpoint: Endpoint, seed: str) -> None:
    for content, media_type in ((f"base-{seed}", "application/x-tar"), (f"candidate-{seed}", "application/x-tar")):
        assert endpoint.upload(content.encode(), media_type).status_code == 201
    assert endpoint.upload(f"data-{seed}".encode(), "text/csv").status_code == 201


@pytest.mark.parametrize("token", [None, "wrong-token-0123456789", TOKEN + "x"])
def test_a_missing_or_wrong_token_is_401_on_every_route(endpoint: Endpoint, token: str | None) -> None:
    for method, path in (("POST", "/evaluations"), ("PUT", "/artifacts/" + "0" * 64), ("GET", "/incidents/x/runs/y")):
        answer = endpoint.call(method, path, token=token, json={})
        assert answer.status_code == 401, (method, path)
        assert answer.json() == {"error": "missing or wrong bearer token"}
        assert answer.headers["www-authenticate"].startswith("Bearer")
    assert endpoint.published == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "the body is not JSON: "),
        (b"[1, 2]", "the body must be a JSON object: an EvaluationReported payload"),
        (_body(evaluation()) | {"workspace": None}, "workspace: Input should be a valid dictionary"),
        (_body(evaluation()) | {"run_id": ""}, "run_id: String should have at least 1 character"),
        (_body(evaluation()) | {"extra": 1}, "extra: Extra inputs are not permitted"),
        (
            _body(evaluation()) | {"workspace": _body(evaluation())["workspace"] | {"base_commit": "main"}},
            "workspace.base_commit: String should match pattern '^[0-9a-f]{40}$'",
        ),
        (
            _body(evaluation()) | {"workspace": _body(evaluation())["workspace"] | {"model_urn": "urn:other"}},
            "workspace.model_urn: no policy applies to urn:other",
        ),
    ],
)
def test_a_bad_body_is_422_with_one_readable_reason(endpoint: Endpoint, body: Any, reason: str) -> None:
    _upload_artifacts_of(endpoint, "a")
    content = body if isinstance(body, bytes) else None
    answer = endpoint.call("POST", "/evaluations", content=content, json=None if content else body)
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error.startswith(reason) and "\n" not in error
    assert endpoint.published == []


def test_an_evaluation_naming_an_artifact_not_uploaded_is_422(endpoint: Endpoint) -> None:
    report = evaluation(seed="b")
    endpoint.upload(b"base-b", "application/x-tar")
    answer = endpoint.call("POST", "/evaluations", json=_body(report))
    assert answer.status_code == 422
    missing = report.workspace.candidate_snapshot.sha256
    assert answer.json()["error"] == (
        f"workspace.candidate_snapshot: artifact {missing} is not stored; PUT it to /artifacts/{missing} first"
    )


def test_an_upload_whose_bytes_are_not_its_digest_is_refused(endpoint: Endpoint) -> None:
    answer = endpoint.call("PUT", "/artifacts/" + "a" * 64, content=b"something else")
    assert answer.status_code == 422
    assert answer.json()["error"].startswith("the body's sha256 is ")
    stored = endpoint.upload(b"snapshot", "application/x-tar")
    assert stored.status_code == 201
    assert stored.json() == {
        "sha256": hashlib.sha256(b"snapshot").hexdigest(),
        "media_type": "application/x-tar",
        "size": 8,
    }


def test_a_good_evaluation_is_202_with_its_incident_and_a_verified_report_published(endpoint: Endpoint) -> None:
    _upload_artifacts_of(endpoint, "a")
    report = evaluation(run_id="ci-42-1", seed="a")

    answer = endpoint.call("POST", "/evaluations", json=_body(report))

    assert answer.status_code == 202
    [published] = endpoint.published
    verified = open_envelope(published.envelope_bytes, endpoint.keys.registry)
    assert verified.event.payload == report and verified.event.meta.producer == "reporter"
    assert answer.json() == {
        "incident_id": incident_of(report, "f1"),
        "event_id": verified.event.meta.event_id,
        "run_id": "ci-42-1",
        "verdict_url": f"/incidents/{incident_of(report, 'f1')}/runs/ci-42-1",
    }
    verdict = endpoint.call("GET", answer.json()["verdict_url"])
    assert verdict.status_code == 200
    assert verdict.json() | {"events": None} == {
        "incident_id": incident_of(report, "f1"),
        "run_id": "ci-42-1",
        "status": "pending",
        "finished": False,
        "outcome": None,
        "gate": None,
        "events": None,
        "ci": None,
        "reason": None,
    }
    assert endpoint.call("GET", "/incidents/not-an-incident/runs/ci-42-1").status_code == 422
