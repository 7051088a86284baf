"""What the device probes (twosum_probe, fwd_probe, wdtype_probe) share: the builds Triton has made
so far of some kernels, and one indicative timer.

Imported by those scripts as `probe_common` (they run as `python scripts/device/NAME.py`, so this
folder is on the path)."""
from __future__ import annotations

import torch
import triton


def builds(*kernels) -> dict:
    """id -> (kernel name, compiled build) of every build the @triton.jit `kernels` have so far, with
    its handles loaded so that `n_regs` and `n_spills` can be read. Compare two calls to find the
    builds a launch added."""
    out = {}
    for fn in kernels:
        for cache in getattr(fn, "device_caches", {}).values():
            for k in (cache[0] if isinstance(cache, tuple) else cache).values():
                try:
                    k._init_handles()
                except Exception:  # a build whose module cannot load here still has its asm
                    pass
                out[id(k)] = (fn.__name__, k)
    return out


def time_us(fn, T: int) -> float:
    """Median time of `fn` in us: one call first (compiles, and raises what it raises), then
    triton.testing.do_bench, which clears L2 between repetitions (an indicative timer without CUDA
    graphs, so small T is host-bound: not the campaign protocol)."""
    fn()
    torch.cuda.synchronize()
    return triton.testing.do_bench(fn, warmup=5, rep=40 if T < 1 << 20 else 100, return_mode="median") * 1e3
