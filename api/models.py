"""Pydantic models of the JSON API: the evidence records it accepts and the views it returns.

The record models mirror `cake-evidence/1` (evidence-format.md) for the OpenAPI schema and for
clients; validation of ingested bodies is the store's own parser (`parse_evidence`), the same one
`import` uses, so the service can never accept a file the CLI would refuse or the reverse.
Unknown keys are allowed on records, as the format requires.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Op = Literal["fwd", "bwd"]
Mode = Literal["det", "nondet", "any"]
WDtype = Literal["bf16", "fp32"]
Form = Literal["plain", "residual", "heads_strided", "heads_contiguous"]
TableKind = Literal["runtime", "published", "solved"]

# --- cake-evidence/1 records (documentation of the ingest body; one JSON object per line) -------


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")
    schema_: Literal["cake-evidence/1"] = Field(alias="schema")


class RunRecord(_Record):
    kind: Literal["run"]
    run_id: str
    source: Literal["measured", "published"]
    arch: str
    gpu: str
    sm_count: int
    started: str
    host: str | None = None
    driver: str | None = None
    cuda: str | None = None
    torch: str | None = None
    triton: str | None = None
    package_version: str | None = None
    git_sha: str | None = None
    citation: str | None = None
    note: str | None = None


class ProgramRecord(_Record):
    kind: Literal["program"]
    name: str
    op: Op
    deterministic: bool
    family: str
    runnable: bool
    fingerprint: str
    description: str | None = None


class TimingRecord(_Record):
    kind: Literal["timing"]
    run_id: str
    arch: str
    program: str
    op: Literal["fwd", "bwd", "2xfwd+bwd"]
    H: int
    T: int
    x_dtype: WDtype
    w_dtype: WDtype
    form: Form
    session: str
    round: int
    position: int
    copy_: int = Field(alias="copy", description="0, or 1 for the A/A second copy")
    timer: Literal["cupti", "events"]
    l2: Literal["cold", "warm"]
    samples_us: list[float] | None = None
    median_us: float | None = None
    n: int | None = None
    step_fwd: str | None = Field(None, description="2xfwd+bwd of this package's programs: the forward the step ran "
                                 "(an extra key; steps of different forwards never pool)")


class AccuracyRecord(_Record):
    kind: Literal["accuracy"]
    run_id: str
    arch: str
    program: str
    H: int
    T: int
    x_dtype: WDtype
    w_dtype: WDtype
    form: Form
    family: Literal["gaussian", "same_sign", "outlier_rows"]
    seed: int | None = None
    inputs: int
    dw_err_over_tol_max: float | None
    dw_err_over_tol_median: float | None = None
    dw_rel_l2: float | None = None
    eager_err_over_tol_max: float | None = None
    eager_err_over_tol_median: float | None = None
    dx_err_over_tol_max: float | None = None
    rstd_rel_l2: float | None = None
    rstd_form: Literal["forward", "fp64"] | None = None
    verdict: Literal["pass", "fail"] | None = None
    qualified_by_source: bool | None = None


EVIDENCE_RECORD_SCHEMAS = [RunRecord, ProgramRecord, TimingRecord, AccuracyRecord]

# --- route tables -----------------------------------------------------------------------------


class WindowModel(BaseModel):
    """One window of a route key as the table states it."""

    lo: int
    hi: int | None = Field(description="inclusive upper bound; null: unbounded")
    program: str
    reason: str
    evidence: dict[str, Any] = Field(default_factory=dict, description="the solver's evidence summary")


class RouteKeyModel(BaseModel):
    arch: str
    op: Op
    H: int
    w_dtype: WDtype
    form: Form
    mode: Mode


class TableRef(BaseModel):
    """A table from the service's fixed list (never a user-supplied path)."""

    id: str = Field(description="'<kind>:<arch>', the only way to name a table in a request")
    arch: str
    kind: TableKind
    label: str
    published_figures: bool = Field(description="true: routes between programs this package cannot launch, "
                                                "derived from published figures")
    checksum: str | None = None
    generated_by: str | None = None
    error: str | None = Field(default=None, description="set when the table could not be loaded or solved")


class RouteModel(BaseModel):
    """One route key of a table and its windows (sorted, disjoint, covering [1, inf))."""

    model_config = ConfigDict(extra="allow")
    op: Op
    H: int
    w_dtype: WDtype
    form: Form
    mode: Mode
    windows: list[WindowModel]


class RouteTableDoc(BaseModel):
    """A `cake-routes/1` document (DESIGN.md); keys beyond these are kept."""

    model_config = ConfigDict(extra="allow")
    schema_: Literal["cake-routes/1"] = Field(alias="schema")
    arch: str
    policy: dict[str, Any] = Field(default_factory=dict)
    evidence_fingerprint: str | None = None
    generated_by: str | None = None
    programs: dict[str, Any] | None = None
    routes: list[RouteModel]
    checksum: str


class RouteTableModel(BaseModel):
    ref: TableRef
    document: RouteTableDoc = Field(description="the verified cake-routes/1 document, as stored")


# --- views ------------------------------------------------------------------------------------


class ArchSummary(BaseModel):
    arch: str
    tables: list[TableRef]
    keys: int
    workloads: int
    runs: int
    published_only: bool = Field(description="every run of this arch is a published record")
    gpus: dict[str, int] = Field(default_factory=dict, description="GPU model -> measured runs of this arch; where there "
                                 "are several, evidence is shown for one at a time (?gpu=)")


class KeyStrip(BaseModel):
    key: RouteKeyModel
    windows: list[WindowModel]
    loud: list[str] = Field(default_factory=list, description="reasons that must be loud (no-eligible-program, unverified)")


