"""What a reviewer reads: the change report (`diff`), `explain` and `report`, as plain data.

The command module renders these (rich tables, Markdown or JSON); nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from cake_kernels.routes.table import RouteTable, Window
from measurements_db.aggregates import WorkloadEvidence

from cake_router.policy import rules
from cake_router.policy.config import Policy
from cake_router.solver import LOUD_REASONS, ArchSolution, KeySolution, Point

RULE_TEXT = {
    "fastest": "fastest eligible program by pooled median at the window's sampled T (section 5)",
    "only-in-budget": "the only eligible program at every sampled T of the window (section 5)",
    "accuracy-cut": "starts where the previous window's program leaves the accuracy budget (section 6, accuracy cut)",
    "eager-reference": "starts where the previous window's program fails the FP32 eager-reference rule (section 2)",
    "neutral-keep": "the incumbent table's program, kept: eligible and within the neutral threshold of the fastest (section 6)",
    "merged": "a neighbouring window that beat this program by less than the neutral threshold was merged in (section 6)",
    "unverified": "above the largest sampled T with worst err/tol above the extension headroom: routed to the most accurate program measured there (section 6)",
    "no-eligible-program": "no program is eligible here: routed to the smallest worst err/tol (section 5)",
}
CUT_TEXT = {
    "start": "first window (starts at T = 1)",
    "speed": "speed cut: crossover of the two latencies interpolated linearly in log T, rounded down",
    "accuracy": "accuracy cut at the previous program's last in-budget sampled T (snapped down to the grid above its first value)",
    "eager": "accuracy cut (eager-reference failure) at the previous program's last passing sampled T",
    "loud": "edge of a no-eligible-program span",
    "coverage": "the previous program has no evidence at the next sampled T: its window ends at its last sampled T",
    "above-largest": "above the largest sampled T",
}


def _fmt_span(lo: int, hi: int | None) -> str:
    return f"[{lo}, {'inf' if hi is None else hi}]"


# ---- explain -------------------------------------------------------------------------------

def point_rows(p: Point) -> list[dict]:
    """Every candidate at one sampled T: latency, spread, accuracy status, eligibility."""
    rows = []
    for name in sorted(p.verdicts, key=lambda n: (p.latency(n) is None, p.latency(n) or 0.0, n)):
        v = p.verdicts[name]
        t = p.timing.get(name)
        rows.append({
            "program": name, "latency_us": t.median_us if t else None, "spread": t.spread if t else None,
            "sessions": len(t.session_medians) if t else 0, "eligible": name in p.eligible,
            "accuracy": v.status, "worst_err_over_tol": v.worst, "inputs_per_family": v.inputs_per_family,
            "source": v.source, "detail": v.detail,
        })
    if p.peer is not None:
        rows.append({"program": p.peer, "latency_us": p.peer_timing.median_us, "spread": p.peer_timing.spread,
                     "sessions": len(p.peer_timing.session_medians), "eligible": False, "accuracy": "peer",
                     "worst_err_over_tol": None, "inputs_per_family": None, "source": p.peer_timing.source,
                     "detail": "fastest peer (comparator, never routed)"})
    return rows


def family_rows(ev: WorkloadEvidence, program: str, T: int) -> list[dict]:
    acc = ev.accuracy.get((program, T))
    if acc is None:
        return []
    out = []
    for fam, fa in sorted(acc.families.items()):
        out.append({"family": fam, "inputs": fa.inputs, "worst": fa.worst, "median": fa.median,
                    "eager_worst": fa.eager_worst, "eager_median": fa.eager_median, "source": fa.source,
                    "verdict": fa.verdict, "runs": [r.run_id for r in fa.runs]})
    return out


def explain(sol: KeySolution, T: int) -> dict:
    """Program, window, deciding rule and evidence rows for T under one solved key."""
    w = next(w for w in sol.windows if w.lo <= T and (w.hi is None or T <= w.hi))
    pts = [p for p in sol.points if p.T in set(w.points)]
    if not pts and sol.points:  # unverified span: show the largest sampled T
        pts = [sol.points[-1]]
    return {
        "key": sol.key.as_dict(), "arch": sol.key.arch, "T": T,
        "window": w.as_dict(), "rule": RULE_TEXT.get(w.reason, w.reason), "cut": w.cut,
        "cut_rule": CUT_TEXT.get(w.cut, w.cut),
        "points": [{"T": p.T, "winner": p.winner, "runner_up": p.runner_up, "margin": p.margin,
                    "aa_floor": p.aa_floor, "decisive": p.decisive, "noisy": p.noisy, "rows": point_rows(p),
                    "accuracy": family_rows(sol.workload, w.program, p.T)} for p in pts],
    }


# ---- report --------------------------------------------------------------------------------

def report_rows(arch_sol: ArchSolution) -> list[dict]:
    """Per key, window and sampled T: chosen program, runner-up and fastest peer with ratios."""
    rows = []
    for ks in arch_sol.keys:
        by_T = {p.T: p for p in ks.points}
        for w in ks.windows:
            # windows without sampled T (unverified spans) still get one row
            for T in (w.points or [None]):
                p = by_T.get(T) if T is not None else None
                lat = p.latency(w.program) if p else None
                ru = None
                if p is not None:
                    # as in the table's evidence: the fastest other eligible program, else the
                    # fastest other timed candidate (an out-of-budget one: what accuracy costs)
                    others = [q for q in p.eligible if q != w.program] or \
                        [q for q in rules.order_by_latency(p.timing) if q != w.program]
                    ru = others[0] if others else None
                ru_lat = p.latency(ru) if (p and ru) else None
                v = p.verdicts.get(w.program) if p else None
                rows.append({
                    **ks.key.as_dict(), "lo": w.lo, "hi": w.hi, "reason": w.reason, "T": T,
                    "program": w.program, "latency_us": lat,
                    "runner_up": ru, "runner_up_us": ru_lat, "runner_up_eligible": bool(p and ru in p.eligible),
                    "runner_up_ratio": (ru_lat / lat) if (lat and ru_lat) else None,
                    "peer": p.peer if p else None, "peer_us": p.peer_timing.median_us if (p and p.peer) else None,
                    "peer_ratio": (p.peer_timing.median_us / lat) if (p and p.peer and lat) else None,
                    "worst_err_over_tol": v.worst if v else w.evidence.get("worst_err_over_tol"),
                    "inputs_per_family": v.inputs_per_family if v else w.evidence.get("inputs_per_family"),
                    "noisy": bool(p and p.noisy),
                })
    return rows


# ---- diff ----------------------------------------------------------------------------------

CATEGORIES = ("budget breach", "eager-reference failure", "speed", "neutral re-route", "new coverage", "qualified", "removed coverage")


@dataclass
class Change:
    arch: str
    key: tuple  # (op, H, w_dtype, form, mode)
    lo: int
    hi: int | None
    old: str | None
    new: str
    reason: str  # the new window's reason
    category: str
    rows: list[dict] = field(default_factory=list)  # per sampled T: old/new latency, ratio, in budget


def _spans(old: list[Window], new: list[Window]) -> list[tuple[int, int | None, Window | None, Window]]:
    """Elementary spans of the union of both tables' edges, with the window of each side."""
    edges = sorted({w.lo for w in old} | {w.lo for w in new})
    out = []
    for i, lo in enumerate(edges):
        hi = edges[i + 1] - 1 if i + 1 < len(edges) else None
        o = next((w for w in old if w.covers(lo)), None)
        n = next(w for w in new if w.covers(lo))
        out.append((lo, hi, o, n))
    return out


