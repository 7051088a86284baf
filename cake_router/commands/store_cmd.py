"""`import`, `export`, `db upgrade`, `db stats`: moving `cake-evidence/1` in and out of the store.

    python -m cake_router import FILE... [--db URL] [--json]
    python -m cake_router export [--arch A] [--db URL] [--out FILE] [--json]
    python -m cake_router db upgrade [--db URL] [--json]
    python -m cake_router db stats [--db URL] [--json]
    python -m cake_router db bundle FILE... --out measurements_db/data/NAME.jsonl.gz [--force] [--json]

Each imported file is one transaction: a bad file is reported with file:line and field and
nothing of it is written, while the other files still import (exit code 1 when any file failed).
The embedded default (no --db, no $CAKE_DB_URL) is a read-only cache of the shipped bundles, so
`import` needs a store URL.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.table import Table

from cake_router.cli import CliError
from cake_router.commands.common import ARCH_HELP, add_db_option, add_json_option, console, print_json


def _open(db: str | None, *, create: bool = True):
    from measurements_db.engine import StoreError, open_store

    try:
        return open_store(db, create=create)
    except StoreError as exc:
        raise CliError(str(exc)) from None


def register(subparsers) -> None:
    p = subparsers.add_parser("import", help="import cake-evidence/1 files into the store",
                              description="Import cake-evidence/1 JSON Lines files (.jsonl or .jsonl.gz); "
                              "each file is all or nothing, records already stored are skipped.")
    p.add_argument("files", nargs="+", metavar="FILE", help="evidence file(s)")
    add_db_option(p)
    add_json_option(p)
    p.set_defaults(func=cmd_import)

    p = subparsers.add_parser("export", help="export the store as cake-evidence/1",
                              description="Write the store (or one arch) as canonical cake-evidence/1 JSON Lines; "
                              "export -> import into an empty store -> export gives the same bytes.")
    p.add_argument("--arch", default=None, help=ARCH_HELP + " (default: every arch)")
    add_db_option(p)
    p.add_argument("--out", metavar="FILE", default=None, help="write here (atomically) instead of stdout")
    add_json_option(p)
    p.set_defaults(func=cmd_export)

    p = subparsers.add_parser("db", help="store maintenance: upgrade, stats")
    dsub = p.add_subparsers(dest="db_command", metavar="SUBCOMMAND")
    q = dsub.add_parser("upgrade", help="create the store or migrate it to this release's schema")
    add_db_option(q)
    add_json_option(q)
    q.set_defaults(func=cmd_db_upgrade)
    q = dsub.add_parser("stats", help="counts per arch, program and workload key")
    add_db_option(q)
    add_json_option(q)
    q.set_defaults(func=cmd_db_stats)
    q = dsub.add_parser("bundle", help="merge evidence files into one byte-stable shipped bundle",
                        description="Merge cake-evidence/1 files (a campaign's per-call outputs) into one canonical, "
                        "byte-stable .jsonl.gz bundle, as shipped under measurements_db/data/ (loaded by the "
                        "embedded default store). Each run and program version once; exact duplicates once.")
    q.add_argument("files", nargs="+", metavar="FILE", help="evidence file(s): .jsonl or .jsonl.gz")
    q.add_argument("--out", required=True, metavar="FILE", help="the bundle to write (.jsonl.gz)")
    q.add_argument("--force", action="store_true", help="replace --out when it exists")
    add_json_option(q)
    q.set_defaults(func=cmd_db_bundle)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


# ---------------------------------------------------------------------------------------------
# import
# ---------------------------------------------------------------------------------------------


def cmd_import(args: argparse.Namespace) -> int:
    from measurements_db.engine import StoreError
    from measurements_db.evidence_io import EvidenceError, import_evidence

    store = _open(args.db)
    if store.embedded:
        store.close()
        raise CliError("no store given: the embedded default is a read-only cache of the shipped bundles; "
                       "pass --db URL (e.g. --db sqlite:///evidence.sqlite) or set CAKE_DB_URL")
    results: list[dict] = []
    err = console(stderr=True)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(),
                      console=err, transient=True, disable=args.json or not err.is_terminal) as bar:
            for path in args.files:
                task = bar.add_task(f"{Path(path).name}: reading", total=None)

                def progress(phase: str, done: int, total: int, task=task, path=path) -> None:
                    bar.update(task, description=f"{Path(path).name}: {phase}", completed=done, total=total or None)

                try:
                    res = import_evidence(store, path, progress=progress)
                    results.append({"file": path, "ok": True, **res.as_dict()})
                except EvidenceError as exc:
                    results.append({"file": path, "ok": False, "error": str(exc), "line": exc.line,
                                    "field": exc.field})
                except StoreError as exc:
                    results.append({"file": path, "ok": False, "error": str(exc), "line": None, "field": None})
                bar.remove_task(task)
    finally:
        store.close()
    failed = [r for r in results if not r["ok"]]
    if args.json:
        print_json({"store": store.display_url, "files": results, "failed": len(failed)})
        return 1 if failed else 0
    con = console()
    table = Table(title=f"import into {store.display_url}")
    table.add_column("file", overflow="fold")
    table.add_column("result", no_wrap=True)
    for col in ("runs", "programs", "timing", "accuracy", "already stored"):
        table.add_column(col, justify="right")
    for r in results:
        if r["ok"]:
            new = [str(r["added"].get(k, 0)) for k in ("run", "program", "timing", "accuracy")]
            kept = sum(r["skipped"].values())
            result = "[green]imported[/]" if sum(r["added"].values()) else "already stored"
            table.add_row(r["file"], result, *new, str(kept))
        else:
            table.add_row(r["file"], "[red]rejected[/] (nothing written)", "", "", "", "", "")
    con.print(table)
    for r in results:
        for d in r.get("dropped_keys") or ():
            err.print(f"[yellow]warning:[/] {r['file']}:{d['line']}: unknown key {d['key']!r} not kept "
                      f"({d['reason']}); the record was imported without it", markup=True, highlight=False,
                      soft_wrap=True)
    for r in failed:
        err.print(f"[red]error:[/] {r['error']}", markup=True, highlight=False, soft_wrap=True)
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------
# export
# ---------------------------------------------------------------------------------------------


def cmd_export(args: argparse.Namespace) -> int:
    from measurements_db import queries
    from measurements_db.evidence_io import export_evidence

    if args.json and not args.out:
        raise CliError("--json prints a summary of the export: give --out FILE for the evidence itself")
    # Reading: a SQLite URL naming no file is a mistyped store, not an empty one to create.
    store = _open(args.db, create=False)
    try:
        if args.arch is not None and args.arch not in queries.arches(store):
            known = ", ".join(queries.arches(store)) or "none"
            raise CliError(f"--arch {args.arch}: no evidence for it in {store.display_url}; arches there: {known}")
        text = export_evidence(store, arch=args.arch)
    finally:
        store.close()
    data = text.encode("utf-8")
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, out)
        summary = {"out": str(out), "records": text.count("\n"), "bytes": len(data),
                   "sha256": hashlib.sha256(data).hexdigest(), "arch": args.arch, "store": store.display_url}
        if args.json:
            print_json(summary)
        else:
            console().print(f"wrote {summary['records']} records to {out} (sha256 {summary['sha256'][:16]}...)")
        return 0
    sys.stdout.write(text)
    return 0


# ---------------------------------------------------------------------------------------------
# db upgrade / db stats
# ---------------------------------------------------------------------------------------------


def cmd_db_bundle(args: argparse.Namespace) -> int:
    from collections import Counter

    from measurements_db.bundle import merge_records, read_bundle, write_bundle
    from measurements_db.evidence_io import EvidenceError

    out = Path(args.out)
    if not out.name.endswith(".jsonl.gz"):
        raise CliError(f"--out {out}: a bundle is a .jsonl.gz file")
    if out.exists() and not args.force:
        raise CliError(f"--out {out} exists; give --force to replace it (it may be a shipped bundle)")
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        raise CliError(f"FILE: not found: {', '.join(missing)}")
    try:
        merged = merge_records((f, read_bundle(f)) for f in args.files)
        sha = write_bundle(merged, out)
    except EvidenceError as exc:
        raise CliError(f"{exc}; nothing was written") from None
    kinds = Counter(r["kind"] for r in merged)
    summary = {"out": str(out), "sha256": sha, "records": len(merged), "inputs": len(args.files),
               **{k: kinds.get(k, 0) for k in ("run", "program", "timing", "accuracy")}}
    if args.json:
        print_json(summary)
    else:
        console().print(f"wrote {out}: {summary['records']} records ({summary['run']} runs, {summary['program']} programs, "
                        f"{summary['timing']} timing, {summary['accuracy']} accuracy) from {len(args.files)} file(s); "
                        f"sha256 {sha[:16]}...")
    return 0


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    from measurements_db.engine import SCHEMA_VERSION

    store = _open(args.db)
    store.close()
    frm = store.upgraded_from
    out = {"store": store.display_url, "schema_version": SCHEMA_VERSION, "upgraded_from": frm,
           "embedded": store.embedded}
    if args.json:
        print_json(out)
        return 0
    if frm is None:
        msg = f"{store.display_url} is at schema version {SCHEMA_VERSION}; nothing to do"
    elif frm == 0:
        msg = f"created {store.display_url} at schema version {SCHEMA_VERSION}"
    else:
        msg = f"upgraded {store.display_url} from schema version {frm} to {SCHEMA_VERSION}"
    console().print(msg)
    return 0


_HEADERS = {"published_runs": "published", "timing_blocks": "blocks", "accuracy_records": "accuracy",
            "T_values": "T values", "x_dtype": "x", "w_dtype": "w"}


def cmd_db_stats(args: argparse.Namespace) -> int:
    from measurements_db import queries

    store = _open(args.db, create=False)
    try:
        st = queries.stats(store)
    finally:
        store.close()
    if args.json:
        print_json(st)
        return 0
    con = console()
    t = st["totals"]
    con.print(f"{st['url']}: {t['runs']} runs, {t['programs']} programs, {t['workloads']} workloads, "
              f"{t['timing_blocks']} timing blocks ({t['samples']} samples), {t['accuracy_records']} accuracy records")
    if not st["arches"]:
        con.print("the store is empty: import evidence with `python -m cake_router import FILE --db URL`")
        return 0

    def table(title: str, cols: list[str], rows: list[dict]) -> Table:
        tb = Table(title=title)
        for c in cols:
            numeric = isinstance(rows[0].get(c), int) and not isinstance(rows[0].get(c), bool)
            tb.add_column(_HEADERS.get(c, c), justify="right" if numeric else "left", overflow="fold")
        for r in rows:
            tb.add_row(*[", ".join(map(str, r[c])) if isinstance(r[c], list) else str(r[c]) for c in cols])
        return tb

    con.print(table("per arch", ["arch", "runs", "published_runs", "workloads", "programs", "timing_blocks", "samples",
                                 "accuracy_records"], st["arches"]))
    if st["programs"]:
        con.print(table("per program", ["program", "arches", "timing_blocks", "samples", "accuracy_records"],
                        st["programs"]))
    if st["keys"]:
        con.print(table("per workload key", ["arch", "H", "x_dtype", "w_dtype", "form", "ops", "programs", "T_values",
                                             "timing_blocks", "samples", "accuracy_records"], st["keys"]))
    return 0
