"""Issue 16's done-when: a real headless Chromium (Debian's, driven by Playwright) over the console serving the
home `make demo` leaves behind. The list shows both incidents; the churn incident's page shows the verified
timeline, the counterfactual chart, the lineage graph with the deployment, the patch diff and the validation
checks; the upstream-risk incident shows its changed field. Screenshots go to out/console/, and axe-core finds no
serious or critical accessibility violation on any page.

Then the stack runs again over the demo's home and a malformed record goes to the detector's topic over the
broker: the detector and the ledger refuse it, the ledger service keeps both dead letters, and the Operations page
shows them with the refused bytes' digest (never the bytes), the quiet incidents' link, and the MCL intake's
counts read from the running context service's /metrics."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from contracts.registry import contract_for
from libs.bus.producer import publish_raw
from libs.operations.dead_letter_store import DeadLetterStore
from libs.settings import load_settings
from modelguard.demo import run_demo
from modelguard.stack import REPO_ROOT, read_state, stack_down, stack_up
from tests.support.running_stack import environment
from tests.support.waiting import until

pytestmark = [pytest.mark.e2e, pytest.mark.broker, pytest.mark.timeout(1200)]

CHROMIUM = Path("/usr/bin/chromium")
AXE = Path(__file__).parents[1] / "support" / "vendor" / "axe-core" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
SCREENSHOTS = REPO_ROOT / "out" / "console"
TOKEN = "browser-test-token-0123456789"
DEPLOYMENT = "churn-endpoint"
REFUSED = b'<script>alert("e2e-refused-bytes")</script>\xff\xfe not an envelope'

if not CHROMIUM.exists():
    pytest.skip(
        f"no {CHROMIUM}: apt-get install chromium (Debian's; Playwright's download is not used)",
        allow_module_level=True,
    )
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo's home, its stack up again (a fresh embedded broker) with one malformed input refused over it."""
    out = tmp_path_factory.mktemp("demo")
    home = out / "stack"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MODELGUARD_HOME", str(home))  # run_demo sets it for this process; restored after
        assert run_demo(out, home) == 0, "the demo did not hold its guarantees"
    with environment({"MODELGUARD_HOME": str(home)}):
        settings = load_settings()
        state = stack_up(settings, None)
        try:
            asyncio.run(publish_raw(state.bootstrap, contract_for("EvaluationReported").topic, REFUSED, key=b"e2e"))
            store = DeadLetterStore(settings.ledger_url)
            kept = asyncio.run(until(lambda: store.exists() and store.count() >= 2, timeout_s=120))
            assert kept, "the ledger service did not keep the detector's and its own dead letter"
            store.close()
            yield home
        finally:
            stack_down(settings)


@pytest.fixture(scope="module")
def console_url(demo_home: Path) -> Iterator[str]:
    env = {**os.environ, "MODELGUARD_HOME": str(demo_home), "MODELGUARD_CONSOLE_TOKEN": TOKEN}
    env.pop("MODELGUARD_CONSOLE_CONTEXT_METRICS_URL", None)  # the running stack's context service, from stack.json
    console = subprocess.Popen(
        [sys.executable, "-m", "modelguard", "console", "--port", "0"],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert console.stdout is not None
        first = console.stdout.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+/)", first)
        assert found, f"the console did not say where it listens: {first!r}"
        yield found.group(1)
    finally:
        console.terminate()
        console.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield launched
        launched.close()


def _page(browser: object, **options: object):  # type: ignore[no-untyped-def]
    settings = {
        "extra_http_headers": {"Authorization": f"Bearer {TOKEN}"},
        "viewport": {"width": 1300, "height": 900},
        **options,
    }
    return browser.new_context(**settings).new_page()  # type: ignore[attr-defined]


