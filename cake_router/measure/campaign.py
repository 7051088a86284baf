"""Campaigns: the work plan, sessions as separate processes (one per GPU with `--gpus`), resume,
sharding, a device-time budget, and the merge into one `cake-evidence/1` file.

A unit of work is one workload (H, form, w_dtype, T). Every session times every unit (sessions
are the independent processes the spread rule compares); accuracy for a unit is measured once,
by session `unit_index % sessions`. Each session appends a unit's records to its own JSONL file
in one write followed by fsync, then notes the unit in its progress file: a killed session loses
at most the unit in flight, and `--resume` truncates a torn last line and skips finished units.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

COARSE_T = (1, 16, 256, 4096, 65536, 1048576)
STANDARD_T = (1, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
STANDARD_H = (512, 1536, 2048, 4096, 5120, 6144, 8192)
GRIDS = {"coarse": COARSE_T, "standard": STANDARD_T}
FORMS = ("plain", "residual", "heads_strided", "heads_contiguous")
OPS = ("fwd", "bwd", "2xfwd+bwd")
# column_task re-reads the whole input per column task: never competitive above this T, and slow to time.
COLUMN_TASK_MAX_T = 65536


@dataclass(frozen=True, order=True)
class Unit:
    H: int
    form: str
    w_dtype: str
    T: int

    @property
    def key(self) -> str:
        return f"{self.form}/H{self.H}/{self.w_dtype}/T{self.T}"


@dataclass
class Plan:
    run_prefix: str
    arch: str
    units: list[Unit]
    programs: list[str]
    peers: list[str]
    ops: list[str]
    sessions: int = 4
    rounds: int = 3
    replays: int = 201
    families: list[str] = field(default_factory=lambda: ["gaussian", "same_sign", "outlier_rows"])
    inputs_per_family: int = 120
    accuracy_max_T: int | None = None  # above it, accuracy uses `large_T_inputs`
    large_T_inputs: int | None = None
    seconds_per_unit: float | None = None  # cap on timing time per unit and session
    deadline: float | None = None  # wall-clock time.time() after which sessions stop cleanly
    # The forward of this package's `2xfwd+bwd` steps: "routed" (the shipped table's forward for the
    # unit's key and T, what a training step runs) or a registered forward program's name.
    fwd_for_step: str = "routed"
    routed_only: bool = False  # each unit measures only the programs the shipped table routes there
    # With `routed_only`: programs measured at every unit besides the routed ones (`--programs routed,NAMES`).
    also: list[str] = field(default_factory=list)
    parallel: bool = False  # sessions on several GPUs at once (accuracy spread over them)
    # Accuracy records only (`--accuracy-only`): qualification on any card of the arch and SM count,
    # whose timings would not describe the route table's card (`measurements_db.aggregates.evidence_runs`).
    accuracy_only: bool = False



def select_programs(registered: list[str], wanted: list[str]) -> list[str]:
    """The programs `--programs` names, in registry order.

    A full program name selects that program only (`bwd.pair.p2x.w8.pf`, not also its split-row
    variant `bwd.pair.p2x.w8.pf.sp`); anything else is a name prefix (`bwd.twosum` selects the
    family). An entry that selects nothing is an error (a typo would otherwise shrink a campaign
    silently).
    """
    exact = {w for w in wanted if w in registered}
    prefixes = [w for w in wanted if w not in exact]
    unmatched = [w for w in prefixes if not any(n.startswith(w) for n in registered)]
    if unmatched:
        raise ValueError(f"{unmatched} match no registered program")
    return [n for n in registered if n in exact or any(n.startswith(w) for w in prefixes)]

def step_forward(fwd_for_step: str, arch: str, H: int, form: str, w_dtype: str, T: int) -> str:
    """The forward a `2xfwd+bwd` step runs beside a backward program (recorded as `step_fwd`).

    "routed" resolves through the shipped table of `arch` as the runtime would (its fallback where
    the table has no window), so the step is the one a user's training step runs.
    """
    if fwd_for_step != "routed":
        return fwd_for_step
    from cake_kernels.routes import dispatch

    return dispatch.route(dispatch.table_for(arch), arch, "fwd", H, w_dtype, form, "det", T, warn=False)


def routed_programs(arch: str, unit: "Unit") -> list[str]:
    """The forward and the deterministic-mode backward the shipped table of `arch` runs at a unit
    (`measure --programs routed`: re-time what ships, e.g. its `2xfwd+bwd` steps)."""
    from cake_kernels.routes import dispatch

    table = dispatch.table_for(arch)
    return [dispatch.route(table, arch, op, unit.H, unit.w_dtype, unit.form, "det", unit.T, warn=False) for op in ("fwd", "bwd")]


def unit_programs(doc: dict, unit: "Unit") -> list[str]:
    """The programs a session measures at `unit` under plan `doc` (a Plan as JSON): all of the plan's
    programs, or with `routed_only` the shipped table's pair there plus the plan's `also` programs."""
    names = doc["programs"]
    if not doc.get("routed_only"):
        return list(names)
    also = doc.get("also", [])
    return [n for n in routed_programs(doc["arch"], unit) if n in names and n not in also] + list(also)


def parse_T(spec: str, next_file: str | None = None) -> list[int]:
    """`coarse`, `standard`, `next` (the solver's cake-next/1 file) or a comma list of integers."""
    if spec in GRIDS:
        return list(GRIDS[spec])
    if spec == "next":
        if not next_file or not Path(next_file).exists():
            raise ValueError("--T next: needs --next-file FILE (written by `solve --next-out FILE`)")
        doc = json.loads(Path(next_file).read_text())
        Ts = sorted({int(t) for item in doc.get("keys", doc.get("items", [])) for t in item.get("T", [])})
        if not Ts:
            raise ValueError(f"--T next: {next_file} lists no T values")
        return Ts
    try:
        Ts = sorted({int(v) for v in spec.split(",") if v.strip()})
    except ValueError:
        raise ValueError(f"--T: {spec!r} is not a grid name (coarse, standard, next) or a comma list of integers") from None
    if not Ts or min(Ts) < 1:
        raise ValueError(f"--T: {spec!r}: token counts must be integers >= 1")
    return Ts


def plan_units(Hs, forms, w_dtypes, Ts, shard: tuple[int, int] = (0, 1)) -> list[Unit]:
    """Units ordered by value: the coarse grid first (so a budget cut keeps the frame), then the
    rest; head forms use H = 256; the residual form is measured at the given H values."""
    units = []
    for form in forms:
        hs = [256] if form.startswith("heads") else list(Hs)
        for H in hs:
            for wd in w_dtypes:
                for T in Ts:
                    units.append(Unit(H, form, wd, T))
    coarse = set(COARSE_T)
    units.sort(key=lambda u: (u.T not in coarse, FORMS.index(u.form), u.H, u.w_dtype, u.T))
    i, n = shard
    return [u for k, u in enumerate(units) if k % n == i]


def parse_shard(spec: str | None) -> tuple[int, int]:
    if not spec:
        return (0, 1)
    try:
        i, n = (int(v) for v in spec.split("/"))
    except ValueError:
        raise ValueError(f"--shard: {spec!r} is not i/n (e.g. 0/4)") from None
    if not (n >= 1 and 0 <= i < n):
        raise ValueError(f"--shard: {spec!r}: need 0 <= i < n")
    return (i, n)


def provenance(run_id: str, arch: str, gpu_name: str, sm_count: int) -> dict:
    import torch
    import triton

    from cake_router import __version__

    try:
        # `-dirty` when tracked files differ from the commit: a copy of a working tree (the device
        # tool's) can carry a .git whose HEAD is older than the code that ran.
        sha = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=7"], capture_output=True, text=True,
                             timeout=5).stdout.strip()
    except Exception:
        sha = ""
    rec = {"schema": "cake-evidence/1", "kind": "run", "run_id": run_id, "source": "measured", "arch": arch,
           "gpu": gpu_name, "sm_count": sm_count,
           "started": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "host": platform.node(), "cuda": torch.version.cuda or "", "torch": torch.__version__,
           "triton": triton.__version__, "package_version": __version__}
    try:
        import pynvml  # noqa: F401  (nvidia-ml-py)

        pynvml.nvmlInit()
        rec["driver"] = pynvml.nvmlSystemGetDriverVersion()
    except Exception:
        pass
    if sha:
        rec["git_sha"] = sha
    return rec


