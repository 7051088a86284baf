"""Plain-data aggregates of `cake-evidence/1`: the interface between the store and the solver.

The store's query layer (`measurements_db.queries`) and the pure reference aggregator in this
module (`aggregate_records`) both produce these objects; the solver and the dashboard consume
them and never see SQL. Nothing here imports SQLAlchemy, torch or Triton, so the policy and the
solver run (and are tested) without a database or a GPU.

Semantics (ROUTING-POLICY.md sections 3 and 4, made precise where the contract is silent):

* Timing. A timing point is (workload, program, op, T). Its latency is the pooled median of every
  per-replay sample of copy 0 over all sessions, rounds and runs (copy 1 is the A/A second copy and
  only feeds the noise floor). A session is identified by (run_id, session), so sessions of two runs
  never merge. Published records carry `median_us` and no samples: the pooled median is the
  published median (when several published records exist the median of their medians is used) and
  the session spread is unknown (None).
* Spread: (max - min) / min of the per-session medians, None with fewer than two sessions.
* A/A floor of a workload, op and T: the median over every (session, program) that timed both
  copies of |1 - median(copy 1) / median(copy 0)|. None when no A/A pair exists. Not the largest:
  that grows with every round of evidence (one outlier session of dozens sets it), and the floor
  widens the neutral and merge thresholds, so a larger store kept ever slower incumbents.
* Accuracy. Records are first aggregated per (run, program, workload, T, family): inputs add up,
  `worst` is the maximum, `median` is the median over inputs of each input's median (per-input
  records) or the record's own median (an aggregate record; several aggregate records of one run
  combine by maximum, which is conservative). Runs are then combined into a family aggregate:
  inputs are the most that one run evaluated, worst and median are the maxima over runs ("the worse
  run counts"), and the per-run aggregates are kept in `runs` so the eager-reference rule can be
  judged run by run (a program fails it when it fails in any run). Inputs do not add up over runs:
  the harness draws input i of a family from `seed_for(H, T, form, family, i)` with i from 0 in
  every run, so a second run at a point re-evaluates the first run's inputs, and an aggregate record
  does not say which inputs it covered. Adding up counted 30 + 120 re-drawn inputs as 150 (session
  10 found it; no routed window had depended on it).
* Steps. A `2xfwd+bwd` record of one of this package's backward programs names the forward it ran
  (`step_fwd`, from 2026-12-03 on; earlier runs all used `fwd.row.r1.w8` and say nothing). A step's
  forward is part of what was timed, so steps with different forwards never pool: the point keeps
  the records of one forward, those with a named forward before unnamed ones and, among named ones,
  the forward of the latest run (by `started`). `TimingAggregate.step_fwd` says which was kept.
* Measured evidence outranks published evidence: where a (program, workload, T) has any measured
  record of a kind (timing or accuracy), published records of that kind are ignored there.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping

FAMILIES: tuple[str, ...] = ("gaussian", "same_sign", "outlier_rows")
FORMS: tuple[str, ...] = ("plain", "residual", "heads_strided", "heads_contiguous")
W_DTYPES: tuple[str, ...] = ("bf16", "fp32")
TIMING_OPS: tuple[str, ...] = ("fwd", "bwd", "2xfwd+bwd")
ROUTE_OPS: tuple[str, ...] = ("fwd", "bwd")


@dataclass(frozen=True, order=True)
class WorkloadKey:
    """Everything that identifies a workload except T and the op: the solver's unit of work."""

    arch: str
    H: int
    x_dtype: str
    w_dtype: str
    form: str


@dataclass(frozen=True, order=True)
class RouteKey:
    """(arch, op, H, w_dtype, form, mode) as in ROUTING-POLICY.md section 1."""

    arch: str
    op: str
    H: int
    w_dtype: str
    form: str
    mode: str  # "det" or "nondet" for bwd; "any" for fwd

    def as_dict(self) -> dict:
        return {"op": self.op, "H": self.H, "w_dtype": self.w_dtype, "form": self.form, "mode": self.mode}


