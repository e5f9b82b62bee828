"""The check run's conclusion follows the outcome, and no outcome of a regression is a success."""

from __future__ import annotations

import pytest

from services.publisher.finding import finding_of
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_check_run import render_check_run
from services.publisher.render_comment import render_content
from tests.unit.publisher.publisher_inputs import (
    INCIDENT,
    failed_payload,
    upstream_risk_payload,
    validated_payload,
    withheld_payload,
)


@pytest.mark.parametrize(
    ("payload", "conclusion"),
    [
        (validated_payload(), "action_required"),
        (failed_payload(), "failure"),
        (withheld_payload("diagnosis abstained"), "action_required"),
    ],
)
def test_conclusions(payload: object, conclusion: str) -> None:
    finding = finding_of(INCIDENT, payload)  # type: ignore[arg-type]
    check = render_check_run(finding, render_content(finding), PublicationLinks(INCIDENT))
    assert check is not None
    assert check.conclusion == conclusion and check.conclusion not in ("success", "neutral", "skipped")
    assert check.to_api(None)["head_sha"] == finding.head_sha and check.external_id == INCIDENT


def test_an_upstream_risk_has_no_commit_and_so_no_check_run() -> None:
    finding = finding_of(INCIDENT, upstream_risk_payload())
    assert render_check_run(finding, render_content(finding), PublicationLinks(INCIDENT)) is None
