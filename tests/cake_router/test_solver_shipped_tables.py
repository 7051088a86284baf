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
