"""Screenshots of every dashboard page for docs/dashboard.md, from the SYNTHETIC test fixture.

Builds a throwaway SQLite store from tests/api/fixtures/synthetic-evidence.jsonl (through the real
importer), serves the real app on a free loopback port with the fixture's two tables, and drives
Debian's Chromium through Playwright (never `playwright install`).

Usage: python scripts/screenshots.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "api" / "fixtures"
ARCH = "sm_00a"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

# (file name, path, action before the shot, full page?)
PAGES = [
    ("index.png", "/", None, True),
    ("arch.png", f"/arch/{ARCH}", None, True),
    ("key.png", f"/key/{ARCH}/bwd/4096/fp32/plain/det", "window-1", False),
    ("key-charts.png", f"/key/{ARCH}/bwd/4096/fp32/plain/det", "charts", False),
    ("diff.png", f"/diff?old=runtime:{ARCH}&new=published:{ARCH}", None, True),
    ("run.png", "/runs/synthetic-r1", None, False),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "docs" / "img"))
    ap.add_argument("--h200", action="store_true",
                    help="shoot the real sm_90a evidence and table shipped in the repository (embedded store) instead of the fixture")
    args = ap.parse_args(argv)
    if args.h200:
        return shoot_h200(Path(args.out))
    sys.path.insert(0, str(REPO))
    from api.app import create_app
    from measurements_db.engine import open_store
    from measurements_db.evidence_io import import_evidence

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/screens.sqlite"
        store = open_store(url)
        import_evidence(store, FIX / "synthetic-evidence.jsonl", name="synthetic-fixture")
        store.close()
        app = create_app(store_url=url, token="screenshot-token", tables={
            f"runtime:{ARCH}": FIX / "synthetic-table-runtime.json",
            f"published:{ARCH}": FIX / "synthetic-table-published.json"})
        shoot(app, PAGES, out)
    return 0


def shoot(app, pages, out: Path) -> None:
    """Serve `app` on loopback and screenshot `pages` with Debian's Chromium."""
    from playwright.sync_api import sync_playwright

    from api.serving import running_server

    with running_server(app) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("CAKE_TEST_CHROMIUM") or "/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for name, path, action, full in pages:
            page.goto(base + path)
            page.wait_for_load_state("load")
            page.wait_for_function("[...document.querySelectorAll('div.chart')].every(d => d.querySelector('.plot-container'))")
            if action == "window-1":
                page.click("tr.window-row[data-window='1']")
                page.locator("#evidence-1").wait_for(state="visible")
                page.evaluate("window.scrollTo(0, 0)")
            elif action == "charts":
                page.locator("#latency").scroll_into_view_if_needed()
                page.evaluate("document.getElementById('latency').previousElementSibling.scrollIntoView()")
            page.wait_for_timeout(300)
            page.screenshot(path=str(out / name), full_page=full)
            print(f"wrote {out / name}")
        browser.close()


H200_PAGES = [
    ("h200-arch.png", "/arch/sm_90a", None, True),
    ("h200-key.png", "/key/sm_90a/bwd/4096/fp32/plain/det", "window-1", False),
    ("h200-key-charts.png", "/key/sm_90a/bwd/4096/fp32/plain/det", "charts", False),
]


def shoot_h200(out: Path) -> int:
    """The same pages over the embedded default store (the shipped H200 evidence) and shipped tables."""
    sys.path.insert(0, str(REPO))
    from api.app import create_app

    out.mkdir(parents=True, exist_ok=True)
    shoot(create_app(store_url=None, token=None), H200_PAGES, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