@dataclass(frozen=True)
class ProgramInfo:
    name: str
    op: str
    family: str
    deterministic: bool
    runnable: bool
    fingerprint: str
    description: str | None = None

    @classmethod
    def of(cls, rec: Mapping) -> "ProgramInfo":
        """From a `program` evidence record or a stored Program row (the same field names)."""
        return cls(name=rec["name"], op=rec["op"], family=rec["family"], deterministic=bool(rec["deterministic"]),
                   runnable=bool(rec["runnable"]), fingerprint=rec["fingerprint"], description=rec.get("description"))


@dataclass(frozen=True)
class TimingAggregate:
    program: str
    op: str  # "fwd", "bwd" or "2xfwd+bwd"
    T: int
    median_us: float  # pooled median (the latency)
    session_medians: Mapping[str, float]  # "run_id/session" -> median of that session's samples
    spread: float | None  # (max - min) / min of session medians; None with < 2 sessions
    n: int  # samples behind the pooled median
    timer: str  # "cupti", "events" or "mixed"
    source: str  # "measured" or "published"
    run_ids: tuple[str, ...]
    step_fwd: str | None = None  # `2xfwd+bwd` only: the forward the step ran, when the records name it


def keep_one_step_forward(recs: list, fwd_of, started_of) -> list:
    """The records of a `2xfwd+bwd` point that timed the forward `pick_step_group` keeps; `fwd_of`
    and `started_of` read a record's `step_fwd` and its run's `started` (both aggregation paths,
    records here and rows in `queries`, call this)."""
    by_fwd: dict[str | None, list[str]] = defaultdict(list)
    for r in recs:
        by_fwd[fwd_of(r)].append(started_of(r))
    keep = pick_step_group(by_fwd)
    return [r for r in recs if fwd_of(r) == keep]


def pick_step_group(groups: Mapping[str | None, Iterable[str]]) -> str | None:
    """The step forward whose records a `2xfwd+bwd` point keeps (see the module docstring).

    `groups` maps each step forward (None: records that name none) to the `started` times of the
    runs that timed it with that forward.
    """
    named = [(max(started), fwd) for fwd, started in groups.items() if fwd is not None]
    if named:
        return max(named)[1]
    return None


@dataclass(frozen=True)
class FamilyAccuracy:
    """One family's accuracy at a point: for one run (inside `runs`) or combined over runs."""

    family: str
    inputs: int
    worst: float | None  # dw err/tol, worst element over all inputs (None: published verdict only)
    median: float | None  # median over inputs of each input's median over dw elements
    eager_worst: float | None
    eager_median: float | None
    source: str  # "measured" or "published"
    verdict: str | None = None  # published: "pass" / "fail" when stated without a number
    qualified_by_source: bool | None = None
    run_id: str | None = None  # set on per-run entries
    runs: tuple["FamilyAccuracy", ...] = ()  # per-run entries on a combined aggregate


@dataclass(frozen=True)
class AccuracyAggregate:
    program: str
    T: int
    families: Mapping[str, FamilyAccuracy]
    source: str  # "measured" or "published"


@dataclass
class WorkloadEvidence:
    """All aggregates of one workload (arch, H, x_dtype, w_dtype, form), every op and T."""

    key: WorkloadKey
    programs: dict[str, ProgramInfo] = field(default_factory=dict)
    # (program, op, T) -> timing
    timing: dict[tuple[str, str, int], TimingAggregate] = field(default_factory=dict)
    # (program, T) -> accuracy (accuracy records carry no op: the program's op applies)
    accuracy: dict[tuple[str, int], AccuracyAggregate] = field(default_factory=dict)
    # (op, T) -> A/A floor
    aa_floor: dict[tuple[str, int], float] = field(default_factory=dict)

    def sampled_T(self, op: str) -> list[int]:
        return sorted({T for (_, o, T) in self.timing if o == op})


