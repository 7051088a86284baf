"""Launch a few backward programs once each at one shape, for Nsight Compute.

    ncu --kernel-name regex:rmsnorm_bwd_rows --section SpeedOfLight --section Occupancy \
        --section LaunchStats --section WarpStateStats --csv --page details \
        python scripts/device/ncu_bwd.py --H 4096 --T 262144 --programs bwd.pair.p2x.w8,bwd.twosum_pair.p2x.w8

Each program is compiled and run once before a synchronize-separated measured launch, so the
profiled launches are in program order (2 per program: warm-up, then the one to read).
"""
import argparse

import torch

from cake_kernels import runner
from cake_kernels.inputs import make_inputs

ap = argparse.ArgumentParser()
ap.add_argument("--H", type=int, default=4096)
ap.add_argument("--T", type=int, default=262144)
ap.add_argument("--programs", required=True)
a = ap.parse_args()
inp = make_inputs("gaussian", a.T, a.H, "fp32", device="cuda")
y, rstd, _ = runner.forward("fwd.row.r1.w8", inp.x, inp.w)
for name in a.programs.split(","):
    ws = runner.workspace_for(name, inp.x)
    for _ in range(2):
        runner.backward(name, inp.g, inp.x, inp.w, rstd, None, ws)
        torch.cuda.synchronize()
    print("profiled", name, flush=True)
