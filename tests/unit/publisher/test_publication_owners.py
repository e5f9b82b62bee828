"""The owners a withheld repair names reach people: in the PR comment (which is also the check run's text and the
DataHub incident's description), as the DataHub incident's assignees, and in a dry run's files. An asset DataHub
records no owner for is said to have none."""

from __future__ import annotations

import json
from pathlib import Path

from contracts.common import AssetOwners
from contracts.events.repair import RepairWithheld
from services.publisher.finding import finding_of
from services.publisher.fixture_channels import FixtureGitHub, fixture_datahub
from services.publisher.handler import publish
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_comment import render_content
from services.publisher.render_incident import IncidentDraft, render_incidents
from tests.unit.publisher.publisher_inputs import (
    DATA_TEAM,
    INCIDENT,
    MODEL,
    OWNERS,
    UPSTREAM,
    make_keys,
    model_ownership,
    signed,
    upstream_ownership,
    validated_payload,
    withheld_payload,
)

ALICE, PLATFORM = OWNERS


def data_cause(owners: list[AssetOwners]) -> RepairWithheld:
    return withheld_payload(
        "cause_in_data: covariate_drift has no code repair",
        hypothesis="covariate_drift",
        reason_code="cause_in_data",
        owners=owners,
    )


def drafts(payload: object) -> list[IncidentDraft]:
    finding = finding_of(INCIDENT, payload)  # type: ignore[arg-type]
    return render_incidents(finding, render_content(finding), PublicationLinks(INCIDENT), 1000)


def assignees(draft: IncidentDraft) -> list[str]:
    return [a.actor for a in draft.info.assignees or []]


def test_a_data_cause_names_the_datasets_owners_first_then_the_models_in_the_comment() -> None:
    content = render_content(finding_of(INCIDENT, data_cause([upstream_ownership(), model_ownership()])))
    section = content.split("### Who to tell (owners recorded in DataHub)\n\n", 1)[1]
    dataset_line, model_line = section.splitlines()[:2]
    assert dataset_line == f"- `{UPSTREAM}` (upstream dataset): `{DATA_TEAM}` (DATAOWNER)"
    assert model_line == f"- `{MODEL}` (model): `{ALICE}` (TECHNICAL_OWNER), `{PLATFORM}` (TECHNICAL_OWNER)"


def test_the_datahub_incident_is_assigned_to_every_owner_named() -> None:
    (incident,) = drafts(data_cause([upstream_ownership(), model_ownership()]))
    assert assignees(incident) == sorted([DATA_TEAM, ALICE, PLATFORM])


def test_a_code_cause_names_the_models_owners() -> None:
    payload = withheld_payload("generated_code: ...", hypothesis="feature_transformation", reason_code="generated_code")
    content = render_content(finding_of(INCIDENT, payload))
    assert f"- `{MODEL}` (model): `{ALICE}`" in content and "upstream dataset" not in content
    (incident,) = drafts(payload)
    assert assignees(incident) == sorted(OWNERS)


def test_no_owner_known_is_said_for_each_asset_and_nobody_is_assigned() -> None:
    payload = data_cause([AssetOwners(asset=UPSTREAM), AssetOwners(asset=MODEL)])
    content = render_content(finding_of(INCIDENT, payload))
    assert f"- no owner recorded in DataHub for `{UPSTREAM}` (upstream dataset)" in content
    assert f"- no owner recorded in DataHub for `{MODEL}` (model)" in content
    (incident,) = drafts(payload)
    assert incident.info.assignees is None


def test_an_event_from_before_1_1_shows_its_flat_owners() -> None:
    legacy = withheld_payload(hypothesis="covariate_drift", reason_code="cause_in_data", owners=[])
    legacy = legacy.model_copy(update={"owners_to_notify": [DATA_TEAM]})
    content = render_content(finding_of(INCIDENT, legacy))
    assert f"Owners to notify: `{DATA_TEAM}`" in content and "no owner recorded" not in content
    (incident,) = drafts(legacy)
    assert assignees(incident) == [DATA_TEAM]


def test_a_dataset_incident_is_assigned_to_the_datasets_owners_and_the_models() -> None:
    model, dataset = drafts(validated_payload(top="source_data_quality"))
    assert assignees(model) == sorted(OWNERS)
    assert assignees(dataset) == sorted([DATA_TEAM, *OWNERS])


def test_a_dry_run_shows_the_owners_in_the_comment_and_the_incident(tmp_path: Path) -> None:
    keys = make_keys()
    source = signed(keys, data_cause([upstream_ownership(), model_ownership()]))
    published = publish(source, FixtureGitHub(tmp_path), fixture_datahub(tmp_path))
    assert all(c.dry_run for c in published.channels)
    (comment,) = (tmp_path / "github").rglob("*.md")
    assert f"`{DATA_TEAM}` (DATAOWNER)" in comment.read_text()
    (incident,) = (tmp_path / "datahub").glob("urn_li_incident*.json")
    info = json.loads(incident.read_text())[0]["aspect"]["json"]
    assert sorted(a["actor"] for a in info["assignees"]) == sorted([DATA_TEAM, ALICE, PLATFORM])
    assert f"`{DATA_TEAM}` (DATAOWNER)" in info["description"]
