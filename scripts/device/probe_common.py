"""What the device probes (twosum_probe, fwd_probe, wdtype_probe, l2_prefetch_probe, variant_probe)
share: the builds Triton has made so far of some kernels, one indicative timer, the routed backward
at a key, backward programs timed side by side by the harness's protocol, and the loop over keys that
writes a probe's JSON.

Imported by those scripts as `probe_common` (they run as `python scripts/device/NAME.py`, so this
folder is on the path)."""
from __future__ import annotations

import json
import time

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


def routed_backward(form: str, H: int, w: str, T: int) -> str | None:
    """The backward the shipped sm_90a table runs at (form, H, w, T), deterministic mode; None where
    there is no table or the table does not hold the key."""
    from cake_kernels.routes.dispatch import route, table_for

    table = table_for("sm_90a")
    try:
        return route(table, "sm_90a", "bwd", H, w, form, "det", T, warn=False) if table is not None else None
    except Exception:  # a key the table does not hold
        return None


def time_backwards(progs, g, x, w, rstd, gres, rounds: int, replays: int, dev):
    """({name: median us}, {name: samples}, {name: (dx, dw, workspace)}) of the backward `progs` on
    one input, each captured as a CUDA graph and timed side by side by the harness's own protocol
    (cake_router.measure.protocol: L2 flushed before every replay, CUPTI kernel spans, rotated order,
    two sessions)."""
    import statistics

    from cake_kernels import runner
    from cake_router.measure.protocol import Entry, capture, time_entries

    H = x.shape[-1]
    entries, outs = [], {}
    for p in progs:
        ws = runner.workspace_for(p, x)
        dx = torch.empty_like(x)
        dw = torch.empty(H, dtype=torch.float32, device=dev)

        def call(p=p, ws=ws, dx=dx, dw=dw):
            runner.backward(p, g, x, w, rstd, gres, ws, dx_out=dx, dw_out=dw)

        entries.append(Entry(p.name, "bwd", 0, capture(call, dev)))
        # A CUDA graph holds raw pointers, not the tensors: the workspace and outputs must outlive it
        # (a freed workspace reused by the next program's allocations faulted on an H100, session 31).
        outs[p.name] = (dx, dw, ws)
    samples: dict[str, list[float]] = {p.name: [] for p in progs}
    for s in range(2):
        for rec in time_entries(entries, s, rounds, replays, dev):
            samples[rec["impl"]].extend(rec["samples_us"])
    return {name: statistics.median(v) for name, v in samples.items()}, samples, outs


def probe_keys(keys, fields: tuple[str, ...], probe, show, path: str, seconds: float) -> dict:
    """Run `probe(*key, copy_TBps)` (a list of row dicts) for each key on the GPU, the copy bandwidth
    measured once here, and return the probe's record {gpu, sms, torch, triton, copy_TBps, rows},
    written to `path` after every key. `fields` names the key's parts (the first four: form, H,
    w_dtype, T). A key's failure (a launch error, memory) is recorded as a row with its `error` and the
    others go on; past `seconds` (0: no limit) no key is started. `show(rows)` prints a finished key's
    table."""
    from cake_router.measure.protocol import copy_bandwidth_TBps

    dev = torch.device("cuda")
    t0 = time.time()
    out = {"gpu": torch.cuda.get_device_name(), "sms": torch.cuda.get_device_properties(0).multi_processor_count,
           "torch": torch.__version__, "triton": triton.__version__, "copy_TBps": copy_bandwidth_TBps(dev), "rows": []}
    print(f"{out['gpu']} ({out['sms']} SMs), torch {out['torch']}, Triton {out['triton']}: copy {out['copy_TBps']:.3f} TB/s",
          flush=True)
    for key in keys:
        form, H, w, T = key[:4]
        if seconds and time.time() - t0 > seconds:
            print(f"budget spent: {form} H {H} {w} T {T} not probed", flush=True)
            continue
        try:
            rows = probe(*key, out["copy_TBps"])
            torch.cuda.empty_cache()  # the key's inputs and graphs are gone with probe's frame
        except Exception as exc:  # one key's failure must not lose the others
            print(f"{form} H {H} {w} T {T}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
            out["rows"].append(dict(zip(fields, key), error=f"{type(exc).__name__}: {exc}"[:500]))
            continue
        out["rows"].extend(rows)
        print(f"\n{form} H {H} {w} T {T}  ({time.time() - t0:.0f} s)", flush=True)
        show(rows)
        json.dump(out, open(path, "w"), indent=1)
    json.dump(out, open(path, "w"), indent=1)
    return out
