"""Table locations: runtime folder vs published folder, listing and loading either."""

from __future__ import annotations

import pytest

import cake_router.tables as tables
from cake_kernels.routes.table import RouteTableError, write_table


def _doc(arch: str, runnable: bool) -> dict:
    return {"schema": "cake-routes/1", "arch": arch, "programs": {"p": {"runnable": runnable}},
            "routes": [{"op": "fwd", "H": 512, "w_dtype": "bf16", "form": "plain", "mode": "any",
                        "windows": [{"lo": 1, "hi": None, "program": "p", "reason": "fastest", "evidence": {}}]}]}


def test_list_and_load_prefer_runtime_tables(tmp_path, monkeypatch):
    runtime, published = tmp_path / "runtime", tmp_path / "published"
    monkeypatch.setattr(tables, "routes_dir", lambda: runtime)
    monkeypatch.setattr(tables, "published_dir", lambda: published)
    for arch, runnable in (("sm_90a", True), ("sm_100a", False)):
        doc = _doc(arch, runnable)
        write_table(doc, tables.default_table_path(arch, doc))
    write_table(_doc("sm_90a", False), published / "sm_90a.json")  # both folders: runtime wins
    assert tables.list_tables() == {"sm_100a": published / "sm_100a.json", "sm_90a": runtime / "sm_90a.json"}
    assert tables.load_any_table("sm_100a").arch == "sm_100a"
    assert tables.is_published_table(published / "sm_100a.json")
    with pytest.raises(RouteTableError, match="sm_100a, sm_90a"):
        tables.load_any_table("sm_107a")
