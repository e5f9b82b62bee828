"""The console's Operations page over a home the real handlers filled (tests/support/console_home.py): the dead
letters the ledger service keeps (refused by the real envelope decoder, kept by the ledger's own consumer
function, hostile bytes and hostile headers among them), the incidents that have not moved, and the MCL intake's
counts read from the context service's own /metrics, served by the services' health server."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import re
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from aiokafka.structs import ConsumerRecord  # type: ignore[import-untyped]
from starlette.testclient import TestClient

from contracts.registry import DEAD_LETTER_TOPIC, contract_for
from libs.bundle.load import load_bundle
from libs.bus.handler_errors import RejectedInput
from libs.bus.headers import dead_letter_headers
from libs.bus.health import HealthServer, HealthState
from libs.bus.prometheus import ServicePrometheus
from libs.events.codec import MalformedMessage, open_envelope
from libs.ledger import LedgerStore
from libs.operations.dead_letter_store import DeadLetterStore
from libs.signing.keys import load_private_key
from modelguard.console.app import console_app
from modelguard.console.config import ConsoleAuth
from modelguard.console.intake_source import ConfiguredMetrics, StackMetrics
from modelguard.console.ledger_source import ConsoleLedger
from modelguard.console.security_headers import CONTENT_SECURITY_POLICY
from modelguard.investigate import install_bundle_inputs
from modelguard.stack import REPO_ROOT
from services.ledger.dead_letter_keeping import keep_record
from tests.support.console_home import CHURN, ConsoleHome, fill_console_home
from tests.support.mcl_poison import poison_cases
from tests.support.running_stack import environment

TOKEN = "operations-test-token-0123456789"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
EVALUATIONS = contract_for("EvaluationReported").topic
BYTES_MARKER = "REFUSED-BYTES-MARKER"
HUGE = 3 * 1024 * 1024


@dataclass(frozen=True)
class Sent:
    """One record put on the dead-letter topic: what the test expects of its row."""

    service: str
    reason: str
    source: str
    value: bytes
    key: str | None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.value).hexdigest()


class _Table(HTMLParser):
    """The text of each cell of each body row of the first table with the given class."""

    def __init__(self, table_class: str) -> None:
        super().__init__()
        self.table_class, self.depth = table_class, 0
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and (self.depth or self.table_class in (dict(attrs).get("class") or "").split()):
            self.depth += 1
        elif self.depth == 1 and tag == "tbody":
            self._in_body = True
        elif self.depth == 1 and self._in_body and tag == "tr":
            self.rows.append([])
        elif self.depth == 1 and self._in_body and tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self.depth:
            self.depth -= 1
            self._in_body = False if not self.depth else self._in_body
        elif self.depth == 1 and tag == "td" and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table(page: str, table_class: str) -> list[list[str]]:
    parser = _Table(table_class)
    parser.feed(page)
    return parser.rows


def _record(offset: int, sent: Sent, headers: dict[str, str] | list[tuple[str, bytes]]) -> Any:
    """A record of the dead-letter topic as aiokafka hands it to the ledger's consumer."""
    raw_headers = [(k, v.encode()) for k, v in headers.items()] if isinstance(headers, dict) else headers
    return ConsumerRecord(
        topic=DEAD_LETTER_TOPIC,
        partition=0,
        offset=offset,
        timestamp=int(datetime.now(UTC).timestamp() * 1000) + offset,
        timestamp_type=0,
        key=sent.key.encode() if sent.key is not None else None,
        value=sent.value,
        checksum=None,
        serialized_key_size=-1,
        serialized_value_size=len(sent.value),
        headers=raw_headers,
    )


def refused_by_the_ledger(home: ConsoleHome, raw: bytes, offset: int, key: str | None) -> tuple[Sent, dict[str, str]]:
    """What the runtime publishes when the ledger's decoder refuses ``raw`` (libs.bus.runtime.on_message)."""
    with pytest.raises(MalformedMessage) as refused:
        open_envelope(raw, home.registry)
    source = f"{EVALUATIONS}/0@{offset}"
    sent = Sent("ledger", refused.value.reason, source, raw, key)
    return sent, dead_letter_headers(refused.value.reason, refused.value.detail, "ledger", source)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> ConsoleHome:
    return fill_console_home(tmp_path_factory.mktemp("console-home"))


