"""The rules of ROUTING-POLICY.md as pure functions over `measurements_db.aggregates` objects.

Each function is small enough to read next to the policy paragraph it implements (cited in its
docstring). Nothing here touches a database, a file or a GPU; the solver composes these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

from measurements_db.aggregates import FAMILIES, AccuracyAggregate, FamilyAccuracy, TimingAggregate

from cake_router.policy.config import Policy

# Accuracy statuses, in the order a reader meets them in section 3.
NO_EVIDENCE = "no-evidence"
UNQUALIFIED = "unqualified"
BREACH = "breach"
RERUN = "rerun"
EAGER = "eager-reference"
IN_BUDGET = "in-budget"


@dataclass(frozen=True)
class AccuracyVerdict:
    """The accuracy judgement of one (program, workload, T) point."""

    status: str  # one of the constants above
    qualified: bool
    worst: float | None  # worst dw err/tol over families (inf: a stated published failure)
    inputs_per_family: int | None  # fewest inputs over the three families; None for published
    source: str | None  # "measured", "published" or None without evidence
    detail: str = ""  # why, for explain / next measurements

    @property
    def in_budget(self) -> bool:
        return self.status == IN_BUDGET


# ---- section 3: qualification ---------------------------------------------------------------

def family_qualified(fa: FamilyAccuracy | None, policy: Policy) -> bool:
    """Measured family: at least `min_inputs_per_family` inputs (in one run: runs re-draw the same
    inputs, so they do not add up; `measurements_db.aggregates`)."""
    return fa is not None and fa.source == "measured" and fa.inputs >= policy.min_inputs_per_family and fa.worst is not None


def published_stated(fa: FamilyAccuracy) -> bool:
    """A published family aggregate states an outcome: a number or a pass/fail verdict."""
    return fa.worst is not None or fa.verdict in ("pass", "fail")


def point_qualified(acc: AccuracyAggregate | None, policy: Policy) -> bool:
    """Section 3: measured points need every family qualified; published points count as qualified
    when `trust_published` is on, at least one family states an outcome and no family says the
    source's own qualification was not met (`qualified_by_source: false`).

    Measured outranks published: the aggregates already drop published families of a point that
    has any measured accuracy, so a point is judged wholly by one source.
    """
    if acc is None or not acc.families:
        return False
    if acc.source == "measured":
        return all(family_qualified(acc.families.get(f), policy) for f in FAMILIES)
    fams = list(acc.families.values())
    return (policy.trust_published and any(published_stated(f) for f in fams)
            and not any(f.qualified_by_source is False for f in fams))


def point_worst(acc: AccuracyAggregate | None) -> float | None:
    """Worst dw err/tol over families (the worse run already counts inside each family).

    A published `verdict: fail` without a number is +inf (a stated breach); a stated pass without
    a number contributes nothing (None when nothing else is known).
    """
    if acc is None:
        return None
    vals: list[float] = []
    for fa in acc.families.values():
        if fa.worst is not None:
            vals.append(fa.worst)
        elif fa.verdict == "fail":
            vals.append(math.inf)
    return max(vals) if vals else None


def inputs_per_family(acc: AccuracyAggregate | None) -> int | None:
    """Fewest inputs over the three families (0 when a family is missing); None for published."""
    if acc is None or acc.source != "measured":
        return None
    return min((acc.families[f].inputs if f in acc.families else 0) for f in FAMILIES)


def stated_failure(acc: AccuracyAggregate) -> bool:
    return any(fa.verdict == "fail" for fa in acc.families.values())


# ---- section 2: the eager reference ---------------------------------------------------------

def _floored(v: float | None, floor: float) -> float | None:
    return None if v is None else max(v, floor)


def eager_failures(acc: AccuracyAggregate | None, w_dtype: str, policy: Policy) -> list[str]:
    """Section 2's eager rule, judged in every run (the worse run counts, section 3).

    FP32 weight: the program's worst err/tol over all inputs of a run (every family) must not exceed
    the eager worst over the same inputs. Either dtype: its median must not exceed the eager median.
    Section 2's median is over all inputs, which aggregate records (one per family) cannot give, so
    it is judged family by family, failing where any family fails: stricter than the pooled median
    wherever the two differ. Both sides are floored at `eager_floor` first. A run or family that
    lacks the eager figure (published records, older runs) cannot fail the rule.
    """
    if acc is None:
        return []
    out: list[str] = []
    by_run: dict = {}
    for fam in sorted(acc.families):
        for run in (acc.families[fam].runs or (acc.families[fam],)):
            if run.source == "measured" and run.worst is not None and run.eager_worst is not None:
                pw, ew = by_run.get(run.run_id, (0.0, 0.0))
                by_run[run.run_id] = (max(pw, run.worst), max(ew, run.eager_worst))
    if w_dtype == "fp32":
        for rid, (pw, ew) in sorted(by_run.items(), key=lambda kv: str(kv[0])):
            if _floored(pw, policy.eager_floor) > _floored(ew, policy.eager_floor):
                out.append(f"run {rid or '?'}: worst {pw:.4g} > eager worst {ew:.4g} (over all inputs)")
    for fam in sorted(acc.families):
        fa = acc.families[fam]
        for run in (fa.runs or (fa,)):
            if run.source != "measured":
                continue
            tag = f"{fam} run {run.run_id or '?'}"
            p, e = _floored(run.median, policy.eager_floor), _floored(run.eager_median, policy.eager_floor)
            if p is not None and e is not None and p > e:
                out.append(f"{tag}: median {run.median:.4g} > eager median {run.eager_median:.4g}")
    return out


# ---- section 3: in budget -------------------------------------------------------------------

def judge_accuracy(acc: AccuracyAggregate | None, op: str, w_dtype: str, policy: Policy) -> AccuracyVerdict:
    """In budget at T (section 3): qualified, worst <= 1, the rerun rule, the eager rule.

    Forward programs produce no dw: they are in budget unless qualified accuracy evidence for them
    states a breach (no rerun or eager rule applies to them).
    """
    worst, ipf = point_worst(acc), inputs_per_family(acc)
    src = acc.source if acc is not None else None
    qualified = point_qualified(acc, policy)
    if op == "fwd":
        if qualified and ((worst is not None and worst > 1.0) or stated_failure(acc)):
            return AccuracyVerdict(BREACH, True, worst, ipf, src, f"worst err/tol {worst} > 1")
        return AccuracyVerdict(IN_BUDGET, qualified, worst, ipf, src, "forward: no dw")
    if acc is None or not acc.families:
        return AccuracyVerdict(NO_EVIDENCE, False, None, None, None, "no accuracy evidence")
    if not qualified and acc.source == "measured" and worst is not None and worst > 1.0:
        # The worst is a maximum over inputs: more inputs can only raise it. A measured breach is
        # final at any input count (the harness stops sampling a program at its first breach), so
        # it is reported as one and never listed for requalification.
        return AccuracyVerdict(BREACH, False, worst, ipf, src, f"worst err/tol {worst:.4g} > 1 (after {ipf} inputs per family)")
    if not qualified:
        if acc.source == "measured":
            why = f"fewer than {policy.min_inputs_per_family} inputs in some family (fewest: {ipf})"
        elif not policy.trust_published:
            why = "published evidence and trust_published is off"
        else:
            why = "published evidence states no qualified outcome"
        return AccuracyVerdict(UNQUALIFIED, False, worst, ipf, src, why)
    if stated_failure(acc) or (worst is not None and worst > 1.0):
        return AccuracyVerdict(BREACH, True, worst, ipf, src, f"worst err/tol {worst:.4g} > 1")
    if acc.source == "measured" and worst is not None and worst > policy.rerun_above \
            and (ipf or 0) < policy.rerun_inputs_per_family:
        return AccuracyVerdict(RERUN, True, worst, ipf, src,
                               f"worst err/tol {worst:.4g} > {policy.rerun_above} needs {policy.rerun_inputs_per_family} inputs per family (has {ipf})")
    fails = eager_failures(acc, w_dtype, policy)
    if fails:
        return AccuracyVerdict(EAGER, True, worst, ipf, src, "; ".join(fails))
    return AccuracyVerdict(IN_BUDGET, True, worst, ipf, src, "")


# ---- section 5: eligibility -----------------------------------------------------------------

def mode_allows(mode: str, deterministic: bool) -> bool:
    """det mode takes deterministic programs only; nondet and the forward's `any` take all."""
    return deterministic or mode != "det"


