"""Reduce designs for the one-launch `.gs` backward, side by side (device experiment, not a program).

    python scripts/device/gs_reduce_variants.py [--shapes 512x4096:bf16,...] [--json OUT]

After the grid barrier a `.gs` program's reducers sum the [P, H] FP64 partials column block by column
block. The phase probe (gs_phase_probe.py, session 21) put that reduce at 2.8-3.6 us of a 14 us
kernel at H 512 T 4096 on an H100, where one L2 round trip and a 2 MB read would explain well under
one. This script builds the registered program's rows and barrier with other reduces, in one
experimental kernel (below), and times them with the campaign protocol's own loop (CUDA graphs, L2
flushed before every replay, CUPTI spans: cake_router.measure.protocol.time_entries):

  tree   [RED_P, RED_C] tiles, each summed by a tree, the tile sums added in order (`.ur`, the base);
  flat   the tiles added element by element into one [RED_P, RED_C] FP64 accumulator (no cross-thread
         work per tile), one tree at the end;
  none   rows and barrier only (PHASE 3 of the v2 kernel): the floor any reduce adds to.

with (RED_P, RED_C) varied: fewer columns per reducer means more reducers (more programs wait at the
barrier). Every variant's dx is the registered program's (the rows are the same code) and its dw is
checked against the registered program's: `flat` sums in another order, so bits may differ by an
FP64 rounding before the FP32 rounding.
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch
import triton
import triton.language as tl

from cake_kernels import registry, runner
from cake_kernels.inputs import make_inputs
from cake_kernels.programs.backward import grid_barrier_reducers, rmsnorm_bwd_rows_kernel, rmsnorm_bwd_rows_split_rstd_kernel
from cake_router.measure import impls, protocol


@triton.jit
def _reduce(WS, DW, P, H, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr, TILES: tl.constexpr, FLAT: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for cb in range(pid, tl.cdiv(H, BLOCK_C), nprog):
        cols = cb * BLOCK_C + tl.arange(0, BLOCK_C)
        cmask = cols < H
        if FLAT:
            acc2 = tl.zeros([BLOCK_P, BLOCK_C], dtype=tl.float64)
            for t in tl.static_range(TILES):
                ps = tl.arange(0, BLOCK_P).to(tl.int64) + t * BLOCK_P
                m = (ps < P)[:, None] & cmask[None, :]
                acc2 += tl.load(WS + ps[:, None] * H + cols[None, :], mask=m, other=0.0, cache_modifier=".cg")
            acc = tl.sum(acc2, axis=0)
        else:
            acc = tl.zeros([BLOCK_C], dtype=tl.float64)
            for t in tl.static_range(TILES):
                ps = tl.arange(0, BLOCK_P).to(tl.int64) + t * BLOCK_P
                m = (ps < P)[:, None] & cmask[None, :]
                part = tl.load(WS + ps[:, None] * H + cols[None, :], mask=m, other=0.0, cache_modifier=".cg")
                acc += tl.sum(part, axis=0)
        tl.store(DW + cols, acc.to(tl.float32), mask=cmask)


@triton.jit
def _experiment_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    n_partials,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr, PREFETCH: tl.constexpr, BLOCK_B: tl.constexpr,
    SPLIT_RSTD: tl.constexpr, RED_P: tl.constexpr, RED_C: tl.constexpr, RED_TILES: tl.constexpr,
    FLAT: tl.constexpr, SKIP_REDUCE: tl.constexpr,
):
    if SPLIT_RSTD:
        rmsnorm_bwd_rows_split_rstd_kernel(
            G, X, W, RSTD, GRES, DX, DW, WS, COUNTER, n_rows, NH, H, H_f, sgt, sgh, sxt, sxh, srt, srh,
            BLOCK_H=BLOCK_H, ROWS=ROWS, MODE=MODE, FOLD=FOLD, HAS_GRES=HAS_GRES, SINGLE=False, EXACT=EXACT,
            RED_BLOCK=RED_BLOCK, FOLD_WS=FOLD_WS, PREFETCH=PREFETCH, BLOCK_B=BLOCK_B)
    else:
        rmsnorm_bwd_rows_kernel(
            G, X, W, RSTD, GRES, DX, DW, WS, COUNTER, n_rows, NH, H, H_f, sgt, sgh, sxt, sxh, srt, srh,
            BLOCK_H=BLOCK_H, ROWS=ROWS, MODE=MODE, FOLD=FOLD, HAS_GRES=HAS_GRES, SINGLE=False, EXACT=EXACT,
            RED_BLOCK=RED_BLOCK, FOLD_WS=FOLD_WS, PREFETCH=PREFETCH, BLOCK_B=BLOCK_B)
    grid_barrier_reducers(COUNTER, tl.program_id(0) < tl.cdiv(H, RED_C))
    if not SKIP_REDUCE:
        _reduce(WS, DW, n_partials, H, RED_P, RED_C, RED_TILES, FLAT)


def _captured_launch(prog, inp, rstd, ws) -> dict:
    """The registered `.gs` program's kernel arguments and constexprs, as its runner launches them."""
    seen: dict = {}
    name = "_launch_grid_sync_v2" if runner.grid_sync_v2(prog) else "_launch_grid_sync"
    launch = getattr(runner, name)
    extra = runner.grid_sync_v2_constexprs if runner.grid_sync_v2(prog) else runner.grid_sync_constexprs

    def capture(program, P, H_, warps, meta, args, sms):
        seen.update(P=P, warps=warps, meta={**meta, **extra(program, H_, warps, sms)}, args=args)
        launch(program, P, H_, warps, meta, args, sms)

    setattr(runner, name, capture)
    try:
        runner.backward(prog, inp.g, inp.x, inp.w, rstd, None, ws)
    finally:
        setattr(runner, name, launch)
    torch.cuda.synchronize()
    return seen


