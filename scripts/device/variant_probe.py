"""Side-by-side backward variants at a few keys, with each one's dw checked against FP64 (device probe)

    python scripts/device/variant_probe.py --keys plain:1536:bf16:65536,plain:1536:bf16:1048576 \
        --programs 'bwd.twosum_pair.p2x.r2.w8.s4.wr.tma.wc,bwd.twosum_pair.p2x.r2.w8.fw.pf.wr.sp.xs.wc.mr128'
        [--rounds 4] [--replays 24] [--seconds 300]

At each key (form:H:w_dtype:T) the programs named (registered ones that support the key; `--programs`
entries are name prefixes too, ending in `*`) and the program the route table runs there are captured
as CUDA graphs and timed side by side in one process by the harness's own protocol
(cake_router.measure.protocol: L2 flushed before every replay, CUPTI kernel spans, rotated order).
Each program's dw is compared with the FP64 oracle on the same input (worst err/tol, the budget's
1e-4 + 1e-4 |ref|; one gaussian input, so a screen, not the accuracy protocol's 120 per family).
Copy bandwidth is measured in the same run; the table gives each median as us, % of copy (bytes =
6 x rows x H + 4 x rows, and the residual gradient's 2 x rows x H where the form has one) and the
routed program's time over this one's.

Not the campaign protocol's statistics (one session, no A/A floor): an indicative answer to whether
a variant is worth qualifying and timing with `measure`. Writes $OUT/variant-probe.json.
"""
from __future__ import annotations

import argparse
import os

import torch

from cake_kernels import reference, reference_fp64, registry, runner
from cake_kernels.inputs import make_inputs
from probe_common import routed_backward as routed
from probe_common import probe_keys, time_backwards


def parse_keys(text: str) -> list[tuple[str, int, str, int]]:
    keys = []
    for k in text.split(","):
        f = k.split(":")
        if len(f) != 4 or f[0] not in registry.FORMS or f[2] not in registry.W_DTYPES or not (f[1].isdigit() and f[3].isdigit()):
            raise SystemExit(f"--keys: {k!r} is not form:H:w_dtype:T (form one of {registry.FORMS}, "
                             f"w_dtype one of {registry.W_DTYPES})")
        keys.append((f[0], int(f[1]), f[2], int(f[3])))
    return keys


def pick(patterns: list[str], H: int, form: str, w: str) -> list[registry.Program]:
    """The backward programs the patterns name that support (H, form, w); an unknown exact name is an error."""
    out = []
    for pat in patterns:
        if pat == "routed":  # measure's word for the route table's program, which every key times anyway
            continue
        if pat.endswith("*"):
            out += [p for p in registry.all_programs() if p.op == "bwd" and p.name.startswith(pat[:-1])]
        else:
            out.append(registry.get(pat))
    seen, progs = set(), []
    for p in out:
        if p.name not in seen and p.op == "bwd" and p.supports(H, form, w):
            seen.add(p.name)
            progs.append(p)
    return progs


def probe_key(form: str, H: int, w: str, T: int, patterns: list[str], rounds: int, replays: int, copy_TBps: float,
              dev) -> list[dict]:
    progs = pick(patterns, H, form, w)
    r = routed(form, H, w, T)
    if r and r not in {p.name for p in progs}:
        progs.insert(0, registry.get(r))
    inp = make_inputs("gaussian", T, H, w, form, seed=1, device=dev)
    _, rstd, _ = runner.forward("fwd.row.r1.w8", inp.x, inp.w, 1e-6)
    gres = getattr(inp, "g_h_new", None) if form == "residual" else None
    rows = inp.x.numel() // H
    nbytes = 6 * rows * H + 4 * rows + (2 * rows * H if gres is not None else 0)
    dw64 = reference_fp64.dw64(inp.g, inp.x, rstd)
    medians, samples, outs = time_backwards(progs, inp.g, inp.x, inp.w, rstd, gres, rounds, replays, dev)
    ref_us = medians.get(r) if r else None
    res = []
    for p in progs:
        med = medians[p.name]
        _, dw, _ = outs[p.name]
        err = float(reference.dw_err_over_tol(dw, dw64).max())
        res.append(dict(form=form, H=H, w_dtype=w, T=T, program=p.name, routed=p.name == r, median_us=round(med, 3),
                        n=len(samples[p.name]), pct_copy=round(100 * nbytes / (med * 1e-6) / 1e12 / copy_TBps, 1),
                        routed_over_this=round(ref_us / med, 4) if ref_us else None, dw_err_over_tol=round(err, 5)))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", required=True, help="comma list of form:H:w_dtype:T")
    ap.add_argument("--programs", required=True,
                    help="comma list of backward program names or name prefixes ending in * (`routed`, the route "
                         "table's program, is timed at every key anyway)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--replays", type=int, default=24, help="replays per program per session (2 sessions)")
    ap.add_argument("--seconds", type=float, default=0, help="stop starting keys after this many seconds (0: none)")
    ap.add_argument("--out", default="variant-probe.json", help="file name under $OUT")
    args = ap.parse_args()
    keys = parse_keys(args.keys)
    patterns = [p for p in args.programs.split(",") if p]
    for pat in patterns:  # an unknown exact name fails here, before any GPU time
        if not pat.endswith("*") and pat != "routed":
            registry.get(pat)
    dev = torch.device("cuda")

    def show(rows):
        print(f"  {'program':60s} {'us':>10s} {'% copy':>7s} {'routed/this':>11s} {'dw err/tol':>10s}")
        for r in sorted(rows, key=lambda r: r["median_us"]):
            tag = " (routed)" if r["routed"] else ""
            rel = f"{r['routed_over_this']:11.4f}" if r["routed_over_this"] else f"{'-':>11s}"
            print(f"  {(r['program'] + tag)[:60]:60s} {r['median_us']:10.2f} {r['pct_copy']:7.1f} {rel} "
                  f"{r['dw_err_over_tol']:10.5f}", flush=True)

    probe_keys(keys, ("form", "H", "w_dtype", "T"),
               lambda form, H, w, T, copy: probe_key(form, H, w, T, patterns, args.rounds, args.replays, copy, dev),
               show, os.path.join(os.environ.get("OUT", "/tmp"), args.out), args.seconds)


if __name__ == "__main__":
    main()