def eligible(verdict: AccuracyVerdict, timing: TimingAggregate | None, mode: str, deterministic: bool) -> bool:
    """Eligible at T: in budget, allowed by the mode, and timed at T (a choice needs a latency).

    Support of the key (H, w_dtype, form) is implied: the program has evidence for this workload.
    """
    return verdict.in_budget and timing is not None and mode_allows(mode, deterministic)


# ---- section 4: timing comparisons ----------------------------------------------------------

def is_noisy(t: TimingAggregate | None, policy: Policy) -> bool:
    """`~`: the per-session medians spread more than `spread_limit` ((max - min) / min)."""
    return t is not None and t.spread is not None and t.spread > policy.spread_limit


def significantly_faster(a: TimingAggregate, b: TimingAggregate, aa_floor: float | None) -> bool:
    """"A is faster than B" (section 4): the pooled ratio B/A exceeds 1 + the A/A floor and every
    session that timed both agrees (its median of A is below its median of B).

    Without an A/A pair the floor is 0; without common sessions (published figures) only the
    pooled ratio is judged.
    """
    if not b.median_us > a.median_us * (1.0 + (aa_floor or 0.0)):
        return False
    common = sorted(set(a.session_medians) & set(b.session_medians))
    return all(a.session_medians[s] < b.session_medians[s] for s in common)


