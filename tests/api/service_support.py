"""Constants and helpers shared by the service tests (imported by name: a module called
`conftest` is ambiguous when several test folders have one)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EVIDENCE = FIXTURES / "synthetic-evidence.jsonl"
ARCH = "sm_00a"
TABLES = {
    f"runtime:{ARCH}": FIXTURES / "synthetic-table-runtime.json",
    f"published:{ARCH}": FIXTURES / "synthetic-table-published.json",
}
TOKEN = "test-token-0123456789abcdef"
MAX_BODY = 256 * 1024


def fixture_records() -> list[dict]:
    return [json.loads(ln) for ln in EVIDENCE.read_text(encoding="utf-8").splitlines() if ln.strip()]


def make_app(url: str, **kw):
    from api.app import create_app

    kw.setdefault("tables", TABLES)
    kw.setdefault("token", TOKEN)
    kw.setdefault("max_body_bytes", MAX_BODY)
    return create_app(store_url=url, **kw)


def store_counts(url: str) -> dict:
    """Row counts per kind, straight from the store (what 'nothing written' is checked against)."""
    from measurements_db.engine import open_store
    from measurements_db.evidence_io import export_records

    store = open_store(url)
    try:
        out: dict[str, int] = {}
        for r in export_records(store):
            out[r["kind"]] = out.get(r["kind"], 0) + 1
        return out
    finally:
        store.close()