@pytest.fixture(scope="module")
def sent(home: ConsoleHome) -> list[Sent]:
    """Dead letters as the ledger service keeps them from the topic: three inputs its decoder refused (HTML and
    script, invalid UTF-8, 3 MiB), a forged event of a real incident, and a record whose headers a hostile
    producer wrote straight onto the dead-letter topic."""
    store = DeadLetterStore(home.settings.ledger_url)
    store.create_schema()
    script = f'<script>alert("{BYTES_MARKER}")</script><img src=x onerror=alert(1)>'.encode()
    invalid_utf8 = b"\xff\xfe\xfd " + BYTES_MARKER.encode() + b" \xc3\x28\x00"
    huge = b"<" + BYTES_MARKER.encode() + b">" + b"\x80" * HUGE
    row = LedgerStore(home.settings.ledger_url).incident_events(home.regression)[2]
    forged = row.envelope.replace('"sig":"', '"sig":"AAAA', 1).encode()
    letters = [
        refused_by_the_ledger(home, script, 11, None),
        refused_by_the_ledger(home, invalid_utf8, 12, "not-an-incident"),
        refused_by_the_ledger(home, huge, 13, None),
        refused_by_the_ledger(home, forged, 14, home.regression),
    ]
    hostile = Sent(
        "\ufffd<img src=x>", "<script>alert('reason')</script>", "<b>topic</b>/0@1", b"{}", "inc-<script>x</script>"
    )
    hostile_headers = [
        ("mg-dlq-reason", hostile.reason.encode()),
        ("mg-dlq-detail", b"first <b>line</b>\x00NUL\x1b[31m red\nsecond line <script>alert(2)</script>"),
        ("mg-dlq-service", b"\xff<img src=x>"),
        ("mg-dlq-source", hostile.source.encode()),
    ]
    offset = 20
    for letter, headers in letters:
        assert keep_record(store, _record(offset, letter, headers))
        offset += 1
    assert keep_record(store, _record(offset, hostile, hostile_headers))
    assert not keep_record(store, _record(offset, hostile, hostile_headers)), "a redelivery is kept once"
    store.close()
    return [letter for letter, _ in letters] + [hostile]


@pytest.fixture(scope="module")
def client(home: ConsoleHome, sent: list[Sent]) -> Iterator[TestClient]:
    with TestClient(console_app(home.ledger(), ConsoleAuth(token=TOKEN))) as test_client:
        yield test_client


def test_operations_needs_the_token_like_every_page(client: TestClient, sent: list[Sent]) -> None:
    refused = client.get("/operations")
    assert refused.status_code == 401 and sent[0].sha256 not in refused.text
    page = client.get("/operations", headers=BEARER)
    assert page.status_code == 200 and page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert '<a href="/operations">Operations</a>' in client.get("/", headers=BEARER).text


def test_dead_letters_are_counted_by_service_and_reason(client: TestClient, sent: list[Sent]) -> None:
    groups = table(client.get("/operations", headers=BEARER).text, "dead-letter-groups")
    expected = Counter((s.service, s.reason) for s in sent)
    assert len(groups) == len(expected) >= 3  # not-json twice, a bad signature, the hostile one, ...
    shown = {(service, reason): int(count) for service, reason, count, _latest in groups}
    assert shown == dict(expected)
    counts = [int(count) for _s, _r, count, _l in groups]
    assert counts == sorted(counts, reverse=True)


def test_each_dead_letter_shows_the_digest_and_size_of_its_bytes_its_source_and_never_the_bytes(
    client: TestClient, sent: list[Sent]
) -> None:
    page = client.get("/operations", headers=BEARER).text
    rows = table(page, "dead-letters")
    assert len(rows) == len(sent)
    for letter in sent:
        (row,) = [r for r in rows if f"sha256:{letter.sha256}" in r[5]]
        assert f"{len(letter.value)} bytes" in row[5]
        assert letter.reason == row[2] and letter.source in row[3]
    assert BYTES_MARKER not in page and "onerror" not in page  # the refused bytes appear nowhere
    assert len(page) < 200_000, "a 3 MiB refused input does not make a 3 MiB page"