def clear_of_spread(a: TimingAggregate, b: TimingAggregate, aa_floor: float | None, policy: Policy) -> bool:
    """A's slowest session is faster than B's fastest session by more than the spread limit and the
    A/A floor: a win no session-to-session noise can explain, so a `~` (noisy) mark on either side
    does not make it weak. ROUTING-POLICY.md section 4 says a noisy point "cannot by itself move a
    window edge"; read literally, one noisy session of a program 1.5x slower let that program's
    window swallow the winner's (round 6, bwd H 2048 FP32 T 256: 11.55 against 6.91 us, the slower
    program's sessions 10.14-11.62 us). Without per-session medians (published figures): False."""
    if not a.session_medians or not b.session_medians:
        return False
    return min(b.session_medians.values()) > max(a.session_medians.values()) * (1.0 + policy.spread_limit + (aa_floor or 0.0))


def order_by_latency(timings: Mapping[str, TimingAggregate]) -> list[str]:
    """Programs fastest first by pooled median; exact ties by program name (deterministic)."""
    return sorted(timings, key=lambda p: (timings[p].median_us, p))


def within_neutral(lat: float, best: float, aa_floor: float | None, policy: Policy) -> bool:
    """Neutral rule (section 6): `lat` is within max(neutral, A/A floor) of the fastest `best`."""
    return lat <= best * (1.0 + policy.neutral_threshold(aa_floor))


# ---- section 6: cuts ------------------------------------------------------------------------

def snap_down(hi: int, grid: Iterable[int]) -> int:
    """Accuracy cuts above the grid's first value snap down to the largest grid value <= hi."""
    grid = sorted(grid)
    if not grid or hi <= grid[0]:
        return hi
    return max(g for g in grid if g <= hi)


def crossover_hi(t1: int, la1: float, lb1: float, t2: int, la2: float, lb2: float) -> int:
    """Speed cut (section 6): last T of program a's window where a (winner at t1) hands over to b
    (winner at t2). Latencies are interpolated linearly in log T between the two sampled points;
    the crossing T* is rounded down and clamped to [t1, t2 - 1].
    """
    d1, d2 = la1 - lb1, la2 - lb2  # a - b: <= 0 at t1, >= 0 at t2
    if d1 == d2:
        u = 0.5
    else:
        u = min(1.0, max(0.0, d1 / (d1 - d2)))
    x = math.exp(math.log(t1) + u * (math.log(t2) - math.log(t1)))
    # Guard against exp/log round-off turning an exact integer crossing into n - 1e-12.
    hi = math.floor(x + 1e-9)
    return min(max(hi, t1), t2 - 1)


def extends_to_infinity(worst_at_largest: float | None, op: str, has_accuracy: bool, policy: Policy) -> bool:
    """Above the largest sampled T the last window extends only with worst err/tol <= extend_headroom.

    A forward program has no dw to drift: it extends unless a stated worst err/tol for it exceeds
    the headroom (no number, or no accuracy evidence at all, is no objection).
    """
    if op == "fwd" and (not has_accuracy or worst_at_largest is None):
        return True
    return worst_at_largest is not None and worst_at_largest <= policy.extend_headroom


def merge_allowed(advantages: Iterable[float], thresholds: Iterable[float]) -> bool:
    """Merge rule: a window's program beats a neighbour's by less than the neutral threshold at
    every sampled point (`advantages` are neighbour latency / window latency - 1, point by point)."""
    pairs = list(zip(advantages, thresholds))
    return bool(pairs) and all(a < th for a, th in pairs)


def accuracy_rank(worst: float | None, latency: float | None, name: str) -> tuple:
    """Order for "the most accurate program": smallest worst err/tol, then fastest, then name."""
    return (math.inf if worst is None else worst, math.inf if latency is None else latency, name)
