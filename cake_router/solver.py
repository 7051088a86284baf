"""The optimizer: `WorkloadEvidence` aggregates -> windows per route key -> a `cake-routes/1` table.

The pipeline for one route key (docs/routing.md describes each step with its exact semantics):

1. Points: every sampled T (a T at which some candidate program of the key's op is timed); at each
   the accuracy verdict of every candidate (`policy.judge_accuracy`) and the eligible set.
2. Choice per point: the fastest eligible program by pooled median (exact ties: by name). With
   none eligible the point is a `no-eligible-program` point routed to the most accurate candidate.
3. Neutral rule against the incumbent table (forced points), then weak segments (every point
   noisy or inside the noise floor against a neighbour's program) are absorbed by a neighbour,
   then the merge rule.
4. Cuts between consecutive segments (accuracy cut with grid snapping, or speed cut by log-T
   crossover), the rule above the largest sampled T, reasons and evidence summaries.
5. Next measurements worth taking.

Everything is deterministic: iteration is over sorted keys and ties break by T and name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from cake_kernels.routes.table import SCHEMA, RouteTable
from measurements_db.aggregates import (
    ProgramInfo,
    RouteKey,
    TimingAggregate,
    WorkloadEvidence,
)

from cake_router import __version__
from cake_router.policy import rules
from cake_router.policy.config import Policy

LOUD_REASONS = ("no-eligible-program", "unverified")
ROUTED_X_DTYPE = "bf16"  # DESIGN.md: x is BF16; a route key carries no x_dtype


class SolveError(ValueError):
    """Evidence the solver cannot turn into a table (names what is wrong)."""


@dataclass
class Point:
    """One sampled T of a route key and everything decided there."""

    T: int
    timing: dict[str, TimingAggregate]  # candidates timed at T
    verdicts: dict[str, rules.AccuracyVerdict]  # every candidate
    eligible: list[str]  # fastest first
    aa_floor: float | None
    winner: str | None  # fastest eligible
    runner_up: str | None  # second fastest eligible
    decisive: bool  # winner significantly faster than runner-up (True without a runner-up)
    noisy: bool  # winner's or runner-up's session spread above the limit
    fallback: str | None  # most accurate candidate when nothing is eligible
    peer: str | None = None  # fastest peer timed at T (comparator only)
    peer_timing: TimingAggregate | None = None

    @property
    def margin(self) -> float | None:
        """Runner-up latency / winner latency (> 1: the winner is faster)."""
        if self.winner is None or self.runner_up is None:
            return None
        return self.timing[self.runner_up].median_us / self.timing[self.winner].median_us

    def latency(self, program: str) -> float | None:
        t = self.timing.get(program)
        return t.median_us if t is not None else None


@dataclass
class Segment:
    program: str
    idx: list[int]  # indexes into the points
    loud: bool = False  # no-eligible-program
    neutral: bool = False  # holds points forced by the neutral rule
    merged: bool = False


@dataclass
class SolvedWindow:
    lo: int
    hi: int | None
    program: str
    reason: str
    evidence: dict
    cut: str  # how the window's start was decided: start | speed | accuracy | eager | coverage | loud | above-largest
    points: list[int] = field(default_factory=list)  # sampled T inside the window

    def as_dict(self) -> dict:
        return {"lo": self.lo, "hi": self.hi, "program": self.program, "reason": self.reason,
                "evidence": self.evidence}


@dataclass
class NextItem:
    T: int
    kind: str  # "timing", "accuracy" or "timing+accuracy"
    programs: tuple[str, ...]
    why: str

    def as_dict(self) -> dict:
        return {"T": self.T, "kind": self.kind, "programs": list(self.programs), "why": self.why}


@dataclass
class KeySolution:
    key: RouteKey
    workload: WorkloadEvidence
    points: list[Point]
    windows: list[SolvedWindow]
    next: list[NextItem]

    def route_dict(self) -> dict:
        d = self.key.as_dict()
        d["windows"] = [w.as_dict() for w in self.windows]
        return d


@dataclass
class ArchSolution:
    arch: str
    policy: Policy
    keys: list[KeySolution]
    fingerprint: str
    programs: dict[str, ProgramInfo]
    skipped: list[str]  # keys or workloads not routed, with why

    def table_doc(self) -> dict:
        routed = sorted({w.program for k in self.keys for w in k.windows})
        return {
            "schema": SCHEMA,
            "arch": self.arch,
            "generated_by": f"cake_router {__version__}",
            "policy": self.policy.as_dict(),
            "evidence_fingerprint": self.fingerprint,
            "programs": {p: _program_dict(self.programs[p]) for p in routed if p in self.programs},
            "routes": [k.route_dict() for k in self.keys],
        }

    def next_doc(self) -> dict:
        """The grid file `measure --T next` reads (format: docs/routing.md)."""
        keys = []
        for k in self.keys:
            if not k.next:
                continue
            d = k.key.as_dict()
            d["T"] = sorted({i.T for i in k.next})
            d["items"] = [i.as_dict() for i in k.next]
            keys.append(d)
        return {"schema": "cake-next/1", "arch": self.arch, "evidence_fingerprint": self.fingerprint, "keys": keys}


def _program_dict(p: ProgramInfo) -> dict:
    return {"op": p.op, "family": p.family, "deterministic": p.deterministic, "runnable": p.runnable,
            "fingerprint": p.fingerprint}


def _r(x: float) -> float:
    """Round for the table: 4 significant digits (deterministic, readable)."""
    if not math.isfinite(x):
        return x
    return float(f"{x:.4g}")


def _put_worst(ev: dict, worst: float) -> None:
    """The worst err/tol into a window's evidence. A published "fail" with no number is an infinite
    worst to the rules, which JSON cannot hold: the table says `"accuracy_stated": "fail"` instead."""
    if math.isfinite(worst):
        ev["worst_err_over_tol"] = _r(worst)
    else:
        ev["accuracy_stated"] = "fail"


# ---- evidence fingerprint -------------------------------------------------------------------

def _canon(obj):
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _canon(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        items = [(json.dumps(_canon(k), sort_keys=True), _canon(v)) for k, v in obj.items()]
        return [[k, v] for k, v in sorted(items, key=lambda kv: kv[0])]
    if isinstance(obj, (list, tuple)):
        return [_canon(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return repr(obj)
    return obj


def evidence_fingerprint(workloads: Iterable[WorkloadEvidence]) -> str:
    """SHA-256 over the canonical JSON of the aggregates the solve used (sorted by workload)."""
    h = hashlib.sha256()
    for ev in sorted(workloads, key=lambda e: e.key):
        h.update(json.dumps(_canon(ev), sort_keys=True, separators=(",", ":")).encode())
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


# ---- route keys -----------------------------------------------------------------------------

def route_keys(ev: WorkloadEvidence) -> list[RouteKey]:
    """fwd (mode any) and bwd det / nondet for a workload with evidence."""
    k = ev.key
    return [RouteKey(k.arch, "bwd", k.H, k.w_dtype, k.form, "det"),
            RouteKey(k.arch, "bwd", k.H, k.w_dtype, k.form, "nondet"),
            RouteKey(k.arch, "fwd", k.H, k.w_dtype, k.form, "any")]


def serves_op(ev: WorkloadEvidence, name: str, info: ProgramInfo, op: str) -> bool:
    """A program serves an op when its record declares it, or when it is timed for that op in this
    workload: published whole-op implementations (e.g. FlashInfer's cake_rmsnorm_train, recorded
    with op "bwd") carry fwd and bwd timings under one program name."""
    return info.op == op or any(p == name and o == op for (p, o, _) in ev.timing)


def candidates(ev: WorkloadEvidence, key: RouteKey) -> dict[str, ProgramInfo]:
    """Programs of the key's op that may be routed: not peers, and deterministic in det mode."""
    return {n: p for n, p in sorted(ev.programs.items())
            if p.family != "peer" and rules.mode_allows(key.mode, p.deterministic) and serves_op(ev, n, p, key.op)}


