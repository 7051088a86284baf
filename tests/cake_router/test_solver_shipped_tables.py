"""The committed published-figure tables are exactly what `solve` makes of the shipped bundle."""

from __future__ import annotations

from pathlib import Path

import pytest

from cake_router.cli import main
from cake_router.tables import published_dir

BUNDLE = Path(__file__).resolve().parents[2] / "measurements_db" / "data" / "published-flashinfer.jsonl.gz"
TABLES = sorted(published_dir().glob("*.json"))


@pytest.mark.skipif(not BUNDLE.exists() or not TABLES, reason="no shipped published bundle or tables")
@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.stem)
def test_published_table_is_current(table, tmp_path, capsys):
    out = tmp_path / table.name
    rc = main(["solve", "--arch", table.stem, "--evidence", str(BUNDLE), "--incumbent", "none", "--out", str(out), "--json"])
    capsys.readouterr()
    assert rc == 0
    assert out.read_bytes() == table.read_bytes(), (
        f"{table} is stale against {BUNDLE.name}: re-run `python -m cake_router solve --arch {table.stem} "
        f"--evidence {BUNDLE} --incumbent none`")


def test_shipped_sm_90a_table_is_what_a_fresh_clone_solves(tmp_path, capsys):
    """DESIGN: a fresh clone runs `python -m cake_router solve --arch sm_90a` (the embedded store of
    the shipped bundles, the shipped table as incumbent), and the same evidence and policy give a
    byte-identical file: the committed table must be that file, or the first solve rewrites it."""
    from cake_kernels.routes import routes_dir

    shipped = routes_dir() / "sm_90a.json"
    out = tmp_path / "sm_90a.json"
    rc = main(["solve", "--arch", "sm_90a", "--incumbent", str(shipped), "--out", str(out), "--json"])
    capsys.readouterr()
    assert rc == 0
    assert out.read_bytes() == shipped.read_bytes(), (
        f"{shipped} is not a fixed point of its own solve: run `python -m cake_router solve --arch sm_90a` "
        "once more after solving with another incumbent, and commit the result")
