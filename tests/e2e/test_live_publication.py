"""The deployment path of publication: the stack's publisher in live mode, with apply permission, writing over
HTTP to servers that answer as GitHub and DataHub GMS do. Exactly once across a CI retry, and the tokens it
was given appear nowhere in what ModelGuard leaves behind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from modelguard.submit import submit, wait_for_run
from tests.e2e.conftest import CHURN
from tests.support.fake_datahub_gms import FakeDataHubGms
from tests.support.fake_github import FakeGitHub
from tests.support.running_stack import RunningStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

GITHUB_TOKEN = "ghp_e2eSecretTokenThatMustNotLeak0001"
GMS_TOKEN = "dhp_e2eSecretTokenThatMustNotLeak0002"
REPO = "acme-analytics/churn-model"


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[FakeGitHub, FakeDataHubGms]]:
    github, gms = FakeGitHub(tokens={GITHUB_TOKEN: "modelguard-bot"}), FakeDataHubGms(token=GMS_TOKEN)
    with github, gms:
        yield github, gms


@pytest.fixture(scope="module")
def live_stack(
    tmp_path_factory: pytest.TempPathFactory, servers: tuple[FakeGitHub, FakeDataHubGms]
) -> Iterator[RunningStack]:
    github, gms = servers
    env = {
        "MODELGUARD_PUBLISH_MODE": "live",
        "MODELGUARD_PUBLISH_APPLY": "github,datahub",
        "MODELGUARD_GITHUB_API_URL": github.base_url,
        "GITHUB_TOKEN": GITHUB_TOKEN,
        "DATAHUB_GMS_URL": gms.base_url,
        "DATAHUB_GMS_TOKEN": GMS_TOKEN,
    }
    with running_stack(tmp_path_factory.mktemp("live"), env) as running:
        yield running


def _files_under(root: Path) -> Iterator[Path]:
    yield from (p for p in root.rglob("*") if p.is_file())


def test_live_publication_happens_once_over_http_and_leaks_no_token(
    live_stack: RunningStack, servers: tuple[FakeGitHub, FakeDataHubGms]
) -> None:
    github, gms = servers
    first = submit(live_stack.settings, CHURN, "live-run-1", 42)
    events = wait_for_run(live_stack.settings, first, timeout_s=600)
    published = [e.event.payload for e in events if e.event.meta.event_type == "Published"][-1]
    assert {c.channel: (c.status, c.dry_run) for c in published.channels} == {
        "github": ("created", False),
        "datahub": ("created", False),
    }
    incident = first.signed.event.meta.incident_id
    assert len(github.comments_with(REPO, 42, f"modelguard:incident={incident}")) == 1
    [run] = github.runs(REPO)
    assert run["conclusion"] == "action_required" and run["external_id"] == incident
    incident_urn = f"urn:li:incident:modelguard-{incident.removeprefix('inc-')}"
    stored = gms.aspect(incident_urn, "incidentInfo")
    assert stored is not None and len(gms.ingested()) >= 1
    assert stored["source"]["type"] == "ASSERTION_FAILURE", "the incident names the gate's assertion"
    assertion = stored["source"]["sourceUrn"]
    assert gms.aspect(assertion, "assertionInfo") is not None
    [gate_run] = gms.timeseries_values(assertion, "assertionRunEvent")
    assert gate_run["result"]["type"] == "FAILURE" and gate_run["runId"] == f"{incident}/live-run-1"

    github_writes_before, gms_writes_before = len(github.writes()), len(gms.ingested())
    retry = submit(live_stack.settings, CHURN, "live-run-2", 42)
    events = wait_for_run(live_stack.settings, retry, timeout_s=600)
    published = [e.event.payload for e in events if e.event.meta.event_type == "Published"][-1]
    assert {c.channel: c.status for c in published.channels} == {"github": "noop", "datahub": "noop"}
    assert len(github.writes()) == github_writes_before, "a no-op repeat writes nothing to GitHub"
    new_writes = [r.json()["proposal"]["aspectName"] for r in gms.ingested()[gms_writes_before:]]
    assert new_writes == ["assertionRunEvent"], "and to DataHub only its own run of the gate"
    assert len(gms.timeseries_values(assertion, "assertionRunEvent")) == 2
    assert len(github.comments_with(REPO, 42, f"modelguard:incident={incident}")) == 1

    for path in _files_under(live_stack.settings.home):  # logs, ledger, artifacts, publications, traces
        data = path.read_bytes()
        assert GITHUB_TOKEN.encode() not in data and GMS_TOKEN.encode() not in data, f"a token leaked into {path}"
