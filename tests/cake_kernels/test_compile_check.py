"""Every Triton program compiles for sm_90a with the runner's own compile-time arguments, without a
GPU (Triton's NVIDIA backend and its ptxas run on the CPU), and none spills to local memory.

The interpreter that the other kernel tests use never compiles anything: a kernel could pass them
all and fail to build on the GPU. The check runs in a subprocess because this test session has
TRITON_INTERPRET set (tests/conftest.py), under which @triton.jit yields interpreted functions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cake_kernels import registry


def _check(*args: str) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, "-m", "cake_kernels.compile_check", "--json", *args],
                         capture_output=True, text=True, env=env, timeout=1200)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return json.loads(res.stdout)


@pytest.mark.parametrize("H, residual", [("6144", False), ("1536", True)])
def test_every_program_compiles_for_sm_90a_without_spills(H, residual):
    rows = _check("--H", H, *(["--residual"] if residual else []))
    want = {p.name for p in registry.all_programs() if p.launch.grid != "reference" and p.supports(int(H), "plain", "fp32")}
    assert {r["program"] for r in rows} == want
    errors = [(r["program"], r["kernel"], r["error"][:300]) for r in rows if r["error"]]
    assert not errors
    for r in rows:
        assert r["registers"] and r["registers"] <= 255, r
        assert r["local_bytes"] == 0, f"{r['program']} {r['kernel']} spills {r['local_bytes']} B per thread at H={H}"


def test_bad_arguments_are_named():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    for args, what in ((["--arch", "sm_61"], "--arch"), (["--H", "5k"], "--H"), (["--programs", "nope."], "--programs")):
        res = subprocess.run([sys.executable, "-m", "cake_kernels.compile_check", *args], capture_output=True, text=True, env=env)
        assert res.returncode == 2 and what in res.stderr, (args, res.stderr)
