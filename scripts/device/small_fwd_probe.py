"""Device probe for the launch-bound forward rows (T <= 256): what the timed loop adds to a kernel.

    python scripts/device/small_fwd_probe.py [--keys plain:4096:fp32:64,...] [--programs fwd.row.r1]
        [--peers peer.torch_compile.default] [--iters 300]

The campaign protocol (cake_router.measure.protocol) replays each implementation's CUDA graph after
a 512 MB L2 flush and reads the kernel's span from CUPTI. At T 64 our one-row forwards take about
160 ns more than torch.compile's kernel there, while ncu (caches flushed) has ours the faster
kernel. This probe times every implementation's kernel in four settings, side by side:

- `cold`: flush, then the graph (the protocol);
- `code-warm`: flush, then the same graph on a second set of buffers (same shapes, so the same
  compiled kernel: its code, launch path and constant banks are warm, its data cold), then the
  graph; the second kernel is the sample;
- `tiny-flush`: the flush kernel on a 4 KB buffer, then the graph: code and data warm, but another
  kernel (no shared memory) runs between two replays, as in the protocol;
- `hot`: the graph replayed back to back (code and data warm).

and the SASS size of each kernel (instructions, from cuobjdump of the cubin). If the gap is in
`cold` and not in `code-warm`, the kernel's start (instruction fetch from DRAM after the flush,
parameter and constant loads) is what differs, not its memory traffic; if it is also in
`tiny-flush`, switching from the flush kernel (an SM's shared-memory carveout, its instruction
caches) is. Writes
$OUT/small-fwd-probe.json and prints one table per key.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics

import torch
import triton

from cake_kernels import registry
from cake_kernels import compile_check as cc
from cake_kernels.compile_check import cuobjdump
from cake_kernels.inputs import make_inputs
from cake_router.measure import impls
from cake_router.measure.protocol import FLUSH_KERNEL_NAME, Flusher, capture

MODES = ("cold", "code-warm", "tiny-flush", "hot")
_SASS_LINE = re.compile(r"/\*[0-9a-f]{4}\*/")


def kernel_events(prof) -> list[tuple[int, int, str]]:
    evs = [(e.start_ns(), e.duration_ns(), e.name()) for e in prof.profiler.kineto_results.events()
           if e.device_type() == torch.autograd.DeviceType.CUDA and e.duration_ns() >= 0]
    return sorted(evs)


def timed(mode: str, g_a, g_b, flush, tiny, iters: int) -> tuple[list[float], list[str]]:
    """Durations (us) of the sampled kernel in `mode`, and the names of the kernels sampled."""
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        flush()
        g_b.replay()
        g_a.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            if mode == "tiny-flush":
                tiny()
            elif mode != "hot":
                flush()
            if mode == "code-warm":
                g_b.replay()
            g_a.replay()
        torch.cuda.synchronize()
    evs = [e for e in kernel_events(prof) if FLUSH_KERNEL_NAME not in e[2]]
    per = 2 if mode == "code-warm" else 1
    n, rem = divmod(len(evs), per * iters)
    if rem or not n:
        raise RuntimeError(f"{mode}: {len(evs)} kernel records for {iters} iterations of {per} replay(s)")
    spans, names = [], set()
    for i in range(iters):  # the sample is the last replay of the iteration: its n kernels' span
        group = evs[(i * per + per - 1) * n:(i * per + per) * n]
        spans.append((max(s + d for s, d, _ in group) - group[0][0]) / 1e3)
        names.update(name for _, _, name in group)
    return spans, sorted(names)


def code_of(name: str, key: tuple[str, int, str], kernel: str) -> dict:
    """SASS instructions, registers and static shared memory of the kernel: ours compiled as
    compile_check compiles the op's launch, torch.compile's from Inductor's cache (its kernel name is
    the cubin's file name)."""
    if name.startswith("peer."):
        roots = ("/tmp/torchinductor_*", os.path.expanduser("~/.triton/cache"))
        paths = [p for r in roots for p in glob.glob(f"{r}/**/{kernel}.cubin", recursive=True)]
        if not paths:
            return {}
        with open(paths[0], "rb") as f:
            cubin = f.read()
    else:
        form, H, w_dtype = key
        prog = registry.get(name)
        fn, sig, meta, warps = cc.kernels_of(prog, H, form == "residual", w_dtype)[0]
        divisible, ones = cc.runtime_specialization(sig, H)
        cubin = cc.compile_kernel(fn, sig, {**meta, **ones}, warps, "sm_90a", prog.launch.stages, divisible).asm["cubin"]
    res = cc._resources(cubin)
    return {"sass": len(_SASS_LINE.findall(cuobjdump(cubin, "-sass"))), "regs": res.get("registers"),
            "shared": res.get("shared_bytes")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", default="plain:4096:fp32:64,plain:6144:fp32:64,heads_strided:256:bf16:1,plain:8192:fp32:256")
    ap.add_argument("--programs", default="fwd.row.r1",
                    help="comma-separated name prefixes of our forwards; a name ending in $ is matched exactly")
    ap.add_argument("--peers", default="peer.torch_compile.default")
    ap.add_argument("--iters", type=int, default=300)
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush, tiny = Flusher(dev), Flusher(dev)
    tiny.n = 1024
    tiny.buf = tiny.buf[:1024].clone()
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__, "keys": []}
    prefixes = [p for p in args.programs.split(",") if p]
    for key in args.keys.split(","):
        form, H, w_dtype, T = key.split(":")
        H, T = int(H), int(T)
        wl = impls.Workload(H=H, form=form, w_dtype=w_dtype, T=T)
        inp_a = make_inputs("gaussian", T, H, w_dtype, form, seed=1, device=dev)
        inp_b = make_inputs("gaussian", T, H, w_dtype, form, seed=2, device=dev)
        out_a, out_b = impls.SharedOutputs.for_inputs(inp_a), impls.SharedOutputs.for_inputs(inp_b)
        progs = [p for p in registry.all_programs() if p.op == "fwd" and any(p.name == x[:-1] if x.endswith("$") else p.name.startswith(x) for x in prefixes)
                 and p.supports(H, form, w_dtype)]
        names = [p.name for p in progs] + [p for p in args.peers.split(",") if p]
        rows = []
        for name in names:
            try:
                if name.startswith("peer."):
                    pa, pb = impls.prepare_peer(name, inp_a, wl), impls.prepare_peer(name, inp_b, wl)
                else:
                    pa = impls.prepare_program(name, inp_a, wl, name, out_a)
                    pb = impls.prepare_program(name, inp_b, wl, name, out_b)
                g_a, g_b = capture(pa.ops["fwd"], dev), capture(pb.ops["fwd"], dev)
                row = {"impl": name}
                for mode in MODES:
                    us, knames = timed(mode, g_a, g_b, flush, tiny, args.iters)
                    row[mode] = statistics.median(us)
                row["kernels"] = knames
                row.update(code_of(name, (form, H, w_dtype), knames[0]))
            except Exception as exc:  # one implementation failing is reported, the probe goes on
                row = {"impl": name, "error": repr(exc)[:300]}
            rows.append(row)
            print(json.dumps(row), flush=True)
        res["keys"].append({"key": key, "rows": rows})
        print(f"\n{key} ({res['gpu']})\n{'impl':44} " + " ".join(f"{m:>10}" for m in MODES) + f" {'sass':>6} {'regs':>5} {'smem':>6}")
        for r in sorted(rows, key=lambda r: r.get("cold", 1e9)):
            if "error" in r:
                print(f"{r['impl']:44} {r['error'][:80]}")
            else:
                print(f"{r['impl']:44} " + " ".join(f"{r[m]:10.3f}" for m in MODES) + f" {r.get('sass', '-'):>6} {r.get('regs', '-'):>5} {r.get('shared', '-'):>6}")
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "small-fwd-probe.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
