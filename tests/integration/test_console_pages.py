"""The console's pages over a ledger the real handlers filled (tests/support/console_home.py): auth refuses, the
list shows and filters the demo's two incidents, the incident page shows what the ledger holds and what its
verification found, and hostile metadata comes out escaped."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from contracts.events.context import AffectedModel, UpstreamRiskDetected
from libs.artifacts.store import LocalArtifactStore
from libs.events.codec import seal
from libs.events.factory import next_event
from libs.events.identity import incident_id_for
from libs.ledger import LedgerStore
from modelguard.console import graph_layout
from modelguard.console.app import console_app
from modelguard.console.config import ConsoleAuth
from modelguard.console.ledger_source import ConsoleLedger
from modelguard.console.security_headers import CONTENT_SECURITY_POLICY
from modelguard.incident_log import incident_events
from tests.support.console_home import DEPLOYMENT, MODEL, ConsoleHome, fill_console_home

TOKEN = "console-test-token-0123456789"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
HOSTILE = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> ConsoleHome:
    return fill_console_home(tmp_path_factory.mktemp("console-home"))


@pytest.fixture(scope="module")
def client(home: ConsoleHome) -> Iterator[TestClient]:
    app = console_app(home.ledger(), ConsoleAuth(token=TOKEN, trusted_header="x-forwarded-user"))
    with TestClient(app) as test_client:
        yield test_client


def _rows(page: str) -> list[str]:
    return re.findall(r'<a href="/incidents/(inc-[0-9a-f]{16})">', page)


def test_every_page_but_the_health_probe_refuses_a_reader_without_the_token_or_the_proxy_header(
    client: TestClient, home: ConsoleHome
) -> None:
    for path in ("/", f"/incidents/{home.regression}", "/static/console.css"):
        for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}, {"x-forwarded-user": "  "}):
            refused = client.get(path, headers=headers)
            assert refused.status_code == 401, (path, headers)
            assert refused.headers["www-authenticate"].startswith("Bearer")
            assert refused.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert home.regression not in refused.text
    assert client.get("/healthz").text == "ok\n"
    assert client.get("/readyz").text == "ok\n"
    assert client.get("/", headers=BEARER).status_code == 200
    by_proxy = client.get("/", headers={"X-Forwarded-User": f"alice{HOSTILE}"})
    assert by_proxy.status_code == 200
    assert "read by alice&lt;script&gt;" in by_proxy.text and HOSTILE not in by_proxy.text


def test_the_list_shows_both_demo_incidents_with_their_outcome_cause_and_deployments_at_risk(
    client: TestClient, home: ConsoleHome
) -> None:
    page = client.get("/", headers=BEARER)
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert set(_rows(page.text)) == {home.regression, home.risk}
    row = {incident: _row_text(page.text, incident) for incident in (home.regression, home.risk)}
    assert "repair_validated" in row[home.regression] and "feature_transformation" in row[home.regression]
    assert "upstream_risk" in row[home.risk] and "schema_change" in row[home.risk]
    assert "analytics.crm.customers" in row[home.risk]
    assert 'field(s): <span class="field">account_age_months</span>' in row[home.risk]
    for text in row.values():
        assert MODEL in text and DEPLOYMENT in text and "published" in text
    assert TOKEN not in page.text


def _row_text(page: str, incident: str) -> str:
    start = page.index(f'<a href="/incidents/{incident}">')
    return page[start : page.index("</tr>", start)]


def test_filters_by_outcome_status_and_model_and_says_when_nothing_has_a_value(
    client: TestClient, home: ConsoleHome
) -> None:
    assert _rows(client.get("/?outcome=upstream_risk", headers=BEARER).text) == [home.risk]
    assert _rows(client.get("/?outcome=repair_validated&status=published", headers=BEARER).text) == [home.regression]
    assert set(_rows(client.get("/", params={"model": MODEL}, headers=BEARER).text)) == {home.regression, home.risk}
    assert _rows(client.get("/?status=abstained", headers=BEARER).text) == []
    assert _rows(client.get("/?quiet=0", headers=BEARER).text) == []  # both demo incidents are published
    bad = client.get("/", params={"quiet": HOSTILE}, headers=BEARER)
    assert bad.status_code == 400 and "quiet takes whole minutes" in bad.text and HOSTILE not in bad.text
    hostile = client.get("/", params={"model": HOSTILE}, headers=BEARER).text
    assert _rows(hostile) == []
    assert "no incident has model &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39;" in hostile
    assert HOSTILE not in hostile


def test_the_incident_page_shows_the_verified_timeline_gate_chart_hypotheses_patch_checks_and_attestation(
    client: TestClient, home: ConsoleHome
) -> None:
    page = client.get(f"/incidents/{home.regression}", headers=BEARER).text
    events = incident_events(LedgerStore(home.settings.ledger_url), home.regression, home.registry)
    timeline = _section(page, "timeline")
    assert timeline.count("<tr>") == len(events) + 1
    assert timeline.count('check-verified"><span class="state">verified') == 3 * len(events)
    assert "all 7 events verified" in page
    report = next(e.event.payload.diagnosis for e in events if e.event.meta.event_type == "RepairValidated")
    chart = _section(page, "counterfactual")
    assert chart.count("<rect ") == len(report.counterfactual) == 4
    for value in report.counterfactual.values():
        assert f">{value:.4f}</text>" in chart
    assert "gate threshold" in chart
    hypotheses = _section(page, "hypotheses")
    assert hypotheses.index(report.hypotheses[0].name) < hypotheses.index(report.hypotheses[1].name)
    top = {e.evidence_id: e for e in report.evidence}
    for evidence_id in report.hypotheses[0].supporting:
        assert _escaped(top[evidence_id].summary) in hypotheses
    patch = _section(page, "patch")
    assert '<span class="diff-add">+    if account_age_months &lt;= 0:</span>' in patch
    validation = _section(page, "validation")
    for check in ("patch_applies", "targeted_tests", "evaluation", "source_unchanged"):
        assert f"<td>{check}</td>" in validation
    lineage = _section(page, "lineage")
    assert "<svg" in lineage and "churn-endpoint" in lineage
    assert re.search(
        r'class="node kind-mlModelDeployment on-path">\s*<title>mlModelDeployment: ' + re.escape(DEPLOYMENT), lineage
    )
    assert "sha256:" in _section(page, "attestation") and "NOT verified" not in page
    assert TOKEN not in page


def _section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}"')
    return page[start : page.index("</section>", start)]


def _escaped(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;").replace('"', "&#34;")
    )


def test_the_upstream_risk_page_shows_the_changed_asset_field_and_the_path_to_the_deployment(
    client: TestClient, home: ConsoleHome
) -> None:
    page = client.get(f"/incidents/{home.risk}", headers=BEARER).text
    change = _section(page, "upstream-change")
    assert "analytics.crm.customers" in change and "&#39;account_age_months&#39; renamed" in change
    assert '<dt>changed field(s)</dt><dd class="field">account_age_months</dd>' in change
    lineage = _section(page, "lineage")
    # the changed field, its dataset, the features dataset, the feature, the model, the deployment
    assert lineage.count('on-path">') >= 6
    assert re.search(r'kind-schemaField on-path">\s*<title>schemaField: [^<]*analytics\.crm\.customers', lineage)
    assert "churn-endpoint" in lineage and "account_age_months" in lineage


def _copy_of_ledger(home: ConsoleHome, tmp_path: Path) -> Path:
    copy = tmp_path / "ledger.sqlite"
    with sqlite3.connect(home.settings.ledger_url.removeprefix("sqlite:///")) as source, sqlite3.connect(copy) as db:
        source.backup(db)  # the WAL's pages too
    return copy


def test_hostile_metadata_is_escaped_everywhere_and_an_event_after_the_checkpoint_is_pending(
    home: ConsoleHome, tmp_path: Path
) -> None:
    model = f"urn:li:mlModel:(urn:li:dataPlatform:mlflow,{HOSTILE},PROD)"
    field = (
        f"urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:hive,db.{HOSTILE},PROD),<img src=x onerror=alert(2)>)"
    )
    risk = UpstreamRiskDetected(
        cause="schema_change",
        asset_urn=field,
        change_summary=f"column {HOSTILE} removed",
        change_fingerprint="b" * 64,
        changed_fields=[f"<b>{HOSTILE}</b>"],
        source_urn=f"urn:li:assertion:{HOSTILE}",
        affected=[
            AffectedModel(
                model_urn=model, deployments=[f"urn:li:mlModelDeployment:({HOSTILE})"], owners=[], path=[field, model]
            )
        ],
    )
    incident = incident_id_for("console-test", "hostile")
    event = next_event(
        risk, producer="context", producer_version="test", occurred_at=datetime.now(UTC), incident_id=incident
    )
    url = f"sqlite:///{_copy_of_ledger(home, tmp_path)}"
    LedgerStore(url).append(seal(event, home.key("context")))

    with TestClient(console_app(home.ledger(url), ConsoleAuth(token=TOKEN))) as client:
        listing = client.get("/", headers=BEARER).text
        page = client.get(f"/incidents/{incident}", headers=BEARER).text
        unfinished = client.get("/?quiet=0", headers=BEARER).text
    assert _rows(unfinished) == [incident]  # nothing published it: it waits at its first event
    assert "at UpstreamRiskDetected (detect), quiet" in unfinished
    for text in (listing, page):
        assert "<script>" not in text and "<img" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<svg" in _section(page, "lineage")  # laid out, labels escaped in the SVG
    assert '<dt>reported by</dt><dd class="urn">urn:li:assertion:&lt;script&gt;' in _section(page, "upstream-change")
    assert 'check-pending"><span class="state">pending' in _section(page, "timeline")
    assert "signatures and hash chain verified for all 1 events; 1 not yet under a signed checkpoint" in page


def test_an_unknown_incident_is_one_readable_line(client: TestClient) -> None:
    for incident in ("inc-0000000000000000", "<b>x"):
        page = client.get(f"/incidents/{incident}", headers=BEARER)
        assert page.status_code == 404
        assert "no incident" in page.text and "<b>x" not in page.text


def test_without_graphviz_the_lineage_is_listed_with_the_reason(
    client: TestClient, home: ConsoleHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph_layout.shutil, "which", lambda _name: None)
    lineage = _section(client.get(f"/incidents/{home.regression}", headers=BEARER).text, "lineage")
    assert "<svg" not in lineage
    assert "Graphviz is not installed here" in lineage and DEPLOYMENT in lineage


def test_a_tampered_signature_is_shown_failed_on_its_event_and_the_list_says_the_ledger_does_not_replay(
    home: ConsoleHome, tmp_path: Path
) -> None:
    copy = _copy_of_ledger(home, tmp_path)
    with sqlite3.connect(copy) as db:
        db.execute("DROP TRIGGER IF EXISTS ledger_events_no_update")
        (position, envelope) = db.execute(
            "SELECT position, envelope FROM ledger_events WHERE incident_id = ? AND sequence = 3", (home.regression,)
        ).fetchone()
        signature = re.search(r'"sig":"([^"]+)"', envelope)
        assert signature is not None
        flipped = signature.group(1)[:10] + ("A" if signature.group(1)[10] != "A" else "B") + signature.group(1)[11:]
        db.execute(
            "UPDATE ledger_events SET envelope = ? WHERE position = ?",
            (envelope.replace(signature.group(1), flipped), position),
        )
    with TestClient(console_app(home.ledger(f"sqlite:///{copy}"), ConsoleAuth(token=TOKEN))) as tampered:
        listing = tampered.get("/", headers=BEARER)
        page = tampered.get(f"/incidents/{home.regression}", headers=BEARER).text
    assert listing.status_code == 200 and "does not verify" in listing.text and "modelguard verify" in listing.text
    assert set(_rows(listing.text)) == {home.regression, home.risk}
    failed = [
        row for row in _section(page, "timeline").split("<tr>") if 'check-failed"><span class="state">failed' in row
    ]
    assert len(failed) == 1 and "ContextCollected" in failed[0] and "envelope rejected" in failed[0]
    assert "1 of 7 events failed verification" in page


def test_it_is_not_ready_while_the_ledger_does_not_answer(home: ConsoleHome, tmp_path: Path) -> None:
    gone = ConsoleLedger(
        LedgerStore(f"sqlite:///{tmp_path / 'no-such-folder' / 'ledger.sqlite'}"),
        home.registry,
        LocalArtifactStore(tmp_path),
    )
    with TestClient(console_app(gone, ConsoleAuth(token=TOKEN))) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.text == "the ledger does not answer\n"
        assert client.get("/healthz").status_code == 200


def test_publication_links_are_links_only_when_they_are_http_and_are_escaped(home: ConsoleHome, tmp_path: Path) -> None:
    """A live publication carries where GitHub says people read it (Published 1.2): those are links; a dry run's
    (none) and anything not http(s) stay text, whatever a hostile or broken publisher put there."""
    events = incident_events(LedgerStore(home.settings.ledger_url), home.regression, home.registry)
    published = next(e.event.payload for e in events if e.event.meta.event_type == "Published")
    assert all(c.url is None for c in published.channels), "the home's publications are dry runs: nothing to link"
    comment = "https://github.com/acme/churn-model/pull/42#issuecomment-7"
    hostile_urls = [
        comment,
        "javascript:alert(1)",
        'https://github.com/acme/churn-model/runs/9"><script>alert(2)</script>',
        "data:text/html,<script>alert(3)</script>",
        "//evil.example/no-scheme",
        "https://github.com/acme/churn-model/runs/9 onmouseover=alert(4)",
    ]
    channels = [
        c.model_copy(update={"url": url, "dry_run": False, "identifier": f"{c.identifier}-{i}"})
        for i, (c, url) in enumerate(zip(published.channels * 3, hostile_urls, strict=False))
    ]
    payload = published.model_copy(update={"channels": channels, "run_id": "live-run"})
    incident = incident_id_for("console-test", "publication-links")
    event = next_event(
        payload, producer="publisher", producer_version="test", occurred_at=datetime.now(UTC), incident_id=incident
    )
    url = f"sqlite:///{_copy_of_ledger(home, tmp_path)}"
    LedgerStore(url).append(seal(event, home.key("publisher")))
    with TestClient(console_app(home.ledger(url), ConsoleAuth(token=TOKEN))) as client:
        page = client.get(f"/incidents/{incident}", headers=BEARER).text
    publications = _section(page, "publications")
    links = re.findall(r'<a href="([^"]*)"[^>]*>([^<]*)</a>', publications)
    assert links == [(comment, _escaped(channels[0].identifier))], links
    assert "<script" not in page and "javascript:" not in page and "data:text" not in page
    for channel in channels[1:]:
        assert _escaped(channel.identifier) in publications  # shown, as text
    with TestClient(console_app(home.ledger(), ConsoleAuth(token=TOKEN))) as client:  # the home's dry runs: text
        dry_runs = client.get(f"/incidents/{home.regression}", headers=BEARER).text
    assert "<a href" not in _section(dry_runs, "publications")
