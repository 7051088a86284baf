"""Browser tests: Debian's Chromium through Playwright against the real server (uvicorn on a free
loopback port) on the real SQLite store of the synthetic fixture.

Every page loads without a console error or a request leaving the server, the charts render with
data points, and clicking a window (its row or its bar) shows its evidence.
"""

from __future__ import annotations

import os

import pytest
from service_support import ARCH, make_app

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
KEY = f"/key/{ARCH}/bwd/4096/fp32/plain/det"


@pytest.fixture(scope="module")
def server(shared_store_url):
    from api.serving import running_server

    with running_server(make_app(shared_store_url)) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=os.environ.get("CAKE_TEST_CHROMIUM") or "/usr/bin/chromium",
                              args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    """A page that records console errors, failed requests and any request not to our server."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = ctx.new_page()
    pg.problems = []
    pg.on("console", lambda m: pg.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.problems.append(f"page error: {e}"))
    pg.on("requestfailed", lambda r: pg.problems.append(f"request failed: {r.url}"))
    pg.on("request", lambda r: None if r.url.startswith(server) else pg.problems.append(f"external request: {r.url}"))
    yield pg
    ctx.close()


def _points(pg, div_id: str) -> int:
    """Data points plotly drew in one chart (markers of scatter traces, bars of bar traces)."""
    return pg.evaluate(
        "id => { const d = document.getElementById(id);"
        " return d.querySelectorAll('.scatterlayer .point').length + d.querySelectorAll('.barlayer .point').length; }",
        div_id)


def _trace_points(pg, div_id: str) -> int:
    return pg.evaluate("id => document.getElementById(id).data.reduce((n, t) => n + (t.x ? t.x.length : 0), 0)", div_id)


def test_index_page(page, server):
    page.goto(server + "/")
    assert page.locator("[data-testid=arches]").inner_text().count(ARCH) >= 1
    page.click(f"a[href='/arch/{ARCH}']")
    page.wait_for_selector("#strip .plot-container")
    assert page.problems == []


def test_arch_page_strip_renders_every_window(page, server):
    page.goto(server + f"/arch/{ARCH}")
    page.wait_for_selector("#strip .barlayer .point")
    # 6 keys: 4 bwd keys of 3 windows, 2 fwd keys of 1
    assert _points(page, "strip") == 14
    assert _trace_points(page, "strip") == 14
    assert page.problems == []


def test_arch_page_bar_click_opens_the_key(page, server):
    page.goto(server + f"/arch/{ARCH}")
    page.wait_for_selector("#strip .barlayer .point")
    page.locator("#strip .barlayer .point").first.click(force=True)
    page.wait_for_url("**/key/**")
    assert "/key/" + ARCH in page.url
    page.wait_for_selector("#latency .scatterlayer .point")


def test_key_page_charts_have_data_points(page, server):
    page.goto(server + KEY)
    for chart in ("strip", "latency", "error"):
        page.wait_for_selector(f"#{chart} .plot-container")
    assert _points(page, "strip") == 3
    # 5 bwd programs x 11 T + the routed (chosen) line
    assert _trace_points(page, "latency") >= 5 * 11
    assert page.locator("#latency .scatterlayer .point").count() >= 5 * 11
    assert page.locator("#error .scatterlayer .point").count() >= 5 * 11
    # the budget line at err/tol = 1 is drawn
    assert page.evaluate("document.getElementById('error').layout.shapes[0].y0") == 1
    assert page.problems == []


def test_clicking_a_window_row_shows_its_evidence(page, server):
    page.goto(server + KEY)
    page.wait_for_selector("#latency .plot-container")
    assert page.locator("section.evidence:visible").count() == 0
    page.click("tr.window-row[data-window='1']")
    ev = page.locator("#evidence-1")
    ev.wait_for(state="visible")
    text = ev.inner_text()
    assert "bwd.pair.p2x.w8" in text and "gaussian" in text and "median us" in text
    assert page.locator("section.evidence:visible").count() == 1
    # another window replaces it
    page.click("tr.window-row[data-window='2']")
    page.locator("#evidence-2").wait_for(state="visible")
    assert page.locator("#evidence-1").is_hidden()


def test_clicking_a_window_bar_shows_its_evidence(page, server):
    page.goto(server + KEY)
    page.wait_for_selector("#strip .barlayer .point")
    page.locator("#strip .barlayer .point").nth(2).click(force=True)
    page.locator("section.evidence:visible").wait_for(state="visible")
    assert "Evidence of window" in page.locator("section.evidence:visible").inner_text()


def test_diff_page(page, server):
    page.goto(server + "/diff")
    page.select_option("select[name=old]", f"runtime:{ARCH}")
    page.select_option("select[name=new]", f"published:{ARCH}")
    page.click("button[type=submit]")
    page.wait_for_selector("[data-testid=diff-summary]")
    assert "2 key(s) changed" in page.inner_text("[data-testid=diff-summary]")
    assert page.locator("[data-testid=published-banner]").count() == 1
    assert page.problems == []


def test_runs_and_run_pages(page, server):
    page.goto(server + "/runs")
    page.click("a[href='/runs/synthetic-r1']")
    page.wait_for_selector("[data-testid=aa-floor]")
    assert "SYNTHETIC" in page.inner_text("[data-testid=provenance]")
    assert page.locator("[data-testid=spread] tbody tr").count() > 10
    assert page.problems == []


def test_published_table_pages_are_labelled(page, server):
    for url in (f"/arch/{ARCH}?table=published:{ARCH}", KEY + f"?table=published:{ARCH}"):
        page.goto(server + url)
        assert page.locator("[data-testid=published-banner]").is_visible()
    assert page.problems == []
