"""GPU self-test: every program over the standard shapes, against the FP64 oracle.

    python -m cake_kernels.selftest [--H 512,4096] [--T 1,4096,1048576] [--programs bwd.twosum]
                                    [--families gaussian,same_sign,outlier_rows] [--json OUT]

Prints, per program and T, the worst dw err/tol over H, weight dtypes, forms and input families,
the worst dx and y/rstd errors, and whether deterministic programs were bitwise reproducible
(two runs, the second with a NaN-poisoned workspace). Optionally times each program at each point
(`--time`, CUDA events, warm L2: indicative only; the harness does the real timing).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict

import torch

from cake_kernels import registry, runner
from cake_kernels.inputs import FAMILIES, make_inputs
from cake_kernels.reference import dw_err_over_tol, dx_err_over_tol_chunked, eager_fp32_dw, oracle, y_err_over_tol_chunked

STANDARD_H = (512, 1536, 2048, 4096, 5120, 6144, 8192)
STANDARD_T = (1, 16, 256, 4096, 65536, 262144, 1048576)


def _csv(kind):
    def parse(s):
        return [kind(v) for v in s.split(",") if v]
    return parse


def workloads(Hs, forms, w_dtypes):
    for form in forms:
        if form.startswith("heads"):
            hs = [256]
        elif form == "residual":
            hs = [6144] if 6144 in Hs else Hs[-1:]
        else:
            hs = Hs
        for H in hs:
            for wd in w_dtypes:
                yield form, H, wd


def _time_ms(fn, reps=20):
    fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def run(args) -> dict:
    dev = torch.device("cuda")
    progs = [p for p in registry.all_programs() if p.launch.grid != "reference"]
    if args.programs:
        progs = [p for p in progs if any(p.name.startswith(s) for s in args.programs)]
    bwd = [p for p in progs if p.op == "bwd"]
    fwd = [p for p in progs if p.op == "fwd"]
    rows = []
    t_start = time.time()
    for form, H, wd in workloads(args.H, args.forms, args.w_dtypes):
        for T in args.T:
            for fam in args.families:
                inp = make_inputs(fam, T, H, wd, form, seed=1000 + T % 997, device=dev)
                # Forward programs: y and rstd against FP64.
                xn, rstd_ref = None, None
                for p in fwd:
                    if not p.supports(H, form, wd):
                        continue  # split rows only where H is not a power of two
                    y, rstd, h = runner.forward(p, inp.x, inp.w, 1e-6, inp.residual)
                    if xn is None:
                        xn = h if h is not None else inp.x
                        o = oracle(inp.g, xn, inp.w, rstd, eps=1e-6, want_dx=False)
                        rstd_ref = rstd
                    r64 = o["rstd64"]
                    rel = float(torch.linalg.norm(rstd.reshape(-1).double() - r64) / torch.linalg.norm(r64))
                    ye = y_err_over_tol_chunked(y, xn, inp.w, r64)
                    rows.append(dict(program=p.name, op="fwd", form=form, H=H, w_dtype=wd, T=T, family=fam,
                                     rstd_rel_l2=rel, y_err_over_tol=ye, dw_err_over_tol=None, reproducible=None))
                    if args.time and fam == args.families[0]:
                        rows[-1]["ms"] = _time_ms(lambda p=p, inp=inp: runner.forward(p, inp.x, inp.w, 1e-6, inp.residual))
                if xn is None:  # no forward program selected: the reference forward
                    from cake_kernels.reference import reference_forward
                    _, rstd_ref, h = reference_forward(inp.x, inp.w, 1e-6, inp.residual)
                    xn = h if h is not None else inp.x
                    o = oracle(inp.g, xn, inp.w, rstd_ref, want_dx=False)
                eager = float(dw_err_over_tol(eager_fp32_dw(inp.g, xn, rstd_ref), o["dw64"]).max())
                for p in bwd:
                    if not p.supports(H, form, wd):
                        continue  # H ranges (four-row tiles), split rows' H
                    ws = runner.workspace_for(p, xn)
                    dx, dw = runner.backward(p, inp.g, xn, inp.w, rstd_ref, inp.g_h_new, ws)
                    err = float(dw_err_over_tol(dw, o["dw64"]).max())
                    dxe = dx_err_over_tol_chunked(dx, inp.g, xn, inp.w, rstd_ref, inp.g_h_new)
                    rep = None
                    if p.deterministic:
                        if ws.partials is not None:
                            ws.partials.fill_(float("nan"))
                        dx2, dw2 = runner.backward(p, inp.g, xn, inp.w, rstd_ref, inp.g_h_new, ws)
                        rep = bool(torch.equal(dw, dw2) and torch.equal(dx, dx2))
                    rows.append(dict(program=p.name, op="bwd", form=form, H=H, w_dtype=wd, T=T, family=fam,
                                     dw_err_over_tol=err, eager_err_over_tol=eager, dx_err_over_tol=dxe, reproducible=rep))
                    if args.time and fam == args.families[0]:
                        rows[-1]["ms"] = _time_ms(lambda p=p, inp=inp, xn=xn, ws=ws: runner.backward(p, inp.g, xn, inp.w, rstd_ref, inp.g_h_new, ws))
                del inp, o, xn
                torch.cuda.empty_cache()
            print(f"[{time.time() - t_start:7.1f}s] {form} H={H} {wd} T={T} done", file=sys.stderr, flush=True)
            if args.json:  # incremental, so a run cut short still leaves its rows
                with open(args.json, "w") as f:
                    json.dump({"rows": rows, "partial": True}, f)
    return {"rows": rows, "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "triton": __import__("triton").__version__, "seconds": time.time() - t_start}


def summarize(rows) -> list[dict]:
    agg: dict[tuple, dict] = defaultdict(lambda: {"dw": 0.0, "dx": 0.0, "y": 0.0, "rstd": 0.0, "rep": None, "n": 0})
    for r in rows:
        a = agg[(r["program"], r["T"])]
        a["n"] += 1
        if r.get("dw_err_over_tol") is not None:
            a["dw"] = max(a["dw"], r["dw_err_over_tol"] if not math.isnan(r["dw_err_over_tol"]) else math.inf)
            a["dx"] = max(a["dx"], r["dx_err_over_tol"])
        if r.get("y_err_over_tol") is not None:
            a["y"] = max(a["y"], r["y_err_over_tol"])
            a["rstd"] = max(a["rstd"], r["rstd_rel_l2"])
        if r.get("reproducible") is not None:
            a["rep"] = (a["rep"] if a["rep"] is not None else True) and r["reproducible"]
    return [dict(program=k[0], T=k[1], **v) for k, v in sorted(agg.items())]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cake_kernels.selftest", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--H", type=_csv(int), default=list(STANDARD_H))
    ap.add_argument("--T", type=_csv(int), default=list(STANDARD_T))
    ap.add_argument("--forms", type=_csv(str), default=["plain", "residual", "heads_strided", "heads_contiguous"])
    ap.add_argument("--w-dtypes", type=_csv(str), default=["bf16", "fp32"])
    ap.add_argument("--families", type=_csv(str), default=list(FAMILIES))
    ap.add_argument("--programs", type=_csv(str), default=None, help="name prefixes")
    ap.add_argument("--time", action="store_true", help="also time each program (CUDA events, warm L2; indicative)")
    ap.add_argument("--json", default=None, help="write every row and the summary to this file")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("selftest: needs a CUDA GPU (the interpreter tests cover the CPU)", file=sys.stderr)
        return 2
    res = run(args)
    summary = summarize(res["rows"])
    res["summary"] = summary
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"cake_kernels selftest on {res['gpu']} (torch {res['torch']}, triton {res['triton']})")
    for c in ("program", "T", "worst dw err/tol", "worst dx err/tol", "worst y err/tol", "rstd rel", "bitwise", "cases"):
        t.add_column(c, justify="right" if c != "program" else "left")
    for s in summary:
        rep = "" if s["rep"] is None else ("yes" if s["rep"] else "NO")
        t.add_row(s["program"], str(s["T"]), f"{s['dw']:.3g}" if s["dw"] else "", f"{s['dx']:.3g}" if s["dx"] else "",
                  f"{s['y']:.3g}" if s["y"] else "", f"{s['rstd']:.2g}" if s["rstd"] else "", rep, str(s["n"]))
    Console(width=160).print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
