"""Run every Triton program at odd shapes, for compute-sanitizer (memcheck / racecheck) on the GPU.

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 \
        python scripts/device/sanitize.py [--programs PARTS | --routed sm_90a] [--shapes odd|small|H:T:FORM:W,...]

    python scripts/device/sanitize.py --routed sm_90a --procs 14   # no sanitizer: builds every kernel
        in parallel processes (Triton's disk cache), so the sanitized run after it compiles nothing

PyTorch's caching allocator hands out pooled blocks, so an out-of-bounds read would land in memory
the process owns and go unseen; PYTORCH_NO_CUDA_MEMORY_CACHING=1 makes every tensor its own
allocation. Every program runs forward (with and without residual) and backward at each shape, with
outputs and workspace allocated at their exact sizes. The script prints one line per (program, shape)
so a sanitizer report can be tied to the launch before it.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import sys

import torch

from cake_kernels import registry, runner
from cake_kernels.inputs import make_inputs
from cake_kernels.routes import load_table, routes_dir

# (H, T, form, w_dtype): widths not a multiple of any block, one row, rows not a multiple of any
# tile, the widest H, and both head views (the strided one reads a slice of a wider tensor).
ODD = [(1, 1, "plain", "fp32"), (7, 3, "plain", "bf16"), (1000, 65, "plain", "fp32"), (4095, 17, "plain", "bf16"),
       (6144, 33, "residual", "fp32"), (16384, 2, "plain", "fp32"), (256, 5, "heads_strided", "bf16"),
       (256, 3, "heads_contiguous", "fp32"), (2049, 1031, "plain", "fp32"), (256, 1, "heads_strided", "fp32"),
       (256, 64, "heads_strided", "fp32"), (512, 1, "plain", "fp32")]
SMALL = [(1000, 65, "plain", "fp32"), (4095, 17, "residual", "bf16"), (256, 5, "heads_strided", "fp32")]


def parse_shapes(text: str) -> list[tuple[int, int, str, str]]:
    """`odd`, `small`, or comma-separated `H:T:FORM:W_DTYPE` (e.g. `512:1:plain:fp32`), for rerunning
    the shapes a timed-out sanitizer pass did not reach."""
    if text in ("odd", "small"):
        return ODD if text == "odd" else SMALL
    shapes = []
    for item in (x for x in text.split(",") if x):
        parts = item.split(":")
        ok = (len(parts) == 4 and parts[0].isdigit() and parts[1].isdigit() and parts[2] in registry.FORMS
              and parts[3] in registry.W_DTYPES)
        if not ok or int(parts[0]) < 1 or int(parts[1]) < 1:
            raise ValueError(f"--shapes: {item!r} is not H:T:FORM:W_DTYPE; accepted: odd, small, or items like "
                             f"512:1:plain:fp32 with H, T >= 1, FORM one of {', '.join(registry.FORMS)}, W_DTYPE one of "
                             f"{', '.join(registry.W_DTYPES)}")
        shapes.append((int(parts[0]), int(parts[1]), parts[2], parts[3]))
    if not shapes:
        raise ValueError("--shapes: empty; accepted: odd, small, or items like 512:1:plain:fp32")
    return shapes


def routed_programs(arch: str) -> list[str]:
    """The programs a shipped route table runs, and the fallbacks they may hand a call to."""
    table = load_table(routes_dir() / f"{arch}.json", known_programs=set(registry.names()))
    names = table.programs()
    fallbacks = {registry.get(n).fallback for n in names} - {None}
    return sorted(n for n in names | fallbacks if registry.get(n).launch.grid != "reference")


def run(names: list[str], shapes: list, dev: torch.device) -> int:
    """Every program of `names` at every shape it supports; the number of (program, shape) runs."""
    progs = [registry.get(n) for n in names]
    n = 0
    for H, T, form, w_dtype in shapes:
        inp = make_inputs("gaussian", T, H, w_dtype, form=form, device=dev)
        res = inp.residual if form == "residual" else None
        for p in progs:
            if not p.supports(H, form, w_dtype):
                continue
            if p.op == "fwd":
                runner.forward(p, inp.x, inp.w, 1e-6, res)
            else:
                y, rstd, h_new = runner.forward("fwd.row.r1.w4", inp.x, inp.w, 1e-6, res)
                xn = h_new if h_new is not None else inp.x
                runner.backward(p, inp.g, xn, inp.w, rstd, inp.g if res is not None else None)
            if dev.type == "cuda":
                torch.cuda.synchronize()
            n += 1
            print(f"ran {p.name} H={H} T={T} {form} {w_dtype}", flush=True)
    return n


def _run_part(job) -> int:
    names, shapes, device = job
    return run(names, shapes, torch.device(device))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", default="", help="comma-separated name parts, e.g. bwd.atomic,.gs (default: every Triton program)")
    ap.add_argument("--routed", default="", help="the programs of this arch's shipped route table (and their fallbacks), e.g. sm_90a")
    ap.add_argument("--shapes", default="odd", help="odd, small, or comma-separated H:T:FORM:W_DTYPE (default: odd)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--procs", type=int, default=1, help="run the programs split over this many processes (a cache warm-up: "
                    "compute-sanitizer is meant for one)")
    args = ap.parse_args()
    if args.routed and args.programs:
        ap.error("--routed and --programs: give one of them")
    try:
        shapes = parse_shapes(args.shapes)
    except ValueError as exc:
        ap.error(str(exc))
    prefixes = [p for p in args.programs.split(",") if p]
    if args.routed:
        names = routed_programs(args.routed)
    else:
        names = [p.name for p in registry.all_programs() if p.launch.grid != "reference"
                 and (not prefixes or any(x in p.name for x in prefixes))]
    if args.procs > 1:
        parts = [(names[i::args.procs], shapes, args.device) for i in range(args.procs)]
        with mp.get_context("spawn").Pool(args.procs) as pool:
            n = sum(pool.map(_run_part, parts))
    else:
        n = run(names, shapes, torch.device(args.device))
    print(f"sanitize: {n} program launches completed ({len(names)} programs)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
