"""Pure functions that turn aggregates and route tables into the service's views.

Inputs are `measurements_db.aggregates` objects and `cake_kernels.routes.table.RouteTable`s; the
outputs are plain dicts shaped like `api.models`. Accuracy verdicts come from the policy module
(`cake_router.policy`), the project's one judge of "in budget", with the policy the table was
solved with; when that module cannot be imported the verdicts are left out (null), never guessed.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from measurements_db.aggregates import (FAMILIES, AccuracyAggregate, RouteKey, WorkloadEvidence, WorkloadKey, card_label,
                                        is_accuracy_only)

LOUD_REASONS = ("no-eligible-program", "unverified")


def route_key_dict(arch: str, key: tuple) -> dict:
    op, H, w_dtype, form, mode = key
    return {"arch": arch, "op": op, "H": int(H), "w_dtype": w_dtype, "form": form, "mode": mode}


def key_label(k: dict) -> str:
    return f"{k['op']} H={k['H']} {k['w_dtype']} {k['form']} {k['mode']}"


def workload_of_key(k: dict) -> WorkloadKey:
    # Route keys carry no x_dtype: x is BF16 by definition (ROUTING-POLICY.md section 1).
    return WorkloadKey(k["arch"], int(k["H"]), "bf16", k["w_dtype"], k["form"])


def workload_label(wk: WorkloadKey) -> str:
    return f"H={wk.H} x={wk.x_dtype} w={wk.w_dtype} {wk.form}"


def window_dict(w) -> dict:
    return {"lo": w.lo, "hi": w.hi, "program": w.program, "reason": w.reason, "evidence": dict(w.evidence or {})}


def table_policy(table) -> Any:
    """The table's policy as a `Policy` (defaults for anything it does not state), or None."""
    try:
        from cake_router.policy import Policy, policy_from_mapping
    except ImportError:
        return None
    raw = (table.doc or {}).get("policy") if table is not None else None
    if isinstance(raw, dict):
        try:
            return policy_from_mapping(raw, where=f"policy of {table.path}")
        except Exception:
            pass
    return Policy()


def _fin(x: float | None) -> float | None:
    """JSON has no infinity: a stated published failure (inf) is shown as null plus its verdict."""
    if x is None or (isinstance(x, float) and (math.isinf(x) or math.isnan(x))):
        return None
    return float(x)


def timing_points(ev: WorkloadEvidence | None, op: str, policy) -> list[dict]:
    if ev is None:
        return []
    out = []
    for (prog, o, T), t in sorted(ev.timing.items()):
        if o != op:
            continue
        noisy = t.spread is not None and t.spread > (policy.spread_limit if policy is not None else 0.05)
        out.append({
            "program": prog, "T": T, "median_us": t.median_us, "spread": t.spread, "n": t.n, "timer": t.timer,
            "source": t.source, "run_ids": list(t.run_ids), "session_medians": dict(t.session_medians), "noisy": noisy,
        })
    return out


def run_cards(runs: Iterable[dict]) -> dict[str, str]:
    """run id -> the card it ran on, e.g. "NVIDIA H100 80GB HBM3, 132 SMs, accuracy only": the accuracy
    of an arch's point may come from several cards of its SM count (`aggregates.evidence_runs`)."""
    return {r["run_id"]: card_label(r.get("gpu"), r.get("sm_count"),
                                    is_accuracy_only(r.get("source"), bool(r.get("timing_blocks")), bool(r.get("accuracy_records"))))
            for r in runs}


