"""Emulate, on the CPU, the dw numerics of uncompensated persistent backward programs, to decide
whether a kernel design is worth building (session 27).

    PYTHONPATH=. python scripts/dw_numerics_emulation.py --H 4096 --P 264 --inputs 3 --T 4096,16384

For each input of the three families (cake_kernels.inputs, the harness's seeds) it forms the FP32
products g * (x * rstd) as the `pair` rows kernel does, and sums them per program over its rows
(row r belongs to program r % P) in two ways, against the FP64 reference:

- `pair`: one FP32 running sum per program and column (the `pair` family), partials summed in FP64;
- `bf64.fF`: FP32 sums over blocks of F consecutive rows of a program, each block folded into an
  FP64 total (a `blocked` program whose fold is FP64: no compensation registers).

Prints the worst dw err/tol (1e-4 + 1e-4 |ref|) per family over the inputs. An emulation of the sums'
order, not of the kernels: it omits nothing that rounds in them, but FMA contraction or a tile sum
could differ.
"""
from __future__ import annotations

import argparse
import time

import torch

from cake_kernels.inputs import FAMILIES, make_inputs
from cake_kernels.reference import dw_err_over_tol, reference_forward
from cake_router.measure.accuracy import seed_for

EPS = 1e-6


def err_over_tol(dw: torch.Tensor, ref: torch.Tensor) -> float:
    return float(dw_err_over_tol(dw, ref).max())


def emulate(H: int, T: int, P: int, inputs: int, folds) -> dict[tuple[str, str], float]:
    worst: dict[tuple[str, str], float] = {}
    for fam in FAMILIES:
        for i in range(inputs):
            inp = make_inputs(fam, T, H, "fp32", "plain", seed_for(H, T, "plain", fam, i))
            _, rstd, _ = reference_forward(inp.x, inp.w, EPS, None)
            r = rstd.reshape(-1, 1)
            prod = inp.g.float() * (inp.x.float() * r.float())
            ref = (inp.g.double() * inp.x.double() * r.double()).sum(0)
            steps = -(-T // P)
            per_prog = torch.cat([prod, prod.new_zeros(steps * P - T, H)]).view(steps, P, H)
            acc = torch.zeros(P, H)
            for k in range(steps):
                acc += per_prog[k]
            got = {"pair": err_over_tol(acc.double().sum(0).float(), ref)}
            for F in folds:
                total = torch.zeros(P, H, dtype=torch.float64)
                for k0 in range(0, steps, F):
                    blk = torch.zeros(P, H)
                    for k in range(k0, min(steps, k0 + F)):
                        blk += per_prog[k]
                    total += blk.double()
                got[f"bf64.f{F}"] = err_over_tol(total.sum(0).float(), ref)
            for name, v in got.items():
                worst[(fam, name)] = max(worst.get((fam, name), 0.0), v)
    return worst


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--H", type=int, default=4096)
    ap.add_argument("--P", type=int, default=264, help="programs (2 per SM x 132 SMs: the p2x programs)")
    ap.add_argument("--inputs", type=int, default=3, help="inputs per family")
    ap.add_argument("--T", default="4096,16384")
    ap.add_argument("--folds", default="8,16,32")
    a = ap.parse_args(argv)
    folds = [int(f) for f in a.folds.split(",")]
    for T in (int(t) for t in a.T.split(",")):
        t0 = time.time()
        worst = emulate(a.H, T, a.P, a.inputs, folds)
        print(f"H={a.H} T={T} P={a.P} ({T / a.P:.1f} rows per program, {a.inputs} inputs per family, {time.time() - t0:.0f} s)")
        for name in ["pair"] + [f"bf64.f{F}" for F in folds]:
            print(f"  {name:9s} " + "  ".join(f"{fam}={worst[(fam, name)]:.3f}" for fam in FAMILIES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
