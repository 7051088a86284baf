"""Published evidence: FlashInfer's Cake RMSNorm-train pull requests as `cake-evidence/1`.

FlashInfer's public pull requests #8827, #8848, #8849 and #8899 on the `cake_rmsnorm_train` op
print timing tables on B200 (`sm_100a`), GB300 (`sm_103a`) and R200 (`sm_107a`) with stated
accuracy outcomes. `measurements_db/data/flashinfer-published-rows.csv` holds those rows (its
README, `flashinfer-published.README.md`, defines every column and marker). This module turns them
into evidence with `source: published` and answers the question the pull requests' summary tables
answer, from evidence records rather than from the CSV, so the store can be checked against them.

Both functions are pure: `published_rows_to_evidence` reads one CSV file and returns records;
`published_summary` reads records and returns summary rows. Nothing here imports the store.

How a CSV row maps to evidence (docs/published.md has the full story):

* One `run` per (pull request, GPU), citing the pull request's table. The README gives only the
  month the pull requests merged (November 2026), so every run's `started` is the fixed date
  `PUBLISHED_STARTED` (the first of that month) and the run's `note` says so.
* Programs, all `runnable: false`: `flashinfer.det` (FlashInfer's `deterministic=True` program, the
  same program in every pull request), one `flashinfer.pr<N>.new` per pull request (its
  `deterministic=False` program), `flashinfer.main.before_pr<N>` (main's program before that pull
  request: main before #8848 is not main before #8899, so each pull request gets its own), and one
  `peer.*` program per SOTA candidate name (`PEER_PROGRAMS`).
* Timing: one record per (row, program) with `median_us`, session `pooled`, `n` = 4 sessions x 201
  replays, CUPTI timer, cold L2. Extra keys keep what the published tables print: `source_pr`,
  `markers`, `published_role` on every timing record; the printed ratios and their flags on the
  `new` program's record; `sota_name` and `sota_err_over_tol` on the SOTA candidate's record.
* Accuracy: published aggregates (`inputs: 0`, `qualified_by_source: true`) per program, workload
  and input family. The pull requests state one outcome per row, not per family, so the same
  stated outcome is recorded under each of the three families. det and new programs: `pass` at
  every row (the README says the pull requests state it for all rows). SOTA candidates named on
  `bwd` or `2xfwd+bwd` rows (accuracy is about dw, which only the backward produces): `pass`, or
  `fail` with `dw_err_over_tol_max` = the printed worst err/tol where `sota_err_over_tol` is given.
  main's programs get no accuracy record: the README states no outcome for them.
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping

SCHEMA = "cake-evidence/1"

#: The README states only the month the pull requests merged; this fixed date stands for it.
PUBLISHED_STARTED = "2026-11-01T00:00:00Z"
STARTED_NOTE = (
    "figures published in FlashInfer pull requests merged November 2026 (month only); "
    "started is fixed at the first of that month"
)

#: README: 4 sessions (one per GPU), 201 replays per implementation and op each, medians pooled.
PUBLISHED_SESSIONS = 4
PUBLISHED_REPLAYS_PER_SESSION = 201
PUBLISHED_N = PUBLISHED_SESSIONS * PUBLISHED_REPLAYS_PER_SESSION

#: Accuracy records are about dw; the stated outcome is recorded under every input family.
ACCURACY_FAMILIES: tuple[str, ...] = ("gaussian", "same_sign", "outlier_rows")

#: GPU label in the CSV -> (arch, marketing name used as the run's `gpu`).
GPUS: dict[str, tuple[str, str]] = {
    "B200": ("sm_100a", "NVIDIA B200"),
    "GB300": ("sm_103a", "NVIDIA GB300"),
    "R200": ("sm_107a", "NVIDIA R200"),
}

PULL_REQUESTS: tuple[int, ...] = (8827, 8848, 8849, 8899)
REPOSITORY = "flashinfer-ai/flashinfer"

DET_PROGRAM = "flashinfer.det"


@dataclass(frozen=True)
class PeerProgram:
    name: str
    fingerprint: str
    description: str


#: SOTA candidate names printed in the tables -> stable peer program names (README, "sota_name").
PEER_PROGRAMS: dict[str, PeerProgram] = {
    "TC": PeerProgram(
        "peer.torch_compile.max_autotune", "torch.compile(mode=max-autotune-no-cudagraphs)",
        "torch.compile of the eager RMSNorm-train, mode max-autotune-no-cudagraphs",
    ),
    "TCd": PeerProgram(
        "peer.torch_compile.default", "torch.compile(mode=default)",
        "torch.compile of the eager RMSNorm-train, default mode",
    ),
    "Q": PeerProgram(
        "peer.quack.heuristic", "quack-kernels==0.6.5;config=heuristic",
        "QuACK 0.6.5 RMSNorm, heuristic config",
    ),
    "QA": PeerProgram(
        "peer.quack.tuned", "quack-kernels==0.6.5;config=tuned",
        "QuACK 0.6.5 RMSNorm, tuned config",
    ),
    "QA+add": PeerProgram(
        "peer.quack.tuned_after_torch_add", "torch.add+quack-kernels==0.6.5;config=tuned",
        "residual form: a torch add, then QuACK 0.6.5 RMSNorm with the tuned config",
    ),
    "Liger": PeerProgram(
        "peer.liger", "liger-kernel==0.8.5",
        "Liger-Kernel 0.8.5 RMSNorm",
    ),
}

FORMS = {"plain": "plain", "res": "residual"}
DTYPES = {"BF16": "bf16", "FP32": "fp32"}
OPS = ("fwd", "bwd", "2xfwd+bwd")
#: Markers the README defines (printed in brackets, stored without them).
MARKERS = ("fix", "twin", "route", "edge", "cell", "neutral", "kept", "cut", "carried", "rerun")
DET_NEW_FLAGS = ("~", "+", "-")
SOTA_NEW_FLAGS = ("~", "!", "+", "-")
NEW_PROGRAM_KINDS = ("kb", "det")

COLUMNS: tuple[str, ...] = (
    "gpu", "arch", "T", "H", "x_dtype", "w_dtype", "form", "markers", "op", "det_us", "sota_us",
    "sota_name", "sota_err_over_tol", "fi_main_us", "new_us", "source_pr", "sms", "det_new",
    "det_new_flag", "sota_new", "sota_new_flag", "sota_bang", "fi_main_new", "fi_main_new_raw",
    "program", "run",
)

# Order of record kinds in the output: provenance first, so a streaming reader meets a run and a
# program before the records that name them.
_KIND_ORDER = {"run": 0, "program": 1, "timing": 2, "accuracy": 3}


class PublishedDataError(ValueError):
    """The published CSV cannot be converted: names the file, line, column and what is accepted."""


def new_program(pr: int) -> str:
    """The pull request's `deterministic=False` program."""
    return f"flashinfer.pr{pr}.new"


