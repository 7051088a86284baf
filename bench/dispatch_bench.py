"""Per-call dispatch overhead of the runtime (Python only, no kernel): prints a table.

    python bench/dispatch_bench.py [--calls 200000]

Measures, with the shipped sm_90a table: the window lookup (`dispatch.route`, a bisect per call),
the route-key derivation (`op.route_shape`), and the op's argument validation, each per call.
On the GPU the same Python path runs before every launch; its cost adds to the kernel's span only
when the GPU is idle (launch-bound small T), and not at all under CUDA graphs.
"""

from __future__ import annotations

import argparse
import time

import torch
from rich.console import Console
from rich.table import Table

from cake_kernels import op, registry, runner
from cake_kernels.routes import dispatch
from cake_kernels.routes.table import load_table, routes_dir


def per_call_us(fn, calls: int) -> float:
    for _ in range(1000):
        fn()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200_000)
    args = ap.parse_args()
    table = load_table(routes_dir() / "sm_90a.json", known_programs=set(registry.names()))
    key = next(k for k in table.keys() if k[0] == "bwd")
    x = torch.empty(4096, key[1], dtype=torch.bfloat16)
    w = torch.empty(key[1], dtype=torch.float32)
    rows = [
        ("dispatch.route (bisect in the verified table)", lambda: dispatch.route(table, "sm_90a", "bwd", key[1], key[2], key[3], key[4], 4096)),
        ("op.route_shape (form and T of the call)", lambda: op.route_shape(x, None)),
        ("op argument validation", lambda: op._validate_common(x, w, 1e-6, None)),
        ("runner.rows_of (row addressing)", lambda: runner.rows_of("x", x, key[1])),
    ]
    t = Table(title=f"cake_kernels per-call dispatch overhead ({args.calls} calls each, {torch.__version__}, this CPU)")
    t.add_column("step")
    t.add_column("us per call", justify="right")
    total = 0.0
    for name, fn in rows:
        us = per_call_us(fn, args.calls)
        total += us
        t.add_row(name, f"{us:.2f}")
    t.add_row("[b]sum[/b]", f"[b]{total:.2f}[/b]")
    Console().print(t)


if __name__ == "__main__":
    main()