def accuracy_point(acc: AccuracyAggregate, op: str, w_dtype: str, policy) -> dict:
    fams = []
    for fam in FAMILIES:
        fa = acc.families.get(fam)
        if fa is None:
            continue
        fams.append({
            "family": fam, "inputs": fa.inputs, "worst": _fin(fa.worst), "median": _fin(fa.median),
            "eager_worst": _fin(fa.eager_worst), "eager_median": _fin(fa.eager_median), "source": fa.source,
            "verdict": fa.verdict, "qualified_by_source": fa.qualified_by_source,
            "runs": [r.run_id for r in fa.runs if r.run_id],
        })
    worsts = [f["worst"] for f in fams if f["worst"] is not None]
    verdict = None
    status = None
    detail = None
    if policy is not None:
        from cake_router.policy import judge_accuracy

        v = judge_accuracy(acc, op, w_dtype, policy)
        verdict, status, detail = v.in_budget, v.status, v.detail
    return {"program": acc.program, "T": acc.T, "source": acc.source, "worst": max(worsts) if worsts else None,
            "families": fams, "in_budget": verdict, "status": status, "detail": detail}


def accuracy_points(ev: WorkloadEvidence | None, op: str, w_dtype: str, policy, programs: Iterable[str]) -> list[dict]:
    if ev is None:
        return []
    keep = set(programs)
    return [accuracy_point(a, op, w_dtype, policy) for (p, T), a in sorted(ev.accuracy.items()) if p in keep]


def key_programs(ev: WorkloadEvidence | None, op: str) -> list[str]:
    """Programs of this op with evidence in the workload (timing or accuracy)."""
    if ev is None:
        return []
    names = {p for (p, o, _) in ev.timing if o == op}
    for (p, _T) in ev.accuracy:
        info = ev.programs.get(p)
        if info is not None and info.op == op:
            names.add(p)
    return sorted(names)


def in_window(T: int, w: dict) -> bool:
    return T >= w["lo"] and (w["hi"] is None or T <= w["hi"])


def chosen_at(windows: list[dict], T: int) -> str | None:
    for w in windows:
        if in_window(T, w):
            return w["program"]
    return None


def window_views(windows: list[dict], timing: list[dict], accuracy: list[dict], mode: str,
                 programs: dict) -> list[dict]:
    """Windows enriched from the store: sampled T inside, inputs per family, margin to the runner-up.

    The margin is the runner-up's latency over the chosen one's at each sampled T (>1: the chosen
    program is faster), the runner-up being the fastest other program allowed by the mode and, when
    verdicts are available, in budget there. It is a display of the store's numbers; the table's own
    `evidence` summary is shown next to it unchanged.
    """
    lat = {(t["program"], t["T"]): t["median_us"] for t in timing}
    acc = {(a["program"], a["T"]): a for a in accuracy}
    sampled_all = sorted({t["T"] for t in timing})
    out = []
    for i, w in enumerate(windows):
        sampled = [T for T in sampled_all if in_window(T, w)]
        ipf: dict[str, int] = {}
        sources: set[str] = set()
        for T in sampled:
            a = acc.get((w["program"], T))
            if a is not None:
                sources.add(a["source"])
            if a is not None and a["source"] != "measured":
                continue  # published aggregates state an outcome, not an input count
            for fam in FAMILIES:
                n = 0
                if a is not None:
                    n = next((f["inputs"] for f in a["families"] if f["family"] == fam), 0)
                ipf[fam] = min(ipf.get(fam, n), n)
        ratios = []
        runner = None
        for T in sampled:
            mine = lat.get((w["program"], T))
            if mine is None:
                continue
            rivals = []
            for (p, t2), v in lat.items():
                if t2 != T or p == w["program"]:
                    continue
                info = programs.get(p)
                if mode == "det" and info is not None and not info.get("deterministic", True):
                    continue
                a = acc.get((p, T))
                if a is not None and a.get("in_budget") is False:
                    continue
                rivals.append((v, p))
            if rivals:
                v, p = min(rivals)
                ratios.append(v / mine)
                runner = runner or p
        view = dict(w)
        view.update({"index": i, "sampled": sampled, "inputs_per_family": ipf, "accuracy_sources": sorted(sources),
                     "runner_up": runner,
                     "margin_min": min(ratios) if ratios else None, "margin_max": max(ratios) if ratios else None})
        out.append(view)
    return out


