"""The performance comparison of issue 8, computed from stored evidence and a route table.

For every measured (op, H, form, w_dtype, T) of an arch: the routed program (the table's window
at T; the backward in `det` mode), its pooled median, the fastest peer and the fastest in-budget
peer (ROUTING-POLICY.md section 3 judged by `cake_router.policy`), SOTA/new ratios, and effective
bandwidth against the device copy bandwidth when it is known. `2xfwd+bwd` rows pair the routed
forward with the routed backward's recorded step time: the step's own forward is named (`step_fwd`;
runs before 2026-12-03 timed every step with `fwd.row.r1.w8`) and flagged where it is not the
forward the table routes there. Pure: no GPU, no database.

Bytes moved (each tensor read or written once):
- fwd: read x, write y (2 T H each) + write rstd (4 rows); residual adds read r and write h_new.
- bwd: read x, g, write dx (6 T H) + read rstd (4 rows); residual adds read g_h_new (2 T H).
Rows = T x heads for the head forms; H = 256 there.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from cake_kernels.routes import dispatch
from cake_kernels.routes.table import RouteTable
from cake_router.policy import Policy, judge_accuracy
from cake_router.policy.rules import BREACH, NO_EVIDENCE, UNQUALIFIED
from measurements_db.aggregates import WorkloadEvidence

HEADS = {"heads_strided": 24, "heads_contiguous": 4}
# The forward every `2xfwd+bwd` step of this package ran before steps named theirs (2026-12-03).
LEGACY_STEP_FWD = "fwd.row.r1.w8"


def bytes_moved(op: str, form: str, H: int, T: int) -> int:
    rows = T * HEADS.get(form, 1)
    if op == "fwd":
        n = 4 * rows * H + 4 * rows
        if form == "residual":
            n += 4 * rows * H
        return n
    if op == "bwd":
        n = 6 * rows * H + 4 * rows
        if form == "residual":
            n += 2 * rows * H
        return n
    return 2 * bytes_moved("fwd", form, H, T) + bytes_moved("bwd", form, H, T)


@dataclass
class BenchRow:
    op: str
    H: int
    form: str
    w_dtype: str
    T: int
    program: str
    us: float | None  # None: the routed program (e.g. the runtime's fallback) was not timed here
    fastest_peer: str | None
    fastest_peer_us: float | None
    sota: str | None  # fastest in-budget peer
    sota_us: float | None
    sota_over_new: float | None
    peer_over_new: float | None
    TBps: float | None
    copy_fraction: float | None
    routed_in_budget: bool | None
    spread: float | None
    step_fwd: str | None = None  # 2xfwd+bwd: the forward the timed step ran
    step_fwd_routed: bool | None = None  # 2xfwd+bwd: whether that is the forward the table routes here


def _peer_in_budget(ev: WorkloadEvidence, name: str, T: int, op: str, w_dtype: str, policy: Policy) -> bool:
    if op == "fwd":
        return True  # a forward has no dw; peers' forwards are judged by matching outputs
    return judge_accuracy(ev.accuracy.get((name, T)), "bwd", w_dtype, policy).in_budget


def _routed_qualified(ev: WorkloadEvidence, table: RouteTable, wk, prog: str, T: int, policy: Policy) -> bool:
    """Whether the routed backward is in budget on qualified evidence at T.

    At a T with judged accuracy evidence for the program (qualified, or a measured breach, which is
    final at any input count), that evidence decides. At a T without (a step timed on the standard
    grid between accuracy points, say), the window does, as the solver chose it: the program must be
    in budget at every judged accuracy point it has inside the window covering T, and have at least
    one; a runtime fallback outside any window has none. An unqualified point with no breach (a
    family cut short by a call's time limit) says no more about qualification than no point at all,
    so it neither decides its T nor counts against the window: otherwise adding 30 clean inputs at a
    T would turn a row that the window qualifies into a failure.
    """
    def judged(a):
        v = judge_accuracy(a, "bwd", wk.w_dtype, policy)
        return None if v.status in (UNQUALIFIED, NO_EVIDENCE) else v

    here = judged(ev.accuracy.get((prog, T)))
    if here is not None:
        return here.in_budget
    win = table.lookup("bwd", wk.H, wk.w_dtype, wk.form, "det", max(T, 1))
    if win is None or win.program != prog:
        return False
    inside = [v for (p, t), a in ev.accuracy.items() if p == prog and win.covers(t) and (v := judged(a)) is not None]
    return bool(inside) and all(v.in_budget for v in inside)


def compare(evidence: dict, table: RouteTable, policy: Policy, copy_TBps: float | None = None) -> list[BenchRow]:
    rows: list[BenchRow] = []
    for wk, ev in sorted(evidence.items()):
        if wk.x_dtype != "bf16":
            continue
        peers = [n for n, p in ev.programs.items() if p.family == "peer"]
        for op in ("fwd", "bwd", "2xfwd+bwd"):
            for T in ev.sampled_T(op):
                route_op = "fwd" if op == "fwd" else "bwd"
                # What the runtime runs (its fallbacks for uncovered or untrusted windows included).
                prog = dispatch.route(table, table.arch, route_op, wk.H, wk.w_dtype, wk.form, "det", T, warn=False)
                t = ev.timing.get((prog, op, T))
                peer_t = [(ev.timing[(p, op, T)].median_us, p) for p in peers if (p, op, T) in ev.timing]
                fastest = min(peer_t) if peer_t else None
                in_b = [(us, p) for us, p in peer_t if _peer_in_budget(ev, p, T, op, wk.w_dtype, policy)]
                sota = min(in_b) if in_b else None
                # A routed program without timing here (the runtime's fallback for a loud window) is
                # still a row: its speed is unknown and, for a backward, it is not qualified here.
                us = t.median_us if t is not None else None
                tbps = bytes_moved(op, wk.form, wk.H, T) / (us * 1e-6) / 1e12 if us else None
                step_fwd = step_ok = None
                if op == "2xfwd+bwd" and t is not None:
                    routed_fwd = dispatch.route(table, table.arch, "fwd", wk.H, wk.w_dtype, wk.form, "det", T, warn=False)
                    step_fwd = t.step_fwd or LEGACY_STEP_FWD
                    step_ok = step_fwd == routed_fwd
                routed_ok = None
                if route_op == "bwd":
                    routed_ok = _routed_qualified(ev, table, wk, prog, T, policy)
                rows.append(BenchRow(
                    op=op, H=wk.H, form=wk.form, w_dtype=wk.w_dtype, T=T, program=prog, us=us,
                    fastest_peer=fastest[1] if fastest else None, fastest_peer_us=fastest[0] if fastest else None,
                    sota=sota[1] if sota else None, sota_us=sota[0] if sota else None,
                    sota_over_new=(sota[0] / us) if sota and us else None,
                    peer_over_new=(fastest[0] / us) if fastest and us else None,
                    TBps=tbps, copy_fraction=(tbps / copy_TBps) if copy_TBps and tbps else None,
                    routed_in_budget=routed_ok, spread=t.spread if t is not None else None,
                    step_fwd=step_fwd, step_fwd_routed=step_ok,
                ))
    return rows


PEER_TABLE_T = (1, 256, 4096, 65536, 1048576)


@dataclass
class PeerRow:
    """One peer against the best in-budget program of this package at one point (not the routed one:
    what the evidence says is possible)."""

    op: str
    form: str
    H: int
    w_dtype: str
    T: int
    best: str | None
    best_us: float | None
    peer: str
    peer_us: float | None  # None: the peer was not timed here (not installed, failed, out of memory)
    peer_over_best: float | None
    peer_in_budget: bool | None  # None for the forward (no dw)
    peer_accuracy: str | None = None  # the verdict's status (policy.rules: breach, no-evidence, ...); None for the forward


def peer_table(evidence: dict, policy: Policy, Ts=PEER_TABLE_T) -> list[PeerRow]:
    """Each peer of a workload against the fastest in-budget runnable program (backward) or the
    fastest runnable program (forward) at the given T."""
    rows: list[PeerRow] = []
    for wk, ev in sorted(evidence.items()):
        if wk.x_dtype != "bf16":
            continue
        peers = sorted(n for n, p in ev.programs.items() if p.family == "peer")
        ours = [n for n, p in ev.programs.items() if p.family != "peer" and p.runnable]
        for op in ("fwd", "bwd"):
            for T in Ts:
                cand = [(ev.timing[(n, op, T)].median_us, n) for n in ours if (n, op, T) in ev.timing
                        and (op == "fwd" or judge_accuracy(ev.accuracy.get((n, T)), "bwd", wk.w_dtype, policy).in_budget)]
                best = min(cand) if cand else None
                timed = [p for p in peers if (p, op, T) in ev.timing]
                if best is None and not timed:
                    continue
                for p in peers:
                    t = ev.timing.get((p, op, T))
                    verdict = None if op == "fwd" else judge_accuracy(ev.accuracy.get((p, T)), "bwd", wk.w_dtype, policy)
                    rows.append(PeerRow(
                        op=op, form=wk.form, H=wk.H, w_dtype=wk.w_dtype, T=T,
                        best=best[1] if best else None, best_us=best[0] if best else None, peer=p,
                        peer_us=t.median_us if t else None,
                        peer_over_best=(t.median_us / best[0]) if (t and best) else None,
                        peer_in_budget=None if verdict is None else verdict.in_budget,
                        peer_accuracy=None if verdict is None else verdict.status,
                    ))
    return rows


def _cell(x, fmt: str) -> str:
    """A table cell: the number formatted, or '-' where there is none."""
    return "-" if x is None else format(x, fmt)


def peer_markdown(rows: list[PeerRow]) -> str:
    lines = ["## Peers against the best in-budget program", "",
             "peer/best > 1: the peer is slower. Backward peers are marked in budget or not (ROUTING-POLICY.md "
             "section 3, on the accuracy evidence measured for them: yes, no (a breach), no-evidence, unqualified or rerun); "
             "'-': not timed there.", "",
             "| op | form | H | w | T | best in-budget program | us | peer | us | peer/best | peer in budget |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        # Not in budget is either a measured breach ("no") or a verdict that says why there is none.
        ib = "-" if r.peer_in_budget is None else (
            "yes" if r.peer_in_budget else ("no" if r.peer_accuracy in (None, BREACH) else r.peer_accuracy))
        lines.append(f"| {r.op} | {r.form} | {r.H} | {r.w_dtype} | {r.T} | {r.best or '-'} | {_cell(r.best_us, '.2f')} | "
                     f"{r.peer} | {_cell(r.peer_us, '.2f')} | {_cell(r.peer_over_best, '.3f')} | {ib} |")
    return "\n".join(lines) + "\n"


def geomean(xs) -> float | None:
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def row_key(r: BenchRow) -> str:
    """A bench row's point, as the bounds files name it: `op form H w T`."""
    return f"{r.op} {r.form} {r.H} {r.w_dtype} {r.T}"


def _binding(r: BenchRow, value: str) -> dict:
    return {"key": row_key(r), "program": r.program, "us": r.us, "value": value}


def targets(rows: list[BenchRow]) -> list[dict]:
    """The issue's targets, each with met / not met, the measured figure, how many rows fall short
    (`short`) and the row that sets the figure (`binding`: its key, routed program, time and value;
    None where the figure is an aggregate or no row falls short). `id` names a target for the bounds
    files (`load_bounds`)."""
    out = []

    def add(tid, name, met, figure, short=None, binding=None):
        out.append({"id": tid, "target": name, "met": met, "figure": figure, "short": short, "binding": binding})

    def floor(tid, name, pairs, limit, figure, fmt=lambda v: f"{v:.3f}x"):
        """A target that every row's value be >= limit: the figure is the smallest value, its row binds."""
        if not pairs:
            add(tid, name, None, figure(None, 0))
            return
        v, r = min(pairs, key=lambda p: p[0])
        add(tid, name, v >= limit, figure(v, len(pairs)), sum(x < limit for x, _ in pairs), _binding(r, fmt(v)))

    for op, frac_target in (("bwd", 0.93), ("fwd", 0.92)):
        big = [r for r in rows if r.op == op and r.T >= 65536]
        floor(f"{op}-copy", f"{op} T>=65536: >= {frac_target:.0%} of copy bandwidth",
              [(r.copy_fraction, r) for r in big if r.copy_fraction is not None], frac_target,
              lambda v, n: f"min {v:.1%} over {n} rows" if n else "copy bandwidth unknown", lambda v: f"{v:.1%} of copy")
        floor(f"{op}-peer", f"{op} T>=65536: >= 1.00x the fastest peer",
              [(r.peer_over_new, r) for r in big if r.peer_over_new is not None], 1.0,
              lambda v, n: f"min {v:.3f}x over {n} rows" if n else "no peer timed")
        floor(f"{op}-small", f"{op} T<=256: latency <= the fastest peer's on every row",
              [(r.peer_over_new, r) for r in rows if r.op == op and r.T <= 256 and r.peer_over_new is not None], 1.0,
              lambda v, n: f"min peer/ours {v:.3f}x over {n} rows" if n else "no peer timed")
    for op, g_target in (("bwd", 1.25), ("fwd", 1.05), ("2xfwd+bwd", 1.05)):
        s = [(r.sota_over_new, r) for r in rows if r.op == op and r.sota_over_new is not None]
        g = geomean([x for x, _ in s])
        add(f"{op}-geomean", f"{op}: geomean SOTA/new >= {g_target}", (g >= g_target) if g else None,
            f"{g:.3f} over {len(s)} rows" if g else "no in-budget peer timed")
        floor(f"{op}-floor", f"{op}: no row below 0.97 SOTA/new", s, 0.97,
              lambda v, n: f"min {v:.3f}" if n else "no in-budget peer timed")
    bad = [r for r in rows if r.routed_in_budget is False]
    add("in-budget", "every routed backward in budget on qualified evidence", not bad,
        f"{len(bad)} of {sum(r.routed_in_budget is not None for r in rows)} rows not in budget (or not qualified)",
        len(bad), _binding(bad[0], "not in budget or not qualified") if bad else None)
    return out


def markdown(rows: list[BenchRow], tgts: list[dict], header: str) -> str:
    lines = [header, "", "| op | form | H | w | T | routed program | us | fastest peer | us | peer/ours | in-budget SOTA | SOTA/ours | TB/s | of copy | routed in budget |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    for r in rows:
        prog = r.program
        if r.step_fwd:
            prog = f"{r.program} + 2x {r.step_fwd}" + ("" if r.step_fwd_routed else " †")
        lines.append(f"| {r.op} | {r.form} | {r.H} | {r.w_dtype} | {r.T} | {prog} | {_cell(r.us, '.2f')} | {r.fastest_peer or '-'} | "
                     f"{_cell(r.fastest_peer_us, '.2f')} | {_cell(r.peer_over_new, '.3f')} | {r.sota or '-'} | {_cell(r.sota_over_new, '.3f')} | "
                     f"{_cell(r.TBps, '.2f')} | {_cell(r.copy_fraction, '.1%')} | {'-' if r.routed_in_budget is None else ('yes' if r.routed_in_budget else 'no')} |")
    if any(r.step_fwd_routed is False for r in rows):
        lines += ["", "† the step was timed with a forward the table does not route there (before 2026-12-03 every step "
                  f"ran `{LEGACY_STEP_FWD}`): the row states that step, not the routed one."]
    return "\n".join(lines) + "\n\n" + targets_block(tgts)


def as_json(rows: list[BenchRow], tgts: list[dict], meta: dict, peers: list[PeerRow] | None = None) -> dict:
    return {"meta": meta, "rows": [asdict(r) for r in rows], "targets": tgts, "peers": [asdict(r) for r in peers or []]}


# README blocks: `<!-- bench-rows form=plain w=fp32 bwd:4096:1 fwd:512:1048576 ... -->`, then the table
# `readme_block` writes, then `<!-- /bench-rows -->`. `bench --readme FILE` rewrites every block, so
# the README quotes the same evidence as bench/results/<arch>-bench.md and never a hand copy of it.
README_BLOCK = re.compile(r"<!-- bench-rows (?P<spec>[^\n]*?) -->\n(?P<body>.*?)<!-- /bench-rows -->", re.S)
PEER_LABEL = {"peer.quack.heuristic": "QuACK", "peer.quack.tuned": "QuACK tuned", "peer.liger": "Liger",
              "peer.torch_compile.default": "torch.compile",
              "peer.torch_compile.max_autotune": "torch.compile max-autotune", "peer.eager": "eager"}
# How a README row names a fastest peer that is not in budget there, by its verdict's status.
PEER_NOT_IN_BUDGET = {BREACH: "no", NO_EVIDENCE: "not measured", UNQUALIFIED: "not qualified"}


class ReadmeSpecError(ValueError):
    """A README bench-rows block names a row the bench did not produce, or is malformed."""


def _us(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if x < 10 else (f"{x:.1f}" if x < 1000 else f"{x:.0f}")


def readme_block(rows: list[BenchRow], peers: list[PeerRow], spec: str) -> str:
    """The Markdown table of one README block. `spec`: `form=F w=W` then `op:H:T` items."""
    opts, items = {"form": "plain", "w": "fp32"}, []
    for tok in spec.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            if k not in opts:
                raise ReadmeSpecError(f"bench-rows block: option {k!r} unknown; accepted: form=, w=")
            opts[k] = v
        else:
            parts = tok.split(":")
            if len(parts) != 3 or parts[0] not in ("fwd", "bwd", "2xfwd+bwd") or not all(x.isdigit() for x in parts[1:]):
                raise ReadmeSpecError(f"bench-rows block: item {tok!r} is not op:H:T (op fwd, bwd or 2xfwd+bwd)")
            items.append((parts[0], int(parts[1]), int(parts[2])))
    by_key = {(r.op, r.form, r.w_dtype, r.H, r.T): r for r in rows}
    peer_acc = {(p.op, p.form, p.w_dtype, p.H, p.T, p.peer): p.peer_accuracy for p in peers}
    lines = ["| op | H | T | program the runtime runs | us | of copy | fastest peer | peer us | peer/ours | ours in budget |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for op, H, T in items:
        r = by_key.get((op, opts["form"], opts["w"], H, T))
        if r is None:
            raise ReadmeSpecError(f"bench-rows block: no bench row {op} {opts['form']} H={H} w={opts['w']} T={T}")
        ib = "-"
        if r.routed_in_budget is not None:
            ib = "yes" if r.routed_in_budget else "no"
            said = PEER_NOT_IN_BUDGET.get(peer_acc.get((op, r.form, r.w_dtype, H, T, r.fastest_peer)))
            if said:
                ib += f" ({PEER_LABEL.get(r.fastest_peer, r.fastest_peer)}: {said})"
        frac = "-" if r.copy_fraction is None or T == 1 else f"{r.copy_fraction:.0%}".replace("%", " %")
        peer = PEER_LABEL.get(r.fastest_peer, r.fastest_peer) if r.fastest_peer else "-"
        lines.append(f"| {'bwd (det)' if op == 'bwd' else op} | {H} | {T} | {r.program} | {_us(r.us)} | {frac} | {peer} | "
                     f"{_us(r.fastest_peer_us)} | {_cell(r.peer_over_new, '.2f')} | {ib} |")
    return "\n".join(lines) + "\n"


# What bounds each target: a curated file per arch (`bench/bounds/<arch>.json`), written by whoever
# explains the figure from measurements (ncu, SASS, a probe), because the evidence store records
# times and errors, not causes. Each note names the row it explains; when the bench's binding row
# moves elsewhere the note is shown as stale rather than silently describing another row.
BOUNDS_SCHEMA = "cake-bounds/1"
TARGET_IDS = ("bwd-copy", "bwd-peer", "bwd-small", "fwd-copy", "fwd-peer", "fwd-small", "bwd-geomean", "bwd-floor",
              "fwd-geomean", "fwd-floor", "2xfwd+bwd-geomean", "2xfwd+bwd-floor", "in-budget")
README_TARGETS = re.compile(r"<!-- bench-targets -->\n(?P<body>.*?)<!-- /bench-targets -->", re.S)


class BoundsError(ValueError):
    """A bounds file that does not follow its schema."""


def load_bounds(doc, path: str, arch: str) -> dict[str, dict]:
    """The notes of a parsed bounds file: target id -> {"row", "text", "evidence"}. Checks the schema,
    the arch, the target ids and that each note names its row as `op form H w T`."""
    def bad(msg):
        return BoundsError(f"{path}: {msg}")

    if not isinstance(doc, dict) or doc.get("schema") != BOUNDS_SCHEMA:
        raise bad(f"field 'schema': expected {BOUNDS_SCHEMA!r}")
    if doc.get("arch") != arch:
        raise bad(f"field 'arch': {doc.get('arch')!r}, expected {arch!r}")
    notes = doc.get("bounds")
    if not isinstance(notes, dict):
        raise bad("field 'bounds': expected an object of target id -> note")
    out = {}
    for tid, note in notes.items():
        if tid not in TARGET_IDS:
            raise bad(f"bounds[{tid!r}]: unknown target id; accepted: {', '.join(TARGET_IDS)}")
        if not isinstance(note, dict) or not isinstance(note.get("text"), str) or not note["text"].strip():
            raise bad(f"bounds[{tid!r}]: expected an object with a non-empty 'text'")
        row = note.get("row")
        if row is not None:
            parts = row.split() if isinstance(row, str) else []
            if len(parts) != 5 or parts[0] not in ("fwd", "bwd", "2xfwd+bwd") or not (parts[2].isdigit() and parts[4].isdigit()):
                raise bad(f"bounds[{tid!r}].row: {row!r} is not 'op form H w T' (e.g. 'bwd plain 1536 bf16 1048576')")
        ev = note.get("evidence")
        if ev is not None and not isinstance(ev, str):
            raise bad(f"bounds[{tid!r}].evidence: expected a string (where the measurement behind the note is)")
        out[tid] = {"row": row, "text": note["text"].strip(), "evidence": ev}
    return out


def attach_bounds(tgts: list[dict], bounds: dict[str, dict]) -> list[str]:
    """Each target gets `bound` (its note, with `stale` True where the note names another row than
    the one that binds now); returns a warning per stale note."""
    warnings = []
    for t in tgts:
        note = bounds.get(t["id"])
        if note is None:
            t["bound"] = None
            continue
        binding = (t.get("binding") or {}).get("key")
        stale = note["row"] is not None and note["row"] != binding
        t["bound"] = {**note, "stale": stale}
        if stale:
            warnings.append(f"bound note of {t['id']!r} explains {note['row']!r}; the binding row is now {binding or 'none'}")
    return warnings


def _binding_cell(t: dict) -> str:
    b = t.get("binding")
    if not b:
        return "-"
    us = "" if b.get("us") is None else f", {_us(b['us'])} us"
    op, form, H, w, T = b["key"].split()
    return f"{op} {form} H {H} {w} T {T} (`{b['program']}`{us}): {b['value']}"


def targets_block(tgts: list[dict]) -> str:
    """The README's targets table: met or not, the figure, rows short of it, the row that binds and
    what bounds it (the bounds file's note)."""
    lines = ["| target | met | measured | rows short | binding row | what bounds it |", "|---|---|---|---|---|---|"]
    for t in tgts:
        met = "n/a" if t["met"] is None else ("met" if t["met"] else "**not met**")
        note = t.get("bound")
        text = "-"
        if note:
            text = note["text"]
            if note.get("evidence"):
                text += f" ({note['evidence']})"
            if note["stale"]:
                text = f"*stale: written for {note['row']}.* " + text
        short = "-" if t.get("short") is None else str(t["short"])
        lines.append(f"| {t['target']} | {met} | {t['figure']} | {short} | {_binding_cell(t)} | {text.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def rewrite_readme(text: str, rows: list[BenchRow], peers: list[PeerRow], tgts: list[dict] | None = None) -> tuple[str, int]:
    """`text` with every bench-rows block rebuilt from `rows`, and with `tgts` every bench-targets
    block from them; returns (text, blocks rewritten)."""
    n = 0

    def one(m: re.Match) -> str:
        nonlocal n
        n += 1
        return f"<!-- bench-rows {m['spec']} -->\n{readme_block(rows, peers, m['spec'])}<!-- /bench-rows -->"

    def tg(m: re.Match) -> str:
        nonlocal n
        n += 1
        return f"<!-- bench-targets -->\n{targets_block(tgts)}<!-- /bench-targets -->"

    text = README_BLOCK.sub(one, text)
    if tgts is not None:
        text = README_TARGETS.sub(tg, text)
    return text, n
