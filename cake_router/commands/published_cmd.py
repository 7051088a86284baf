"""`import-published` and `published-summary`: FlashInfer's published figures as evidence.

`import-published [FILE]` converts the published rows (default: the CSV shipped in
`measurements_db/data/`) to `cake-evidence/1` and imports them into the store; `--out` writes the
JSONL and `--write-bundle` regenerates the embedded default bundle instead (byte-identical for the
same CSV). `published-summary` recomputes the pull requests' summary tables from the records in
the store (or, with `--csv`, straight from a CSV) so they can be compared with the published ones.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path

from cake_router import published
from cake_router.cli import CliError
from cake_router.commands.common import add_db_option, add_json_option, console, print_json

DATA_DIR = Path(__file__).resolve().parents[2] / "measurements_db" / "data"
DEFAULT_CSV = DATA_DIR / "flashinfer-published-rows.csv"
DEFAULT_BUNDLE = DATA_DIR / "published-flashinfer.jsonl.gz"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import-published",
        help="import FlashInfer's published timing rows as `source: published` evidence",
        description=(
            "Convert the published FlashInfer rows (CSV; its README explains every column) to "
            "cake-evidence/1 and import them into the store. Re-running adds nothing. With --out or "
            "--write-bundle and no --db, only the files are written."
        ),
    )
    p.add_argument("file", nargs="?", default=str(DEFAULT_CSV), metavar="FILE",
                   help=f"published rows CSV (default: {DEFAULT_CSV.name} shipped in measurements_db/data)")
    add_db_option(p)
    p.add_argument("--out", metavar="FILE.jsonl", help="also write the converted evidence as JSON Lines")
    p.add_argument("--write-bundle", nargs="?", const=str(DEFAULT_BUNDLE), metavar="FILE.jsonl.gz",
                   help=f"write the gzip bundle the embedded default store loads (default: {DEFAULT_BUNDLE.name})")
    add_json_option(p)
    p.set_defaults(func=cmd_import_published)

    s = sub.add_parser(
        "published-summary",
        help="the published pull requests' summary tables, recomputed from the store",
        description=(
            "Per pull request, GPU and op: rows (without [kept] reference rows), det/new min-max and "
            "rows below 1 by printed ratio, SOTA/new min-max and below 1 over rows with an in-budget "
            "SOTA, and `!` rows (no candidate in the dw budget)."
        ),
    )
    s.add_argument("--pr", type=int, default=None, metavar="N",
                   help=f"one pull request ({', '.join(map(str, published.PULL_REQUESTS))}); default: all")
    add_db_option(s)
    s.add_argument("--csv", metavar="FILE", default=None,
                   help="summarize a published rows CSV directly instead of the store")
    s.add_argument("--markdown", action="store_true", help="print a Markdown table")
    add_json_option(s)
    s.set_defaults(func=cmd_published_summary)


# ---------------------------------------------------------------------------------------------
# import-published
# ---------------------------------------------------------------------------------------------


def validated_records(records: list[dict], origin: str) -> list[dict]:
    """The records as the store's parser normalizes them; a record it rejects is a CliError.

    The converter's own checks should make this impossible; it guards against the converter and
    the evidence format drifting apart before anything is written.
    """
    from measurements_db.evidence_io import EvidenceError, validate_record

    try:
        return [validate_record(rec, f"{origin} (converted)", i) for i, rec in enumerate(records, 1)]
    except EvidenceError as exc:
        raise CliError(f"the converted evidence does not follow cake-evidence/1: {exc}. Nothing was written.") from None


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def convert(csv_path: str) -> list[dict]:
    """The CSV's evidence, checked by the converter and by the store's parser."""
    try:
        records = published.published_rows_to_evidence(csv_path)
    except published.PublishedDataError as exc:
        raise CliError(f"{exc}. Nothing was written.") from None
    return validated_records(records, csv_path)


def cmd_import_published(args: argparse.Namespace) -> int:
    from measurements_db.bundle import write_bundle
    from measurements_db.evidence_io import format_records

    records = convert(args.file)
    result: dict = {"file": args.file, "records": len(records), "written": [],
                    "kinds": dict(sorted(Counter(rec["kind"] for rec in records).items()))}
    if args.out:
        _write_atomic(Path(args.out), format_records(records).encode("utf-8"))
        result["written"].append(args.out)
    if args.write_bundle:
        write_bundle(records, args.write_bundle)  # canonical text, fixed gzip header: same CSV, same bytes
        result["written"].append(args.write_bundle)

    files_only = (args.out or args.write_bundle) and not args.db
    if not files_only:
        result["import"] = _import_into_store(records, args.db, args.file)

    if args.json:
        print_json(result)
        return 0
    con = console()
    kinds = ", ".join(f"{n} {k}" for k, n in result["kinds"].items())
    con.print(f"converted {args.file}: {len(records)} records ({kinds})")
    for path in result["written"]:
        con.print(f"wrote {path}")
    if "import" in result:
        imp = result["import"]
        added = ", ".join(f"{n} {k}" for k, n in imp["added"].items() if n) or "nothing new"
        skipped = sum(imp["skipped"].values())
        con.print(f"imported into {imp['store']}: added {added}; {skipped} already there")
    return 0


def _open(db: str | None):
    """Open the store (imported lazily: `--help` and conversion need no database)."""
    from measurements_db.engine import StoreError, open_store

    try:
        return open_store(db)
    except StoreError as exc:
        raise CliError(str(exc)) from None


def _import_into_store(records: list[dict], db: str | None, origin: str) -> dict:
    from measurements_db.engine import StoreError
    from measurements_db.evidence_io import EvidenceError, import_evidence

    with _open(db) as store:
        if store.embedded:
            raise CliError(
                "the embedded default store is read-only and already holds this evidence (from "
                f"measurements_db/data/{DEFAULT_BUNDLE.name}); give --db URL or set CAKE_DB_URL to import "
                "into another store, or --out FILE.jsonl to write it"
            )
        try:
            outcome = import_evidence(store, records, name=origin)
        except (EvidenceError, StoreError) as exc:
            raise CliError(f"{exc}. Nothing was imported.") from None
        return {"store": store.display_url, **outcome.as_dict()}


# ---------------------------------------------------------------------------------------------
# published-summary
# ---------------------------------------------------------------------------------------------


def records_from_store(db: str | None) -> list[dict]:
    """Every record in the store, as `cake-evidence/1` dicts (extra keys included)."""
    from measurements_db.evidence_io import export_records

    with _open(db) as store:
        return export_records(store)


def cmd_published_summary(args: argparse.Namespace) -> int:
    if args.pr is not None and args.pr not in published.PULL_REQUESTS:
        raise CliError(f"--pr {args.pr}: accepted: {', '.join(map(str, published.PULL_REQUESTS))}")
    if args.csv and args.db:
        raise CliError("give either --csv FILE or --db URL, not both")
    records = convert(args.csv) if args.csv else records_from_store(args.db)
    lines = published.published_summary(records, pr=args.pr)
    if not lines:
        where = args.csv or "the store"
        raise CliError(
            f"no published FlashInfer evidence{'' if args.pr is None else f' for pull request {args.pr}'} in "
            f"{where}; run `python -m cake_router import-published` first"
        )
    if args.json:
        print_json([line.as_dict() for line in lines])
    elif args.markdown:
        print(summary_markdown(lines), end="")
    else:
        con = console()
        if not con.is_terminal:
            con.width = max(con.width, 120)  # piped output: keep one table line per summary line
        con.print(summary_table(lines))
    return 0


HEADERS = ("PR", "GPU", "op", "rows", "det/new", "det/new < 1", "SOTA/new", "SOTA/new < 1", "`!` rows")


def _cells(s: published.PublishedSummary) -> tuple[str, ...]:
    return (
        f"#{s.pr}", s.gpu, s.op, str(s.rows), s.det_new_range(), str(s.det_new_below_1), s.sota_new_range(),
        f"{s.sota_new_below_1} of {s.sota_in_budget}", str(s.bang_rows),
    )


def summary_table(lines: list[published.PublishedSummary]):
    """A rich table of summary lines (labelled as published figures)."""
    from rich.table import Table

    table = Table(title="Published FlashInfer figures (source: published; ratios as printed)")
    for h in HEADERS:
        table.add_column(h, justify="left" if h in ("PR", "GPU", "op") else "right")
    for s in lines:
        table.add_row(*_cells(s))
    return table


def summary_markdown(lines: list[published.PublishedSummary]) -> str:
    out = ["| " + " | ".join(HEADERS) + " |", "|" + "|".join("---" for _ in HEADERS) + "|"]
    out += ["| " + " | ".join(_cells(s)) + " |" for s in lines]
    return "\n".join(out) + "\n"
