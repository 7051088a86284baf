"""Where route tables live, and loading whichever table an arch has.

Two places (one file per arch in each):

* `cake_kernels/routes/<arch>.json`: tables the runtime loads. Only tables whose every routed
  program is runnable by this package (program record `runnable: true`) go here.
* `cake_router/routes_published/<arch>.json`: tables derived from published figures for programs
  this package cannot launch. The runtime never loads them; the dashboard shows them, labelled.
"""

from __future__ import annotations

from pathlib import Path

from cake_kernels.routes.table import RouteTable, RouteTableError, load_table, routes_dir


def published_dir() -> Path:
    return Path(__file__).resolve().parent / "routes_published"


def routed_programs(table_doc: dict) -> set[str]:
    return {w["program"] for r in table_doc.get("routes", []) for w in r.get("windows", [])}


def all_runnable(table_doc: dict) -> bool:
    """True when the table's `programs` object marks every routed program `runnable`."""
    progs = table_doc.get("programs") or {}
    return all(bool((progs.get(p) or {}).get("runnable")) for p in routed_programs(table_doc))


def default_table_path(arch: str, table_doc: dict) -> Path:
    """The runtime's path when every routed program is runnable here, else the published folder."""
    base = routes_dir() if all_runnable(table_doc) else published_dir()
    return base / f"{arch}.json"


def list_tables() -> dict[str, Path]:
    """arch -> table path; where both folders hold an arch, the runtime's table wins."""
    out: dict[str, Path] = {}
    for base in (published_dir(), routes_dir()):
        if base.is_dir():
            for p in sorted(base.glob("*.json")):
                out[p.stem] = p
    return dict(sorted(out.items()))


def is_published_table(path: str | Path) -> bool:
    return Path(path).resolve().parent == published_dir()


def load_any_table(arch: str) -> RouteTable:
    """The table of `arch` from either folder (verified: checksum and cover)."""
    tables = list_tables()
    if arch not in tables:
        have = ", ".join(tables) or "none"
        raise RouteTableError(f"no route table for arch {arch!r} (tables exist for: {have}); run `python -m cake_router solve --arch {arch}`")
    return load_table(tables[arch])
