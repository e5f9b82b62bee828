"""Issue 16's done-when: a real headless Chromium (Debian's, driven by Playwright) over the console serving the
home `make demo` leaves behind. The list shows both incidents; the churn incident's page shows the verified
timeline, the counterfactual chart, the lineage graph with the deployment, the patch diff and the validation
checks; the upstream-risk incident shows its changed field. Screenshots go to out/console/, and axe-core finds no
serious or critical accessibility violation on any page."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from modelguard.demo import run_demo
from modelguard.stack import REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.broker, pytest.mark.timeout(1200)]

CHROMIUM = Path("/usr/bin/chromium")
AXE = Path(__file__).parents[1] / "support" / "vendor" / "axe-core" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
SCREENSHOTS = REPO_ROOT / "out" / "console"
TOKEN = "browser-test-token-0123456789"
DEPLOYMENT = "churn-endpoint"

if not CHROMIUM.exists():
    pytest.skip(
        f"no {CHROMIUM}: apt-get install chromium (Debian's; Playwright's download is not used)",
        allow_module_level=True,
    )
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")


@pytest.fixture(scope="module")
def console_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MODELGUARD_HOME", str(out / "stack"))  # run_demo sets it for this process; restored after
        assert run_demo(out, out / "stack") == 0, "the demo did not hold its guarantees"
    env = {**os.environ, "MODELGUARD_HOME": str(out / "stack"), "MODELGUARD_CONSOLE_TOKEN": TOKEN}
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
