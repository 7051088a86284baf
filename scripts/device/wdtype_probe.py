"""Device probe: why a program's speed depends on the weight's dtype (Triton 3.6 on the H200).

Rounds 6-7 timed the same backward programs with both weight dtypes side by side: with a BF16
weight they ran up to 1.42x slower (H 512 p7x.r2.w2 T 1M 1332 against 936 us; H 2048 p2x.r2.w8 4224
against 3338 us), while forward programs ran up to 1.47x slower with an FP32 weight (H 5120
fwd.persist.p4x.r1.w4.sp T 65536 587 against 398 us). The weight is H values read once per program,
so the bytes do not explain it; the compiled kernels must differ. Triton 3.9 here compiles the
two builds to the same registers and nearly the same SASS (8 lines apart), so this runs on the GPU:

    python scripts/device/wdtype_probe.py [--H 512,2048,5120] [--T 1048576]

For each program and weight dtype it times the program (do_bench, cold L2), the same program given
the weight cast to the other dtype beforehand (outside the timing), and records the compiled
kernel's registers, spills and SASS opcode counts (cuobjdump of the cubin Triton built). Writes
$OUT/wdtype-probe.json.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re

import torch
import triton

from cake_kernels import registry, runner
from cake_kernels.compile_check import cuobjdump
from cake_kernels.inputs import make_inputs
from cake_kernels.programs import backward as bk
from cake_kernels.programs import forward as fw
from probe_common import builds, time_us

PROGRAMS = {512: ["bwd.twosum_pair.p7x.r2.w2.fw.pf.wr", "bwd.twosum_pair.p4x.r4.w2.fw.pf.wr", "fwd.row.r4.w2"],
            2048: ["bwd.twosum_pair.p2x.r2.w8.fw.pf.wr", "bwd.twosum_pair.p1x.r4.w8.fw.pf.wr", "fwd.row.r2.w1"],
            5120: ["bwd.twosum.p2x.w8.fw.pf", "fwd.persist.p4x.r1.w4.pf.sp", "fwd.persist.p4x.r1.w4.sp"]}


def kernels() -> dict:
    """id -> build of every rows-kernel and forward build so far."""
    return {i: k for i, (_, k) in builds(bk.rmsnorm_bwd_rows_kernel, fw.rmsnorm_fwd_kernel,
                                         fw.rmsnorm_fwd_prefetch_kernel).items()}


def describe(k) -> dict:
    ops = collections.Counter()
    sass = cuobjdump(k.asm["cubin"], "-sass")
    for line in sass.splitlines():
        m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if m:
            ops[m[1].split(".")[0]] += 1
    return {"n_regs": getattr(k, "n_regs", None), "n_spills": getattr(k, "n_spills", None),
            "sass_lines": sum(ops.values()), "ops": dict(ops.most_common(40))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--H", default="512,2048,5120")
    ap.add_argument("--T", default="1048576")
    args = ap.parse_args()
    dev = torch.device("cuda")
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__, "rows": []}
    for H in (int(h) for h in args.H.split(",")):
        for T in (int(t) for t in args.T.split(",")):
            for w_dtype in ("fp32", "bf16"):
                inp = make_inputs("gaussian", T, H, w_dtype, device=dev)
                y, rstd, _ = runner.forward("fwd.row.r4.w4", inp.x, inp.w)
                dx = torch.empty_like(inp.x)
                dw = torch.empty(H, device=dev)
                for name in PROGRAMS.get(H, []):
                    p = registry.get(name)
                    before = set(kernels())
                    ws = runner.workspace_for(p, inp.x) if p.op == "bwd" else None
                    if p.op == "bwd":
                        fn = lambda: runner.backward(p, inp.g, inp.x, inp.w, rstd, None, ws, dx_out=dx, dw_out=dw)
                    else:
                        fn = lambda: runner.forward(p, inp.x, inp.w, 1e-6, y_out=y, rstd_out=rstd)
                    us = time_us(fn, T)
                    new = [describe(k) for i, k in kernels().items() if i not in before]
                    row = dict(program=name, H=H, T=T, w_dtype=w_dtype, us=us, kernels=new)
                    res["rows"].append(row)
                    print(f"H={H:5d} T={T:8d} w={w_dtype} {name:40s} {row['us']:10.1f} us "
                          f"{[(k['n_regs'], k['n_spills'], k['sass_lines']) for k in new]}", flush=True)
                del inp, y, rstd, dx, dw
                torch.cuda.empty_cache()
                with open(os.path.join(os.environ.get("OUT", "/tmp"), "wdtype-probe.json"), "w") as f:
                    json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
