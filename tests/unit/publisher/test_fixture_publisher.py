"""Publishing in fixture mode: created once, no-op on a repeat, updated in place when the finding changes."""

from __future__ import annotations

import json
from pathlib import Path

from services.publisher.fixture_channels import FixtureGitHub, fixture_datahub
from services.publisher.handler import publish
from tests.unit.publisher.publisher_inputs import (
    INCIDENT,
    MODEL,
    make_keys,
    signed,
    validated_payload,
    withheld_payload,
)


def test_first_creates_repeat_is_noop_change_updates(tmp_path: Path) -> None:
    keys = make_keys()
    github, datahub = FixtureGitHub(tmp_path), fixture_datahub(tmp_path)

    def run(reason: str, seconds: int) -> list[str]:
        published = publish(signed(keys, withheld_payload(reason), seconds=seconds), github, datahub)
        assert all(c.dry_run for c in published.channels)
        return [c.status for c in published.channels]

    # comment, check run, the gate's assertion and this run of it, incident on the model
    assert run("diagnosis abstained", 1) == ["created"] * 5
    assert run("diagnosis abstained", 2) == ["noop"] * 5  # the same run, published again later: nothing new
    # the reason is in the comment, the check run and the incident, each updated in place; the gate did not change
    assert run("policy refused", 3) == ["updated", "updated", "noop", "noop", "updated"]

    comments = list((tmp_path / "github").rglob("*.md"))
    assert len(comments) == 1
    text = comments[0].read_text()
    assert text.startswith(f"<!-- modelguard:incident={INCIDENT} -->")
    assert "policy refused" in text
    incidents = list((tmp_path / "datahub").glob("urn_li_incident*.json"))
    assert len(incidents) == 1
    mcp = json.loads(incidents[0].read_text())[0]
    assert mcp["entityUrn"] == "urn:li:incident:modelguard-0123456789abcdef"
    assert mcp["aspectName"] == "incidentInfo"
    assert mcp["aspect"]["json"]["entities"] == [MODEL]
    assert mcp["aspect"]["json"]["status"]["stage"] == "TRIAGE"  # an abstention is still being triaged


def test_a_validated_repair_writes_the_review_request_and_an_action_required_check_run(tmp_path: Path) -> None:
    keys = make_keys()
    github, datahub = FixtureGitHub(tmp_path), fixture_datahub(tmp_path)
    first = publish(signed(keys, validated_payload()), github, datahub)
    # comment, review, check run, the gate's assertion, its run, incident
    assert [c.status for c in first.channels] == ["created"] * 6
    repeat = publish(signed(keys, validated_payload(run_id="run-2"), seconds=5), github, datahub)
    assert [c.status for c in repeat.channels] == ["noop", "noop", "noop", "noop", "created", "noop"]  # a new run

    (review_file,) = (tmp_path / "github").rglob("review-*.json")
    review = json.loads(review_file.read_text())
    assert review["event"] == "COMMENT"
    assert review["comments"][0]["body"].startswith("```suggestion\n")
    (check_file,) = (tmp_path / "github").rglob("check-runs/*.json")
    assert json.loads(check_file.read_text())["conclusion"] == "action_required"
    assert len(list((tmp_path / "github").rglob("*.md"))) == 1