def _variant_fn(seen: dict, stages: int, red_p: int, red_c: int, flat: bool, skip: bool):
    meta = {k: v for k, v in seen["meta"].items() if k not in ("RED_P", "RED_C", "RED_TILES", "REDUCERS_WAIT")}
    meta.update(RED_P=red_p, RED_C=red_c, RED_TILES=-(-seen["P"] // red_p), FLAT=flat, SKIP_REDUCE=skip)
    return lambda: _experiment_kernel[(seen["P"],)](*seen["args"], seen["P"], **meta, num_warps=seen["warps"],
                                                     num_stages=stages, launch_cooperative_grid=True)


def run_shape(H: int, T: int, w_dtype: str, program: str, others: list[str], combos: list[tuple[int, int]],
              sessions: int, rounds: int, replays: int) -> dict:
    dev = torch.device("cuda")
    inp = make_inputs("gaussian", T, H, w_dtype, device="cuda")
    prog = registry.get(program)
    _, rstd, _ = runner.forward("fwd.row.r1.w8", inp.x, inp.w)
    ws = runner.workspace_for(prog, inp.x)
    seen = _captured_launch(prog, inp, rstd, ws)
    dx_ref, dw_ref = (t.clone() for t in runner.backward(prog, inp.g, inp.x, inp.w, rstd, None, ws)[:2])
    wl = impls.Workload(H, "plain", w_dtype, T)
    shared = impls.SharedOutputs.for_inputs(inp)
    fns: dict[str, object] = {}
    for name in [program, *others]:
        try:
            prep = impls.prepare_peer(name, inp, wl) if name.startswith("peer.") else impls.prepare_program(
                name, inp, wl, "fwd.row.r1.w8", shared)
            fns[name] = prep.ops["bwd"]
        except Exception as exc:  # a peer missing here: say so, keep the rest
            print(f"  {name}: {exc!r}", flush=True)
    checks = {}
    for red_p, red_c in combos:
        if red_c > H or -(-seen["P"] // red_p) > 16:
            continue
        for flat in (False, True):
            key = f"{'flat' if flat else 'tree'} [{red_p}x{red_c}] reducers {-(-H // red_c)}"
            fn = _variant_fn(seen, prog.launch.stages, red_p, red_c, flat, False)
            fn()
            torch.cuda.synchronize()
            dx, dw = seen["args"][5], seen["args"][6]
            tol = 1e-4 + 1e-4 * dw_ref.abs()
            checks[key] = dict(dx_equal=bool(torch.equal(dx, dx_ref)), dw_bitwise=bool(torch.equal(dw, dw_ref)),
                               dw_max_diff_over_tol=float(((dw - dw_ref).abs() / tol).max()))
            fns[key] = fn
    red_p0, red_c0 = seen["meta"]["RED_P"], seen["meta"]["RED_C"]
    fns[f"none (rows + barrier, {-(-H // red_c0)} waiters)"] = _variant_fn(seen, prog.launch.stages, red_p0, red_c0, False, True)
    entries = [protocol.Entry(impl=k, op="bwd", copy=0, graph=protocol.capture(fn, dev)) for k, fn in fns.items()]
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for s in range(sessions):
        for rec in protocol.time_entries(entries, s, rounds, replays, dev):
            samples[rec["impl"]].extend(rec["samples_us"])
    med = {k: statistics.median(v) for k, v in samples.items() if v}
    return dict(H=H, T=T, w_dtype=w_dtype, program=program, P=seen["P"], warps=seen["warps"],
                registered_reduce=[red_p0, red_c0, seen["meta"].get("RED_TILES")], median_us=med, checks=checks,
                samples=len(next(iter(samples.values()))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="512x4096:bf16,512x4096:fp32,512x16384:bf16", help="comma list of HxT:w_dtype")
    ap.add_argument("--program", default="bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.ur.rw", help="a registered `.gs` program")
    ap.add_argument("--others", default="bwd.twosum.p4x.r4.w2.fw.pf.gs.xs,peer.torch_compile.default",
                    help="comma list of registered programs or peers timed beside it")
    ap.add_argument("--combos", default="128x4,64x8,256x2,512x1,256x4", help="comma list of RED_PxRED_C")
    ap.add_argument("--sessions", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--replays", type=int, default=60)
    ap.add_argument("--json", default=None, help="write the results here as JSON")
    a = ap.parse_args()
    combos = [tuple(int(v) for v in c.split("x")) for c in a.combos.split(",") if c]
    others = [o for o in a.others.split(",") if o]
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__, "rows": []}
    for spec in a.shapes.split(","):
        hw, w = spec.split(":")
        H, T = (int(v) for v in hw.split("x"))
        r = run_shape(H, T, w, a.program, others, combos, a.sessions, a.rounds, a.replays)
        res["rows"].append(r)
        print(f"H {H} T {T} {w}: {a.program}, P {r['P']}, warps {r['warps']}, registered reduce {r['registered_reduce']}, "
              f"{r['samples']} samples each", flush=True)
        for k, v in sorted(r["median_us"].items(), key=lambda kv: kv[1]):
            c = r["checks"].get(k)
            extra = f"  dx equal {c['dx_equal']}, dw bitwise {c['dw_bitwise']}, max |d dw|/tol {c['dw_max_diff_over_tol']:.2e}" if c else ""
            print(f"  {v:9.3f} us  {k}{extra}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