def _category(reason: str, rows: list[dict], policy: Policy) -> str:
    """Why a span changed program. The new window's reason decides accuracy changes (an accuracy cut
    may move an edge below the breach itself, by grid snapping); evidence rows decide the rest."""
    statuses = {r["old_status"] for r in rows if r.get("old_status")}
    ratios = [r["ratio"] for r in rows if r.get("ratio") is not None]
    if (reason in ("accuracy-cut", "only-in-budget") and statuses == {rules.IN_BUDGET}
            and ratios and all(x > 1.0 + policy.neutral for x in ratios)):
        # The old program is in budget at every sampled T of the span and the new one is faster
        # everywhere: the window's edge is an accuracy cut, but this span changed for speed.
        return "speed"
    if reason == "eager-reference":
        return "eager-reference failure"
    if reason in ("accuracy-cut", "only-in-budget") or reason in LOUD_REASONS:
        return "budget breach"
    if rules.EAGER in statuses:
        return "eager-reference failure"
    if statuses - {rules.IN_BUDGET}:
        return "budget breach"
    if reason == "neutral-keep":
        return "neutral re-route"
    if ratios and all(abs(x - 1.0) <= policy.neutral for x in ratios):
        return "neutral re-route"
    return "speed"


def diff_tables(old: Mapping[str, RouteTable], new: Mapping[str, RouteTable],
                evidence: Mapping[str, list[WorkloadEvidence]] | None = None,
                policy: Policy | None = None) -> list[Change]:
    """Every span of T whose program changed between `old` and `new` (per arch and key)."""
    policy = policy or Policy()
    changes: list[Change] = []
    for arch in sorted(set(old) | set(new)):
        o, n = old.get(arch), new.get(arch)
        evs = {}
        for ev in (evidence or {}).get(arch, []):
            evs[(ev.key.H, ev.key.w_dtype, ev.key.form)] = ev
        okeys = set(o.keys()) if o else set()
        nkeys = set(n.keys()) if n else set()
        for key in sorted(okeys - nkeys):
            for w in o.windows(*key):
                changes.append(Change(arch, key, w.lo, w.hi, w.program, "-", "removed", "removed coverage"))
        for key in sorted(nkeys):
            op, H, w_dtype, form, mode = key
            ev = evs.get((H, w_dtype, form))
            for lo, hi, ow, nw in _spans(o.windows(*key) if key in okeys else [], n.windows(*key)):
                # The same program under a loud reason on one side only is a change too: the runtime
                # runs its fallback for a loud backward window, not the program the table names.
                loudness_changed = ow is not None and (ow.reason in LOUD_REASONS) != (nw.reason in LOUD_REASONS)
                if ow is not None and ow.program == nw.program and not loudness_changed:
                    continue
                rows = _rows(ev, op, w_dtype, mode, lo, hi, ow.program if ow else None, nw.program, policy) if ev else []
                if ow is None:
                    cat = "new coverage"
                elif ow.program == nw.program and nw.reason not in LOUD_REASONS:
                    cat = "qualified"  # a loud span whose program the evidence now qualifies
                else:
                    cat = _category(nw.reason, rows, policy)
                changes.append(Change(arch, key, lo, hi, ow.program if ow else None, nw.program, nw.reason, cat, rows))
    return changes