def test_the_console_shows_the_demo_incidents_to_a_real_browser(console_url: str, browser: object) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    refused = _page(browser, extra_http_headers={}).goto(console_url)
    assert refused is not None and refused.status == 401

    page = _page(browser)
    blocked: list[str] = []
    page.on(
        "console", lambda message: blocked.append(message.text) if "Content Security Policy" in message.text else None
    )
    page.goto(console_url)
    rows = page.locator("table.incidents tbody tr")
    assert rows.count() == 2, rows.all_inner_texts()
    risk_row = rows.filter(has_text="upstream_risk")
    regression_row = rows.filter(has_text="repair_validated")
    assert risk_row.count() == 1 and regression_row.count() == 1
    assert "account_age_months" in risk_row.inner_text()
    page.screenshot(path=str(SCREENSHOTS / "incidents.png"), full_page=True)

    regression_row.locator("a").first.click()
    page.wait_for_load_state()
    timeline = page.locator("#timeline tbody tr")
    assert timeline.count() >= 7
    for state in page.locator("#timeline td.check .state").all_inner_texts():
        assert state in ("verified", "pending"), state
    assert page.locator("#timeline td.check-failed").count() == 0
    assert page.locator("#verification").get_attribute("class") in ("verified", "pending")
    assert page.locator("#timeline td.check-verified").count() >= 2 * timeline.count()  # signature and chain
    chart = page.locator("#counterfactual svg")
    assert chart.is_visible() and chart.locator("rect").count() == 4
    lineage = page.locator("#lineage svg")
    assert lineage.is_visible()
    deployment = lineage.locator("g.node.kind-mlModelDeployment.on-path")
    assert deployment.count() == 1 and DEPLOYMENT in (deployment.text_content() or "")
    assert page.locator("#patch .diff-add").count() >= 1
    checks = page.locator("#validation tbody tr")
    assert checks.count() >= 5 and all("passed" in text for text in checks.all_inner_texts())
    page.screenshot(path=str(SCREENSHOTS / "incident.png"), full_page=True)
    lineage.screenshot(path=str(SCREENSHOTS / "lineage.png"))

    page.goto(console_url + "?outcome=upstream_risk")
    page.locator("table.incidents tbody tr a").first.click()
    page.wait_for_load_state()
    change = page.locator("#upstream-change").inner_text()
    assert "analytics.crm.customers" in change and "account_age_months" in change
    assert page.locator("#upstream-change dd.field").inner_text() == "account_age_months"
    assert page.locator("#lineage svg g.node.kind-schemaField.on-path").count() == 1
    assert page.locator("#lineage svg g.node.on-path").filter(has_text=DEPLOYMENT).count() == 1
    page.screenshot(path=str(SCREENSHOTS / "upstream-risk.png"), full_page=True)
    assert blocked == [], "the console's own pages broke its Content-Security-Policy"


def test_axe_finds_no_serious_or_critical_accessibility_violation(console_url: str, browser: object) -> None:
    assert hashlib.sha256(AXE.read_bytes()).hexdigest() == AXE_SHA256, "the vendored axe.min.js is not 4.14.1"
    page = _page(browser, bypass_csp=True)  # the console's CSP forbids injected scripts, axe's included
    page.goto(console_url)
    urls = [
        console_url,
        *(
            console_url + href.lstrip("/")
            for href in page.locator("table.incidents a").evaluate_all(
                "links => links.map(a => a.getAttribute('href'))"
            )
        ),
    ]
    assert len(urls) == 3
    urls.append(console_url + "operations")
    for url in urls:
        page.goto(url)
        page.add_script_tag(path=str(AXE))
        violations = page.evaluate("async () => (await axe.run(document)).violations")
        bad = [
            f"{v['id']} ({v['impact']}): {v['help']} x{len(v['nodes'])}"
            for v in violations
            if v["impact"] in ("serious", "critical")
        ]
        assert bad == [], f"{url}: {bad}"


def test_the_operations_page_shows_the_refused_input_by_its_digest_to_a_real_browser(
    console_url: str, browser: object, demo_home: Path
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = _page(browser)
    blocked: list[str] = []
    page.on(
        "console", lambda message: blocked.append(message.text) if "Content Security Policy" in message.text else None
    )
    page.goto(console_url)
    page.get_by_role("link", name="Operations").click()
    page.wait_for_load_state()
    digest = f"sha256:{hashlib.sha256(REFUSED).hexdigest()}"
    letters = page.locator("table.dead-letters tbody tr").filter(has_text=digest)
    assert letters.count() == 2, page.locator("#dead-letters").inner_text()
    services = sorted(row.locator("td").nth(1).inner_text() for row in letters.all())
    assert services == ["detector", "ledger"]  # both consume the topic, each refused it
    assert all(f"{len(REFUSED)} bytes" in row.inner_text() for row in letters.all())
    assert all(row.locator("td.reason").inner_text() == "not-json" for row in letters.all())
    groups = page.locator("table.dead-letter-groups tbody tr")
    assert groups.count() >= 2 and "not-json" in groups.all_inner_texts()[0]
    assert "e2e-refused-bytes" not in page.content()  # the refused bytes are nowhere in the page

    intake = page.locator("table.intake-counts tbody tr")
    assert intake.count() >= 1, page.locator("#mcl-intake").inner_text()
    applied = intake.filter(has_text="applied").first.locator("td").nth(2).inner_text()
    assert int(applied) >= 1  # act 2's schema change, as the running context service counted it
    context_port = read_state(demo_home).health_ports["context"]  # type: ignore[union-attr]
    assert f"http://127.0.0.1:{context_port}/metrics" in page.locator("#mcl-intake").inner_text()

    assert page.locator("#quiet-link").get_attribute("href") == "/?quiet=10"
    page.screenshot(path=str(SCREENSHOTS / "operations.png"), full_page=True)
    page.locator("#quiet-link").click()
    page.wait_for_load_state()
    assert page.locator("#filter-quiet").input_value() == "10"
    assert blocked == [], "the console's own pages broke its Content-Security-Policy"