def peers(ev: WorkloadEvidence, key: RouteKey) -> list[str]:
    return sorted(n for n, p in ev.programs.items() if p.family == "peer" and serves_op(ev, n, p, key.op))


# ---- step 1 and 2: points -------------------------------------------------------------------

def _fallback_rank(ev: WorkloadEvidence, p: str, T: int, verdict, timing: TimingAggregate | None,
                   key: RouteKey, policy: Policy) -> tuple:
    """"The program with the smallest worst err/tol" (section 5) at a point where none is eligible.
    Programs with accuracy at T come first; then those judged only below T, by their worst at the
    largest such T (a dw error grows with T, so a program that already breached there ranks after
    one that did not); then those never judged. Without this a point timed but not yet qualified
    was routed to its fastest program, which at H 5120-8192 with a BF16 weight and T 1M was a
    program out of budget from T 65536 (round 6)."""
    lat = timing.median_us if timing is not None else None
    if verdict.worst is not None:
        return (0, *rules.accuracy_rank(verdict.worst, lat, p))
    below = [t for (q, t) in ev.accuracy if q == p and t < T]
    if below:
        worst = rules.judge_accuracy(ev.accuracy[(p, max(below))], key.op, key.w_dtype, policy).worst
        if worst is not None:
            return (1, *rules.accuracy_rank(worst, lat, p))
    return (2, *rules.accuracy_rank(None, lat, p))


