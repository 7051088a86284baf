"""Device probe for the compensated (twosum) backward programs: registers, spills, bandwidth, accuracy.

Why: in the first H200 campaign the twosum programs ran 1.7-2.0 TB/s where `pair` programs with the
same grid and tile ran 3.2-3.5 TB/s. This script times every twosum variant next to the best plain
programs (triton.testing.do_bench: it clears L2 between repetitions; an indicative timer, not the
campaign protocol), records each compiled kernel's registers and spills, and checks dw err/tol on
`gaussian` inputs (the binding family at large T) against the FP64 oracle.

    python scripts/device/twosum_probe.py [--H 2048,4096,6144,8192] [--T 65536,1048576] [--acc-T 1048576]
        [--variants 10x.r1.w2,7x.r2.w2 --base bwd.twosum_pair.p2x.w8.fw.pf.wr]

`--variants` also times unregistered launch shapes of `--base` (programs per SM, rows per tile, warps),
named `<base>@p10x.r1.w2`: a sweep of the grid without a registry entry per point.

Writes $OUT/twosum-probe.json and prints one table row per (H, T, program).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time

import torch
import triton

from cake_kernels import registry, runner
from cake_kernels.inputs import make_inputs
from cake_kernels.programs import backward as bk
from cake_kernels.reference import dw_err_over_tol, oracle
from cake_router.measure.protocol import copy_bandwidth_TBps
from probe_common import builds, time_us


def compiled_kernels():
    """id -> (kernel, n_regs, n_spills, num_warps) of every compiled backward kernel so far."""
    return {i: dict(kernel=name, n_regs=getattr(k, "n_regs", None), n_spills=getattr(k, "n_spills", None),
                    num_warps=getattr(getattr(k, "metadata", None), "num_warps", None))
            for i, (name, k) in builds(bk.rmsnorm_bwd_rows_kernel, bk.reduce_partials_kernel,
                                       bk.reduce_partials_wide_kernel).items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--H", default="2048,4096,6144,8192")
    ap.add_argument("--T", default="65536,1048576")
    ap.add_argument("--acc-T", default="1048576", help="T values where dw err/tol is also checked")
    ap.add_argument("--programs", default="bwd.twosum,bwd.pair.p2x.w8,bwd.pair.p4x.w4,bwd.atomic.p4x.w4")
    ap.add_argument("--variants", default="", help="comma list of PPSMx.rROWS.wWARPS launch shapes of --base")
    ap.add_argument("--base", default="bwd.twosum_pair.p2x.w8.fw.pf.wr")
    args = ap.parse_args()
    dev = torch.device("cuda")
    out_dir = os.environ.get("OUT", "/tmp")
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "copy_TBps": copy_bandwidth_TBps(dev), "rows": []}
    print(f"copy {res['copy_TBps']:.3f} TB/s", flush=True)
    prefixes = args.programs.split(",")
    progs = [p for p in registry.all_programs() if p.op == "bwd" and any(p.name.startswith(x) for x in prefixes)]
    base = registry.get(args.base)
    for v in (v for v in args.variants.split(",") if v):
        ppsm, rows, warps = (int(part[1:] if i else part[:-1]) for i, part in enumerate(v.split(".")))
        lp = dataclasses.replace(base.launch, programs_per_sm=ppsm, rows=rows, warps=warps)
        progs.append(dataclasses.replace(base, name=f"{base.name}@p{v}", launch=lp))
    acc_T = {int(t) for t in args.acc_T.split(",") if t}
    for H in (int(h) for h in args.H.split(",")):
        for T in (int(t) for t in args.T.split(",")):
            inp = make_inputs("gaussian", T, H, "fp32", device=dev)
            y, rstd, _ = runner.forward("fwd.row.r1.w8", inp.x, inp.w)
            dw64 = oracle(inp.g, inp.x, inp.w, rstd, want_dx=False)["dw64"] if T in acc_T else None
            dx = torch.empty_like(inp.x)
            dw = torch.empty(H, device=dev)
            for p in progs:
                if not p.supports(H, "plain", "fp32"):
                    continue
                before = set(compiled_kernels())
                ws = runner.workspace_for(p, inp.x)
                fn = lambda: runner.backward(p, inp.g, inp.x, inp.w, rstd, None, ws, dx_out=dx, dw_out=dw)
                row = dict(program=p.name, H=H, T=T)
                try:
                    us = time_us(fn, T)
                    row.update(us=us, TBps=(6 * T * H + 4 * T) / (us * 1e-6) / 1e12)
                    ks = compiled_kernels()
                    row["kernels"] = [v for k, v in ks.items() if k not in before]
                    if dw64 is not None:
                        fn()
                        torch.cuda.synchronize()
                        row["dw_err_over_tol"] = float(dw_err_over_tol(dw, dw64).max())
                except Exception as exc:  # a failing variant is a finding, not a reason to stop
                    row["error"] = repr(exc)[:400]
                res["rows"].append(row)
                regs = ",".join(f"{k['n_regs']}r/{k['n_spills']}s/w{k['num_warps']}" for k in row.get("kernels", []) if k["kernel"] == "rmsnorm_bwd_rows_kernel")
                print(f"H={H:5d} T={T:8d} {p.name:32s} {row.get('us', float('nan')):10.1f} us {row.get('TBps', float('nan')):5.2f} TB/s "
                      f"err/tol={row.get('dw_err_over_tol', float('nan')):.5f} {regs} {row.get('error', '')}", flush=True)
            del inp, dx, y, rstd, dw64
            torch.cuda.empty_cache()
            _write(res, out_dir)  # after each shape: a probe cut by its time limit keeps what it measured


def _write(res: dict, out_dir: str) -> None:
    res["when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(os.path.join(out_dir, "twosum-probe.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