class GpuChoiceError(LookupError):
    """No one GPU model's runs of ``arch`` can be read: ``wanted`` measured none of them (``wanted``
    set), or several models did and none was named (``wanted`` None). ``counts``: GPU model ->
    measured runs of the arch that hold timing (`timing_gpus`). Callers word the message for their
    own way of naming a model."""

    def __init__(self, arch: str, counts: Mapping[str, int], wanted: str | None):
        self.arch, self.counts, self.wanted = arch, dict(counts), wanted
        super().__init__(f"{arch}: GPU model {wanted!r} not among {sorted(self.counts)}" if wanted is not None
                         else f"{arch}: measured on {len(self.counts)} GPU models, none named")


def choose_gpu(arch: str, counts: Mapping[str, int], wanted: str | None) -> str | None:
    """The GPU model whose timing runs the evidence of ``arch`` is aggregated from (its accuracy runs:
    `evidence_runs`): ``wanted`` if it timed the arch, else the one model that did, or None (one model
    or none: every run). The route key's arch is shared by cards whose timings differ (sm_90a: H100
    and H200), so timings of several models are never pooled: GpuChoiceError when several timed it
    and none is named, or when ``wanted`` is not one of them. The CLI (`--gpu`) and the service (`?gpu=`) both follow this rule."""
    if wanted is not None:
        if wanted not in counts:
            raise GpuChoiceError(arch, counts, wanted)
        return wanted
    if len(counts) > 1:
        raise GpuChoiceError(arch, counts, None)
    return None


@dataclass(frozen=True)
class RunInfo:
    """What the GPU-model rule reads of a run: its model, its SM count and whether it holds timing."""

    run_id: str
    source: str  # "measured" or "published"
    gpu: str | None
    sm_count: int | None
    timed: bool  # holds at least one timing record


def is_accuracy_only(source: str | None, timed: bool, has_accuracy: bool = True) -> bool:
    """Whether a run is accuracy only (`measure --accuracy-only`): measured, with accuracy records and
    no timing record. Published runs are never called so: their figures are copied, not measured."""
    return source == "measured" and not timed and has_accuracy


def card_label(gpu: str | None, sm_count: int | None, accuracy_only: bool = False) -> str:
    """How `explain` and the dashboard name the card a run measured on, e.g.
    "NVIDIA H100 80GB HBM3, 132 SMs, accuracy only" (an sm_90a point's accuracy may come from several
    cards of its SM count: `evidence_runs`)."""
    return ", ".join([gpu or "unknown GPU"] + ([f"{sm_count} SMs"] if sm_count else [])
                     + (["accuracy only"] if accuracy_only else []))


def timing_gpus(runs: Iterable[RunInfo]) -> dict[str, int]:
    """GPU model -> measured runs that hold timing: the models `choose_gpu` chooses among. A run that
    holds only accuracy (`measure --accuracy-only`) times nothing, so it never makes a choice needed."""
    counts: dict[str, int] = {}
    for r in runs:
        if r.source == "measured" and r.timed:
            counts[r.gpu or ""] = counts.get(r.gpu or "", 0) + 1
    return counts