def main_program(pr: int) -> str:
    """FlashInfer main's program as it was before pull request `pr` merged."""
    return f"flashinfer.main.before_pr{pr}"


def run_id_of(pr: int, gpu: str) -> str:
    return f"flashinfer-pr{pr}-{gpu.lower()}"


def citation_of(pr: int, gpu: str) -> str:
    return f"{REPOSITORY} pull request {pr}, {gpu} table"


# ---------------------------------------------------------------------------------------------
# Reading and validating the CSV
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishedRow:
    """One validated CSV row (one workload and op of one pull request's table)."""

    line: int
    gpu: str
    arch: str
    sms: int
    T: int
    H: int
    x_dtype: str
    w_dtype: str
    form: str
    op: str
    markers: tuple[str, ...]
    source_pr: int
    det_us: float
    new_us: float
    sota_us: float
    sota_name: str
    sota_err_over_tol: float | None
    fi_main_us: float | None
    det_new: str  # printed ratios stay text: "1.00" and "1.0" are different printings
    det_new_flag: str | None
    sota_new: str | None
    sota_new_flag: str | None
    sota_bang: bool
    fi_main_new: str | None
    fi_main_new_raw: str | None
    new_program_kind: str | None
    source_run: str | None

    @property
    def workload(self) -> dict:
        return {"H": self.H, "T": self.T, "x_dtype": self.x_dtype, "w_dtype": self.w_dtype, "form": self.form}


