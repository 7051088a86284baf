"""Where a `.ur` backward's time goes: its one cooperative kernel split into its phases (device probe).

    python scripts/device/gs_phase_probe.py [--shapes 512x4096:bf16,512x4096:fp32] [--json OUT]

For each shape, times (triton.testing.do_bench, L2 cleared between repetitions; indicative, not the
campaign protocol) the whole `.gs` base, the whole `.ur` program, and the `.ur` kernel launched with
its probe phases (programs/backward.py `rmsnorm_bwd_grid_sync_v2_kernel`): 1, the rows alone (the
partials written); 3, the rows and the grid barrier; 4, the barrier alone; 2, the reduce alone (over
partials left by the phase before). Then the two-launch twin and torch.compile as the harness builds
them. Differences between the lines attribute the time: barrier = (3) - (1), reduce = (0) - (3).
"""
from __future__ import annotations

import argparse
import json

import torch
import triton

from cake_kernels import registry, runner
from cake_kernels.inputs import make_inputs
from cake_kernels.programs import backward as bk
from cake_router.measure import impls


def _time_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return triton.testing.do_bench(fn, warmup=10, rep=60, return_mode="median") * 1e3


def probe(H: int, T: int, w_dtype: str, ur: str) -> dict:
    inp = make_inputs("gaussian", T, H, w_dtype, device="cuda")
    prog = registry.get(ur)
    base = registry.get(ur.removesuffix(".ur"))
    _, rstd, _ = runner.forward("fwd.row.r1.w8", inp.x, inp.w)
    ws = runner.workspace_for(prog, inp.x)
    seen = {}
    launch = runner._launch_grid_sync_v2

    def capture(program, P, H_, warps, meta, args, sms):
        seen.update(P=P, warps=warps, meta={**meta, **runner.grid_sync_v2_constexprs(program, H_, warps, sms)}, args=args)
        launch(program, P, H_, warps, meta, args, sms)

    runner._launch_grid_sync_v2 = capture
    try:
        runner.backward(prog, inp.g, inp.x, inp.w, rstd, None, ws)
    finally:
        runner._launch_grid_sync_v2 = launch
    torch.cuda.synchronize()

    def phase(p: int):
        coop = {"launch_cooperative_grid": True} if p in (0, 3, 4) else {}
        return lambda: bk.rmsnorm_bwd_grid_sync_v2_kernel[(seen["P"],)](
            *seen["args"], seen["P"], **seen["meta"], PHASE=p, num_warps=seen["warps"], num_stages=prog.launch.stages, **coop)

    ws_base = runner.workspace_for(base, inp.x)
    out = {"H": H, "T": T, "w_dtype": w_dtype, "program": ur, "P": seen["P"],
           "RED_P": seen["meta"]["RED_P"], "RED_C": seen["meta"]["RED_C"], "RED_TILES": seen["meta"]["RED_TILES"],
           "us": {}}
    us = out["us"]
    us[f"{base.name} (whole)"] = _time_us(lambda: runner.backward(base, inp.g, inp.x, inp.w, rstd, None, ws_base))
    us[f"{ur} (whole)"] = _time_us(lambda: runner.backward(prog, inp.g, inp.x, inp.w, rstd, None, ws))
    for p, what in ((0, "phase 0: all, one kernel"), (1, "phase 1: rows"), (3, "phase 3: rows + barrier"),
                    (4, "phase 4: barrier alone"), (2, "phase 2: reduce alone")):
        us[what] = _time_us(phase(p))
    wl = impls.Workload(H, "plain", w_dtype, T)
    shared = impls.SharedOutputs.for_inputs(inp)
    for name in (base.fallback, "peer.torch_compile.default"):
        try:
            prep = impls.prepare_peer(name, inp, wl) if name.startswith("peer.") else impls.prepare_program(
                name, inp, wl, "fwd.row.r1.w8", shared)
            us[name] = _time_us(prep.ops["bwd"])
        except Exception as exc:  # a peer missing here: say so, keep the rest
            us[name] = repr(exc)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="512x4096:bf16,512x4096:fp32,512x16384:bf16",
                    help="comma list of HxT:w_dtype")
    ap.add_argument("--program", default="bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.ur", help="a `.ur` program")
    ap.add_argument("--json", default=None, help="write the results here as JSON")
    a = ap.parse_args()
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__, "rows": []}
    for spec in a.shapes.split(","):
        hw, w = spec.split(":")
        H, T = (int(v) for v in hw.split("x"))
        r = probe(H, T, w, a.program)
        res["rows"].append(r)
        print(f"H {H} T {T} {w}: P {r['P']}, reduce tiles {r['RED_TILES']} x [{r['RED_P']}, {r['RED_C']}]", flush=True)
        for k, v in r["us"].items():
            print(f"  {v:9.2f} us  {k}" if isinstance(v, float) else f"  {v}  {k}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