def test_hostile_headers_and_keys_are_escaped_and_stripped_of_control_characters(
    client: TestClient, sent: list[Sent]
) -> None:
    page = client.get("/operations", headers=BEARER).text
    assert "<script" not in page.lower() and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(&#39;reason&#39;)&lt;/script&gt;" in page
    assert "inc-&lt;script&gt;x&lt;/script&gt;" in page and "no such incident in the ledger" in page
    assert "\x00" not in page and "\x1b" not in page
    assert "first &lt;b&gt;line&lt;/b&gt;\ufffdNUL\ufffd[31m red" in page  # the first line, in the row
    assert "second line &lt;script&gt;alert(2)&lt;/script&gt;" in page  # the rest, folded under it
    assert "\ufffd&lt;img src=x&gt;" in page  # invalid UTF-8 of a header: replaced, then escaped


def test_a_dead_letter_whose_key_is_an_incident_of_the_ledger_links_to_it(
    client: TestClient, home: ConsoleHome, sent: list[Sent]
) -> None:
    rows = table(client.get("/operations", headers=BEARER).text, "dead-letters")
    (forged,) = [r for r in rows if r[4] == home.regression]
    assert forged[2] == "bad-signature"
    page = client.get("/operations", headers=BEARER).text
    assert f'<a href="/incidents/{home.regression}">{home.regression}</a>' in page
    assert '<span class="urn">not-an-incident</span>' in page


def test_dead_letters_filter_by_service_and_reason(client: TestClient, sent: list[Sent]) -> None:
    reason = Counter(s.reason for s in sent if s.service == "ledger").most_common(1)[0][0]
    page = client.get("/operations", params={"service": "ledger", "reason": reason}, headers=BEARER).text
    rows = table(page, "dead-letters")
    assert len(rows) == sum(s.service == "ledger" and s.reason == reason for s in sent) >= 1
    assert all(r[1] == "ledger" and r[2] == reason for r in rows)
    assert len(table(page, "dead-letter-groups")) == len({(s.service, s.reason) for s in sent})  # all groups stay
    unknown = client.get("/operations", params={"service": "<b>nobody</b>"}, headers=BEARER).text
    assert "no dead letter has service &#39;&lt;b&gt;nobody&lt;/b&gt;&#39;" in unknown
    assert table(unknown, "dead-letters") == [["No dead letter with these values."]]


def test_a_ledger_no_ledger_service_of_this_version_ran_on_says_no_dead_letter_is_kept(
    home: ConsoleHome, tmp_path: Path
) -> None:
    empty = LedgerStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    empty.create_schema()
    with TestClient(console_app(ConsoleLedger(empty, home.registry, tmp_path), ConsoleAuth(token=TOKEN))) as client:
        page = client.get("/operations", headers=BEARER)
    assert page.status_code == 200 and 'id="no-dead-letter-table"' in page.text
    assert not DeadLetterStore(empty.url).exists(), "the console never creates the table"


def test_the_quiet_incidents_are_counted_and_linked_to_the_list(client: TestClient, home: ConsoleHome) -> None:
    page = client.get("/operations", headers=BEARER).text
    quiet = page[page.index('id="quiet"') : page.index('id="mcl-intake"')]
    assert "0 unfinished incident(s)" in quiet  # both demo incidents are published
    assert 'id="quiet-link" href="/?quiet=10"' in quiet
    assert '<form class="filters" method="get" action="/">' in quiet and 'name="quiet"' in quiet


def _context_service(home: ConsoleHome):  # type: ignore[no-untyped-def]
    """The context service started again over the home: its mirror, with the intake's counts as it kept them."""
    with environment({"MODELGUARD_HOME": str(home.settings.home)}), contextlib.chdir(REPO_ROOT):
        settings = install_bundle_inputs(home.settings, load_bundle(CHURN))
        key = load_private_key("context", settings.keys_dir / "context.key")
        return importlib.import_module("services.context.bootstrap").bootstrap(settings, key)


@pytest.fixture(scope="module")
def context_metrics(home: ConsoleHome) -> Iterator[tuple[object, str]]:
    """The context service's /metrics as the services serve it (libs.bus.health, libs.bus.prometheus)."""
    context = _context_service(home)
    server = HealthServer(
        HealthState(), 0, "127.0.0.1", ServicePrometheus("context", context.collectors).exposition
    ).start()
    try:
        yield context, f"http://127.0.0.1:{server.port}/metrics"
    finally:
        server.stop()


def _counts(page: str) -> dict[tuple[str, str], int]:
    return {(verdict, reason): int(n) for verdict, reason, n in table(page, "intake-counts")}


def test_the_mcl_intake_counts_are_read_from_the_context_services_metrics(
    home: ConsoleHome, context_metrics: tuple[object, str]
) -> None:
    context, url = context_metrics
    app = console_app(home.ledger(), ConsoleAuth(token=TOKEN), ConfiguredMetrics(url))
    with TestClient(app) as client:
        before = _counts(client.get("/operations", headers=BEARER).text)
        assert before[("applied", "-")] >= 1  # act 2's schema change, applied by the intake that opened the risk
        poison = poison_cases()
        cases = [c for c in poison if c.verdict == "dead_lettered" and len(c.raw) < 1024 * 1024][:8]
        skipped = [c for c in poison if c.verdict == "skipped"]
        assert len({c.reason for c in cases}) >= 3 and skipped
        with contextlib.chdir(REPO_ROOT):
            for case in [*cases, *skipped]:
                with contextlib.suppress(RejectedInput):  # the dead-lettered ones: counted before it is raised
                    context.external[0].handle(case.raw, None)  # type: ignore[attr-defined]
        page = client.get("/operations", headers=BEARER).text
    after = _counts(page)
    fed = Counter((c.verdict.replace("_", "-"), c.reason or "-") for c in [*cases, *skipped])
    assert {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)} == dict(fed)
    assert url in page and f"{sum(after.values())} in all" in page