class _RowReader:
    def __init__(self, path: str, line: int, raw: Mapping[str, str]):
        self.path, self.line, self.raw = path, line, raw

    def fail(self, column: str, accepted: str) -> PublishedDataError:
        return PublishedDataError(
            f"{self.path}:{self.line}: column {column!r} has {self.raw.get(column)!r}; accepted: {accepted}"
        )

    def text(self, column: str) -> str:
        return (self.raw.get(column) or "").strip()

    def choice(self, column: str, choices: Iterable[str], optional: bool = False) -> str | None:
        value = self.text(column)
        choices = tuple(choices)
        if value == "" and optional:
            return None
        if value not in choices:
            raise self.fail(column, ", ".join(choices) + (" or empty" if optional else ""))
        return value

    def integer(self, column: str, minimum: int = 1) -> int:
        value = self.text(column)
        try:
            out = int(value)
        except ValueError:
            raise self.fail(column, f"an integer >= {minimum}") from None
        if out < minimum:
            raise self.fail(column, f"an integer >= {minimum}")
        return out

    def positive(self, column: str, optional: bool = False) -> float | None:
        value = self.text(column)
        if value == "" and optional:
            return None
        try:
            out = float(value)
        except ValueError:
            out = float("nan")
        if not (out > 0 and out != float("inf")):
            raise self.fail(column, "a positive finite number" + (" or empty" if optional else ""))
        return out

    def ratio(self, column: str, optional: bool = False) -> str | None:
        """A printed ratio, validated as a positive number but kept as printed."""
        if self.positive(column, optional) is None:
            return None
        return self.text(column)

    def markers(self) -> tuple[str, ...]:
        value = self.text("markers")
        out = []
        for token in value.split():
            name = token[1:-1] if token.startswith("[") and token.endswith("]") else None
            if name not in MARKERS:
                raise self.fail("markers", "space-separated " + " ".join(f"[{m}]" for m in MARKERS))
            out.append(name)
        return tuple(out)


def read_published_rows(csv_path: str | os.PathLike) -> list[PublishedRow]:
    """Read and validate the published CSV; raise `PublishedDataError` on the first bad cell."""
    path = os.fspath(csv_path)
    try:
        handle = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise PublishedDataError(f"{path}: cannot read the published rows ({exc.strerror})") from None
    with handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            raise PublishedDataError(
                f"{path}:1: missing column(s) {', '.join(missing)}; the header must hold {', '.join(COLUMNS)}"
            )
        rows = [_parse_row(path, reader.line_num, raw) for raw in reader]
    if not rows:
        raise PublishedDataError(f"{path}: no data rows below the header")
    _check_consistency(path, rows)
    return rows


