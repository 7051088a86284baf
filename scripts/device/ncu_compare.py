"""Run our programs and the peers once each at one workload, inside a profiler range, for Nsight Compute.

    ncu --profile-from-start off --clock-control none --section SpeedOfLight --section Occupancy \
        --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --csv --page details \
        python scripts/device/ncu_compare.py --op bwd --H 1536 --T 262144 --w-dtype fp32 \
            --impls bwd.twosum_pair.p2x.r2.w8.fw.pf.wr,bwd.pair.p4x.w4.pf,peer.quack.heuristic

Each implementation is built through the measuring harness (`cake_router.measure.impls`: the same
closures `measure` times, so a peer gets exactly the call it is timed with), run twice outside the
range (compilation, autotuning, caches), then once inside `cudaProfilerStart/Stop`: with
`--profile-from-start off` ncu profiles only that call's kernels, every kernel of the span (a
two-launch program's partials reduce, a `.wc` program's cast, a peer's dw sum). A line
`profiled NAME` on stdout marks each range, in order, so the CSV's kernels can be attributed.
`--clock-control none` keeps the boost clock the harness times with (ncu locks base clocks otherwise).
"""
from __future__ import annotations

import argparse

import torch

from cake_kernels.inputs import make_inputs
from cake_router.measure import impls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", choices=("fwd", "bwd"), required=True)
    ap.add_argument("--H", type=int, required=True)
    ap.add_argument("--T", type=int, required=True)
    ap.add_argument("--w-dtype", choices=("bf16", "fp32"), default="fp32")
    ap.add_argument("--form", default="plain")
    ap.add_argument("--impls", required=True, help="comma-separated program names and peer names (peer.*)")
    a = ap.parse_args()
    inp = make_inputs("gaussian", a.T, a.H, a.w_dtype, a.form, device="cuda")
    wl = impls.Workload(a.H, a.form, a.w_dtype, a.T)
    out = impls.SharedOutputs.for_inputs(inp)
    for name in a.impls.split(","):
        try:
            if name.startswith("peer."):
                prep = impls.prepare_peer(name, inp, wl)
            else:
                prep = impls.prepare_program(name, inp, wl, "fwd.row.r1.w8", out)
        except Exception as exc:  # a peer missing on this machine: say so, profile the rest
            print(f"skipped {name}: {exc!r}", flush=True)
            continue
        call = prep.ops[a.op]
        for _ in range(2):
            call()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        call()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        print("profiled", name, flush=True)


if __name__ == "__main__":
    main()