ANSWERS = {
    "/html": (200, {"Content-Type": "text/html"}, b"<script>alert('metrics')</script>"),
    "/redirect": (302, {"Location": "http://169.254.169.254/"}, b""),
    "/huge": (200, {}, b"# " + b"x" * HUGE),
    "/other-metrics": (200, {}, b"process_cpu_seconds_total 1.5\n"),
    "/negative": (200, {}, b'modelguard_mcl_records_total{verdict="applied",reason=""} -3\n'),
}


@contextlib.contextmanager
def not_the_context_service() -> Iterator[str]:
    """A server at the configured URL that is not the context service: hostile HTML, a redirect, 3 MiB, a lie."""

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, headers, body = ANSWERS[self.path]
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_counts_that_cannot_be_read_are_one_line_and_nothing_of_the_answer(home: ConsoleHome) -> None:
    with not_the_context_service() as base:
        lines = {}
        for path in ANSWERS:
            app = console_app(home.ledger(), ConsoleAuth(token=TOKEN), ConfiguredMetrics(base + path))
            with TestClient(app) as client:
                page = client.get("/operations", headers=BEARER).text
            (line,) = re.findall(r'<p class="unavailable" id="intake-unavailable">(.*?)</p>', page, re.S)
            lines[path] = line
            assert "alert(&#39;metrics&#39;)" not in page and "<script" not in page
    assert "answered, but not Prometheus text" in lines["/html"]
    assert "answered, but no modelguard_mcl_records_total in it" in lines["/other-metrics"]
    assert "answered HTTP 302" in lines["/redirect"]
    assert f"answered more than {2 * 1024 * 1024} bytes" in lines["/huge"]
    assert "a count that is not a whole number" in lines["/negative"]
    gone = console_app(home.ledger(), ConsoleAuth(token=TOKEN), ConfiguredMetrics("http://127.0.0.1:9/metrics"))
    with TestClient(gone) as client:
        assert "does not answer (ConnectError)" in client.get("/operations", headers=BEARER).text


def test_without_a_url_the_counts_come_from_the_stack_of_this_home_only_while_it_runs(
    home: ConsoleHome, tmp_path: Path
) -> None:
    app = console_app(home.ledger(), ConsoleAuth(token=TOKEN), StackMetrics(tmp_path))
    with TestClient(app) as client:
        page = client.get("/operations", headers=BEARER).text
    assert f"no context service runs from {tmp_path}" in page and "modelguard stack up" in page