def _parse_row(path: str, line: int, raw: Mapping[str, str]) -> PublishedRow:
    r = _RowReader(path, line, raw)
    gpu = r.choice("gpu", GPUS)
    arch = r.choice("arch", [GPUS[gpu][0]])
    pr = r.integer("source_pr")
    if pr not in PULL_REQUESTS:
        raise r.fail("source_pr", ", ".join(map(str, PULL_REQUESTS)))
    sota_name = r.choice("sota_name", PEER_PROGRAMS)
    err = r.positive("sota_err_over_tol", optional=True)
    bang = r.choice("sota_bang", ["1"], optional=True) == "1"
    if bang != (err is not None):
        raise r.fail("sota_bang", "1 exactly where sota_err_over_tol is given (the `!` rows), else empty")
    op = r.choice("op", OPS)
    if op == "fwd" and err is not None:
        raise r.fail("sota_err_over_tol", "empty on fwd rows (the dw budget concerns the backward)")
    fi_main_us = r.positive("fi_main_us", optional=True)
    fi_main_new = r.ratio("fi_main_new", optional=True)
    if (fi_main_us is None) != (fi_main_new is None):
        raise r.fail("fi_main_new", "a ratio exactly where fi_main_us is given")
    return PublishedRow(
        line=line, gpu=gpu, arch=arch, sms=r.integer("sms"), T=r.integer("T"), H=r.integer("H"),
        x_dtype=DTYPES[r.choice("x_dtype", ["BF16"])], w_dtype=DTYPES[r.choice("w_dtype", DTYPES)],
        form=FORMS[r.choice("form", FORMS)], op=op, markers=r.markers(), source_pr=pr,
        det_us=r.positive("det_us"), new_us=r.positive("new_us"), sota_us=r.positive("sota_us"),
        sota_name=sota_name, sota_err_over_tol=err, fi_main_us=fi_main_us,
        det_new=r.ratio("det_new"), det_new_flag=r.choice("det_new_flag", DET_NEW_FLAGS, optional=True),
        # The `!` rows may print no SOTA/new ratio at all (R200 #8827 T 131072 H 4096 does not).
        sota_new=r.ratio("sota_new", optional=err is not None),
        sota_new_flag=r.choice("sota_new_flag", SOTA_NEW_FLAGS, optional=True), sota_bang=bang,
        fi_main_new=fi_main_new, fi_main_new_raw=r.ratio("fi_main_new_raw", optional=True),
        new_program_kind=r.choice("program", NEW_PROGRAM_KINDS, optional=True),
        source_run=r.text("run") or None,
    )


def _check_consistency(path: str, rows: list[PublishedRow]) -> None:
    """One SM count per GPU, one row per (pull request, GPU, workload, op), one dw statement per
    candidate and workload."""
    sms: dict[str, PublishedRow] = {}
    seen: dict[tuple, PublishedRow] = {}
    stated: dict[tuple, PublishedRow] = {}
    for row in rows:
        first = sms.setdefault(row.gpu, row)
        if first.sms != row.sms:
            raise PublishedDataError(
                f"{path}:{row.line}: column 'sms' has {row.sms} for {row.gpu}, but line {first.line} has "
                f"{first.sms}; accepted: one SM count per GPU"
            )
        key = (row.source_pr, row.gpu, row.op, *row.workload.values())
        if key in seen:
            raise PublishedDataError(
                f"{path}:{row.line}: duplicate of line {seen[key].line} (pull request {row.source_pr}, "
                f"{row.gpu}, {row.op}, T {row.T}, H {row.H}, {row.w_dtype}, {row.form}); accepted: one row each"
            )
        seen[key] = row
        if row.op != "fwd":
            # the bwd and 2xfwd+bwd rows of a workload must not state two dw outcomes for one candidate
            skey = (row.source_pr, row.gpu, row.sota_name, *row.workload.values())
            other = stated.setdefault(skey, row)
            if other.sota_err_over_tol != row.sota_err_over_tol:
                raise PublishedDataError(
                    f"{path}:{row.line}: column 'sota_err_over_tol' has {row.sota_err_over_tol} for {row.sota_name}, "
                    f"but line {other.line} states {other.sota_err_over_tol} for it at the same workload; "
                    "accepted: one stated dw outcome per candidate and workload"
                )


# ---------------------------------------------------------------------------------------------
# Conversion
# ---------------------------------------------------------------------------------------------