def program_views(ev: WorkloadEvidence | None, names: list[str], mode: str, chosen: set[str]) -> list[dict]:
    out = []
    for n in names:
        info = ev.programs.get(n) if ev is not None else None
        det = info.deterministic if info is not None else None
        out.append({
            "name": n, "op": info.op if info else "?", "family": info.family if info else None,
            "deterministic": det, "runnable": info.runnable if info else None,
            "fingerprint": info.fingerprint if info else None, "description": info.description if info else None,
            "eligible_for_mode": not (mode == "det" and det is False), "chosen": n in chosen,
        })
    return out


def key_view(k: dict, table_ref: dict, table, ev: WorkloadEvidence | None) -> dict:
    """Everything the key page and `/api/key/...` show for one route key of one table."""
    policy = table_policy(table)
    raw_windows = [window_dict(w) for w in table.windows(k["op"], k["H"], k["w_dtype"], k["form"], k["mode"])]
    names = key_programs(ev, k["op"])
    for w in raw_windows:  # a routed program without evidence still gets a row
        if w["program"] not in names:
            names.append(w["program"])
    timing = timing_points(ev, k["op"], policy)
    accuracy = accuracy_points(ev, k["op"], k["w_dtype"], policy, names)
    chosen = {w["program"] for w in raw_windows}
    programs = program_views(ev, names, k["mode"], chosen)
    pinfo = {p["name"]: p for p in programs}
    windows = window_views(raw_windows, timing, accuracy, k["mode"], pinfo)
    aa = {T: f for (o, T), f in sorted(ev.aa_floor.items()) if o == k["op"]} if ev is not None else {}
    return {"key": k, "table": table_ref, "windows": windows, "programs": programs, "timing": timing,
            "accuracy": accuracy, "aa_floor": aa, "has_evidence": bool(timing or accuracy)}


def window_evidence(view: dict, index: int) -> dict:
    """The evidence behind one window: every program's timing and accuracy at the sampled T in it."""
    w = view["windows"][index]
    sampled = set(w["sampled"])
    return {
        "key": view["key"], "table": view["table"], "window": w,
        "timing": [t for t in view["timing"] if t["T"] in sampled],
        "accuracy": [a for a in view["accuracy"] if a["T"] in sampled or in_window(a["T"], w)],
        "aa_floor": {T: f for T, f in view["aa_floor"].items() if T in sampled},
    }


def arch_strips(arch: str, table) -> list[dict]:
    out = []
    for key in sorted(table.keys(), key=lambda k: (k[0], k[1], k[2], k[3], k[4])):
        k = route_key_dict(arch, key)
        ws = [window_dict(w) for w in table.windows(*key)]
        out.append({"key": k, "windows": ws, "loud": sorted({w["reason"] for w in ws if w["reason"] in LOUD_REASONS})})
    return out


# ---- diff -------------------------------------------------------------------------------------