def _rows(ev: WorkloadEvidence, op: str, w_dtype: str, mode: str, lo: int, hi: int | None,
          old: str | None, new: str, policy: Policy) -> list[dict]:
    Ts = [T for T in ev.sampled_T(op) if T >= lo and (hi is None or T <= hi)]
    rows = []
    for T in Ts:
        ot = ev.timing.get((old, op, T)) if old else None
        nt = ev.timing.get((new, op, T))
        ov = rules.judge_accuracy(ev.accuracy.get((old, T)), op, w_dtype, policy) if old else None
        nv = rules.judge_accuracy(ev.accuracy.get((new, T)), op, w_dtype, policy)
        rows.append({"T": T, "old_us": ot.median_us if ot else None, "new_us": nt.median_us if nt else None,
                     "ratio": (ot.median_us / nt.median_us) if (ot and nt) else None,
                     "old_status": ov.status if ov else None, "new_in_budget": nv.in_budget})
    return rows


def _fmt_ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def diff_markdown(changes: list[Change], old_label: str, new_label: str, with_evidence: bool) -> str:
    """The change report of section 7, Markdown, grouped per arch by category, with the summary."""
    lines = [f"# Route table changes: `{old_label}` -> `{new_label}`", ""]
    if not changes:
        lines += ["No routing changes.", ""]
        return "\n".join(lines)
    if not with_evidence:
        lines += ["_No evidence given (`--db` / `--evidence`): ratios and rows are not available; spans are listed._", ""]
    for arch in sorted({c.arch for c in changes}):
        lines += [f"## {arch}", ""]
        ac = [c for c in changes if c.arch == arch]
        for cat in CATEGORIES:
            cc = [c for c in ac if c.category == cat]
            if not cc:
                continue
            lines += [f"### {cat} ({len(cc)})", "", "| key | T span | old | new | reason | rows | ratio old/new min-max |",
                      "|---|---|---|---|---|---|---|"]
            for c in cc:
                op, H, wd, form, mode = c.key
                ratios = [r["ratio"] for r in c.rows if r["ratio"] is not None]
                rr = f"{_fmt_ratio(min(ratios))}-{_fmt_ratio(max(ratios))}" if ratios else "n/a"
                lines.append(f"| {op} H={H} {wd} {form} {mode} | {_fmt_span(c.lo, c.hi)} | {c.old or '-'} | {c.new} | "
                             f"{c.reason} | {len(c.rows) if with_evidence else 'n/a'} | {rr} |")
            lines.append("")
        lines += ["### Summary", "", "| op | changed spans | rows | ratio min-max vs old | rows slower than old | rows with no in-budget alternative |",
                  "|---|---|---|---|---|---|"]
        for op in sorted({c.key[0] for c in ac}):
            cc = [c for c in ac if c.key[0] == op]
            rows = [r for c in cc for r in c.rows]
            ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
            slower = sum(1 for x in ratios if x < 1.0)  # unrounded
            no_alt = sum(1 for c in cc for r in c.rows if not r["new_in_budget"]) + \
                sum(1 for c in cc if c.reason == "no-eligible-program" and not c.rows)
            rr = f"{_fmt_ratio(min(ratios))}-{_fmt_ratio(max(ratios))}" if ratios else "n/a"
            lines.append(f"| {op} | {len(cc)} | {len(rows) if with_evidence else 'n/a'} | {rr} | "
                         f"{slower if with_evidence else 'n/a'} | {no_alt} |")
        lines.append("")
    return "\n".join(lines)
