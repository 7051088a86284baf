"""The timing protocol of ROUTING-POLICY.md section 4, for one workload in one session.

For each (implementation, op) a CUDA graph is captured. A round replays every graph `k` times in
a balanced order (rotated by round and session; odd sessions reversed); before each replay a
dedicated Triton kernel overwrites a buffer larger than L2 (cold L2), outside the span. The span
of a replay is read from CUPTI through `torch.profiler`: first kernel start to last kernel end of
everything between two flush kernels, so every setup, memset, reduce, cast and copy kernel of the
implementation is inside it. When the profiler yields no usable kernel records, CUDA events
around each replay are the recorded fallback (`timer: events`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

FLUSH_BYTES = 512 << 20  # > 8x the H200's 60 MB L2
FLUSH_KERNEL_NAME = "l2_flush_kernel"


@triton.jit
def l2_flush_kernel(BUF, n, val, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(BUF + offs, tl.full([BLOCK], val, tl.int32), mask=offs < n)


class Flusher:
    def __init__(self, device):
        self.n = FLUSH_BYTES // 4
        self.buf = torch.empty(self.n, dtype=torch.int32, device=device)
        self.i = 0

    def __call__(self):
        self.i += 1
        l2_flush_kernel[(triton.cdiv(self.n, 4096),)](self.buf, self.n, self.i, BLOCK=4096, num_warps=8)


@dataclass
class Entry:
    impl: str
    op: str
    copy: int
    graph: torch.cuda.CUDAGraph


def capture(fn, device, pool=None) -> torch.cuda.CUDAGraph:
    """Warm up on a side stream (compiles, autotunes, allocates), then capture one call."""
    s = torch.cuda.Stream(device)
    s.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream(device).wait_stream(s)
    torch.cuda.synchronize(device)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, pool=pool):
        fn()
    torch.cuda.synchronize(device)
    return g


def balanced_order(n: int, round_idx: int, session_idx: int, rounds: int) -> list[int]:
    """Rotated by round so every position is taken about equally; odd sessions reversed.

    Forward sessions (0, 2, ...) and reversed sessions (1, 3, ...) each step through consecutive
    rotations, so within each group every implementation takes every position equally often up to
    one; over both groups up to two.
    """
    k = ((session_idx // 2) * rounds + round_idx) % n if n else 0
    order = list(range(k, n)) + list(range(k))
    return order[::-1] if session_idx % 2 == 1 else order


def _cupti_spans(prof, expected: int) -> list[float] | None:
    """Spans (us) of the replays between flush kernels, in issue order; None when unusable."""
    evs = []
    for ev in prof.profiler.kineto_results.events():
        if ev.device_type() == torch.autograd.DeviceType.CUDA and ev.duration_ns() >= 0:
            evs.append((ev.start_ns(), ev.start_ns() + ev.duration_ns(), ev.name()))
    evs.sort()
    spans: list[float] = []
    cur: list[tuple] | None = None
    for s, e, name in evs:
        if FLUSH_KERNEL_NAME in name:
            if cur is not None:
                spans.append((max(x[1] for x in cur) - min(x[0] for x in cur)) / 1e3 if cur else float("nan"))
            cur = []
        elif cur is not None:
            cur.append((s, e))
    if cur is not None:
        spans.append((max(x[1] for x in cur) - min(x[0] for x in cur)) / 1e3 if cur else float("nan"))
    if len(spans) != expected or any(s != s for s in spans):
        return None
    return spans


def time_entries(entries: list[Entry], session_idx: int, rounds: int, replays: int, device, timer: str = "cupti",
                 deadline: float | None = None) -> list[dict]:
    """Runs the rounds; returns one dict per (round, entry): impl, op, copy, round, position, timer, samples_us."""
    from torch.profiler import ProfilerActivity, profile

    flush = Flusher(device)
    per_round = max(1, -(-replays // rounds))
    out: list[dict] = []
    for e in entries:  # one warm replay each, outside any measurement
        flush()
        e.graph.replay()
    torch.cuda.synchronize(device)
    for r in range(rounds):
        order = balanced_order(len(entries), r, session_idx, rounds)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(len(order) * per_round)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(len(order) * per_round)]
        use_cupti = timer == "cupti"
        ctx = profile(activities=[ProfilerActivity.CUDA]) if use_cupti else None
        if ctx is not None:
            ctx.__enter__()
        k = 0
        for idx in order:
            g = entries[idx].graph
            for _ in range(per_round):
                flush()
                starts[k].record()
                g.replay()
                ends[k].record()
                k += 1
        torch.cuda.synchronize(device)
        spans = None
        if ctx is not None:
            ctx.__exit__(None, None, None)
            spans = _cupti_spans(ctx, len(order) * per_round)
        used = "cupti" if spans is not None else "events"
        if spans is None:
            spans = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
        for pos, idx in enumerate(order):
            e = entries[idx]
            out.append(dict(impl=e.impl, op=e.op, copy=e.copy, round=r, position=pos, timer=used,
                            samples_us=[round(v, 4) for v in spans[pos * per_round:(pos + 1) * per_round]]))
        if deadline is not None and time.time() > deadline and r < rounds - 1:
            break  # out of budget: fewer rounds, recorded as such (sample counts say it)
    return out


def copy_bandwidth_TBps(device, gib: int = 4, repeats: int = 10) -> float:
    """Device-to-device copy bandwidth (read + write bytes per second, TB/s), median of `repeats`.

    Recorded in every session's run record (`copy_TBps`): the performance targets are fractions of
    the copy bandwidth measured in the same run, and a session on a throttled or shared GPU shows
    up here before it shows up in the timings. CUDA events around one copy each; 4 GiB per copy
    is far beyond L2, so this is DRAM bandwidth.
    """
    n = (gib << 30) // 2
    a = torch.empty(n, dtype=torch.bfloat16, device=device).fill_(1.0)
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    torch.cuda.synchronize(device)
    times = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    del a, b
    torch.cuda.empty_cache()
    times.sort()
    return 2 * n * 2 / (times[len(times) // 2] * 1e-3) / 1e12