def diff_tables(old_ref: dict, old, new_ref: dict, new, evidence: dict | None, policy=None) -> dict:
    """Changed spans of two tables, classified by the CLI's `diff` (`cake_router.reports`): budget
    breach, eager-reference failure, speed, neutral re-route, new / removed coverage; with the
    store's rows (latency ratio old/new, accuracy status) where evidence exists, and the summary
    per arch and op of ROUTING-POLICY.md section 7."""
    from cake_router import reports

    olds = {old.arch: old}
    news = {new.arch: new}
    ev = {a: [e for e in (evidence or {}).get(a, {}).values()] for a in {old.arch, new.arch}}
    changes = reports.diff_tables(olds, news, ev, policy)
    by_cat: dict[str, list[dict]] = {}
    grouped: dict[tuple, dict] = {}
    for c in changes:
        entry = grouped.get((c.category, c.arch, c.key))
        if entry is None:
            entry = grouped[(c.category, c.arch, c.key)] = {
                "key": route_key_dict(c.arch, c.key), "change": c.category, "segments": []}
            by_cat.setdefault(c.category, []).append(entry)
        ratios = [r["ratio"] for r in c.rows if r.get("ratio") is not None]
        entry["segments"].append({
            "lo": c.lo, "hi": c.hi, "old_program": c.old, "new_program": None if c.new == "-" else c.new,
            "old_reason": None, "new_reason": c.reason, "rows": [dict(r) for r in c.rows],
            "ratio_min": min(ratios) if ratios else None, "ratio_max": max(ratios) if ratios else None,
        })
    order = {cat: i for i, cat in enumerate(reports.CATEGORIES)}
    by_cat = dict(sorted(by_cat.items(), key=lambda kv: order.get(kv[0], 99)))
    summary = []
    for op in sorted({c.key[0] for c in changes}):
        cc = [c for c in changes if c.key[0] == op]
        rows = [r for c in cc for r in c.rows]
        ratios = [r["ratio"] for r in rows if r.get("ratio") is not None]
        summary.append({
            "op": op, "changed_spans": len(cc), "rows": len(rows),
            "ratio_min": min(ratios) if ratios else None, "ratio_max": max(ratios) if ratios else None,
            "rows_slower": sum(1 for x in ratios if x < 1.0),
            "rows_no_in_budget_alternative": sum(1 for r in rows if not r.get("new_in_budget"))
            + sum(1 for c in cc if c.reason == "no-eligible-program" and not c.rows),
        })
    changed_keys = {(c.arch, c.key) for c in changes}
    all_keys = {(old.arch, k) for k in old.keys()} | {(new.arch, k) for k in new.keys()}
    return {"old": old_ref, "new": new_ref, "by_reason": by_cat, "summary": summary,
            "unchanged_keys": len(all_keys - changed_keys), "changed_keys": len(changed_keys)}


# ---- runs -------------------------------------------------------------------------------------

def _wl(d: dict) -> str:
    return f"H={d.get('H')} x={d.get('x_dtype')} w={d.get('w_dtype')} {d.get('form')}"


def run_view(detail: dict, spread_limit: float = 0.05) -> dict:
    """The run page from `queries.run_detail`: provenance, this run's session spread per timing
    point, its A/A pairs (noise floor per session) and its accuracy per family.

    `spread_limit` is the policy default (the run page judges no table, so no table's policy applies).
    """
    spread = []
    for p in detail.get("points", []):
        sp = p.get("spread")
        spread.append({"workload": _wl(p), "program": p["program"], "op": p["op"], "T": p["T"],
                       "session_medians": p.get("session_medians") or {}, "spread": sp,
                       "median_us": p.get("median_us"), "n": p.get("n"),
                       "noisy": sp is not None and sp > spread_limit})
    floors = [{"workload": _wl(a), "op": a["op"], "T": a["T"], "session": a.get("session"), "program": a.get("program"),
               "ratio": a.get("ratio"), "floor": a["floor"]} for a in detail.get("aa_pairs", [])]
    accuracy = [{"workload": _wl(a), "program": a["program"], "T": a["T"], "family": a["family"],
                 "inputs": a.get("inputs"), "worst": _fin(a.get("worst")), "verdict": a.get("verdict"),
                 "records": a.get("records")} for a in detail.get("accuracy", [])]
    summary = {"timing points": len(spread), "A/A pairs": len(floors), "accuracy entries": len(accuracy),
               "largest session spread": detail.get("max_spread"), "largest A/A floor": detail.get("max_aa_floor")}
    return {"run": detail.get("run", {}), "summary": summary, "spread": spread, "aa_floor": floors,
            "accuracy": accuracy}


def route_key_of(k: dict) -> RouteKey:
    return RouteKey(k["arch"], k["op"], k["H"], k["w_dtype"], k["form"], k["mode"])