def session_paths(out_dir: Path, session: int) -> tuple[Path, Path]:
    return out_dir / f"session-s{session + 1}.jsonl", out_dir / f"session-s{session + 1}.progress"


def session_files(out_dir: Path) -> list[Path]:
    """The evidence files of every session in `out_dir`, in session order.

    Not a glob of `session-s*.jsonl`: that also matches `session-sN.failures.jsonl`, whose lines are
    not evidence records (a kill-merge in round 10b wrote them into an evidence file).
    """
    found = []
    for path in out_dir.glob("session-s*.jsonl"):
        stem = path.name[len("session-s"):-len(".jsonl")]
        if stem.isdigit():
            found.append((int(stem), path))
    return [path for _, path in sorted(found)]


def read_progress(progress: Path) -> dict[str, int]:
    """unit key -> byte offset of the session file after that unit's records."""
    done = {}
    if progress.exists():
        lines = progress.read_text().split("\n")
        for line in lines[:-1]:  # the part after the last newline is a torn write, if anything
            try:
                key, off = line.rsplit(" ", 1)
                done[key] = int(off)
            except ValueError:
                continue  # a torn last line: that unit is redone
    return done


SESSION_MODULE = "cake_router.measure.session"


def quarantined(path: Path) -> dict[str, set[str]]:
    """unit key -> implementations that raised a CUDA error there in an earlier attempt.

    A CUDA error (an illegal address) is sticky: it ends the process, and the next wave retries the
    unit. Without this, an implementation that always faults there (a peer's bug at a size it does
    not handle, say) would end every retry and the unit would never be measured.
    """
    out: dict[str, set[str]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a torn last line
            if rec.get("quarantine"):
                out.setdefault(rec["unit"], set()).add(rec["impl"])
    return out


def quarantine_count(out_dir: Path, s: int) -> int:
    """Implementations session `s` skips at some unit because they raised a CUDA error there."""
    return sum(len(v) for v in quarantined(out_dir / f"session-s{s + 1}.failures.jsonl").values())


def units_done(out_dir: Path, s: int) -> int:
    return len([k for k in read_progress(session_paths(out_dir, s)[1]) if k != "#header"])


def run_campaign(plan: Plan, out_dir: Path, *, gpus: list[int] | None, resume: bool, log=print,
                 wave_units: int = 4, session_module: str = SESSION_MODULE) -> list[Path]:
    """Runs every session; returns the session files.

    On several GPUs the sessions run in parallel, one per GPU. On one GPU they run in waves: each
    session measures the next `wave_units` units in turn (a fresh process each time, resuming its
    own files), so a budget cut leaves every measured unit with timings from every session rather
    than all units from session 1 and none from the others.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    spec = out_dir / "plan.json"
    spec.write_text(json.dumps({**asdict(plan), "units": [asdict(u) for u in plan.units]}, indent=1))
    if not resume:
        for s in range(plan.sessions):
            for p in session_paths(out_dir, s):
                if p.exists():
                    p.unlink()
    procs = []

    def start(s: int, gpu: int | None):
        env = dict(os.environ)
        if gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = str(gpu)
        cmd = [sys.executable, "-m", session_module, str(spec), str(s)]
        if max_units is not None:
            cmd.append(str(max_units))
        return subprocess.Popen(cmd, env=env)

    max_units: int | None = None

    if gpus and len(gpus) > 1:
        pending = list(range(plan.sessions))
        while pending or procs:
            while pending and len(procs) < len(gpus):
                busy = {g for _, g, _ in procs}
                gpu = next(g for g in gpus if g not in busy)
                s = pending.pop(0)
                procs.append((s, gpu, start(s, gpu)))
                log(f"session s{s + 1} started on GPU {gpu}")
            for item in list(procs):
                s, gpu, p = item
                if p.poll() is not None:
                    procs.remove(item)
                    log(f"session s{s + 1} on GPU {gpu} ended with code {p.returncode}")
            time.sleep(0.5)
    else:
        gpu = gpus[0] if gpus else None
        total = len(plan.units)
        max_units = max(1, wave_units)
        failed: set[int] = set()
        while True:
            progressed = False
            for s in range(plan.sessions):
                if s in failed or units_done(out_dir, s) >= total:
                    continue
                if plan.deadline and time.time() > plan.deadline:
                    log("budget reached: no further waves")
                    break
                before, q_before = units_done(out_dir, s), quarantine_count(out_dir, s)
                rc = start(s, gpu).wait()
                after = units_done(out_dir, s)
                log(f"session s{s + 1}: {after}/{total} units (code {rc})")
                named_culprit = quarantine_count(out_dir, s) > q_before
                if rc != 0 and after == before and not named_culprit:
                    # A session that fails without progress is not retried in a loop; one whose crash
                    # named a culprit is (the retry skips it), at most once per culprit.
                    failed.add(s)
                progressed |= after > before or named_culprit
            else:
                if progressed:
                    continue
            break
    return [session_paths(out_dir, s)[0] for s in range(plan.sessions) if session_paths(out_dir, s)[0].exists()]


def merge(session_files: list[Path], out: Path) -> int:
    """Concatenate session files into one evidence file (runs and programs once each); returns records."""
    seen_programs: set[str] = set()
    n = 0
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w") as f:
        for path in session_files:
            for line in path.read_text().splitlines():
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn last line of a killed session
                if rec.get("kind") == "program":
                    if rec["name"] in seen_programs:
                        continue
                    seen_programs.add(rec["name"])
                f.write(json.dumps(rec, sort_keys=True) + "\n")
                n += 1
    os.replace(tmp, out)
    return n