def _program_records(rows: list[PublishedRow]) -> list[dict]:
    out = [{
        "schema": SCHEMA, "kind": "program", "name": DET_PROGRAM, "op": "bwd", "deterministic": True,
        "family": "flashinfer", "runnable": False, "fingerprint": f"{REPOSITORY}:cake_rmsnorm_train:deterministic=True",
        "description": "FlashInfer cake_rmsnorm_train with deterministic=True (published figures; not launchable here)",
    }]
    prs = sorted({r.source_pr for r in rows})
    for pr in prs:
        out.append({
            "schema": SCHEMA, "kind": "program", "name": new_program(pr), "op": "bwd", "deterministic": False,
            "family": "flashinfer", "runnable": False,
            "fingerprint": f"{REPOSITORY}#{pr}:cake_rmsnorm_train:deterministic=False",
            "description": f"FlashInfer cake_rmsnorm_train with deterministic=False as of pull request {pr} "
                           "(published figures; not launchable here)",
            "source_pr": pr,
        })
    for pr in sorted({r.source_pr for r in rows if r.fi_main_us is not None}):
        out.append({
            "schema": SCHEMA, "kind": "program", "name": main_program(pr), "op": "bwd", "deterministic": False,
            "family": "flashinfer", "runnable": False,
            "fingerprint": f"{REPOSITORY}@main-before-#{pr}:cake_rmsnorm_train:deterministic=False",
            "description": f"FlashInfer main's cake_rmsnorm_train program before pull request {pr} "
                           "(published figures; not launchable here)",
            "source_pr": pr,
        })
    for label in sorted({r.sota_name for r in rows}):
        peer = PEER_PROGRAMS[label]
        # Recorded deterministic, as the shared evidence sample records QuACK: these peers reduce dw
        # partials in a fixed order. Routes never use peers, so this only labels them.
        out.append({
            "schema": SCHEMA, "kind": "program", "name": peer.name, "op": "bwd", "deterministic": True,
            "family": "peer", "runnable": False, "fingerprint": peer.fingerprint,
            "description": peer.description + " (published figures)", "sota_name": label,
        })
    return out


def _timing(row: PublishedRow, run_id: str, program: str, median_us: float, role: str, **extra) -> dict:
    rec = {
        "schema": SCHEMA, "kind": "timing", "run_id": run_id, "arch": row.arch, "program": program,
        "op": row.op, **row.workload, "session": "pooled", "round": 0, "position": 0, "copy": 0,
        "timer": "cupti", "l2": "cold", "median_us": median_us, "n": PUBLISHED_N,
        # extra keys: what the published table prints about this row
        "source_pr": row.source_pr, "markers": list(row.markers), "published_role": role,
    }
    rec.update({k: v for k, v in extra.items() if v is not None})
    return rec


def _accuracy(row: PublishedRow, run_id: str, program: str, family: str, verdict: str,
              err: float | None, **extra) -> dict:
    rec = {
        "schema": SCHEMA, "kind": "accuracy", "run_id": run_id, "arch": row.arch, "program": program,
        **row.workload, "family": family, "inputs": 0, "dw_err_over_tol_max": err,
        "verdict": verdict, "qualified_by_source": True, "source_pr": row.source_pr,
    }
    rec.update({k: v for k, v in extra.items() if v is not None})
    return rec


def _sort_key(rec: Mapping) -> tuple:
    kind = rec["kind"]
    if kind == "run":
        ident: tuple = (rec["run_id"],)
    elif kind == "program":
        ident = (rec["name"],)
    else:
        ident = (rec["run_id"], rec["arch"], rec["H"], rec["x_dtype"], rec["w_dtype"], rec["form"],
                 rec["T"], rec["program"], OPS.index(rec["op"]) if "op" in rec else 0, rec.get("family", ""))
    return (_KIND_ORDER[kind], ident)


