"""Publishing in fixture mode: created once, no-op on a repeat, updated in place when the finding changes."""

from __future__ import annotations

import json
from pathlib import Path

from contracts.common import PolicyRef
from contracts.events.diagnosis import DiagnosisReport, RankedHypothesis
from contracts.events.repair import RepairWithheld
from services.publisher.fixture_channels import FixtureDataHub, FixtureGitHub
from services.publisher.handler import publish
from tests.support.sample_events import artifact, gate, workspace


def withheld(reason: str) -> RepairWithheld:
    report = DiagnosisReport(
        evidence=[],
        hypotheses=[
            RankedHypothesis(
                name="feature_transformation", score=0.5, confidence="low", supporting=[], counter=[], explanation="x"
            ),
        ],
        invalid_values={"base": 0, "candidate": 3},
        suspect=None,
        context_digest="0" * 64,
    )
    return RepairWithheld(
        run_id="run-1",
        workspace=workspace(),
        policy=PolicyRef(name="churn", artifact=artifact(b"policy")),
        gate=gate(),
        diagnosis=report,
        hypothesis=None,
        reason=reason,
    )


def test_first_creates_repeat_is_noop_change_updates(tmp_path: Path) -> None:
    github, datahub = FixtureGitHub(tmp_path), FixtureDataHub(tmp_path)
    first = publish("inc-0123456789abcdef", "RepairWithheld", withheld("diagnosis abstained"), github, datahub, 1)
    assert [c.status for c in first.channels] == ["created", "created"]
    repeat = publish("inc-0123456789abcdef", "RepairWithheld", withheld("diagnosis abstained"), github, datahub, 2)
    assert [c.status for c in repeat.channels] == ["noop", "noop"]
    changed = publish("inc-0123456789abcdef", "RepairWithheld", withheld("policy refused"), github, datahub, 3)
    assert [c.status for c in changed.channels] == ["updated", "noop"]  # the incident's semantics did not change

    comments = list((tmp_path / "github").rglob("*.md"))
    assert len(comments) == 1
    assert "<!-- modelguard:incident=inc-0123456789abcdef -->" in comments[0].read_text()
    assert "policy refused" in comments[0].read_text()
    incidents = list((tmp_path / "datahub").glob("*.json"))
    assert len(incidents) == 1
    mcp = json.loads(incidents[0].read_text())[0]
    assert mcp["entityUrn"] == "urn:li:incident:modelguard-0123456789abcdef"
    assert mcp["aspectName"] == "incidentInfo"
    assert mcp["aspect"]["json"]["entities"] == [workspace().model_urn]
