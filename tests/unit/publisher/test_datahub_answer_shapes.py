"""DataHub GMS answers in a shape the publisher does not read (a list, an aspect that is text, an incident whose
status is missing, JSON nested past the parser): the incident's DataHub step fails with the reason (a failed
channel result), never an AttributeError, KeyError, TypeError or RecursionError out of the handler."""

from __future__ import annotations

from typing import Any

import pytest
from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph

from services.publisher.channel_errors import ChannelRejected, ChannelUnavailable
from services.publisher.datahub_channel import DataHubIncidents
from services.publisher.datahub_incident_store import GmsIncidentStore
from services.publisher.finding import finding_of
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_comment import render_content
from services.publisher.render_incident import IncidentDraft, render_incidents
from services.publisher.secret_redaction import SecretRedactor
from tests.support.fake_datahub_gms import FakeDataHubGms
from tests.support.loopback_http import Reply, Request
from tests.unit.publisher.publisher_inputs import INCIDENT, validated_payload

INCIDENT_INFO = "com.linkedin.incident.IncidentInfo"


class WrongShapeGms(FakeDataHubGms):
    """Answers every aspect read with ``answer`` (a JSON document, or raw text)."""

    def __init__(self, answer: Any) -> None:
        super().__init__()
        self.answer = answer

    def route(self, request: Request) -> Reply:
        if request.method == "GET" and request.path.startswith("/aspects/"):
            return Reply(200, self.answer)
        return super().route(request)


@pytest.fixture
def draft() -> IncidentDraft:
    finding = finding_of(INCIDENT, validated_payload())
    return render_incidents(finding, render_content(finding), PublicationLinks(incident_id=INCIDENT), 0, None)[0]


@pytest.mark.parametrize(
    "answer",
    [
        ["not", "an", "object"],
        {"aspect": "text"},
        {"aspect": {INCIDENT_INFO: "text"}},
        {"aspect": {INCIDENT_INFO: {"type": "OPERATIONAL", "entities": [], "status": "ACTIVE", "created": {}}}},
        {"aspect": {}},
        {
            "aspect": {
                INCIDENT_INFO: {
                    "type": "OPERATIONAL",
                    "entities": [],
                    "status": {"state": 5, "lastUpdated": {"time": "x", "actor": 7}},
                    "created": {"time": 1, "actor": "urn:li:corpuser:x"},
                }
            }
        },
    ],
    ids=["list", "aspect-text", "info-text", "status-text", "no-info", "field-type"],
)
def test_an_incident_read_of_the_wrong_shape_fails_the_step_with_its_reason(draft: IncidentDraft, answer: Any) -> None:
    gms = WrongShapeGms(answer)
    with gms:
        graph = DataHubGraph(DatahubClientConfig(server=gms.base_url, retry_max_times=0))
        store = GmsIncidentStore(graph, SecretRedactor())
        with pytest.raises(ChannelRejected, match=f"DataHub GMS read {draft.urn}"):
            store.read(draft.urn)
        result = DataHubIncidents(store, dry_run=False).upsert_incident(draft)
        assert result.status == "failed"
        assert gms.ingested() == []


SOUND_INFO = {
    "type": "OPERATIONAL",
    "entities": [],
    "status": {"state": "ACTIVE", "lastUpdated": {"time": 1, "actor": "urn:li:corpuser:x"}},
    "created": {"time": 1, "actor": "urn:li:corpuser:x"},
}


@pytest.mark.parametrize("missing", ["type", "entities", "status", "created"])
def test_an_incident_read_missing_a_required_field_is_refused_not_retried(draft: IncidentDraft, missing: str) -> None:
    # the SDK's from_obj says so with a plain ValueError, which was classed with the transport's errors: a
    # ChannelUnavailable, retried until the bus gave up, for an answer that is the same every time
    gms = WrongShapeGms({"aspect": {INCIDENT_INFO: {k: v for k, v in SOUND_INFO.items() if k != missing}}})
    with gms:
        graph = DataHubGraph(DatahubClientConfig(server=gms.base_url, retry_max_times=0))
        store = GmsIncidentStore(graph, SecretRedactor())
        cannot_read = f"DataHub GMS read {draft.urn} answered in a shape the publisher cannot read"
        with pytest.raises(ChannelRejected, match=f"{cannot_read}: ValueError: .* missing required field: {missing}"):
            store.read(draft.urn)
        assert DataHubIncidents(store, dry_run=False).upsert_incident(draft).status == "failed"
        assert gms.ingested() == []


def test_a_sound_incident_read_is_the_aspect(draft: IncidentDraft) -> None:
    """The answer the cases above take one field from reads as it is, so each refusal is that field's."""
    gms = WrongShapeGms({"aspect": {INCIDENT_INFO: SOUND_INFO}})
    with gms:
        graph = DataHubGraph(DatahubClientConfig(server=gms.base_url, retry_max_times=0))
        info = GmsIncidentStore(graph, SecretRedactor()).read(draft.urn)
    assert info is not None and info.status.state == "ACTIVE"


class StatusGms(FakeDataHubGms):
    """Answers every request with ``status`` and a JSON error body, as GMS does when it is down or refuses."""

    def __init__(self, status: int) -> None:
        super().__init__()
        self.status = status

    def route(self, request: Request) -> Reply:
        return Reply(self.status, {"status": self.status, "message": "from the test's GMS"})


@pytest.mark.parametrize(
    ("status", "expected"),
    [(503, ChannelUnavailable), (500, ChannelUnavailable), (429, ChannelUnavailable), (400, ChannelRejected)],
)
@pytest.mark.parametrize("read", ["incident", "assertion", "assertion run"])
def test_an_http_error_from_gms_is_classed_by_its_status_on_every_read(
    draft: IncidentDraft, status: int, expected: type[Exception], read: str
) -> None:
    # the assertion run's read goes through the SDK's _send_restli_request, which turns an HTTP error into an
    # OperationalError: that was read as an answer of the wrong shape, so an outage was never retried
    with StatusGms(status) as gms:
        graph = DataHubGraph(DatahubClientConfig(server=gms.base_url, retry_max_times=0))
        store = GmsIncidentStore(graph, SecretRedactor())
        reads = {
            "incident": lambda: store.read(draft.urn),
            "assertion": lambda: store.read_assertion("urn:li:assertion:gate"),
            "assertion run": lambda: store.read_assertion_run("urn:li:assertion:gate", "run-1"),
        }
        with pytest.raises(expected, match=f"DataHub GMS read urn:li:(incident|assertion):\\S+ failed: .*{status}"):
            reads[read]()