def _accuracy_records(rows: list[PublishedRow]) -> list[dict]:
    """Stated dw outcomes per (run, program, workload), each recorded under every input family."""
    # (run_id, program, workload) -> (row, verdict, err/tol, extra keys); a candidate named on both
    # the bwd and the 2xfwd+bwd row of a workload is one statement (`sota_ops` lists the rows).
    stated: dict[tuple, tuple[PublishedRow, str, float | None, dict]] = {}
    for row in rows:
        run_id = run_id_of(row.source_pr, row.gpu)
        wl = tuple(row.workload.values())
        for program in (DET_PROGRAM, new_program(row.source_pr)):
            stated[(run_id, program, wl)] = (row, "pass", None, {})
        if row.op == "fwd":
            continue  # dw exists only in the backward: fwd rows' candidates state nothing about it
        key = (run_id, PEER_PROGRAMS[row.sota_name].name, wl)
        ops = stated[key][3]["sota_ops"] if key in stated else []
        extra = {"sota_name": row.sota_name, "sota_ops": sorted({*ops, row.op}, key=OPS.index),
                 "judged_on": "worst of 5 seeds"}
        if row.sota_err_over_tol is None:
            stated[key] = (row, "pass", None, extra)
        else:
            stated[key] = (row, "fail", row.sota_err_over_tol, extra)
    return [
        _accuracy(row, run_id, program, family, verdict, err, **extra)
        for (run_id, program, _), (row, verdict, err, extra) in stated.items()
        for family in ACCURACY_FAMILIES
    ]


def rows_to_evidence(rows: list[PublishedRow]) -> list[dict]:
    """Convert validated rows to `cake-evidence/1` records (sorted, deterministic)."""
    records: list[dict] = []
    for pr, gpu in sorted({(r.source_pr, r.gpu) for r in rows}):
        first = next(r for r in rows if r.source_pr == pr and r.gpu == gpu)
        records.append({
            "schema": SCHEMA, "kind": "run", "run_id": run_id_of(pr, gpu), "source": "published",
            "arch": first.arch, "gpu": GPUS[gpu][1], "sm_count": first.sms, "started": PUBLISHED_STARTED,
            "citation": citation_of(pr, gpu), "note": STARTED_NOTE, "source_pr": pr,
        })
    records.extend(_program_records(rows))

    for row in rows:
        run_id = run_id_of(row.source_pr, row.gpu)
        records.append(_timing(row, run_id, DET_PROGRAM, row.det_us, "det"))
        records.append(_timing(
            row, run_id, new_program(row.source_pr), row.new_us, "new",
            det_new=row.det_new, det_new_flag=row.det_new_flag, sota_new=row.sota_new,
            sota_new_flag=row.sota_new_flag, sota_bang=row.sota_bang or None, fi_main_new=row.fi_main_new,
            fi_main_new_raw=row.fi_main_new_raw, new_program_kind=row.new_program_kind,
            source_run=row.source_run,
        ))
        if row.fi_main_us is not None:
            records.append(_timing(row, run_id, main_program(row.source_pr), row.fi_main_us, "fi_main"))
        records.append(_timing(
            row, run_id, PEER_PROGRAMS[row.sota_name].name, row.sota_us, "sota", sota_name=row.sota_name,
            sota_err_over_tol=row.sota_err_over_tol,
        ))
    records.extend(_accuracy_records(rows))
    records.sort(key=_sort_key)
    return records


def published_rows_to_evidence(csv_path: str | os.PathLike) -> list[dict]:
    """Read the published CSV and return its `cake-evidence/1` records (sorted, deterministic).

    Raises `PublishedDataError` naming the file, line and column of the first bad cell.
    """
    return rows_to_evidence(read_published_rows(csv_path))


# ---------------------------------------------------------------------------------------------
# The published summary tables, recomputed from evidence records
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishedSummary:
    """One line of a pull request's summary table: one GPU and op.

    Ratio figures use the printed ratios (`det_new`, `sota_new` extra keys), as the published tables
    do; the `*_unrounded` counts recompute them from the timing medians as a cross-check.
    Rows marked `[kept]` (the pull request kept main's program; reference only) are left out.
    """

    pr: int
    gpu: str
    arch: str
    op: str
    rows: int
    det_new_min: float
    det_new_max: float
    det_new_below_1: int
    sota_new_min: float | None  # over rows with an in-budget SOTA (no `!`)
    sota_new_max: float | None
    sota_new_below_1: int
    sota_in_budget: int  # the "of n"
    bang_rows: int  # `!`: no candidate met the dw budget
    kept_rows: int  # left out of `rows`
    det_new_below_1_unrounded: int
    sota_new_below_1_unrounded: int
    ratio_digits: int  # decimals the pull request prints its ratios with

    def as_dict(self) -> dict:
        return asdict(self)

    def det_new_range(self) -> str:
        return f"{self.det_new_min:.{self.ratio_digits}f}x-{self.det_new_max:.{self.ratio_digits}f}x"

    def sota_new_range(self) -> str:
        if self.sota_new_min is None:
            return "-"
        return f"{self.sota_new_min:.{self.ratio_digits}f}x-{self.sota_new_max:.{self.ratio_digits}f}x"


