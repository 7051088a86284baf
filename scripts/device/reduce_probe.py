"""Time the partials reduce (`reduce_partials_wide_kernel`) in several tiles, alone and inside the
`.op` backward programs, to pick `runner.one_pass_reduce_meta`'s tile (session 27).

    python scripts/device/reduce_probe.py [--P 264] [--H 4096]

For each (BLOCK_P, BLOCK_C, warps): the reduce alone over [P, H] FP32 and FP64 partials, then the
whole backward of `bwd.pair.p2x.w8.pf.op` and `bwd.twosum_pair.p2x.w4.fw.pf.op` at T 4096 FP32 with
`one_pass_reduce_meta` patched to that tile (probe_common.time_us: do_bench, L2 cleared, no CUDA
graph; an indicative timer, compared side by side in one process). Prints one JSON line per row.
"""
from __future__ import annotations

import argparse
import json

import torch

from probe_common import time_us

from cake_kernels import runner
from cake_kernels.inputs import make_inputs
from cake_kernels.programs import backward as bk

TILES = [(512, 32, 8), (512, 32, 4), (512, 16, 8), (512, 16, 4), (512, 8, 4), (512, 8, 2), (256, 16, 4),
         (128, 32, 4), (512, 64, 8), (1024, 8, 4)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--P", type=int, default=264)
    ap.add_argument("--H", type=int, default=4096)
    ap.add_argument("--T", type=int, default=4096)
    a = ap.parse_args()
    dev = torch.device("cuda")
    dw = torch.empty(a.H, dtype=torch.float32, device=dev)
    inp = make_inputs("gaussian", a.T, a.H, "fp32", device=dev)
    _, rstd, _ = runner.forward("fwd.row.r1.w8", inp.x, inp.w)
    original = runner.one_pass_reduce_meta
    for bp, bc, w in TILES:
        row = dict(BLOCK_P=bp, BLOCK_C=bc, warps=w)
        for dt in (torch.float32, torch.float64):
            ws = torch.randn(a.P, a.H, device=dev).to(dt)
            row[f"reduce_{str(dt)[6:]}_us"] = round(time_us(lambda: bk.reduce_partials_wide_kernel[(-(-a.H // bc),)](
                ws, dw, a.P, a.H, BLOCK_P=bp, BLOCK_C=bc, num_warps=w), a.T), 2)
        runner.one_pass_reduce_meta = lambda P, bp=bp, bc=bc, w=w: (dict(BLOCK_P=min(bp, 1 << max(P - 1, 0).bit_length()), BLOCK_C=bc), w)
        for name in ("bwd.pair.p2x.w8.pf.op", "bwd.twosum_pair.p2x.w4.fw.pf.op"):
            wsp = runner.workspace_for(name, inp.x)
            row[name] = round(time_us(lambda: runner.backward(name, inp.g, inp.x, inp.w, rstd, None, wsp), a.T), 2)
        runner.one_pass_reduce_meta = original
        print(json.dumps(row), flush=True)
    for name in ("bwd.pair.p2x.w8.pf.wr", "bwd.twosum_pair.p2x.w4.fw.pf.wr"):
        wsp = runner.workspace_for(name, inp.x)
        print(json.dumps({"program": name, "us": round(time_us(lambda: runner.backward(name, inp.g, inp.x, inp.w, rstd, None, wsp), a.T), 2)}))


if __name__ == "__main__":
    main()
