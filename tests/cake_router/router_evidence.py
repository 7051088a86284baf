"""Build small synthetic `cake-evidence/1` record sets for the solver's tests.

Records go through `measurements_db.aggregates.aggregate_records`, exactly like real evidence.
"""

from __future__ import annotations

from measurements_db.aggregates import FAMILIES, WorkloadEvidence, WorkloadKey, aggregate_records

S = "cake-evidence/1"


class Evidence:
    def __init__(self, arch: str = "sm_90a", H: int = 4096, w_dtype: str = "fp32", form: str = "plain"):
        self.arch, self.H, self.w_dtype, self.form = arch, H, w_dtype, form
        self.records: list[dict] = []
        self._runs: set[str] = set()
        self.run("r1")

    def run(self, run_id: str, source: str = "measured", gpu: str = "NVIDIA H200", sm_count: int = 132) -> "Evidence":
        if run_id not in self._runs:
            self._runs.add(run_id)
            self.records.append({"schema": S, "kind": "run", "run_id": run_id, "source": source, "arch": self.arch,
                                 "gpu": gpu, "sm_count": sm_count, "started": "2026-12-02T10:00:00Z"})
        return self

    def program(self, name: str, op: str = "bwd", det: bool = True, family: str = "pair", runnable: bool = True) -> "Evidence":
        self.records.append({"schema": S, "kind": "program", "name": name, "op": op, "deterministic": det,
                             "family": family, "runnable": runnable, "fingerprint": "sha256:" + name})
        return self

    def _wl(self) -> dict:
        return {"arch": self.arch, "H": self.H, "x_dtype": "bf16", "w_dtype": self.w_dtype, "form": self.form}

    def timing(self, program: str, T: int, us: float, op: str = "bwd", sessions: int = 4, spread: float = 0.0,
               run: str = "r1", copy: int = 0, session_factors: list[float] | None = None) -> "Evidence":
        """Per-session samples around `us`; the last session is `spread` slower than the first."""
        self.run(run)
        if session_factors is None:
            session_factors = [1.0 + spread * k / max(1, sessions - 1) for k in range(sessions)]
        for k, f in enumerate(session_factors):
            self.records.append({"schema": S, "kind": "timing", "run_id": run, "program": program, "op": op,
                                 "T": T, **self._wl(), "session": f"s{k}", "round": 0, "position": 0,
                                 "copy": copy, "timer": "cupti", "l2": "cold", "samples_us": [us * f] * 3})
        return self

    def published_timing(self, program: str, T: int, us: float, op: str = "bwd", run: str = "pub") -> "Evidence":
        self.run(run, "published")
        self.records.append({"schema": S, "kind": "timing", "run_id": run, "program": program, "op": op, "T": T,
                             **self._wl(), "session": "pooled", "round": 0, "position": 0, "copy": 0,
                             "timer": "cupti", "l2": "cold", "median_us": us, "n": 804})
        return self

    def acc(self, program: str, T: int, worst: float, median: float | None = None, inputs: int = 120,
            eager_worst: float = 10.0, eager_median: float = 1.0, run: str = "r1", families=FAMILIES) -> "Evidence":
        self.run(run)
        for fam in families:
            self.records.append({"schema": S, "kind": "accuracy", "run_id": run, "program": program, "T": T,
                                 **self._wl(), "family": fam, "inputs": inputs, "dw_err_over_tol_max": worst,
                                 "dw_err_over_tol_median": worst / 10 if median is None else median,
                                 "eager_err_over_tol_max": eager_worst, "eager_err_over_tol_median": eager_median,
                                 "dx_err_over_tol_max": 0.3, "rstd_rel_l2": 1e-8, "rstd_form": "forward"})
        return self

    def published_acc(self, program: str, T: int, verdict: str = "pass", run: str = "pub") -> "Evidence":
        self.run(run, "published")
        self.records.append({"schema": S, "kind": "accuracy", "run_id": run, "program": program, "T": T,
                             **self._wl(), "family": "gaussian", "inputs": 0, "dw_err_over_tol_max": None,
                             "verdict": verdict, "qualified_by_source": True})
        return self

    def point(self, program: str, T: int, us: float, worst: float = 0.01, **kw) -> "Evidence":
        """A timed and accurate (120 per family) bwd point."""
        self.timing(program, T, us)
        return self.acc(program, T, worst, **kw)

    def workload_key(self) -> WorkloadKey:
        return WorkloadKey(self.arch, self.H, "bf16", self.w_dtype, self.form)

    def evidence(self) -> WorkloadEvidence:
        return aggregate_records(self.records)[self.workload_key()]

    def all(self) -> dict:
        return aggregate_records(self.records)