def published_summary(records: Iterable[Mapping], pr: int | None = None) -> list[PublishedSummary]:
    """Summary table lines per (pull request, GPU, op) from published evidence records.

    Uses the `run` records (GPU, source), the `new` program's timing records (printed ratios and
    markers kept by the converter), and the timing records of det and of the SOTA candidate at the
    same row (medians, `sota_err_over_tol`). `pr` restricts to one pull request.
    """
    runs: dict[str, Mapping] = {}
    by_row: dict[tuple, dict[str, Mapping]] = defaultdict(dict)
    for rec in records:
        if rec.get("kind") == "run" and rec.get("source") == "published":
            runs[rec["run_id"]] = rec
        elif rec.get("kind") == "timing" and rec.get("published_role"):
            row_key = (rec["run_id"], rec["op"], rec["H"], rec["T"], rec["x_dtype"], rec["w_dtype"], rec["form"])
            by_row[row_key][rec["published_role"]] = rec

    groups: dict[tuple, list[dict[str, Mapping]]] = defaultdict(list)
    for row_key, roles in by_row.items():
        new = roles.get("new")
        run = runs.get(row_key[0])
        if new is None or run is None:
            continue
        if pr is not None and int(new["source_pr"]) != pr:
            continue
        gpu = _gpu_label(run)
        groups[(int(new["source_pr"]), gpu, run["arch"], new["op"])].append(roles)

    out = []
    for (pr_, gpu, arch, op), rows in groups.items():
        kept = [r for r in rows if "kept" in r["new"].get("markers", ())]
        rows = [r for r in rows if "kept" not in r["new"].get("markers", ())]
        if not rows:
            continue
        det_new = [float(r["new"]["det_new"]) for r in rows]
        in_budget = [r for r in rows if r["sota"].get("sota_err_over_tol") is None]
        sota_new = [float(r["new"]["sota_new"]) for r in in_budget]
        digits = max(len(str(r["new"]["det_new"]).partition(".")[2]) for r in rows)
        out.append(PublishedSummary(
            pr=pr_, gpu=gpu, arch=arch, op=op, rows=len(rows),
            det_new_min=min(det_new), det_new_max=max(det_new), det_new_below_1=sum(v < 1 for v in det_new),
            sota_new_min=min(sota_new) if sota_new else None, sota_new_max=max(sota_new) if sota_new else None,
            sota_new_below_1=sum(v < 1 for v in sota_new), sota_in_budget=len(in_budget),
            bang_rows=len(rows) - len(in_budget), kept_rows=len(kept),
            det_new_below_1_unrounded=sum(r["det"]["median_us"] < r["new"]["median_us"] for r in rows),
            sota_new_below_1_unrounded=sum(r["sota"]["median_us"] < r["new"]["median_us"] for r in in_budget),
            ratio_digits=digits,
        ))
    gpu_order = list(GPUS)
    out.sort(key=lambda s: (s.pr, gpu_order.index(s.gpu) if s.gpu in gpu_order else 99, s.gpu, OPS.index(s.op)))
    return out


def _gpu_label(run: Mapping) -> str:
    """The CSV's GPU label of a run ("NVIDIA B200" -> "B200")."""
    for label, (_, name) in GPUS.items():
        if run.get("gpu") == name:
            return label
    return str(run.get("gpu"))
