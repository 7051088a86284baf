"""Fill Triton's on-disk cache for forward programs before a measure run, in parallel processes.

`.hs` programs are built once per H (and weight dtype, and residual), about 240 builds for the plain
grid alone; `measure` builds each on first use, one at a time, on the device call's clock. Run here
with 14 processes it takes seconds. Triton specializes integer arguments equal to 1 or divisible by
16, so each shape is launched at T 1 and T 16: every grid T >= 16 is a multiple of 16 (and the head
views' rows, T x 4 or T x 24, at T >= 16 too), so these two cover the grid's builds.

    python scripts/device/warm_compile.py --programs fwd.row.r1.w4.c512.hs,... --H 512,2048 \
        --w-dtypes fp32,bf16 --forms plain,residual
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing as mp
import time


def _warm(job):
    name, H, w_dtype, form, device = job
    import torch

    from cake_kernels import runner
    from cake_kernels.inputs import make_inputs

    for T in (1, 16):
        inp = make_inputs("gaussian", T, H, w_dtype, form=form, seed=0, device=device)
        runner.forward(name, inp.x, inp.w, 1e-6, inp.residual)
    if device == "cuda":
        torch.cuda.synchronize()
    return job


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", required=True, help="comma-separated forward program names")
    ap.add_argument("--H", default="512,1536,2048,4096,5120,6144,8192")
    ap.add_argument("--w-dtypes", default="fp32,bf16")
    ap.add_argument("--forms", default="plain")
    ap.add_argument("--procs", type=int, default=14)
    ap.add_argument("--device", default="cuda", help="cuda (cpu runs the interpreter: a check of this script)")
    a = ap.parse_args()
    from cake_kernels import registry

    for name in a.programs.split(","):
        if name not in registry.names("fwd"):
            ap.error(f"--programs: {name!r} is not a registered forward program (cake_kernels.registry.names(\"fwd\") lists them)")
    jobs = []
    for name, form, w in itertools.product(a.programs.split(","), a.forms.split(","), a.w_dtypes.split(",")):
        for H in ((256,) if form.startswith("heads") else tuple(int(h) for h in a.H.split(","))):
            jobs.append((name, H, w, form, a.device))
    t0 = time.time()
    failed = 0
    with mp.get_context("spawn").Pool(a.procs) as pool:
        for job in pool.imap_unordered(_safe, jobs):
            if isinstance(job, str):  # a failure's message
                failed += 1
                print(job)
    print(f"warm_compile: {len(jobs)} shapes, {failed} failed, {time.time() - t0:.1f} s")


def _safe(job):
    try:
        return _warm(job)
    except Exception as e:  # reported, not fatal: measure will build (or fail on) it again
        return f"warm_compile: {job}: {type(e).__name__}: {e}"


if __name__ == "__main__":
    main()
