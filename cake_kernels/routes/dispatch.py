"""Runtime dispatch: (op, H, w_dtype, form, mode, T) -> program name, by the shipped route table.

Tables are loaded once per arch and verified (checksum, cover, every program registered). For an
arch, key or shape the table does not cover, a documented fallback runs with a one-time warning:
the backward falls back to `bwd.twosum_pair.p4x.w4.fw.pf` (compensated, in budget at every T measured),
the forward to `fwd.row.r1.w8`. Without CUDA the reference programs run (no table, no warning).

Windows the solver marked `no-eligible-program` or `unverified` name the most accurate program
*measured* there, which may still be over the dw budget; the runtime does not run such a program
silently: it runs the backward fallback (measured in budget at every H up to T = 1,048,576 by the
GPU selftest) with a one-time warning naming the window.
"""

from __future__ import annotations

import functools
import threading
import warnings

import torch

from cake_kernels import registry
from cake_kernels.routes.table import RouteTable, load_table, routes_dir

# The backward fallback is a compensated program: in budget at every T and key measured so far
# (worst dw err/tol 0.0006 at T = 1M on the H200), so a missing or untrusted route never costs
# accuracy. Of that arithmetic this launch policy has the best geometric mean over H 512-8192 on
# the H200 (2.1-3.7 TB/s at T = 1M, bench/results/h200-2026-12-02b/twosum-probe2.json).
FALLBACK = {"fwd": "fwd.row.r1.w8", "bwd": "bwd.twosum_pair.p4x.w4.fw.pf"}
UNTRUSTED_REASONS = ("no-eligible-program", "unverified")
REFERENCE = {"fwd": "fwd.reference", "bwd": "bwd.reference"}

# Compute capability -> the arch name route tables use.
ARCH_BY_CAPABILITY = {(9, 0): "sm_90a", (10, 0): "sm_100a", (10, 3): "sm_103a", (10, 7): "sm_107a"}

_warned: set[tuple] = set()
_warn_lock = threading.Lock()


class FallbackWarning(UserWarning):
    """The route table has no window for this key; the documented fallback program runs."""


@functools.lru_cache(maxsize=None)
def arch_of(device_index: int) -> str:
    cap = torch.cuda.get_device_capability(device_index)
    return ARCH_BY_CAPABILITY.get(cap, f"sm_{cap[0]}{cap[1]}")


@functools.lru_cache(maxsize=None)
def table_for(arch: str) -> RouteTable | None:
    """The verified shipped table of `arch`, or None when none ships. A corrupt table raises."""
    path = routes_dir() / f"{arch}.json"
    if not path.exists():
        return None
    return load_table(path, known_programs=set(registry.names()))


def _fallback(op: str, reason: tuple, warn: bool = True) -> str:
    if not warn:
        return FALLBACK[op]
    with _warn_lock:
        if reason not in _warned:
            _warned.add(reason)
            warnings.warn(
                f"cake_kernels: no route for {reason}; running the fallback program {FALLBACK[op]!r} "
                f"(solve a table with `python -m cake_router solve --arch <arch>`)",
                FallbackWarning, stacklevel=4,
            )
    return FALLBACK[op]


def route(table: RouteTable | None, arch: str, op: str, H: int, w_dtype: str, form: str, mode: str, T: int,
          *, warn: bool = True) -> str:
    """The program for a call on `arch` given its verified table (pure: no device needed).

    `warn=False` is for tools that ask what the runtime would run (the bench, the harness): they
    neither see the one-time FallbackWarning nor use it up for the process's real calls.
    """
    key_mode = "any" if op == "fwd" else mode
    if table is None:
        return _fallback(op, (arch, "no table"), warn)
    win = table.lookup(op, H, w_dtype, form, key_mode, max(T, 1))
    if win is None:
        return _fallback(op, (arch, op, H, w_dtype, form, key_mode), warn)
    if op == "bwd" and win.reason in UNTRUSTED_REASONS:
        return _fallback(op, (arch, op, H, w_dtype, form, key_mode, f"T {win.lo}..{win.hi} is {win.reason}"), warn)
    if not registry.get(win.program).supports(H, form, w_dtype):
        return _fallback(op, (arch, op, H, w_dtype, form, key_mode, "unsupported by " + win.program), warn)
    return win.program


def choose(op: str, device: torch.device, H: int, w_dtype: str, form: str, mode: str, T: int) -> str:
    """The program to run for this call (a registered name)."""
    if device.type != "cuda":
        return REFERENCE[op]
    arch = arch_of(device.index if device.index is not None else torch.cuda.current_device())
    return route(table_for(arch), arch, op, H, w_dtype, form, mode, T)