def build_points(ev: WorkloadEvidence, key: RouteKey, cands: Mapping[str, ProgramInfo], policy: Policy) -> list[Point]:
    by_T: dict[int, dict[str, TimingAggregate]] = {}
    peer_names = set(peers(ev, key))
    peer_by_T: dict[int, dict[str, TimingAggregate]] = {}
    for (p, op, T), t in ev.timing.items():
        if op != key.op:
            continue
        if p in cands:
            by_T.setdefault(T, {})[p] = t
        elif p in peer_names:
            peer_by_T.setdefault(T, {})[p] = t
    points = []
    for T in sorted(by_T):
        timing = dict(sorted(by_T[T].items()))
        verdicts = {p: rules.judge_accuracy(ev.accuracy.get((p, T)), key.op, key.w_dtype, policy) for p in cands}
        floor = ev.aa_floor.get((key.op, T))
        elig = [p for p in rules.order_by_latency(timing)
                if rules.eligible(verdicts[p], timing.get(p), key.mode, cands[p].deterministic)]
        winner = elig[0] if elig else None
        runner = elig[1] if len(elig) > 1 else None
        decisive = runner is None or rules.significantly_faster(timing[winner], timing[runner], floor)
        noisy = any(rules.is_noisy(timing[p], policy) for p in (winner, runner) if p is not None)
        fallback = None
        if winner is None:
            fallback = min(cands, key=lambda p: _fallback_rank(ev, p, T, verdicts[p], timing.get(p), key, policy))
        pt = Point(T, timing, verdicts, elig, floor, winner, runner, decisive, noisy, fallback)
        if T in peer_by_T:
            pt.peer = rules.order_by_latency(peer_by_T[T])[0]
            pt.peer_timing = peer_by_T[T][pt.peer]
        points.append(pt)
    return points


# ---- step 3: segments -----------------------------------------------------------------------

def _segments(points: list[Point], choice: list[str], loud: list[bool], forced: list[bool]) -> list[Segment]:
    segs: list[Segment] = []
    for i in range(len(points)):
        if segs and segs[-1].program == choice[i] and segs[-1].loud == loud[i]:
            segs[-1].idx.append(i)
            segs[-1].neutral |= forced[i]
        else:
            segs.append(Segment(choice[i], [i], loud[i], forced[i]))
    return segs