class ArchView(BaseModel):
    arch: str
    table: TableRef
    keys: list[KeyStrip]
    gpu: str | None = Field(default=None, description="the GPU model a solved table was solved from, when one was named")


class FamilyAccuracyModel(BaseModel):
    family: str
    inputs: int
    worst: float | None
    median: float | None
    eager_worst: float | None
    eager_median: float | None
    source: str
    verdict: str | None = None
    qualified_by_source: bool | None = None
    runs: list[str] = Field(default_factory=list)


class TimingPoint(BaseModel):
    program: str
    T: int
    median_us: float
    spread: float | None
    n: int
    timer: str
    source: str
    run_ids: list[str]
    session_medians: dict[str, float]
    noisy: bool = Field(description="session spread above the policy's limit (marked ~)")


class AccuracyPoint(BaseModel):
    program: str
    T: int
    source: str
    worst: float | None = Field(description="worst dw err/tol over the families present")
    families: list[FamilyAccuracyModel]
    in_budget: bool | None = Field(default=None, description="the policy module's verdict; null when unavailable")
    status: str | None = Field(default=None, description="policy status: in-budget, breach, unqualified, rerun, eager-reference, no-evidence")
    detail: str | None = Field(default=None, description="why, in the policy module's words")


class ProgramView(BaseModel):
    name: str
    op: str
    family: str | None
    deterministic: bool | None
    runnable: bool | None
    fingerprint: str | None
    description: str | None
    eligible_for_mode: bool = Field(description="false: a non-deterministic program under mode det")
    chosen: bool = Field(description="the table routes at least one window to it")


class WindowView(WindowModel):
    index: int
    sampled: list[int] = Field(description="sampled T of this op inside the window")
    inputs_per_family: dict[str, int] = Field(description="fewest inputs per family of the window's program over its "
                                                          "sampled T with measured accuracy")
    accuracy_sources: list[str] = Field(default_factory=list, description="measured and/or published")
    runner_up: str | None = None
    margin_min: float | None = Field(default=None, description="smallest runner-up/chosen latency ratio over sampled T (from the store)")
    margin_max: float | None = None


class WindowEvidence(BaseModel):
    key: RouteKeyModel
    table: TableRef
    window: WindowView
    timing: list[TimingPoint]
    accuracy: list[AccuracyPoint]
    aa_floor: dict[int, float] = Field(description="T -> A/A noise floor")


class KeyView(BaseModel):
    key: RouteKeyModel
    table: TableRef
    windows: list[WindowView]
    programs: list[ProgramView]
    timing: list[TimingPoint]
    accuracy: list[AccuracyPoint]
    aa_floor: dict[int, float]
    has_evidence: bool
    gpu: str | None = Field(default=None, description="the GPU model whose runs the evidence comes from, when one was named")


class DiffRow(BaseModel):
    model_config = ConfigDict(extra="allow")
    T: int
    old_us: float | None = None
    new_us: float | None = None
    ratio: float | None = Field(default=None, description="old latency / new latency (>1: new is faster)")
    old_status: str | None = None
    new_in_budget: bool | None = None


class DiffSegment(BaseModel):
    lo: int
    hi: int | None
    old_program: str | None
    new_program: str | None
    old_reason: str | None = None
    new_reason: str | None
    rows: list[DiffRow] = Field(default_factory=list, description="the store's evidence at each sampled T of the span")
    ratio_min: float | None = None
    ratio_max: float | None = None


class DiffKey(BaseModel):
    key: RouteKeyModel
    change: str = Field(description="the category of the change (as `python -m cake_router diff`)")
    segments: list[DiffSegment]


class DiffSummary(BaseModel):
    op: str
    changed_spans: int
    rows: int
    ratio_min: float | None
    ratio_max: float | None
    rows_slower: int
    rows_no_in_budget_alternative: int


class DiffView(BaseModel):
    old: TableRef
    new: TableRef
    by_reason: dict[str, list[DiffKey]] = Field(description="category (budget breach, eager-reference failure, speed, "
                                                             "neutral re-route, new coverage, removed coverage) -> keys")
    summary: list[DiffSummary]
    unchanged_keys: int
    changed_keys: int


class RunSummary(BaseModel):
    model_config = ConfigDict(extra="allow")
    run_id: str
    source: str | None = None
    arch: str | None = None
    gpu: str | None = None
    started: str | None = None


class SessionSpread(BaseModel):
    workload: str
    program: str
    op: str
    T: int
    session_medians: dict[str, float]
    spread: float | None
    median_us: float | None = None
    n: int | None = None
    noisy: bool


class AAFloor(BaseModel):
    workload: str
    op: str
    T: int
    session: str | None = None
    program: str | None = None
    ratio: float | None = None
    floor: float


class RunAccuracy(BaseModel):
    workload: str
    program: str
    T: int
    family: str
    inputs: int | None
    worst: float | None
    verdict: str | None = None
    records: int | None = None


class RunDetail(BaseModel):
    run: dict[str, Any] = Field(description="the run record and its import provenance")
    summary: dict[str, Any]
    spread: list[SessionSpread] = Field(description="this run's per-session medians and spread per timing point")
    aa_floor: list[AAFloor] = Field(description="this run's A/A pairs: |1 - copy1/copy0| per session")
    accuracy: list[RunAccuracy]


class IngestResult(BaseModel):
    model_config = ConfigDict(extra="allow")
    ok: bool = True
    bytes: int
    records: int
    result: dict[str, Any]


class ErrorDetail(BaseModel):
    detail: Any


class StoreStats(BaseModel):
    model_config = ConfigDict(extra="allow")
    url: str
    stats: dict[str, Any] = Field(description="measurements_db.queries.stats: totals, per arch, program and workload")