def evidence_runs(runs: Iterable[RunInfo], gpu: str | None) -> tuple[frozenset[str], frozenset[str]]:
    """(timing runs, accuracy runs): the runs whose timing records and whose accuracy records the
    evidence of one arch is aggregated from, ``gpu`` being `choose_gpu`'s choice.

    Timing: the runs of ``gpu`` (every run when None). Latency is a property of the card: sm_90a's
    H100 and H200 copy 3.0 and 4.2 TB/s.

    Accuracy: the published runs among the timing runs, and every measured run with an SM count that
    the chosen model's measured timing runs have (the timing runs when nothing was timed).
    ROUTING-POLICY keys an accuracy point by arch, not by card, and a program's dw is a function of its compiled code (the arch and its fingerprint) and its launch
    grid, which the runner sizes from the SM count, as the seeded input generator's CUDA kernels size
    theirs; so two cards of one arch and SM count compute the same dw for the same input. Measured:
    201 aggregates (13 programs, 22 workloads) on an H100 80GB HBM3 and an H200 (132 SMs each)
    differ by at most 9e-10 relative in worst err/tol, the rounding of the FP64 reference
    (`scripts/accuracy_across_cards.py`, bench/results/cpu-2026-12-06-session28). A card with
    another SM count (an H100 PCIe has 114) reduces in another order and qualifies nothing here.
    """
    runs = list(runs)
    timing = frozenset(r.run_id for r in runs if gpu is None or r.gpu == gpu)
    sms = {r.sm_count for r in runs if r.run_id in timing and r.source == "measured" and r.timed}
    if not sms:
        return timing, timing  # nothing timed on a card: no SM count to match
    accuracy = frozenset(r.run_id for r in runs
                         if (r.sm_count in sms if r.source == "measured" else r.run_id in timing))
    return timing, accuracy


def median(values: Iterable[float]) -> float:
    """The median used everywhere in the project (mean of the two middle values for even n)."""
    return float(statistics.median(values))


def spread_of(session_medians: Mapping[str, float]) -> float | None:
    vals = list(session_medians.values())
    if len(vals) < 2:
        return None
    lo = min(vals)
    return (max(vals) - lo) / lo if lo > 0 else math.inf


def workload_of(rec: Mapping) -> WorkloadKey:
    return WorkloadKey(rec["arch"], int(rec["H"]), rec["x_dtype"], rec["w_dtype"], rec["form"])


def _max_opt(vals: Iterable[float | None]) -> float | None:
    present = [v for v in vals if v is not None]
    return max(present) if present else None


def combine_runs(family: str, per_run: list[FamilyAccuracy]) -> FamilyAccuracy:
    """Combine one family's per-run aggregates: the worse run counts (see module docstring)."""
    measured = [r for r in per_run if r.source == "measured"]
    runs = measured or per_run
    verdicts = {r.verdict for r in runs if r.verdict}
    verdict = "fail" if "fail" in verdicts else ("pass" if verdicts else None)
    qbs = [r.qualified_by_source for r in runs if r.qualified_by_source is not None]
    return FamilyAccuracy(
        family=family,
        inputs=max(r.inputs for r in runs),  # runs re-draw the same inputs (module docstring)
        worst=_max_opt(r.worst for r in runs),
        median=_max_opt(r.median for r in runs),
        eager_worst=_max_opt(r.eager_worst for r in runs),
        eager_median=_max_opt(r.eager_median for r in runs),
        source="measured" if measured else "published",
        verdict=verdict,
        qualified_by_source=(all(qbs) if qbs else None),
        runs=tuple(sorted(runs, key=lambda r: r.run_id or "")),
    )


def combine_point(program: str, T: int, fams: Mapping[str, list[FamilyAccuracy]]) -> AccuracyAggregate:
    """One (program, workload, T) point from its per-run family aggregates: where any run is
    measured, published runs are dropped (measured outranks published), then runs combine per family."""
    any_measured = any(r.source == "measured" for runs_ in fams.values() for r in runs_)
    combined = {}
    for fam, runs_ in sorted(fams.items()):
        if any_measured:
            runs_ = [r for r in runs_ if r.source == "measured"]
            if not runs_:
                continue
        combined[fam] = combine_runs(fam, runs_)
    return AccuracyAggregate(program=program, T=T, families=combined, source="measured" if any_measured else "published")


def describing(a: ProgramInfo | None, b: ProgramInfo) -> ProgramInfo:
    """Which of two program records of one name describes it: the one with the greater fingerprint.

    Timing and accuracy records name a program by name only, so a name measured under several
    fingerprints pools them; which record then describes the name must not depend on the order
    records were read or imported (DESIGN: same evidence + policy -> byte-identical table), and the
    format gives a program record no time, so the choice is by content alone.
    """
    if a is None:
        return b
    return b if (b.fingerprint, b.description or "", b.op, b.family) > (a.fingerprint, a.description or "", a.op, a.family) else a


