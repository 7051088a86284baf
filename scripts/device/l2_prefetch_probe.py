"""Does asking the next tiles into L2 lift the latency-bound backward rows? (device probe)

    python scripts/device/l2_prefetch_probe.py [--keys plain:1536:bf16:65536,...] [--ahead 1,2,4,8]
        [--rounds 4] [--replays 24]

For each key (form:H:w_dtype:T), the split-rstd program at that key (`--keys` names it, or the
default list below), its `.l2p` (prefetch.global.L2 per line) and `.l2b` (cp.async.bulk.prefetch.L2
per row) variants at each `--ahead` distance (unregistered ones are built from the base's launch
policy, named `<base>@l2p8`), and the program the route table runs there, are captured as CUDA graphs
and timed side by side in one process by the harness's own protocol (cake_router.measure.protocol:
L2 flushed before every replay, CUPTI kernel spans, rotated order). Each variant's dx and dw are
compared with the base's, bit for bit (the prefetch must change no value). Copy bandwidth is measured
in the same run; the table gives each median as us and % of copy (bytes = 6 x rows x H + 4 x rows).

Not the campaign protocol's statistics (one session, no A/A floor): an indicative, side-by-side
answer to whether the idea is worth qualifying and timing with `measure`. Writes
$OUT/l2-prefetch-probe.json.
"""
from __future__ import annotations

import argparse
import dataclasses
import os

import torch

from cake_kernels import registry, runner
from cake_kernels.inputs import make_inputs
from probe_common import routed_backward as routed
from probe_common import probe_keys, time_backwards

# (form, H, w_dtype, T, base): the copy target's binding rows and the peer target's (plain H 1536).
DEFAULT_KEYS = (
    ("heads_contiguous", 256, "bf16", 65536, "bwd.twosum_pair.p12x.r2.w1.fw.pf.wr.xs.sr.fl"),
    ("plain", 1536, "bf16", 65536, "bwd.twosum_pair.p1x.r4.w8.fw.pf.wr.xs.wc"),
    ("plain", 1536, "bf16", 1048576, "bwd.twosum_pair.p1x.r4.w8.fw.pf.wr.xs.wc"),
    ("plain", 512, "bf16", 65536, "bwd.twosum_pair.p4x.r4.w2.fw.pf.wr.xs.wc"),
    ("heads_contiguous", 256, "bf16", 262144, "bwd.twosum_pair.p12x.r2.w1.fw.pf.wr.xs.sr.fl"),
    ("plain", 8192, "bf16", 262144, "bwd.twosum_pair.p1x.w16.fw.pf.wr.xs"),
    ("heads_strided", 256, "bf16", 262144, "bwd.twosum_pair.p12x.r2.w1.fw.pf.wr.xs.sr"),
)


def variant(base: registry.Program, kind: str, ahead: int) -> registry.Program:
    """The registered `<base>.l2{p,b}{ahead}` program, or the same launch policy built here."""
    letter = registry.L2_PREFETCH_LETTERS[kind]
    try:
        return registry.get(f"{base.name}.l2{letter}{ahead}")
    except registry.UnknownProgramError:
        return dataclasses.replace(base, name=f"{base.name}@l2{letter}{ahead}",
                                   launch=dataclasses.replace(base.launch, l2_prefetch=kind, l2_ahead=ahead))


def probe_key(form: str, H: int, w: str, T: int, base_name: str, aheads: list[int], rounds: int, replays: int,
              copy_TBps: float, dev) -> list[dict]:
    base = registry.get(base_name)
    progs = [base] + [variant(base, kind, a) for kind in ("lines", "bulk") for a in aheads]
    r = routed(form, H, w, T)
    if r and r not in {p.name for p in progs}:
        progs.append(registry.get(r))
    inp = make_inputs("gaussian", T, H, w, form, seed=1, device=dev)
    _, rstd, _ = runner.forward("fwd.row.r1.w8", inp.x, inp.w, 1e-6)
    rows = inp.x.numel() // H
    nbytes = 6 * rows * H + 4 * rows
    medians, samples, outs = time_backwards(progs, inp.g, inp.x, inp.w, rstd, None, rounds, replays, dev)
    dx0, dw0, _ = outs[base.name]
    res = []
    for p in progs:
        med = medians[p.name]
        dx, dw, _ = outs[p.name]
        same = bool(torch.equal(dx, dx0) and torch.equal(dw, dw0)) if p.launch.l2_prefetch != "none" or p is base else None
        res.append(dict(form=form, H=H, w_dtype=w, T=T, program=p.name, routed=p.name == r, base=base.name,
                        median_us=round(med, 3), n=len(samples[p.name]), pct_copy=round(100 * nbytes / (med * 1e-6) / 1e12 / copy_TBps, 1),
                        vs_base=round(medians[base.name] / med, 4), bitwise_base=same))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", default="", help="comma list of form:H:w_dtype:T:base (default: the binding rows)")
    ap.add_argument("--ahead", default="1,2,4,8", help="comma list of tiles ahead to ask into L2 (1-16)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--replays", type=int, default=24, help="replays per program per session (2 sessions)")
    ap.add_argument("--seconds", type=float, default=0, help="stop starting keys after this many seconds (0: none)")
    args = ap.parse_args()
    keys = DEFAULT_KEYS
    if args.keys:
        keys = []
        for k in args.keys.split(","):
            f = k.split(":")
            if len(f) != 5:
                raise SystemExit(f"--keys: {k!r} is not form:H:w_dtype:T:base")
            keys.append((f[0], int(f[1]), f[2], int(f[3]), f[4]))
    aheads = [int(a) for a in args.ahead.split(",")]
    if any(not 1 <= a <= 16 for a in aheads):
        raise SystemExit(f"--ahead: {args.ahead!r}: each distance must be 1-16")
    dev = torch.device("cuda")

    def show(rows):
        print(f"  {'program':58s} {'us':>10s} {'% copy':>7s} {'base/this':>9s} {'bitwise':>7s}")
        for r in rows:
            tag = " (routed)" if r["routed"] else ""
            print(f"  {(r['program'] + tag)[:58]:58s} {r['median_us']:10.2f} {r['pct_copy']:7.1f} {r['vs_base']:9.4f} "
                  f"{str(r['bitwise_base']):>7s}", flush=True)

    probe_keys(keys, ("form", "H", "w_dtype", "T", "base"),
               lambda form, H, w, T, base, copy: probe_key(form, H, w, T, base, aheads, args.rounds, args.replays, copy, dev),
               show, os.path.join(os.environ.get("OUT", "/tmp"), "l2-prefetch-probe.json"), args.seconds)


if __name__ == "__main__":
    main()
