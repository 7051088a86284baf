"""What the runner launches is what `compile_check.kernels_of` says it launches.

`kernels_of` mirrors the runner's choice of kernels by hand, and two things depend on it: the
compile check (registers, spills, shared memory of what the op runs) and the program fingerprints
(`cake_kernels.fingerprint`, which hashes the kernels a program launches). Here every program's
launches are recorded, not run: each Triton kernel in the program modules is replaced by a recorder,
and the recorded (kernel, compile-time arguments, warps, stages) must equal `kernels_of`'s."""

from __future__ import annotations

import pytest
import torch

from cake_kernels import compile_check, registry, runner
from cake_kernels.inputs import make_inputs
from tests.cake_kernels.helpers import recorded_launches


@pytest.fixture
def launches():
    with recorded_launches([]) as log:
        yield log


_TRITON = [p for p in registry.all_programs() if p.launch.grid != "reference"]


@pytest.mark.interpreter
@pytest.mark.parametrize("program", _TRITON, ids=[p.name for p in _TRITON])
def test_runner_launches_what_kernels_of_lists(program, launches):
    residual_ok = program.supports(96 if program.launch.split_h else 64, "residual", "fp32")
    for H in ((96,) if program.launch.split_h else (64, 96)):  # 96: not a power of two, split programs split it
        if not program.supports(H, "plain", "fp32"):
            continue
        for residual in (False, True) if residual_ok else (False,):
            inp = make_inputs("gaussian", 8, H, "fp32", seed=1)
            x, w = inp.x, inp.w
            launches.clear()
            if program.op == "fwd":
                runner.forward(program, x, w, 1e-6, residual=x.clone() if residual else None)
            else:
                rstd = torch.ones(8, dtype=torch.float32)
                runner.backward(program, inp.g, x, w, rstd, x.clone() if residual else None)
            listed = compile_check.kernels_of(program, H, residual, sms=runner.sm_count(x.device))
            want = [(fn.__name__, meta, warps) for fn, _, meta, warps in listed]
            if program.launch.reduce == "grid_sync":  # the interpreter runs the barrier's two sides as two launches
                ((name, meta, warps),) = want
                assert meta["PHASE"] == 0
                want = [(name, {**meta, "PHASE": 1}, warps), (name, {**meta, "PHASE": 2}, warps)]
            got = [(launch.kernel, launch.meta, launch.warps) for launch in launches]
            # EXACT follows the interpreter here and is fixed True in kernels_of (the GPU build); a `.mr`
            # program's register cap is a compile option of its own kernel, which compile_check passes apart
            strip = lambda m: {k: v for k, v in m.items() if k not in ("EXACT", "maxnreg")}
            assert [la.meta.get("maxnreg") for la in launches[:1]] == [program.launch.max_registers or None]
            assert all("maxnreg" not in la.meta for la in launches[1:])
            assert [(n, strip(m), w) for n, m, w in got] == [(n, strip(m), w) for n, m, w in want], (program.name, H, residual)
            assert launches[0].stages == program.launch.stages  # the program's own kernel runs with its stages
