"""The live publisher against loopback servers that answer as GitHub and DataHub GMS do and record every request.

First run creates, a repeat changes nothing, a changed finding updates in place, a failure halfway is retried
without duplicates, two racing publishers leave one of everything, every page of comments is searched, tokens
never leak, and without permission to apply nothing remote is written.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from contracts.common import AssetOwners
from contracts.events.publication import Published
from libs.artifacts.store import LocalArtifactStore
from libs.events.codec import SignedEvent
from libs.settings import PublishingSettings, Settings, load_settings
from services.publisher.attestation_step import attestor
from services.publisher.channel_errors import ChannelUnavailable
from services.publisher.finding import finding_of
from services.publisher.github_channel import LiveGitHub
from services.publisher.github_documents import Repository
from services.publisher.github_retry import RetryPolicy
from services.publisher.handler import publish
from services.publisher.publication_channels import LiveOptions, PublicationChannels, publication_channels
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_review import render_review
from tests.support.fake_datahub_gms import FakeDataHubGms
from tests.support.fake_github import FakeApp, FakeGitHub
from tests.support.sample_events import Keys
from tests.unit.publisher.publisher_inputs import (
    DATA_TEAM,
    INCIDENT,
    MODEL,
    OWNERS,
    make_keys,
    signed,
    upstream_ownership,
    validated_payload,
    withheld_payload,
)

GITHUB_TOKEN = "ghp_" + "S3cr3tT0k3n" * 3
GMS_TOKEN = "eyJhbGciOiJIUzI1NiJ9.gms-s3cr3t-token.sig"
REPO, PR = "acme/churn-model", 7
MARKER = f"<!-- modelguard:incident={INCIDENT} -->"
NOW = 1_800_000_000.0
COMMENTS_PATH = r"/repos/acme/churn-model/issues/7/comments$"


def incident_urn_of(incident_id: str) -> str:
    return f"urn:li:incident:modelguard-{incident_id.removeprefix('inc-')}"


@dataclass
class Loopback:
    github: FakeGitHub
    gms: FakeDataHubGms
    root: Path
    keys: Keys
    sleeps: list[float]

    def settings(self, apply: tuple[str, ...] = ("github", "datahub"), **publishing: object) -> Settings:
        base = load_settings()
        return dataclasses.replace(
            base,
            publish_dir=self.root / "publications",
            artifacts_dir=self.root / "artifacts",
            publishing=PublishingSettings(
                mode="live",
                apply=frozenset(apply),
                github_api_url=self.github.base_url,
                datahub_gms_url=self.gms.base_url,
                **publishing,  # type: ignore[arg-type]
            ),
        )

    def channels(
        self,
        settings: Settings | None = None,
        env: dict[str, str] | None = None,
        clock: Callable[[], float] = lambda: NOW,
    ) -> PublicationChannels:
        options = LiveOptions(
            sleep=self.sleeps.append, clock=clock, retry=RetryPolicy(max_attempts=4), datahub_retries=0
        )
        environment = {"GITHUB_TOKEN": GITHUB_TOKEN, "DATAHUB_GMS_TOKEN": GMS_TOKEN} if env is None else env
        return publication_channels(settings or self.settings(), environment, options)

    def publish(self, source: SignedEvent, channels: PublicationChannels | None = None) -> Published:
        used = channels or self.channels()
        attest = attestor(LocalArtifactStore(self.root / "artifacts"), self.keys["publisher"])
        return publish(source, used.github, used.datahub, attest)

    def incident(self) -> dict[str, Any] | None:
        return self.gms.aspect(incident_urn_of(INCIDENT), "incidentInfo")


@pytest.fixture
def loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    with FakeGitHub(tokens={GITHUB_TOKEN: "modelguard[bot]"}) as github, FakeDataHubGms(token=GMS_TOKEN) as gms:
        yield Loopback(github, gms, tmp_path, make_keys(), [])


def _statuses(published: Published) -> list[str]:
    return [c.status for c in published.channels]


def _ingested_aspects(gms: FakeDataHubGms) -> list[str]:
    """The aspect names of every proposal GMS was sent, in order."""
    return [r.json()["proposal"]["aspectName"] for r in gms.ingested()]


def _incident_aspects(gms: FakeDataHubGms) -> int:
    return sum(1 for urn, _ in gms.aspects if urn.startswith("urn:li:incident:"))


def test_first_run_creates_a_repeat_changes_nothing_a_changed_finding_updates_in_place(loopback: Loopback) -> None:
    github, gms = loopback.github, loopback.gms
    first = loopback.publish(signed(loopback.keys, validated_payload("run-1")))
    assert _statuses(first) == ["created"] * 6  # comment, review, check run, gate assertion, its run, incident
    assert not any(c.dry_run for c in first.channels)

    (comment,) = github.comments_with(REPO, PR, MARKER)
    assert first.attestation is not None
    assert f"attestation `sha256:{first.attestation.sha256}`" in comment["body"]
    (review,) = github.pull(REPO, PR).reviews
    assert review["state"] == "COMMENTED" and review["commit_id"] == validated_payload().workspace.candidate_commit
    (suggestion,) = review["comments"]
    assert (suggestion["path"], suggestion["line"], suggestion["side"]) == ("churn_model/features.py", 6, "RIGHT")
    assert suggestion["body"] == (
        '```suggestion\n    months = frame["tenure_months"]\n    months = months.where(months != 0)\n```\n'
    )
    (run,) = github.runs(REPO)
    assert (run["name"], run["conclusion"], run["external_id"]) == ("ModelGuard", "action_required", INCIDENT)
    assert run["details_url"] == comment["html_url"]
    # the publication carries where GitHub says people read it: the comment on the pull request, the check run
    assert [c.url for c in first.channels if c.channel == "github"] == [comment["html_url"], None, run["html_url"]]
    assert all(c.url is None for c in first.channels if c.channel == "datahub")
    incident = loopback.incident()
    assert incident is not None
    assert incident["priority"] == 1  # HIGH: the model's deployment is IN_SERVICE
    assert incident["status"]["stage"] == "WORK_IN_PROGRESS" and incident["status"]["state"] == "ACTIVE"
    assert sorted(a["actor"] for a in incident["assignees"]) == sorted(OWNERS)
    assert f"`{INCIDENT}`" in incident["description"] and first.attestation.sha256 in incident["description"]
    writes_after_first = len(github.writes()) + len(gms.writes())

    # A CI retry: a new run, new events, a new attestation; the same finding. Only the gate's new run is written.
    repeat = loopback.publish(signed(loopback.keys, validated_payload("run-2"), seconds=60))
    assert _statuses(repeat) == ["noop", "noop", "noop", "noop", "created", "noop"]
    assert [c.url for c in repeat.channels][:3] == [comment["html_url"], None, run["html_url"]]  # still there
    assert repeat.attestation is not None and repeat.attestation != first.attestation
    assert len(github.writes()) + len(gms.writes()) == writes_after_first + 1
    assert _ingested_aspects(gms)[-1] == "assertionRunEvent"

    # The finding changes (a different metric after repair): updated in place, nothing new.
    changed = loopback.publish(signed(loopback.keys, validated_payload("run-3", metric=0.81), seconds=120))
    # the review is per patch (same patch); the gate is the same, its run new
    assert _statuses(changed) == ["updated", "noop", "updated", "noop", "created", "updated"]
    (comment,) = github.comments_with(REPO, PR, MARKER)
    assert "0.8100" in comment["body"]
    assert len(github.pull(REPO, PR).reviews) == 1 and len(github.runs(REPO)) == 1
    assert _incident_aspects(gms) == 1
    assertion = incident["source"]["sourceUrn"]
    assert incident["source"]["type"] == "ASSERTION_FAILURE" and assertion.startswith("urn:li:assertion:")
    runs = gms.timeseries_values(assertion, "assertionRunEvent")
    assert [r["runId"] for r in runs] == [f"{INCIDENT}/run-3", f"{INCIDENT}/run-2", f"{INCIDENT}/run-1"]
    assert {r["result"]["type"] for r in runs} == {"FAILURE"} and runs[0]["asserteeUrn"] == MODEL
    assert github.count("PATCH", r"/issues/comments/\d+$") == 1 and github.count("PATCH", r"/check-runs/\d+$") == 1


def test_a_failure_halfway_is_retried_without_duplicates(loopback: Loopback) -> None:
    github, gms = loopback.github, loopback.gms
    source = signed(loopback.keys, withheld_payload())
    github.fail("GET", COMMENTS_PATH, 502)  # a read: retried in place
    github.fail("POST", COMMENTS_PATH, 502, after_effect=True)  # created, but the answer is lost
    gms.fail("POST", r"^/aspects$", 500, message="GMS is restarting")  # DataHub down after GitHub is done

    with pytest.raises(ChannelUnavailable):
        loopback.publish(source)
    assert len(github.comments_with(REPO, PR, MARKER)) == 1  # the lost answer did not lead to a second POST
    assert github.count("POST", COMMENTS_PATH) == 1
    assert loopback.incident() is None

    again = loopback.publish(source)  # the bus delivers the input again
    # comment, check run, gate assertion, its run, incident
    assert _statuses(again) == ["noop", "noop", "created", "created", "created"]
    assert len(github.comments_with(REPO, PR, MARKER)) == 1 and len(github.runs(REPO)) == 1
    assert loopback.incident() is not None and _incident_aspects(gms) == 1
    assert loopback.sleeps  # backoff happened, through the injected sleep


def test_rate_limits_are_waited_out_as_github_asks(loopback: Loopback) -> None:
    github = loopback.github
    github.fail("GET", COMMENTS_PATH, 429, headers={"Retry-After": "7"}, message="slow down")
    reset = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) + 30)}
    github.fail("POST", COMMENTS_PATH, 403, headers=reset, message="API rate limit exceeded")
    github.fail("POST", r"/check-runs$", 403, message="You have exceeded a secondary rate limit")

    published = loopback.publish(signed(loopback.keys, withheld_payload()))
    assert _statuses(published) == ["created"] * 5
    assert loopback.sleeps == [7.0, 31.0, 60.0]
    assert len(github.comments_with(REPO, PR, MARKER)) == 1 and len(github.runs(REPO)) == 1


def test_a_rate_limit_longer_than_the_budget_is_left_to_the_bus(loopback: Loopback) -> None:
    loopback.github.fail("GET", COMMENTS_PATH, 429, headers={"Retry-After": "3600"})
    with pytest.raises(ChannelUnavailable) as raised:
        loopback.publish(signed(loopback.keys, withheld_payload()))
    assert raised.value.retry_after_s == 300.0 and loopback.sleeps == []


def test_two_publishers_racing_on_one_incident_leave_one_of_everything(loopback: Loopback) -> None:
    github, gms = loopback.github, loopback.gms
    github.hold("GET", COMMENTS_PATH, parties=2)  # both read "no comment yet" before either creates
    gms.hold("GET", r"^/aspects/urn(%3A|:)li(%3A|:)incident", parties=2)  # both read "no incident yet"
    source = signed(loopback.keys, validated_payload())
    results: list[Published] = []
    errors: list[BaseException] = []

    def race() -> None:
        try:
            results.append(loopback.publish(source, loopback.channels()))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=race) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors and len(results) == 2

    assert github.count("POST", COMMENTS_PATH) == 2, "the race really happened: both created a comment"
    assert len(github.comments_with(REPO, PR, MARKER)) == 1
    assert [r["state"] for r in github.pull(REPO, PR).reviews] == ["COMMENTED"]
    assert len(github.runs(REPO)) == 1
    incident_writes = [r for r in gms.ingested() if r.json()["proposal"]["entityUrn"].startswith("urn:li:incident:")]
    assert len(incident_writes) == 2 and _incident_aspects(gms) == 1  # both wrote, one incident under one URN
    assertion = loopback.incident()["source"]["sourceUrn"]  # type: ignore[index]
    assert len(gms.timeseries_values(assertion, "assertionRunEvent")) == 1, "one run of the gate, however many wrote it"
    comment_statuses = sorted(r.channels[0].status for r in results)
    assert comment_statuses == ["created", "noop"]


def test_every_page_of_comments_is_searched(loopback: Loopback) -> None:
    github = loopback.github
    github.seed_comments(REPO, PR, 230)  # three pages of 100; ours lands on the third
    source = signed(loopback.keys, withheld_payload())
    assert _statuses(loopback.publish(source))[0] == "created"
    assert _statuses(loopback.publish(source))[0] == "noop"
    assert len(github.comments_with(REPO, PR, MARKER)) == 1
    pages = {r.query.get("page", "1") for r in github.requests if r.method == "GET" and r.path.endswith("/comments")}
    assert pages == {"1", "2", "3"}


def test_without_permission_to_apply_nothing_remote_is_written(loopback: Loopback) -> None:
    github, gms = loopback.github, loopback.gms
    settings = loopback.settings(apply=())
    published = loopback.publish(signed(loopback.keys, validated_payload()), loopback.channels(settings))
    assert _statuses(published) == ["created"] * 6 and all(c.dry_run for c in published.channels)
    assert all(c.url is None for c in published.channels), "a dry run published nothing to link to"
    assert github.writes() == [] and gms.writes() == []
    assert github.requests and gms.requests  # it did read what is there, to say what it would do
    planned = settings.publish_dir / "dry-run"
    comment_plan = json.loads(next(planned.glob("github/*/comment-*.json")).read_text())
    assert comment_plan["method"] == "POST" and MARKER in comment_plan["json"]["body"]
    assert next(planned.glob("github/*/review-*.json")) and next(planned.glob("github/*/check-run-*.json"))
    (incident_file,) = (planned / "datahub").glob("urn_li_incident*.json")
    assert json.loads(incident_file.read_text())[0]["aspectName"] == "incidentInfo"


def test_a_withheld_data_cause_names_its_owners_in_a_dry_run_and_when_applied(loopback: Loopback) -> None:
    payload = withheld_payload(
        "cause_in_data: covariate_drift has no code repair",
        hypothesis="covariate_drift",
        reason_code="cause_in_data",
        owners=[upstream_ownership(), AssetOwners(asset=MODEL)],
    )
    told = f"`{DATA_TEAM}` (DATAOWNER)"
    unowned = f"no owner recorded in DataHub for `{MODEL}` (model)"
    settings = loopback.settings(apply=())
    loopback.publish(signed(loopback.keys, payload), loopback.channels(settings))
    planned = settings.publish_dir / "dry-run"
    body = json.loads(next(planned.glob("github/*/comment-*.json")).read_text())["json"]["body"]
    assert told in body and unowned in body
    (incident_file,) = (planned / "datahub").glob("urn_li_incident*.json")
    info = json.loads(incident_file.read_text())[0]["aspect"]["json"]
    assert [a["actor"] for a in info["assignees"]] == [DATA_TEAM] and told in info["description"]

    loopback.publish(signed(loopback.keys, payload, seconds=60))
    (comment,) = loopback.github.comments_with(REPO, PR, MARKER)
    assert told in comment["body"] and unowned in comment["body"]
    incident = loopback.incident()
    assert incident is not None and [a["actor"] for a in incident["assignees"]] == [DATA_TEAM]


def test_tokens_never_appear_in_logs_events_exceptions_or_artifacts(
    loopback: Loopback, caplog: pytest.LogCaptureFixture
) -> None:
    github, gms = loopback.github, loopback.gms
    caplog.set_level(logging.DEBUG)
    # servers that echo the credential back in their error messages
    github.fail("POST", COMMENTS_PATH, 422, message=f"Validation failed for Bearer {GITHUB_TOKEN}")
    gms.fail("POST", r"^/aspects$", 500, message=f"bad token {GMS_TOKEN}")
    source = signed(loopback.keys, validated_payload())
    with pytest.raises(ChannelUnavailable) as raised:
        loopback.publish(source)
    published = loopback.publish(source)
    texts = [
        str(raised.value),
        repr(raised.value),
        caplog.text,
        published.model_dump_json(),
        *(p.read_text(errors="replace") for p in loopback.root.rglob("*") if p.is_file()),
    ]
    assert "Validation failed for Bearer [REDACTED]" in caplog.text
    for secret in (GITHUB_TOKEN, GMS_TOKEN):
        assert not [t for t in texts if secret in t]
    assert github.requests[0].headers["authorization"] == f"Bearer {GITHUB_TOKEN}"  # it was used, just not shown


def test_a_github_app_buys_an_installation_token_with_a_signed_jwt(
    loopback: Loopback, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    private_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_file = tmp_path / "app.pem"
    key_file.write_bytes(
        private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    loopback.github.app = FakeApp("4242", 99, private_key.public_key())
    settings = loopback.settings(
        github_app_id="4242", github_app_private_key_file=key_file, github_app_installation_id=99
    )
    channels = loopback.channels(settings, env={"DATAHUB_GMS_TOKEN": GMS_TOKEN}, clock=time.time)
    published = loopback.publish(signed(loopback.keys, withheld_payload()), channels)
    assert _statuses(published) == ["created"] * 5
    assert loopback.github.count("POST", r"/access_tokens$") == 1  # cached for the following requests
    issued = [t for t in loopback.github.tokens if t.startswith("ghs_")]
    assert len(issued) == 1
    assert issued[0] not in caplog.text and issued[0] not in published.model_dump_json()
    assert loopback.gms.aspect(incident_urn_of(INCIDENT), "incidentInfo") is not None


def test_a_suggestion_outside_the_pull_requests_diff_falls_back_to_the_patch_as_text(loopback: Loopback) -> None:
    loopback.github.review_lines["churn_model/features.py"] = {40, 41}  # the PR touched other lines only
    published = loopback.publish(signed(loopback.keys, validated_payload()))
    assert _statuses(published) == ["created"] * 6
    (review,) = loopback.github.pull(REPO, PR).reviews
    assert review["state"] == "COMMENTED" and review["comments"] == []
    assert "```diff" in review["body"] and "months.where(months != 0)" in review["body"]


def test_an_incident_a_person_resolved_is_left_alone(loopback: Loopback) -> None:
    source = signed(loopback.keys, validated_payload())
    loopback.publish(source)
    resolved = loopback.incident()
    assert resolved is not None
    resolved["status"] |= {"state": "RESOLVED", "lastUpdated": {"time": 5, "actor": "urn:li:corpuser:carol"}}
    loopback.gms.put_aspect(incident_urn_of(INCIDENT), "incidentInfo", resolved)
    ingested = len(loopback.gms.ingested())

    again = loopback.publish(signed(loopback.keys, validated_payload("run-2", metric=0.81), seconds=60))
    assert again.channels[-1].status == "noop"
    assert _ingested_aspects(loopback.gms)[ingested:] == ["assertionRunEvent"], "the gate's new run, nothing else"
    incident = loopback.incident()
    assert incident is not None and incident["status"]["state"] == "RESOLVED"


def test_two_publishers_racing_on_the_review_submit_exactly_one(loopback: Loopback) -> None:
    github = loopback.github
    github.hold("GET", r"/pulls/7/reviews$", parties=2)  # both read "no review yet"
    review = render_review(finding_of(INCIDENT, validated_payload()), PublicationLinks(INCIDENT))
    assert review is not None
    statuses: list[str] = []

    def race() -> None:
        live = loopback.channels().github
        assert isinstance(live, LiveGitHub)
        statuses.append(live.reviews.upsert(Repository.parse(REPO), PR, review, "review-race"))

    threads = [threading.Thread(target=race) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(statuses) == 2
    assert [r["state"] for r in github.pull(REPO, PR).reviews] == ["COMMENTED"]
    assert github.count("POST", r"/pulls/7/reviews$") == 2, "both tried; GitHub allows one pending review per user"
