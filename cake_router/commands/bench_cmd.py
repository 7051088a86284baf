"""`python -m cake_router bench`: the comparison table against the peers, from stored evidence."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cake_router.cli import CliError
from cake_router.commands.common import ARCH_HELP, add_db_option, add_gpu_option, add_json_option, console, print_json

EXAMPLES = """examples:
  # after `measure` on the GPU node and `import`: the table and the targets, Markdown + JSON
  python -m cake_router bench --arch sm_90a --copy-TBps 4.22
  python -m cake_router bench --arch sm_90a --json
  # also rebuild the README's tables (its `<!-- bench-rows ... -->` blocks) and its targets table
  # (`<!-- bench-targets -->`, with the notes of bench/bounds/sm_90a.json) from the same rows
  python -m cake_router bench --arch sm_90a --readme README.md
"""


def register(sub) -> None:
    p = sub.add_parser("bench", help="compare the routed programs with the peers (table + targets, from the store)",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", required=True, help=ARCH_HELP)
    add_gpu_option(p)
    p.add_argument("--table", default=None, help="route table file (default: the shipped table of the arch)")
    p.add_argument("--copy-TBps", type=float, default=None, help="device copy bandwidth (read+write, TB/s); default: the lowest `copy_TBps` the runs recorded")
    p.add_argument("--out-dir", default="bench/results", help="where <arch>-bench.md and .json go")
    p.add_argument("--readme", default=None, metavar="FILE",
                   help="rewrite the `<!-- bench-rows form=F w=W op:H:T ... -->` and `<!-- bench-targets -->` blocks of this Markdown file")
    p.add_argument("--bounds", default=None, metavar="FILE",
                   help="what bounds each target: a cake-bounds/1 file (default: <out-dir>/../bounds/<arch>.json when it exists)")
    add_db_option(p)
    add_json_option(p)
    p.set_defaults(func=cmd_bench)


def cmd_bench(args) -> int:
    from cake_kernels.routes.table import RouteTableError, load_table
    from cake_router import bench
    from cake_router.policy import Policy
    from cake_router.tables import load_any_table
    from measurements_db.engine import StoreError, open_store
    from cake_router.commands.solve_cmd import pick_gpu
    from measurements_db.aggregates import evidence_runs, is_accuracy_only, timing_gpus
    from measurements_db.queries import arches, run_infos, runs, workload_evidence

    try:
        table = load_table(args.table) if args.table else load_any_table(args.arch)
    except RouteTableError as exc:
        raise CliError(str(exc)) from None
    try:
        store = open_store(args.db, create=False)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    if args.arch not in arches(store):
        raise CliError(f"--arch {args.arch}: the store holds no evidence for it (it has: {', '.join(arches(store)) or 'none'})")
    if args.copy_TBps is not None and not args.copy_TBps > 0:
        raise CliError("--copy-TBps: expected a positive number (TB/s, read + write)")
    readme_text = None
    if args.readme is not None:
        try:
            readme_text = Path(args.readme).read_text()
        except OSError as exc:
            raise CliError(f"--readme {args.readme}: cannot read it ({exc.strerror})") from None
        if not (bench.README_BLOCK.search(readme_text) or bench.README_TARGETS.search(readme_text)):
            raise CliError(f"--readme {args.readme}: no `<!-- bench-rows ... -->` ... `<!-- /bench-rows -->` or "
                           "`<!-- bench-targets -->` ... `<!-- /bench-targets -->` block in it")
    # Default: the arch's notes beside the results directory (bench/results -> bench/bounds/<arch>.json).
    default_bounds = Path(args.out_dir).parent / "bounds" / f"{args.arch}.json"
    bounds_path = args.bounds or (str(default_bounds) if default_bounds.is_file() else None)
    bounds = {}
    if bounds_path is not None:
        try:
            bounds = bench.load_bounds(json.loads(Path(bounds_path).read_text()), bounds_path, args.arch)
        except OSError as exc:
            raise CliError(f"--bounds {bounds_path}: cannot read it ({exc.strerror})") from None
        except json.JSONDecodeError as exc:
            raise CliError(f"--bounds {bounds_path}: not JSON ({exc})") from None
        except bench.BoundsError as exc:
            raise CliError(f"--bounds {exc}") from None
    infos = run_infos(store, args.arch)
    gpu = pick_gpu(args.arch, timing_gpus(infos), args.gpu)
    ev = workload_evidence(store, args.arch, gpu)
    # The compared runs: those that timed (of the chosen model). Accuracy-only runs (`measure
    # --accuracy-only`, possibly on another card of the arch and SM count) are listed apart: their
    # copy bandwidth is not the compared card's.
    all_runs = runs(store, args.arch)
    run_list = [r for r in all_runs if r["timing_blocks"] and (gpu is None or r.get("gpu") == gpu)]
    _, accuracy_ids = evidence_runs(infos, gpu)
    accuracy_only = [r for r in all_runs if r["run_id"] in accuracy_ids
                     and is_accuracy_only(r.get("source"), bool(r["timing_blocks"]), bool(r.get("accuracy_records")))]
    copy_TBps = args.copy_TBps
    if copy_TBps is None:
        # Sessions record the copy bandwidth they measured (`copy_TBps` in the run record): the
        # slowest of them is the conservative yardstick for "fraction of copy bandwidth".
        measured = [float(r["copy_TBps"]) for r in run_list if isinstance(r.get("copy_TBps"), (int, float))]
        copy_TBps = min(measured) if measured else None
    rows = bench.compare(ev, table, Policy(), copy_TBps)
    if not rows:
        raise CliError(f"no measured point of {args.arch} is covered by the table; measure first")
    tg = bench.targets(rows)
    stale = bench.attach_bounds(tg, bounds)
    meta = {"arch": args.arch, "table": table.path, "copy_TBps": copy_TBps, "bounds": bounds_path,
            "runs": [{k: r.get(k) for k in ("run_id", "gpu", "torch", "triton", "cuda", "driver", "started")} for r in run_list],
            "accuracy_only_runs": [{k: r.get(k) for k in ("run_id", "gpu", "sm_count", "started")} for r in accuracy_only]}
    aa = sorted(v for e in ev.values() for v in e.aa_floor.values())
    meta["aa_floor"] = {"median": aa[len(aa) // 2], "max": aa[-1], "points": len(aa)} if aa else None
    gpus = sorted({r.get("gpu") or "?" for r in run_list})
    header = (f"# {args.arch} comparison ({', '.join(gpus)})\n\nFrom the store's evidence: "
              f"{len(run_list)} run(s); copy bandwidth {copy_TBps or 'not given'} TB/s; "
              f"A/A floor median {meta['aa_floor']['median']:.4f}, max {meta['aa_floor']['max']:.4f}." if aa else "")
    if accuracy_only and header:
        cards = ", ".join(sorted({f"{r.get('gpu') or '?'} ({r.get('sm_count')} SMs)" for r in accuracy_only}))
        header += f" Accuracy also from {len(accuracy_only)} accuracy-only run(s): {cards}."
    peer_rows = bench.peer_table(ev, Policy())
    if readme_text is not None:
        try:
            new_text, n_blocks = bench.rewrite_readme(readme_text, rows, peer_rows, tg)
        except bench.ReadmeSpecError as exc:
            raise CliError(f"--readme {args.readme}: {exc}; the file was left as it was") from None
    md = bench.markdown(rows, tg, header) + "\n" + bench.peer_markdown(peer_rows)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.arch}-bench.md").write_text(md)
    (out / f"{args.arch}-bench.json").write_text(json.dumps(bench.as_json(rows, tg, meta, peer_rows), indent=1, sort_keys=True, default=str) + "\n")
    if readme_text is not None:
        Path(args.readme).write_text(new_text)
        if not args.json:
            console().print(f"rewrote {n_blocks} bench block(s) of {args.readme}")
    for w in stale:
        # stderr, so `--json` output stays one document
        console(stderr=True).print(f"[yellow]warning:[/] {w}")
    if args.json:
        print_json(bench.as_json(rows, tg, meta, peer_rows))
        return 0
    from rich.table import Table

    t = Table(title=f"{args.arch}: targets (rows: {out / (args.arch + '-bench.md')})")
    for c in ("target", "met", "measured", "short", "binding row"):
        t.add_column(c)
    for x in tg:
        b = x.get("binding")
        t.add_row(x["target"], "n/a" if x["met"] is None else ("[green]met" if x["met"] else "[red]not met"), x["figure"],
                  "-" if x.get("short") is None else str(x["short"]), f"{b['key']} {b['program']}" if b else "-")
    console().print(t)
    return 0
