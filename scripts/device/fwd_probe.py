"""Device probe for the forward programs: registered programs and unregistered launch shapes.

    python scripts/device/fwd_probe.py [--H 512,2048] [--T 65536,1048576] [--programs fwd.row.r4]
        [--variants row:r2.w1,persist:p8x.r4.w2] 

Times each (triton.testing.do_bench, L2 cleared between repetitions: an indicative timer, not the
campaign protocol) with its registers, next to the copy bandwidth; a variant `row:rR.wW` is a
`fwd.row` program with R rows and W warps, `persist:pPx.rR.wW` a prefetching persistent one. Writes
$OUT/fwd-probe.json and prints one row per (H, T, program).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os

import torch
import triton

from cake_kernels import registry, runner
from cake_kernels.inputs import make_inputs
from cake_kernels.programs import forward as fw
from cake_router.measure.protocol import copy_bandwidth_TBps
from probe_common import builds, time_us


def variant(spec: str) -> registry.Program:
    kind, shape = spec.split(":")
    parts = shape.split(".")
    if kind == "row":
        base = registry.get("fwd.row.r4.w4")
        lp = dataclasses.replace(base.launch, rows=int(parts[0][1:]), warps=int(parts[1][1:]))
    elif kind == "persist":
        base = registry.get("fwd.persist.p8x.r2.w4.pf")
        lp = dataclasses.replace(base.launch, programs_per_sm=int(parts[0][1:-1]), rows=int(parts[1][1:]), warps=int(parts[2][1:]))
    else:
        raise ValueError(f"--variants: {spec!r} is not row:rR.wW or persist:pPx.rR.wW")
    return dataclasses.replace(base, name=f"{base.name}@{shape}", launch=lp)


def regs_of() -> dict:
    """id -> (n_regs, n_spills) of every forward build so far."""
    return {i: (getattr(k, "n_regs", None), getattr(k, "n_spills", None))
            for i, (_, k) in builds(fw.rmsnorm_fwd_kernel, fw.rmsnorm_fwd_prefetch_kernel).items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--H", default="512,2048")
    ap.add_argument("--T", default="65536,1048576")
    ap.add_argument("--programs", default="fwd.row,fwd.persist")
    ap.add_argument("--variants", default="")
    args = ap.parse_args()
    dev = torch.device("cuda")
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "copy_TBps": copy_bandwidth_TBps(dev), "rows": []}
    print(f"copy {res['copy_TBps']:.3f} TB/s", flush=True)
    pfx = [p for p in args.programs.split(",") if p]
    progs = [p for p in registry.all_programs() if p.op == "fwd" and p.launch.grid != "reference"
             and any(p.name.startswith(x) for x in pfx)]
    progs += [variant(v) for v in args.variants.split(",") if v]
    for H in (int(h) for h in args.H.split(",")):
        for T in (int(t) for t in args.T.split(",")):
            inp = make_inputs("gaussian", T, H, "fp32", device=dev)
            y = torch.empty_like(inp.x)
            rstd = torch.empty(T, device=dev)
            for p in progs:
                if not p.supports(H, "plain", "fp32"):
                    continue
                before = regs_of()
                fn = lambda: runner.forward(p, inp.x, inp.w, 1e-6, y_out=y, rstd_out=rstd)
                row = dict(program=p.name, H=H, T=T)
                try:
                    us = time_us(fn, T)
                    row.update(us=us, TBps=(4 * T * H + 4 * T) / (us * 1e-6) / 1e12)
                    row["regs"] = [v for k, v in regs_of().items() if k not in before]
                except Exception as exc:  # a failing variant is a finding
                    row["error"] = repr(exc)[:300]
                res["rows"].append(row)
                print(f"H={H:5d} T={T:8d} {p.name:36s} {row.get('us', float('nan')):10.2f} us "
                      f"{row.get('TBps', float('nan')):5.2f} TB/s {row.get('regs', '')} {row.get('error', '')}", flush=True)
            del inp, y, rstd
            torch.cuda.empty_cache()
            with open(os.path.join(os.environ.get("OUT", "/tmp"), "fwd-probe.json"), "w") as f:
                json.dump(res, f, indent=1)  # after each shape: a probe cut short keeps what it measured


if __name__ == "__main__":
    main()
