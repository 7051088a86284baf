"""`solve`, `diff`, `explain`, `report`: evidence -> route tables, and what a reviewer reads."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Mapping

from rich.table import Table

from cake_router.commands.common import ARCH_HELP, add_db_option, add_gpu_option, add_json_option, console, print_json

def _cli_error(msg: str) -> Exception:
    from cake_router.cli import CliError

    return CliError(msg)


# ---- evidence sources ------------------------------------------------------------------------

def read_evidence_files(paths: list[str]) -> list[dict]:
    """Records of cake-evidence/1 JSONL files (plain or gzipped), validated by the store's own parser,
    so `--evidence` accepts and refuses exactly what `import` does."""
    from measurements_db.evidence_io import EvidenceError, _read_lines, parse_evidence

    records: list[dict] = []
    for path in paths:
        try:
            lines, _ = _read_lines(Path(path), path)
            records += parse_evidence(lines, path)
        except EvidenceError as exc:
            raise _cli_error(f"--evidence {exc}") from None
    return records


def pick_gpu(arch: str, counts: dict[str, int], wanted: str | None) -> str | None:
    """The GPU model whose runs a route table of ``arch`` is solved from (None: every run, there being
    one model or none). The route key's arch is shared by cards whose timings differ (sm_90a: H100
    and H200, 3.0 against 4.2 TB/s of copy bandwidth), so measured runs of two models are never pooled
    silently: --gpu picks one. ``counts``: GPU model -> measured runs of the arch that hold timing.
    The rule is `measurements_db.aggregates.choose_gpu`; this words its refusals for the command line."""
    from measurements_db.aggregates import GpuChoiceError, choose_gpu

    try:
        return choose_gpu(arch, counts, wanted)
    except GpuChoiceError:
        if wanted is not None:
            have = ", ".join(f"{g!r}" for g in sorted(counts)) or "none"
            raise _cli_error(f"--gpu {wanted!r}: no measured run of {arch} on it; accepted: {have}") from None
        have = "; ".join(f"{g!r} ({n} runs)" for g, n in sorted(counts.items()))
        raise _cli_error(f"the evidence of {arch} was measured on {len(counts)} GPU models: {have}. A route table "
                         f"is solved from one: pass --gpu with one of them") from None


def load_workloads(args: argparse.Namespace, arch: str | None, run_infos: dict | None = None) -> dict[str, list]:
    """arch -> WorkloadEvidence list, from --evidence files or the store (all arches when arch is None):
    timing of one GPU model per arch (`pick_gpu`: --gpu, refused where two models timed it), accuracy
    also of cards with that model's SM count (`measurements_db.aggregates.evidence_runs`).
    ``run_infos``, when given, receives arch -> the `RunInfo` of every run of the arch (what names
    the card behind a run id in `explain`)."""
    from measurements_db.aggregates import aggregate_records, run_infos_by_arch, timing_gpus

    wanted_gpu = getattr(args, "gpu", None)
    if getattr(args, "evidence", None):
        records = read_evidence_files(args.evidence)
        infos_by_arch = run_infos_by_arch(records)
        if run_infos is not None:
            run_infos.update(infos_by_arch)
        # One GPU model's timing per arch; accuracy also from cards of its SM count (`evidence_runs`).
        chosen = {a: pick_gpu(a, timing_gpus(infos_by_arch.get(a, [])), wanted_gpu)
                  for a in ([arch] if arch is not None else sorted(infos_by_arch))}
        by_arch: dict[str, list] = {}
        for wk, ev in sorted(aggregate_records(records, chosen).items()):
            by_arch.setdefault(wk.arch, []).append(ev)
        arches = sorted(by_arch)
        if arch is not None and arch not in by_arch:
            raise _cli_error(f"unknown arch {arch!r}: the evidence files hold {', '.join(arches) or 'no arch'}")
        return by_arch if arch is None else {arch: by_arch[arch]}
    try:
        from measurements_db import queries
        from measurements_db.engine import StoreError, open_store
    except ImportError as exc:
        raise _cli_error(f"the evidence store is not available ({exc}); pass --evidence FILE.jsonl to solve from files") from None
    # open_store resolves the URL: --db, then $CAKE_DB_URL, then the embedded default.
    try:
        store = open_store(getattr(args, "db", None), create=False)
    except StoreError as exc:
        raise _cli_error(str(exc)) from None
    try:
        known = sorted(queries.arches(store))
        wanted = [arch] if arch is not None else known
        out = {}
        for a in wanted:
            infos = queries.run_infos(store, a)
            if run_infos is not None:
                run_infos[a] = infos
            evs = queries.workload_evidence(store, a, pick_gpu(a, timing_gpus(infos), wanted_gpu))
            evs = list(evs.values()) if isinstance(evs, Mapping) else list(evs)
            if not evs:
                if arch is not None:
                    raise _cli_error(f"unknown arch {a!r}: the store {store.display_url} has evidence for "
                                     f"{', '.join(known) or 'no arch'}")
                continue
            out[a] = evs
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()
    return out


def _policy(args):
    from cake_router.policy import PolicyError, load_policy

    try:
        return load_policy(getattr(args, "policy", None))
    except PolicyError as exc:
        raise _cli_error(str(exc)) from None


def _incumbent(args, arch: str):
    """--incumbent FILE, --incumbent none, or the existing table of the arch (either folder)."""
    from cake_kernels.routes.table import RouteTableError, load_table

    from cake_router.tables import list_tables

    path = getattr(args, "incumbent", None)
    if path == "none":
        return None
    if path is None:
        path = list_tables().get(arch)
        if path is None:
            return None
    try:
        table = load_table(path)
    except RouteTableError as exc:
        raise _cli_error(f"--incumbent: {exc} (pass --incumbent none to solve without one)") from None
    if table.arch != arch:
        raise _cli_error(f"--incumbent {path} is a table of {table.arch}, not {arch}")
    return table


def _solve(args, arch: str, run_infos: dict | None = None):
    from cake_router.solver import solve_arch

    policy = _policy(args)
    workloads = load_workloads(args, arch, run_infos)[arch]
    return solve_arch(arch, workloads, policy, _incumbent(args, arch))


def _add_evidence_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--evidence", metavar="FILE", nargs="+", default=None,
                   help="read cake-evidence/1 JSONL files (.jsonl or .jsonl.gz) instead of the store")
    add_gpu_option(p)


# ---- solve ---------------------------------------------------------------------------------

def _table(title: str, columns) -> Table:
    """A rich table whose cells fold instead of truncating (program names must stay whole)."""
    t = Table(title=title, title_justify="left")
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


def _span(lo, hi) -> str:
    return f"{lo}..{'inf' if hi is None else hi}"


def _ev_text(ev: dict) -> tuple[str, str, str]:
    su = ev.get("speedup_vs_runner_up")
    return (f"{su[0]:.3f}-{su[1]:.3f}" if su else "-",
            f"{ev['worst_err_over_tol']:.4g}" if "worst_err_over_tol" in ev else "-",
            str(ev.get("inputs_per_family", "-")))


def cmd_solve(args: argparse.Namespace) -> int:
    from cake_kernels.routes.table import write_table

    from cake_router.solver import LOUD_REASONS
    from cake_router.tables import default_table_path

    sol = _solve(args, args.arch)
    if not sol.keys:
        raise _cli_error(f"no route key of {args.arch} has a timed candidate program; nothing written")
    doc = sol.table_doc()
    out = Path(args.out) if args.out else default_table_path(args.arch, doc)
    data = write_table(doc, out)
    checksum = json.loads(data)["checksum"]
    nxt = sol.next_doc()
    if args.next_out:
        p = Path(args.next_out)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(nxt, sort_keys=True, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, p)
    loud = [(k.key, w) for k in sol.keys for w in k.windows if w.reason in LOUD_REASONS]
    if args.json:
        print_json({"table": str(out), "checksum": checksum, "evidence_fingerprint": sol.fingerprint,
                    "routes": doc["routes"], "next": nxt, "skipped": sol.skipped,
                    "loud": [{**k.as_dict(), "lo": w.lo, "hi": w.hi, "program": w.program, "reason": w.reason} for k, w in loud]})
        return 0
    con = console()
    for ks in sol.keys:
        k = ks.key
        t = _table(f"{k.arch} {k.op} H={k.H} w={k.w_dtype} {k.form} mode={k.mode}", ("T window", "program", "reason", "sampled T", "speed-up vs runner-up", "worst err/tol", "inputs/family"))
        for w in ks.windows:
            su, worst, ipf = _ev_text(w.evidence)
            style = "bold red" if w.reason in LOUD_REASONS else None
            t.add_row(_span(w.lo, w.hi), w.program, w.reason, str(w.evidence.get("sampled_T", 0)), su, worst, ipf, style=style)
        con.print(t)
    for k, w in loud:
        con.print(f"[bold red]{w.reason.upper()}[/]: {k.op} H={k.H} {k.w_dtype} {k.form} {k.mode} T {_span(w.lo, w.hi)} -> {w.program}")
    for s in sol.skipped:
        con.print(f"[yellow]skipped[/]: {s}")
    n_next = sum(len(k["items"]) for k in nxt["keys"])
    if n_next:
        t = _table(f"next measurements ({n_next})", ("key", "T", "kind", "programs", "why"))
        for kd in nxt["keys"]:
            for it in kd["items"]:
                t.add_row(f'{kd["op"]} H={kd["H"]} {kd["w_dtype"]} {kd["form"]} {kd["mode"]}', str(it["T"]), it["kind"],
                          ", ".join(it["programs"]), it["why"])
        con.print(t)
    con.print(f"wrote {out} ({checksum}){'; next measurements: ' + args.next_out if args.next_out else ''}")
    return 0


# ---- explain -------------------------------------------------------------------------------

def cmd_explain(args: argparse.Namespace) -> int:
    from measurements_db.aggregates import RouteKey

    from cake_router.reports import explain
    from cake_router.tables import list_tables

    if args.T < 1:
        raise _cli_error(f"--T {args.T}: T must be >= 1 (T = 0 never launches)")
    if args.H < 1:
        raise _cli_error(f"--H {args.H}: H must be >= 1")
    mode = "any" if args.op == "fwd" else args.mode
    if args.op == "bwd" and mode not in ("det", "nondet"):
        raise _cli_error(f"--mode {mode!r}: a bwd key takes det or nondet")
    infos: dict = {}
    sol = _solve(args, args.arch, infos)
    want = RouteKey(args.arch, args.op, args.H, args.w_dtype, args.form, mode)
    ks = next((k for k in sol.keys if k.key == want), None)
    if ks is None:
        raise _cli_error(missing_key_message(want, [k.key for k in sol.keys]))
    out = explain(ks, args.T)
    # Accuracy may come from several cards of the arch (`evidence_runs`): name each run's card.
    by_id = {r.run_id: r for r in infos.get(args.arch, [])}
    used = sorted({rid for p in out["points"] for f in p["accuracy"] for rid in f["runs"] if rid in by_id})
    out["runs"] = {rid: {"gpu": by_id[rid].gpu, "sm_count": by_id[rid].sm_count, "source": by_id[rid].source,
                         "timed": by_id[rid].timed} for rid in used}
    shipped = list_tables().get(args.arch)
    if shipped is not None:
        from cake_kernels.routes.table import RouteTableError, load_table

        try:
            w = load_table(shipped).lookup(args.op, args.H, args.w_dtype, args.form, mode, args.T)
            out["shipped"] = {"path": str(shipped), "program": w.program if w else None, "reason": w.reason if w else None}
        except RouteTableError as exc:
            out["shipped"] = {"path": str(shipped), "error": str(exc)}
    if args.json:
        print_json(out)
        return 0
    con = console()
    w = out["window"]
    style = "bold red" if w["reason"] in ("no-eligible-program", "unverified") else "bold"
    con.print(f"[{style}]{w['program']}[/] for T={args.T}: window {_span(w['lo'], w['hi'])}, reason {w['reason']}")
    con.print(f"rule: {out['rule']}")
    con.print(f"window start: {out['cut_rule']}")
    if "shipped" in out and out["shipped"].get("program") not in (None, w["program"]):
        con.print(f"[yellow]the shipped table {out['shipped']['path']} routes {out['shipped']['program']} here: re-run solve[/]")
    for p in out["points"]:
        t = _table(f"T={p['T']}  winner={p['winner']}  runner-up={p['runner_up']}  margin="
                        f"{'-' if p['margin'] is None else format(p['margin'], '.4f')}  A/A floor={p['aa_floor']}"
                        f"{'  ~noisy' if p['noisy'] else ''}", ("program", "latency us", "spread", "eligible", "accuracy", "worst err/tol", "inputs/family", "detail"))
        for r in p["rows"]:
            t.add_row(r["program"], "-" if r["latency_us"] is None else f"{r['latency_us']:.3f}",
                      "-" if r["spread"] is None else f"{r['spread']:.3f}", "yes" if r["eligible"] else "no",
                      r["accuracy"], "-" if r["worst_err_over_tol"] is None else f"{r['worst_err_over_tol']:.4g}",
                      str(r["inputs_per_family"] if r["inputs_per_family"] is not None else "-"), r["detail"])
        con.print(t)
        if p["accuracy"]:
            t = _table(f"accuracy of {w['program']} at T={p['T']}", ("family", "inputs", "worst", "median", "eager worst", "eager median", "source", "runs"))
            for f in p["accuracy"]:
                t.add_row(f["family"], str(f["inputs"]), *[("-" if f[k] is None else f"{f[k]:.4g}") for k in ("worst", "median", "eager_worst", "eager_median")],
                          f["source"], ", ".join(_run_text(r, out["runs"]) for r in f["runs"]))
            con.print(t)
    return 0


def missing_key_message(want, keys) -> str:
    """Why `explain` has no key ``want``, naming the nearest keys there are: the H values of keys
    that differ from it only in H, and the weight dtypes and forms of its op and mode at its H."""
    kind = f"{want.op} {want.w_dtype} {want.form} {want.mode}"
    hs = sorted({k.H for k in keys if (k.op, k.w_dtype, k.form, k.mode) == (want.op, want.w_dtype, want.form, want.mode)})
    msg = f"no route key {want.op} H={want.H} {want.w_dtype} {want.form} {want.mode} for {want.arch}; "
    msg += f"{kind} keys have H {', '.join(map(str, hs))}" if hs else f"no {kind} key at any H"
    at_h = sorted({f"{k.w_dtype} {k.form}" for k in keys if (k.op, k.H, k.mode) == (want.op, want.H, want.mode)})
    if at_h:
        msg += f"; {want.op} {want.mode} keys at H={want.H}: {', '.join(at_h)}"
    return msg


def _run_text(run_id: str | None, runs: dict) -> str:
    """A run id with its card, e.g. `r24a-... (NVIDIA H100 80GB HBM3, 132 SMs, accuracy only)`."""
    from measurements_db.aggregates import card_label, is_accuracy_only

    r = runs.get(run_id) if run_id else None
    if r is None:
        return run_id or "?"
    return f"{run_id} ({card_label(r['gpu'], r['sm_count'], is_accuracy_only(r['source'], r['timed']))})"


# ---- report --------------------------------------------------------------------------------

def _f(x, fmt=".3f") -> str:
    return "-" if x is None else format(x, fmt)


def cmd_report(args: argparse.Namespace) -> int:
    from cake_router.reports import report_rows

    sol = _solve(args, args.arch)
    rows = report_rows(sol)
    if args.json:
        print_json({"arch": args.arch, "evidence_fingerprint": sol.fingerprint, "rows": rows})
        return 0
    cols = ("key", "window", "reason", "T", "program", "us", "runner-up", "us", "ratio", "fastest peer", "us", "ratio",
            "worst err/tol", "inputs/family")
    def cells(r):
        return (f'{r["op"]} H={r["H"]} {r["w_dtype"]} {r["form"]} {r["mode"]}', _span(r["lo"], r["hi"]), r["reason"],
                "-" if r["T"] is None else (str(r["T"]) + ("~" if r["noisy"] else "")), r["program"], _f(r["latency_us"]),
                (r["runner_up"] + ("" if r["runner_up_eligible"] else " (out of budget)")) if r["runner_up"] else "-", _f(r["runner_up_us"]), _f(r["runner_up_ratio"]), r["peer"] or "-", _f(r["peer_us"]),
                _f(r["peer_ratio"]), _f(r["worst_err_over_tol"], ".4g"), "-" if r["inputs_per_family"] is None else str(r["inputs_per_family"]))
    if args.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for r in rows:
            print("| " + " | ".join(cells(r)) + " |")
        return 0
    t = _table(f"{args.arch}: chosen program vs runner-up and fastest peer (ratios: other / chosen)", cols)
    for r in rows:
        t.add_row(*cells(r), style="bold red" if r["reason"] in ("no-eligible-program", "unverified") else None)
    console().print(t)
    return 0


# ---- diff ----------------------------------------------------------------------------------

def _tables_at(path: str, which: str) -> dict:
    from cake_kernels.routes.table import RouteTableError, load_table

    p = Path(path)
    files = sorted(p.glob("*.json")) if p.is_dir() else [p]
    out = {}
    for f in files:
        try:
            t = load_table(f)
        except RouteTableError as exc:
            raise _cli_error(f"{which}: {exc}") from None
        if t.arch in out:
            raise _cli_error(f"{which}: two tables for {t.arch} ({out[t.arch].path}, {f})")
        out[t.arch] = t
    if not out:
        raise _cli_error(f"{which} {path}: no route table (*.json) found")
    return out


def cmd_diff(args: argparse.Namespace) -> int:
    from cake_router.reports import diff_markdown, diff_tables

    old, new = _tables_at(args.old, "OLD"), _tables_at(args.new, "NEW")
    # Evidence from --evidence, else the store (--db, then CAKE_DB_URL, then the embedded default):
    # the ratios and "rows slower than old" of the summary need it.
    from cake_router.cli import CliError

    evidence = {}
    for arch in sorted(set(old) | set(new)):
        try:
            evidence.update(load_workloads(args, arch))
        except CliError:  # an arch without evidence: no ratios for it
            pass
    changes = diff_tables(old, new, evidence, _policy(args))
    md = diff_markdown(changes, args.old, args.new, True)
    if args.out:
        Path(args.out).write_text(md, encoding="utf-8")
    if args.json:
        print_json({"changes": [c.__dict__ for c in changes], "markdown": md, "out": args.out})
    elif not args.out:
        print(md)
    else:
        console().print(f"wrote {args.out} ({len(changes)} changed spans)")
    return 0


# ---- registration --------------------------------------------------------------------------

def register(sub) -> None:
    p = sub.add_parser("solve", help="solve every route key of an arch into a cake-routes/1 table")
    p.add_argument("--arch", required=True, help=ARCH_HELP)
    add_db_option(p)
    _add_evidence_option(p)
    p.add_argument("--out", metavar="FILE", help="table path (default: cake_kernels/routes/ARCH.json, or "
                   "cake_router/routes_published/ARCH.json when a routed program is not runnable here)")
    p.add_argument("--policy", metavar="FILE", help="TOML policy file overriding the defaults of ROUTING-POLICY.md")
    p.add_argument("--incumbent", metavar="FILE", help="incumbent table for the neutral rule (default: the existing "
                   "table of the arch; 'none' for no incumbent)")
    p.add_argument("--next-out", metavar="FILE", help="write the next measurements as a grid file for `measure --T next`")
    add_json_option(p)
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("diff", help="Markdown change report between two route tables (files or folders)")
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--out", metavar="FILE", help="write the Markdown here")
    p.add_argument("--policy", metavar="FILE", help="policy for judging the old program's accuracy")
    add_db_option(p)
    _add_evidence_option(p)
    add_json_option(p)
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("explain", help="which program runs at a T, which rule decided it, and the evidence")
    p.add_argument("--arch", required=True, help=ARCH_HELP)
    p.add_argument("--op", required=True, choices=("fwd", "bwd"))
    p.add_argument("--H", type=int, required=True)
    p.add_argument("--T", type=int, required=True)
    p.add_argument("--w-dtype", dest="w_dtype", required=True, choices=("bf16", "fp32"))
    p.add_argument("--form", required=True, choices=("plain", "residual", "heads_strided", "heads_contiguous"))
    p.add_argument("--mode", default="det", choices=("det", "nondet", "any"))
    p.add_argument("--policy", metavar="FILE")
    p.add_argument("--incumbent", metavar="FILE")
    add_db_option(p)
    _add_evidence_option(p)
    add_json_option(p)
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("report", help="per key and window: chosen program vs runner-up and fastest peer")
    p.add_argument("--arch", required=True, help=ARCH_HELP)
    p.add_argument("--policy", metavar="FILE")
    p.add_argument("--incumbent", metavar="FILE")
    add_db_option(p)
    _add_evidence_option(p)
    add_json_option(p)
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.set_defaults(func=cmd_report)
