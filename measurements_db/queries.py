"""The query layer the solver, the CLI and the dashboard use (no SQL outside this package).

``workload_evidence(store, arch)`` returns, for every workload of one arch, the same
`measurements_db.aggregates.WorkloadEvidence` objects that the reference
`aggregates.aggregate_records` computes from the same records (a test asserts equality); it reads
the raw float64 samples of every block and takes medians with numpy, so pooled and per-session
medians are exact. The semantics are the ones in `aggregates`' module docstring; where several
program records share a name (different fingerprints), the one `aggregates.describing` picks by
content (the greatest fingerprint) describes it, whatever the import order.

Qualification under a policy is the solver's business (`cake_router.policy`); these are the
aggregates it judges.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from sqlalchemy import func, select

from measurements_db.aggregates import (
    FamilyAccuracy,
    ProgramInfo,
    RunInfo,
    TimingAggregate,
    describing,
    WorkloadEvidence,
    WorkloadKey,
    combine_point,
    evidence_runs,
    median,
    timing_gpus,
    keep_one_step_forward,
    spread_of,
)
from measurements_db.engine import Store, StoreError
from measurements_db.evidence_io import SPECS
from measurements_db.models import AccuracyRecord, AccuracySummary, Program, Run, TimingBlock, Workload
from measurements_db.summary import np_median

_F8 = np.dtype("<f8")


def _cat(blobs: list[bytes]) -> np.ndarray:
    return np.frombuffer(blobs[0], dtype=_F8) if len(blobs) == 1 else np.frombuffer(b"".join(blobs), dtype=_F8)


def _programs(conn) -> dict[str, ProgramInfo]:
    pt = Program.__table__
    out: dict[str, ProgramInfo] = {}
    for r in conn.execute(select(pt).order_by(pt.c.id)).mappings():
        info = ProgramInfo.of(r)
        out[info.name] = describing(out.get(info.name), info)
    return out


def _step_fwd(row) -> str | None:
    return (row[11] or {}).get("step_fwd")


def _run_rows(conn) -> list:
    """(pk, run_id, source, started, arch, gpu, sm_count, timed) of every run: one read of the run
    table, and of which runs hold timing (what the GPU-model rule needs)."""
    rt, tt = Run.__table__, TimingBlock.__table__
    timed = {pk for (pk,) in conn.execute(select(tt.c.run_pk).distinct())}
    rows = conn.execute(select(rt.c.id, rt.c.run_id, rt.c.source, rt.c.started, rt.c.arch, rt.c.gpu, rt.c.sm_count)).all()
    return [(*r, r[0] in timed) for r in rows]


def _infos(run_rows: list, arch: str) -> list[RunInfo]:
    return [RunInfo(run_id, source, gpu, sm, timed)
            for _, run_id, source, _, a, gpu, sm, timed in run_rows if a == arch]


def run_infos(store: Store, arch: str) -> list[RunInfo]:
    """What the GPU-model rule (`aggregates.evidence_runs`) reads of every run of ``arch``."""
    with store.read() as conn:
        return _infos(_run_rows(conn), arch)


def measured_gpus(store: Store, arch: str) -> dict[str, int]:
    """GPU model -> number of measured runs of ``arch`` that hold timing (`aggregates.timing_gpus`:
    published runs and accuracy-only runs not counted)."""
    return timing_gpus(run_infos(store, arch))


def workload_evidence(store: Store, arch: str, gpu: str | None = None) -> dict[WorkloadKey, WorkloadEvidence]:
    """Aggregates of every workload of ``arch`` (equal to `aggregates.aggregate_records`); with
    ``gpu``, timing of the runs on that GPU model only, and accuracy of the runs
    `aggregates.evidence_runs` adds (measured on a card of the same SM count)."""
    wt, tt = Workload.__table__, TimingBlock.__table__
    with store.read() as conn:
        run_rows = _run_rows(conn)
        timing_ids, accuracy_ids = evidence_runs(_infos(run_rows, arch), gpu)
        # Runs of other arches never hold this arch's workloads; only this arch's runs are chosen among.
        t_pks = [r[0] for r in run_rows if r[1] in timing_ids or r[4] != arch]
        a_pks = [r[0] for r in run_rows if r[1] in accuracy_ids or r[4] != arch]
        t_all, a_all = len(t_pks) == len(run_rows), len(a_pks) == len(run_rows)
        runs = {r[0]: (r[1], r[2]) for r in run_rows}
        started = {r[0]: r[3] for r in run_rows}
        wls = {i: WorkloadKey(a, h, x, w, f) for i, a, h, x, w, f in conn.execute(
            select(wt.c.id, wt.c.arch, wt.c.h, wt.c.x_dtype, wt.c.w_dtype, wt.c.form).where(wt.c.arch == arch))}
        if not wls:
            return {}
        programs = _programs(conn)
        ids = list(wls)
        trows = conn.execute(select(
            tt.c.workload_id, tt.c.program, tt.c.op, tt.c.t, tt.c.run_pk, tt.c.session, tt.c.copy, tt.c.timer,
            tt.c.samples, tt.c.median_us, tt.c.n, tt.c.extra,
        ).where(tt.c.workload_id.in_(ids), tt.c.l2 == "cold",  # section 4: latency is timed with L2 flushed
                *([] if t_all else [tt.c.run_pk.in_(t_pks)]))).all()
        st = AccuracySummary.__table__
        arows = conn.execute(select(
            st.c.workload_id, st.c.program, st.c.t, st.c.family, st.c.run_pk, st.c.inputs, st.c.worst, st.c.median,
            st.c.eager_worst, st.c.eager_median, st.c.verdict, st.c.qualified_by_source,
        ).where(st.c.workload_id.in_(ids), *([] if a_all else [st.c.run_pk.in_(a_pks)]))).all()

    out: dict[WorkloadKey, WorkloadEvidence] = {}

    def ev(wk: WorkloadKey) -> WorkloadEvidence:
        e = out.get(wk)
        if e is None:
            e = out[wk] = WorkloadEvidence(key=wk)
        return e

    # ---- timing ---------------------------------------------------------------------------
    groups: dict[tuple, list] = defaultdict(list)
    for r in trows:
        groups[(r[0], r[1], r[2], r[3])].append(r)
    for key, recs in groups.items():
        if key[2] == "2xfwd+bwd":
            groups[key] = keep_one_step_forward(recs, _step_fwd, lambda r: str(started[r[4]]))
    # (workload_id, op, T) -> (session, program) -> copy -> sample blobs
    aa: dict[tuple, dict[tuple, dict[int, list[bytes]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for (wid, prog, op, T), recs in groups.items():
        measured = [r for r in recs if runs[r[4]][1] == "measured"]
        use = measured or recs
        source = "measured" if measured else "published"
        pooled: list[bytes] = []
        sessions: dict[str, list[bytes]] = defaultdict(list)
        published_medians: list[float] = []
        published_n = 0
        timers = set()
        for (_, _, _, _, run_pk, session, copy, timer, samples, median_us, n, _extra) in use:
            timers.add(timer)
            sess = f"{runs[run_pk][0]}/{session}"
            if samples is not None:
                aa[(wid, op, T)][(sess, prog)][copy].append(samples)
                if copy == 0:
                    pooled.append(samples)
                    sessions[sess].append(samples)
            elif copy == 0:
                published_medians.append(float(median_us))
                published_n += int(n or 0)
        if pooled:
            arr = _cat(pooled)
            med, count = np_median(arr), int(arr.size)
            sm = {s: np_median(_cat(sessions[s])) for s in sorted(sessions)}
        elif published_medians:
            med, count = median(published_medians), published_n
            sm = {}
        else:
            continue  # only A/A copies: no latency for this point
        ev(wls[wid]).timing[(prog, op, T)] = TimingAggregate(
            program=prog, op=op, T=T, median_us=med, session_medians=sm, spread=spread_of(sm), n=count,
            timer=next(iter(timers)) if len(timers) == 1 else "mixed", source=source,
            run_ids=tuple(sorted({runs[r[4]][0] for r in use})),
            step_fwd=_step_fwd(use[0]) if op == "2xfwd+bwd" else None,
        )
    for (wid, op, T), by_sess in aa.items():
        floors = [abs(1.0 - np_median(_cat(c[1])) / np_median(_cat(c[0])))
                  for c in by_sess.values() if c.get(0) and c.get(1)]
        if floors:
            ev(wls[wid]).aa_floor[(op, T)] = median(floors)

    # ---- accuracy -------------------------------------------------------------------------
    # One summary row per (run, workload, program, T, family), kept at import (summary.py).
    per_point: dict[tuple, dict[str, list[FamilyAccuracy]]] = defaultdict(lambda: defaultdict(list))
    for (wid, prog, T, fam, run_pk, inputs, worst, med, eworst, emed, verdict, qbs) in arows:
        run_id, source = runs[run_pk]
        per_point[(wid, prog, T)][fam].append(FamilyAccuracy(
            family=fam, inputs=inputs, worst=worst, median=med, eager_worst=eworst, eager_median=emed,
            source=source, verdict=verdict, qualified_by_source=None if qbs is None else bool(qbs), run_id=run_id,
        ))
    for (wid, prog, T), fams in per_point.items():
        ev(wls[wid]).accuracy[(prog, T)] = combine_point(prog, T, fams)

    for e in out.values():
        names = {p for (p, _, _) in e.timing} | {p for (p, _) in e.accuracy}
        e.programs = {n: programs[n] for n in sorted(names) if n in programs}
    return out


def arches(store: Store) -> list[str]:
    """Every arch with runs or workloads in the store, sorted."""
    with store.read() as conn:
        a = set(conn.execute(select(Run.arch).distinct()).scalars())
        a |= set(conn.execute(select(Workload.arch).distinct()).scalars())
    return sorted(a)


_RUN_FIELDS = [f.name for f in SPECS["run"]]


def runs(store: Store, arch: str | None = None) -> list[dict]:
    """Provenance of every run (of one arch), newest first: the run's fields, where and when it was
    imported from, and how much evidence it holds."""
    rt, tt, at = Run.__table__, TimingBlock.__table__, AccuracyRecord.__table__
    with store.read() as conn:
        q = select(rt).order_by(rt.c.started.desc(), rt.c.run_id)
        if arch is not None:
            q = q.where(rt.c.arch == arch)
        rows = conn.execute(q).mappings().all()
        tcount = dict(conn.execute(select(tt.c.run_pk, func.count()).group_by(tt.c.run_pk)).all())
        scount = dict(conn.execute(select(tt.c.run_pk, func.sum(tt.c.n_samples)).group_by(tt.c.run_pk)).all())
        acount = dict(conn.execute(select(at.c.run_pk, func.count()).group_by(at.c.run_pk)).all())
    out = []
    for r in rows:
        d = {k: r[k] for k in _RUN_FIELDS if r[k] is not None}
        d.update(r["extra"] or {})
        d.update({"file_name": r["file_name"], "file_sha256": r["file_sha256"], "imported_at": r["imported_at"],
                  "timing_blocks": int(tcount.get(r["id"], 0)), "samples": int(scount.get(r["id"]) or 0),
                  "accuracy_records": int(acount.get(r["id"], 0))})
        out.append(d)
    return out


def run_detail(store: Store, run_id: str) -> dict:
    """One run: provenance, per point (workload, program, op, T) its session medians, pooled median
    and spread, its A/A pairs (median of each copy, ratio, |1 - ratio|) and its accuracy records'
    per-family summary. Raises StoreError for an unknown run_id."""
    rt, tt, at, wt = Run.__table__, TimingBlock.__table__, AccuracyRecord.__table__, Workload.__table__
    with store.read() as conn:
        run = conn.execute(select(rt).where(rt.c.run_id == run_id)).mappings().first()
        if run is None:
            raise StoreError(f"no run {run_id!r} in the store {store.display_url}; `python -m cake_router db stats` lists what is there")
        wls = {r[0]: r[1:] for r in conn.execute(select(wt.c.id, wt.c.arch, wt.c.h, wt.c.x_dtype, wt.c.w_dtype, wt.c.form))}
        trows = conn.execute(select(tt.c.workload_id, tt.c.program, tt.c.op, tt.c.t, tt.c.session, tt.c.copy,
                                    tt.c.samples, tt.c.median_us, tt.c.n, tt.c.timer)
                             .where(tt.c.run_pk == run["id"])).all()
        arows = conn.execute(select(at.c.workload_id, at.c.program, at.c.t, at.c.family, at.c.inputs,
                                    at.c.dw_err_over_tol_max, at.c.dw_err_over_tol_median, at.c.verdict)
                             .where(at.c.run_pk == run["id"])).all()
    prov = {k: run[k] for k in _RUN_FIELDS if run[k] is not None}
    prov.update(run["extra"] or {})
    prov.update({"file_name": run["file_name"], "file_sha256": run["file_sha256"], "imported_at": run["imported_at"]})

    def wdict(wid):
        a, h, x, w, f = wls[wid]
        return {"arch": a, "H": h, "x_dtype": x, "w_dtype": w, "form": f}

    points: dict[tuple, dict] = {}
    copies: dict[tuple, dict[int, list[bytes]]] = defaultdict(lambda: defaultdict(list))
    for wid, prog, op, T, session, copy, samples, median_us, n, timer in trows:
        key = (wid, prog, op, T)
        p = points.setdefault(key, {"sessions": defaultdict(list), "published": [], "timers": set()})
        p["timers"].add(timer)
        if samples is not None:
            copies[(wid, op, T, session, prog)][copy].append(samples)
            if copy == 0:
                p["sessions"][session].append(samples)
        elif copy == 0:
            p["published"].append((median_us, n))
    point_list = []
    for (wid, prog, op, T), p in sorted(points.items(), key=lambda kv: (wls[kv[0][0]], kv[0][1:])):
        sm = {s: np_median(_cat(b)) for s, b in sorted(p["sessions"].items())}
        pooled = [b for bl in p["sessions"].values() for b in bl]
        entry = {**wdict(wid), "program": prog, "op": op, "T": T, "timer": "/".join(sorted(p["timers"])),
                 "session_medians": sm, "spread": spread_of(sm)}
        if pooled:
            arr = _cat(pooled)
            entry.update(median_us=np_median(arr), n=int(arr.size))
        elif p["published"]:
            entry.update(median_us=median([m for m, _ in p["published"]]), n=sum(int(n or 0) for _, n in p["published"]))
        else:
            entry.update(median_us=None, n=0)
        point_list.append(entry)
    pairs = []
    for (wid, op, T, session, prog), c in sorted(copies.items(), key=lambda kv: (wls[kv[0][0]], kv[0][1:])):
        if c.get(0) and c.get(1):
            m0, m1 = np_median(_cat(c[0])), np_median(_cat(c[1]))
            pairs.append({**wdict(wid), "op": op, "T": T, "session": session, "program": prog,
                          "median_copy0_us": m0, "median_copy1_us": m1, "ratio": m1 / m0, "floor": abs(1.0 - m1 / m0)})
    acc: dict[tuple, dict] = {}
    for wid, prog, T, fam, inputs, dmax, dmed, verdict in arows:
        a = acc.setdefault((wid, prog, T, fam), {"inputs": 0, "worst": [], "records": 0, "verdicts": set()})
        a["inputs"] += inputs
        a["records"] += 1
        if dmax is not None:
            a["worst"].append(dmax)
        if verdict:
            a["verdicts"].add(verdict)
    acc_list = [{**wdict(wid), "program": prog, "T": T, "family": fam, "records": a["records"], "inputs": a["inputs"],
                 "worst": max(a["worst"]) if a["worst"] else None,
                 "verdict": ("fail" if "fail" in a["verdicts"] else ("pass" if a["verdicts"] else None))}
                for (wid, prog, T, fam), a in sorted(acc.items(), key=lambda kv: (wls[kv[0][0]], kv[0][1:]))]
    spreads = [p["spread"] for p in point_list if p["spread"] is not None]
    return {"run": prov, "points": point_list, "aa_pairs": pairs, "accuracy": acc_list,
            "max_spread": max(spreads) if spreads else None,
            "max_aa_floor": max((p["floor"] for p in pairs), default=None)}


def stats(store: Store) -> dict:
    """Counts per arch, per program and per workload key (arch, H, x_dtype, w_dtype, form), and totals."""
    rt, tt, at, wt, pt = (Run.__table__, TimingBlock.__table__, AccuracyRecord.__table__, Workload.__table__,
                          Program.__table__)
    with store.read() as conn:
        wls = {r[0]: tuple(r[1:]) for r in conn.execute(select(wt.c.id, wt.c.arch, wt.c.h, wt.c.x_dtype, wt.c.w_dtype, wt.c.form))}
        t = conn.execute(select(tt.c.workload_id, tt.c.program, tt.c.op, func.count(), func.sum(tt.c.n_samples),
                                func.count(tt.c.t.distinct()))
                         .group_by(tt.c.workload_id, tt.c.program, tt.c.op)).all()
        tT = conn.execute(select(tt.c.workload_id, func.count(tt.c.t.distinct())).group_by(tt.c.workload_id)).all()
        a = conn.execute(select(at.c.workload_id, at.c.program, func.count(), func.sum(at.c.inputs))
                         .group_by(at.c.workload_id, at.c.program)).all()
        run_arch = conn.execute(select(rt.c.arch, rt.c.source, func.count()).group_by(rt.c.arch, rt.c.source)).all()
        n_programs = conn.execute(select(func.count()).select_from(pt)).scalar()
        n_runs = conn.execute(select(func.count()).select_from(rt)).scalar()
    per_arch: dict[str, dict[str, Any]] = defaultdict(lambda: {"runs": 0, "published_runs": 0, "workloads": 0,
                                                                "programs": set(), "timing_blocks": 0, "samples": 0,
                                                                "accuracy_records": 0})
    per_prog: dict[str, dict[str, Any]] = defaultdict(lambda: {"arches": set(), "timing_blocks": 0, "samples": 0,
                                                                "accuracy_records": 0})
    per_key: dict[tuple, dict[str, Any]] = defaultdict(lambda: {"ops": set(), "programs": set(), "T_values": 0,
                                                                 "timing_blocks": 0, "samples": 0, "accuracy_records": 0})
    for arch, source, n in run_arch:
        per_arch[arch]["runs"] += n
        if source == "published":
            per_arch[arch]["published_runs"] += n
    for wid, key in wls.items():
        per_arch[key[0]]["workloads"] += 1
    for wid, nT in tT:
        per_key[wls[wid]]["T_values"] = int(nT)
    for wid, prog, op, blocks, samples, _ in t:
        key = wls[wid]
        for d in (per_arch[key[0]], per_prog[prog], per_key[key]):
            d["timing_blocks"] += int(blocks)
            d["samples"] += int(samples or 0)
        per_arch[key[0]]["programs"].add(prog)
        per_prog[prog]["arches"].add(key[0])
        per_key[key]["ops"].add(op)
        per_key[key]["programs"].add(prog)
    for wid, prog, n, _inputs in a:
        key = wls[wid]
        for d in (per_arch[key[0]], per_prog[prog], per_key[key]):
            d["accuracy_records"] += int(n)
        per_arch[key[0]]["programs"].add(prog)
        per_prog[prog]["arches"].add(key[0])
        per_key[key]["programs"].add(prog)
    arch_list = [{"arch": k, **{f: (len(v) if isinstance(v, set) else v) for f, v in d.items()}}
                 for k, d in sorted(per_arch.items())]
    prog_list = [{"program": k, "arches": sorted(d["arches"]), "timing_blocks": d["timing_blocks"],
                  "samples": d["samples"], "accuracy_records": d["accuracy_records"]} for k, d in sorted(per_prog.items())]
    key_list = [{"arch": k[0], "H": k[1], "x_dtype": k[2], "w_dtype": k[3], "form": k[4], "ops": sorted(d["ops"]),
                 "programs": len(d["programs"]), "T_values": d["T_values"], "timing_blocks": d["timing_blocks"],
                 "samples": d["samples"], "accuracy_records": d["accuracy_records"]} for k, d in sorted(per_key.items())]
    totals = {"runs": int(n_runs), "programs": int(n_programs), "workloads": len(wls),
              "timing_blocks": sum(d["timing_blocks"] for d in arch_list),
              "samples": sum(d["samples"] for d in arch_list),
              "accuracy_records": sum(d["accuracy_records"] for d in arch_list)}
    return {"url": store.display_url, "totals": totals, "arches": arch_list, "programs": prog_list, "keys": key_list}