def _coalesce(segs: list[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for s in segs:
        if out and out[-1].program == s.program and out[-1].loud == s.loud:
            out[-1].idx.extend(s.idx)
            out[-1].neutral |= s.neutral
            out[-1].merged |= s.merged
        else:
            out.append(s)
    return out


def _eligible_all(points: list[Point], idx: list[int], program: str) -> bool:
    return all(program in points[i].eligible for i in idx)


def _cost(points: list[Point], idx: list[int], into: str, frm: str) -> float:
    """Sum over points of latency(into) / latency(frm): what absorbing the segment costs."""
    return sum(points[i].latency(into) / points[i].latency(frm) for i in idx)


def _weak_against(points: list[Point], idx: list[int], prog: str, other: str, policy: Policy) -> bool:
    """Every point of the segment is noisy or not a significant win of `prog` over `other`."""
    for i in idx:
        p = points[i]
        a, b = p.timing[prog], p.timing[other]
        if (rules.is_noisy(a, policy) or rules.is_noisy(b, policy)) and not rules.clear_of_spread(a, b, p.aa_floor, policy):
            continue
        if rules.significantly_faster(a, b, p.aa_floor):
            return False
    return True


def _absorb_weak(points: list[Point], segs: list[Segment], policy: Policy,
                 incumbent_at: Mapping[int, str] | None = None) -> list[Segment]:
    """Noise cannot by itself move a window edge: a segment whose every point is noisy or inside
    the noise floor against a neighbour's program (eligible at all its points) joins the cheaper
    such neighbour. Neutral (forced) and loud segments never move.

    With an incumbent table (`incumbent_at`: point index -> the incumbent's program there), a
    neighbour never absorbs a point the incumbent routed to another program: that would let the
    noise move an incumbent edge (round 16, fwd H 2048 BF16: a program with 10-15 % session spread
    absorbed T 16-256 from the incumbent's window, 6-9 % slower there than the clear winners)."""
    incumbent_at = incumbent_at or {}
    changed = True
    while changed:
        changed = False
        for j, s in enumerate(segs):
            if s.loud or s.neutral:
                continue
            opts = []
            for n in (j - 1, j + 1):
                if 0 <= n < len(segs) and not segs[n].loud and segs[n].program != s.program:
                    q = segs[n].program
                    if any(incumbent_at.get(i, q) != q for i in s.idx):
                        continue
                    if _eligible_all(points, s.idx, q) and _weak_against(points, s.idx, s.program, q, policy):
                        opts.append((_cost(points, s.idx, q, s.program), n))
            if opts:
                _, n = min(opts)
                segs[n].idx = sorted(segs[n].idx + s.idx)
                del segs[j]
                segs = _coalesce(segs)
                changed = True
                break
    return segs


def _merge(points: list[Point], segs: list[Segment], policy: Policy) -> list[Segment]:
    """Merge rule: a window beating every (non-loud) neighbour's program by less than the neutral
    threshold at every sampled point goes into the neighbour that costs least. The window with the
    smallest advantage merges first; repeat until none qualifies."""
    while True:
        best = None
        for j, s in enumerate(segs):
            if s.loud or s.neutral:
                continue
            nbrs = [n for n in (j - 1, j + 1) if 0 <= n < len(segs) and not segs[n].loud]
            if not nbrs:
                continue
            ok, opts, worst_adv = True, [], 0.0
            for n in nbrs:
                q = segs[n].program
                if not _eligible_all(points, s.idx, q):
                    ok = False
                    break
                adv = [points[i].latency(q) / points[i].latency(s.program) - 1.0 for i in s.idx]
                thr = [policy.neutral_threshold(points[i].aa_floor) for i in s.idx]
                if not rules.merge_allowed(adv, thr):
                    ok = False
                    break
                worst_adv = max(worst_adv, max(adv))
                opts.append((_cost(points, s.idx, q, s.program), n))
            if ok:
                cand = (worst_adv, points[s.idx[0]].T, j, min(opts)[1])
                if best is None or cand < best:
                    best = cand
        if best is None:
            return segs
        _, _, j, n = best
        segs[n].idx = sorted(segs[n].idx + segs[j].idx)
        segs[n].merged = True
        del segs[j]
        segs = _coalesce(segs)


def choose_segments(points: list[Point], policy: Policy, forced: Mapping[int, str] | None = None,
                    incumbent_at: Mapping[int, str] | None = None) -> list[Segment]:
    """Steps 2-3: per-point choice (forced points first), weak-segment absorption, merge.
    `incumbent_at` (point index -> incumbent program) keeps the noise off the incumbent's edges."""
    forced = forced or {}
    choice, loud, frc = [], [], []
    for i, p in enumerate(points):
        if i in forced:
            choice.append(forced[i]); loud.append(False); frc.append(True)
        elif p.winner is not None:
            choice.append(p.winner); loud.append(False); frc.append(False)
        else:
            choice.append(p.fallback); loud.append(True); frc.append(False)
    segs = _segments(points, choice, loud, frc)
    segs = _absorb_weak(points, segs, policy, incumbent_at)
    return _merge(points, segs, policy)


def _neutral_windows(points: list[Point], incumbent: list, policy: Policy) -> list[tuple[list[int], str]]:
    """The incumbent windows the neutral rule keeps, as (point indexes, program): the program is
    eligible at every sampled T of the window and within max(neutral, A/A floor) of the fastest
    eligible there."""
    kept = []
    for w in incumbent:
        idx = [i for i, p in enumerate(points) if w.covers(p.T)]
        if not idx:
            continue
        q = w.program
        if all(q in points[i].eligible and rules.within_neutral(
                points[i].latency(q), points[i].latency(points[i].winner), points[i].aa_floor, policy) for i in idx):
            kept.append((idx, q))
    return kept


def incumbent_programs(points: list[Point], incumbent: list) -> dict[int, str]:
    """Point index -> the incumbent table's program at that sampled T (points it covers only)."""
    out: dict[int, str] = {}
    for i, p in enumerate(points):
        w = next((w for w in incumbent if w.covers(p.T)), None)
        if w is not None:
            out[i] = w.program
    return out


def _programs_at(segs: list[Segment]) -> dict[int, str]:
    return {i: s.program for s in segs for i in s.idx}


def neutral_forced(points: list[Point], baseline: list[Segment], incumbent: list, policy: Policy) -> dict[int, str]:
    """Neutral rule: an incumbent window keeps its program where that program is eligible at every
    sampled T of the window and within max(neutral, A/A floor) of the fastest eligible there.
    Only points where the solve without incumbent would route elsewhere are forced (so re-solving
    against one's own output changes nothing)."""
    base = _programs_at(baseline)
    forced: dict[int, str] = {}
    for idx, q in _neutral_windows(points, incumbent, policy):
        for i in idx:
            if base.get(i) != q:
                forced[i] = q
    return forced


def neutral_displaced(points: list[Point], baseline: list[Segment], segs: list[Segment], incumbent: list,
                      policy: Policy) -> dict[int, str]:
    """Points of a kept incumbent window that the solve without incumbent routed to the incumbent's
    program, but that the solve with the forced points moved elsewhere (a weak point absorbed into a
    forced neighbour): the neutral rule keeps them too."""
    base, now = _programs_at(baseline), _programs_at(segs)
    return {i: q for idx, q in _neutral_windows(points, incumbent, policy) for i in idx
            if base.get(i) == q and now.get(i) != q}


# ---- step 4: windows ------------------------------------------------------------------------

def _incumbent_edge(incumbent: list | None, a: str, b: str, t1: int, t2: int) -> int | None:
    """An incumbent edge a -> b strictly between the two sampled points (t1 <= edge < t2), if any."""
    for w, nxt in zip(incumbent or [], (incumbent or [])[1:]):
        if w.program == a and nxt.program == b and w.hi is not None and t1 <= w.hi < t2:
            return w.hi
    return None


def _cut(points: list[Point], a: Segment, b: Segment, lo_a: int, policy: Policy,
         incumbent: list | None = None) -> tuple[int, str]:
    """Last T of segment a's window and how it was decided."""
    t1, t2 = points[a.idx[-1]].T, points[b.idx[0]].T
    pa, pb = points[a.idx[-1]], points[b.idx[0]]
    if a.loud:
        return t2 - 1, "loud"
    if b.loud:
        return t1, "loud"
    va2 = pb.verdicts.get(a.program)
    if a.program not in pb.timing and (va2 is None or va2.source is None):
        # No evidence of a at t2 at all (a coverage gap, not a budget exit): a is still never
        # extrapolated past its last sampled point, but the next window is not an accuracy cut.
        return t1, "coverage"
    if va2 is None or not va2.in_budget:
        kind = "eager" if va2 is not None and va2.status == rules.EAGER else "accuracy"
        snapped = rules.snap_down(t1, policy.grid)
        if snapped < t1:
            inside = [i for i, p in enumerate(points) if snapped < p.T <= t1]
            # a keeps at least its first sampled point; b must be eligible wherever it moves in
            if snapped >= max(lo_a, points[a.idx[0]].T) and all(b.program in points[i].eligible for i in inside):
                return snapped, kind
        return t1, kind
    # speed cut
    b_ok_t1 = b.program in pa.eligible
    a_ok_t2 = a.program in pb.eligible
    if b_ok_t1 and a_ok_t2:
        # Windows keep their start until evidence exists for a faster program: with no sampled T
        # between t1 and t2, an incumbent edge between the same two programs stays where it is.
        kept = _incumbent_edge(incumbent, a.program, b.program, t1, t2)
        if kept is not None:
            return kept, "speed"
        return rules.crossover_hi(t1, pa.latency(a.program), pa.latency(b.program),
                                  t2, pb.latency(a.program), pb.latency(b.program)), "speed"
    if not b_ok_t1:
        return t2 - 1, "speed"
    return t1, "speed"


def _summary(points: list[Point], idx: list[int], program: str) -> dict:
    ev: dict = {"sampled_T": len(idx)}
    ratios, worst, ipf, noisy = [], [], [], 0
    for i in idx:
        p = points[i]
        lat = p.latency(program)
        others = [q for q in p.eligible if q != program] or [q for q in rules.order_by_latency(p.timing) if q != program]
        if lat is not None and others:
            ratios.append(p.latency(others[0]) / lat)
        v = p.verdicts.get(program)
        if v is not None and v.worst is not None:
            worst.append(v.worst)
        if v is not None and v.inputs_per_family is not None:
            ipf.append(v.inputs_per_family)
        noisy += p.noisy
    if ratios:
        ev["speedup_vs_runner_up"] = [_r(min(ratios)), _r(max(ratios))]
    if worst:
        _put_worst(ev, max(worst))
    if ipf:
        ev["inputs_per_family"] = min(ipf)
    if noisy:
        ev["noisy_points"] = noisy
    return ev


def _reason(points: list[Point], seg: Segment | None, idx: list[int], program: str, cut: str) -> str:
    if seg is not None and seg.loud:
        return "no-eligible-program"
    if seg is not None and seg.neutral:
        return "neutral-keep"
    if seg is not None and seg.merged:
        return "merged"
    if cut == "eager":
        return "eager-reference"
    if cut == "accuracy":
        return "accuracy-cut"
    if idx and all(points[i].eligible == [program] for i in idx):
        return "only-in-budget"
    return "fastest"


def build_windows(points: list[Point], segs: list[Segment], key: RouteKey, ev: WorkloadEvidence,
                  cands: Mapping[str, ProgramInfo], policy: Policy, incumbent: list | None = None) -> list[SolvedWindow]:
    his, cuts = [], ["start"]
    lo = 1
    for a, b in zip(segs, segs[1:]):
        hi, kind = _cut(points, a, b, lo, policy, incumbent)
        his.append(hi)
        cuts.append(kind)
        lo = hi + 1
    # above the largest sampled T
    last = segs[-1]
    tmax = points[-1].T
    v = points[-1].verdicts.get(last.program)
    extend = (not last.loud) and rules.extends_to_infinity(
        v.worst if v else None, key.op, ev.accuracy.get((last.program, tmax)) is not None, policy)
    his.append(None if extend else tmax)

    windows: list[SolvedWindow] = []
    lo = 1
    for seg, hi, cut in zip(segs, his, cuts):
        idx = [i for i, p in enumerate(points) if p.T >= lo and (hi is None or p.T <= hi)]
        windows.append(SolvedWindow(lo, hi, seg.program, _reason(points, seg, idx, seg.program, cut),
                                    _summary(points, idx, seg.program), cut, [points[i].T for i in idx]))
        lo = (hi or 0) + 1
    if not extend:
        pt = points[-1]
        measured = [p for p in cands if ev.accuracy.get((p, tmax)) is not None]
        if measured:
            prog = sorted(measured, key=lambda p: rules.accuracy_rank(pt.verdicts[p].worst, pt.latency(p), p))[0]
        else:
            prog = last.program
        evd: dict = {"sampled_T": 0}
        vv = pt.verdicts.get(prog)
        if vv is not None and vv.worst is not None:
            _put_worst(evd, vv.worst)
        if vv is not None and vv.inputs_per_family is not None:
            evd["inputs_per_family"] = vv.inputs_per_family
        windows.append(SolvedWindow(tmax + 1, None, prog, "unverified", evd, "above-largest", []))
    return windows


# ---- step 5: next measurements --------------------------------------------------------------

def next_measurements(points: list[Point], windows: list[SolvedWindow], cands: Mapping[str, ProgramInfo],
                      key: RouteKey, policy: Policy) -> list[NextItem]:
    items: dict[tuple, NextItem] = {}
    Ts = [p.T for p in points]

    def add(item: NextItem) -> None:
        items.setdefault((item.T, item.kind, item.programs), item)

    for prev, w in zip(windows, windows[1:]):
        if w.cut == "above-largest" or prev.hi is None:
            continue
        below = [t for t in Ts if t <= prev.hi]
        above = [t for t in Ts if t > prev.hi]
        if not below or not above:
            continue
        t1, t2 = below[-1], above[0]
        if t2 > t1 * (1.0 + policy.next_resolution):
            progs = tuple(sorted({prev.program, w.program}))
            mid = int(math.floor(math.sqrt(t1 * t2)))
            why = f"gap [{t1}, {t2}] around the {w.cut} cut at {prev.hi}/{w.lo}"
            for T in sorted({mid} | {g for g in policy.grid if t1 < g < t2}):
                if t1 < T < t2:
                    add(NextItem(T, "timing+accuracy", progs, why))
    by_T = {p.T: p for p in points}
    for w in windows:
        if w.reason in LOUD_REASONS:
            continue
        for T in w.points:
            p = by_T[T]
            routed = p.timing.get(w.program)
            if p.winner is None or p.winner == w.program or routed is None or not rules.is_noisy(routed, policy):
                continue
            # The routed program is slower by pooled median (beyond the neutral threshold) and only its
            # session spread keeps the faster program from taking the point (the noise rule): a
            # re-measurement decides it.
            slower = routed.median_us / p.timing[p.winner].median_us - 1.0
            if slower <= policy.neutral_threshold(p.aa_floor):
                continue  # within what the neutral rule would keep anyway
            add(NextItem(T, "timing", tuple(sorted((w.program, p.winner))),
                         f"routed program noisy here (session spread {routed.spread:.3f}) and {slower:.1%} slower "
                         f"than the fastest by pooled median"))
    for p in points:
        if p.winner and p.runner_up and (not p.decisive or p.noisy):
            why = ("noisy (session spread above the limit)" if p.noisy else
                   f"margin {p.margin:.4f} inside the noise floor {p.aa_floor or 0.0:.4f} or sessions disagree")
            add(NextItem(p.T, "timing", tuple(sorted((p.winner, p.runner_up))), why))
        for name, v in p.verdicts.items():
            if name not in p.timing or (key.op == "fwd" and v.source is None):
                continue
            if v.status in (rules.UNQUALIFIED, rules.NO_EVIDENCE, rules.RERUN):
                add(NextItem(p.T, "accuracy", (name,), f"{v.status}: {v.detail}"))
            elif v.qualified and v.worst is not None and policy.rerun_above < v.worst <= 1.0 and v.source == "measured":
                add(NextItem(p.T, "accuracy", (name,), f"worst err/tol {v.worst:.4g} above {policy.rerun_above} of the budget"))
    return [items[k] for k in sorted(items)]


# ---- entry points ---------------------------------------------------------------------------

def solve_key(ev: WorkloadEvidence, key: RouteKey, policy: Policy, incumbent: list | None = None) -> KeySolution | None:
    """Solve one route key; None when no candidate program of the key is timed."""
    cands = candidates(ev, key)
    points = build_points(ev, key, cands, policy)
    if not points:
        return None
    segs = choose_segments(points, policy)
    if incumbent:
        baseline = segs  # the solve without incumbent: what the neutral rule compares with
        inc_at = incumbent_programs(points, incumbent)
        forced = neutral_forced(points, baseline, incumbent, policy)
        segs = choose_segments(points, policy, forced, inc_at)
        while forced:
            displaced = neutral_displaced(points, baseline, segs, incumbent, policy)
            if not displaced:
                break
            forced.update(displaced)  # grows strictly (a displaced point is never forced yet): terminates
            segs = choose_segments(points, policy, forced, inc_at)
    windows = build_windows(points, segs, key, ev, cands, policy, incumbent)
    return KeySolution(key, ev, points, windows, next_measurements(points, windows, cands, key, policy))


def solve_arch(arch: str, workloads: Iterable[WorkloadEvidence], policy: Policy,
               incumbent: RouteTable | None = None) -> ArchSolution:
    """Solve every route key of `arch` from its workloads' evidence."""
    used = sorted((ev for ev in workloads if ev.key.arch == arch), key=lambda e: e.key)
    keys: list[KeySolution] = []
    skipped: list[str] = []
    programs: dict[str, ProgramInfo] = {}
    seen: set[tuple] = set()
    for ev in used:
        if ev.key.x_dtype.lower() != ROUTED_X_DTYPE:
            skipped.append(f"workload H={ev.key.H} w_dtype={ev.key.w_dtype} form={ev.key.form}: x_dtype "
                           f"{ev.key.x_dtype} is not routed (route keys assume BF16 x)")
            continue
        programs.update(ev.programs)
        unknown = sorted({p for (p, _, _) in ev.timing} - set(ev.programs))
        if unknown:
            skipped.append(f"workload H={ev.key.H} w_dtype={ev.key.w_dtype} form={ev.key.form}: timing of "
                           f"{', '.join(unknown)} ignored (no program record: op, family and determinism unknown)")
        for key in route_keys(ev):
            sig = (key.op, key.H, key.w_dtype, key.form, key.mode)
            if sig in seen:
                continue
            seen.add(sig)
            inc = incumbent.windows(*sig) if incumbent is not None else None
            sol = solve_key(ev, key, policy, inc)
            if sol is None:
                skipped.append(f"{key.op} H={key.H} {key.w_dtype} {key.form} {key.mode}: no candidate program timed")
            else:
                keys.append(sol)
    keys.sort(key=lambda k: (k.key.op, k.key.H, k.key.w_dtype, k.key.form, k.key.mode))
    return ArchSolution(arch, policy, keys, evidence_fingerprint(used), programs, skipped)