def run_infos_by_arch(records: Iterable[Mapping]) -> dict[str, list[RunInfo]]:
    """arch -> `RunInfo` of every `run` record of it among ``records`` (timed: some timing record
    names the run)."""
    records = list(records)
    timed = {r["run_id"] for r in records if r.get("kind") == "timing"}
    out: dict[str, list[RunInfo]] = defaultdict(list)
    for r in records:
        if r.get("kind") == "run":
            out[r["arch"]].append(RunInfo(r["run_id"], r["source"], r.get("gpu"), r.get("sm_count"), r["run_id"] in timed))
    return dict(out)


def aggregate_records(records: Iterable[Mapping], gpus: Mapping[str, str | None] | None = None
                      ) -> dict[WorkloadKey, WorkloadEvidence]:
    """Reference aggregation of already-validated `cake-evidence/1` records (any order).

    ``gpus``: arch -> `choose_gpu`'s choice (None or absent: every model); each arch's timing and
    accuracy records are read from the runs `evidence_runs` gives for it (records naming a run
    with no run record are always read).
    The store's query layer must return objects equal to these for the same evidence; this
    function is also what the solver's unit tests feed synthetic evidence through.
    """
    records = list(records)
    drop_timing: set[str] = set()
    drop_accuracy: set[str] = set()
    for arch, arch_runs in run_infos_by_arch(records).items():
        t_ids, a_ids = evidence_runs(arch_runs, (gpus or {}).get(arch))
        drop_timing |= {r.run_id for r in arch_runs} - t_ids
        drop_accuracy |= {r.run_id for r in arch_runs} - a_ids
    runs: dict[str, Mapping] = {}
    programs: dict[str, ProgramInfo] = {}
    timing_recs: list[Mapping] = []
    acc_recs: list[Mapping] = []
    for rec in records:
        dropped = drop_timing if rec["kind"] == "timing" else drop_accuracy if rec["kind"] == "accuracy" else ()
        if rec.get("run_id") in dropped:
            continue
        kind = rec["kind"]
        if kind == "run":
            runs[rec["run_id"]] = rec
        elif kind == "program":
            info = ProgramInfo.of(rec)
            programs[info.name] = describing(programs.get(info.name), info)
        elif kind == "timing":
            if rec.get("l2", "cold") == "cold":  # latency is timed with L2 flushed (ROUTING-POLICY section 4)
                timing_recs.append(rec)
        elif kind == "accuracy":
            acc_recs.append(rec)

    def source_of(run_id: str) -> str:
        run = runs.get(run_id)
        return run["source"] if run is not None else "measured"

    out: dict[WorkloadKey, WorkloadEvidence] = {}

    def ev(wk: WorkloadKey) -> WorkloadEvidence:
        if wk not in out:
            out[wk] = WorkloadEvidence(key=wk)
        return out[wk]

    # ---- timing -------------------------------------------------------------------------
    # (wk, program, op, T) -> list of records
    tgroups: dict[tuple, list[Mapping]] = defaultdict(list)
    for rec in timing_recs:
        tgroups[(workload_of(rec), rec["program"], rec["op"], int(rec["T"]))].append(rec)
    for key, recs in tgroups.items():
        if key[2] == "2xfwd+bwd":
            tgroups[key] = keep_one_step_forward(recs, lambda r: r.get("step_fwd"),
                                                 lambda r: str(runs.get(r["run_id"], {}).get("started", "")))
    # (wk, op, T) -> (session, program) -> copy -> samples, for the A/A floor
    aa: dict[tuple, dict[tuple, dict[int, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for (wk, prog, op, T), recs in tgroups.items():
        measured = [r for r in recs if source_of(r["run_id"]) == "measured"]
        use = measured or recs
        source = "measured" if measured else "published"
        pooled: list[float] = []
        sessions: dict[str, list[float]] = defaultdict(list)
        published_medians: list[float] = []
        published_n = 0
        timers = set()
        for r in use:
            timers.add(r["timer"])
            samples = r.get("samples_us")
            sess = f'{r["run_id"]}/{r["session"]}'
            if samples is not None:
                aa[(wk, op, T)][(sess, prog)][int(r["copy"])].extend(samples)
                if int(r["copy"]) == 0:
                    pooled.extend(samples)
                    sessions[sess].extend(samples)
            elif int(r["copy"]) == 0:
                published_medians.append(float(r["median_us"]))
                published_n += int(r.get("n") or 0)
        if pooled:
            med, n = median(pooled), len(pooled)
            sm = {s: median(v) for s, v in sorted(sessions.items())}
        elif published_medians:
            med, n = median(published_medians), published_n
            sm = {}
        else:
            continue  # only A/A copies: no latency for this point
        ev(wk).timing[(prog, op, T)] = TimingAggregate(
            program=prog, op=op, T=T, median_us=med, session_medians=sm, spread=spread_of(sm), n=n,
            timer=timers.pop() if len(timers) == 1 else "mixed", source=source,
            run_ids=tuple(sorted({r["run_id"] for r in use})),
            step_fwd=use[0].get("step_fwd") if op == "2xfwd+bwd" else None,
        )
    for (wk, op, T), by_sess in aa.items():
        floors = [abs(1.0 - median(c[1]) / median(c[0])) for c in by_sess.values() if c.get(0) and c.get(1)]
        if floors:
            ev(wk).aa_floor[(op, T)] = median(floors)

    # ---- accuracy -----------------------------------------------------------------------
    # (wk, program, T, family, run_id) -> records
    agroups: dict[tuple, list[Mapping]] = defaultdict(list)
    for rec in acc_recs:
        agroups[(workload_of(rec), rec["program"], int(rec["T"]), rec["family"], rec["run_id"])].append(rec)
    per_point: dict[tuple, dict[str, list[FamilyAccuracy]]] = defaultdict(lambda: defaultdict(list))
    for (wk, prog, T, fam, run_id), recs in agroups.items():
        per_input = [r for r in recs if int(r.get("inputs", 1)) == 1 and r.get("seed") is not None]
        aggs = [r for r in recs if r not in per_input]
        medians = [r.get("dw_err_over_tol_median") for r in per_input if r.get("dw_err_over_tol_median") is not None]
        e_medians = [r.get("eager_err_over_tol_median") for r in per_input if r.get("eager_err_over_tol_median") is not None]
        med_parts = ([median(medians)] if medians else []) + [r.get("dw_err_over_tol_median") for r in aggs]
        emed_parts = ([median(e_medians)] if e_medians else []) + [r.get("eager_err_over_tol_median") for r in aggs]
        verdicts = {r.get("verdict") for r in recs if r.get("verdict")}
        qbs = [bool(r["qualified_by_source"]) for r in recs if r.get("qualified_by_source") is not None]
        per_point[(wk, prog, T)][fam].append(FamilyAccuracy(
            family=fam,
            inputs=sum(int(r.get("inputs", 1)) for r in recs),
            worst=_max_opt(r.get("dw_err_over_tol_max") for r in recs),
            median=_max_opt(med_parts),
            eager_worst=_max_opt(r.get("eager_err_over_tol_max") for r in recs),
            eager_median=_max_opt(emed_parts),
            source=source_of(run_id),
            verdict=("fail" if "fail" in verdicts else ("pass" if verdicts else None)),
            qualified_by_source=(all(qbs) if qbs else None),
            run_id=run_id,
        ))
    for (wk, prog, T), fams in per_point.items():
        ev(wk).accuracy[(prog, T)] = combine_point(prog, T, fams)

    for wk, e in out.items():
        names = {p for (p, _, _) in e.timing} | {p for (p, _) in e.accuracy}
        e.programs = {n: programs[n] for n in sorted(names) if n in programs}
    return out
