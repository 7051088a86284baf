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

from cake_kernels import registry, runner


def _check(*args: str, triton_path: str | None = None) -> list[dict]:
    """compile_check's rows for `args`; with `triton_path`, under the Triton installed there (a
    `pip install --target` folder) instead of this environment's."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if triton_path:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (triton_path, os.getcwd(), env.get("PYTHONPATH", "")) if p)
    res = subprocess.run([sys.executable, "-m", "cake_kernels.compile_check", "--json", *args],
                         capture_output=True, text=True, env=env, timeout=1200)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return json.loads(res.stdout)


# The Triton the H200 runs (3.6), installed beside this environment's by .ci/run (CAKE_GPU_TRITON: a
# `pip install --target` folder). It lowers some kernels that the newer one here does not: session 37's
# first f64 tile-pointer helper returned from each branch of a run-time `if NH == 1`, which Triton 3.9
# compiles and 3.6 refuses (ConvertTritonToTritonGPU), so the per-head builds failed on the GPU only.
GPU_TRITON = os.environ.get("CAKE_GPU_TRITON")
TRITONS = [pytest.param(None, id="this-triton"),
           pytest.param(GPU_TRITON, id="gpu-triton", marks=pytest.mark.skipif(
               not GPU_TRITON, reason="CAKE_GPU_TRITON is not set (.ci/run installs Triton 3.6 there)"))]


@pytest.mark.parametrize("triton_path", TRITONS)
@pytest.mark.parametrize("H, residual", [("6144", False), ("1536", True)])
def test_every_program_compiles_for_sm_90a(H, residual, triton_path):
    """Every program builds for sm_90a, within the register file. Spills are reported, not refused:
    wide rows at 16 warps (128 registers) or 8 (255) spill a few to a few hundred bytes per thread,
    and whether that costs time is for the measurements to say (session 18 found the stack-frame
    spills, which compile_check did not count before)."""
    rows = _check("--H", H, *(["--residual"] if residual else []), triton_path=triton_path)
    form = "residual" if residual else "plain"
    want = {p.name for p in registry.all_programs() if p.launch.grid != "reference" and p.supports(int(H), form, "fp32")}
    assert {r["program"] for r in rows} == want
    errors = [(r["program"], r["kernel"], r["error"][:300]) for r in rows if r["error"]]
    assert not errors
    for r in rows:
        assert r["registers"] and r["registers"] <= 255, r
        assert isinstance(r["local_bytes"], int) and r["local_bytes"] >= 0, r


@pytest.mark.parametrize("triton_path", TRITONS)
def test_every_per_head_build_compiles_for_sm_90a(triton_path):
    """Every program offered for a head form also builds as a per-head view indexed by head (NH > 1
    at run time, head strides not multiples of 16: `compile_check --heads`), the build the head
    forms run unless a program views them as flat rows; the plain-row compile test never builds it."""
    rows = _check("--H", "256", "--heads", triton_path=triton_path)
    want = {p.name for p in registry.all_programs() if p.launch.grid != "reference"
            and any(p.supports(256, f, "fp32") for f in ("heads_contiguous", "heads_strided"))}
    assert len(want) > 100 and {r["program"] for r in rows} == want
    errors = [(r["program"], r["kernel"], r["error"][:300]) for r in rows if r["error"]]
    assert not errors


@pytest.mark.skipif(not GPU_TRITON, reason="CAKE_GPU_TRITON is not set (.ci/run installs Triton 3.6 there)")
def test_the_gpu_triton_is_the_h200s_version():
    version = subprocess.run([sys.executable, "-c", "import triton; print(triton.__version__)"], capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": GPU_TRITON}, timeout=120).stdout.strip()
    assert version.startswith("3.6."), version


def test_compile_check_refuses_heads_with_a_residual():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, "-m", "cake_kernels.compile_check", "--heads", "--residual"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert res.returncode == 2 and "--heads: the head forms have no residual" in res.stderr


def test_spills_to_the_stack_frame_count_as_local_memory():
    """A 16-warp build is capped at 128 registers; ptxas then spills into the stack frame, which
    cuobjdump reports as STACK with LOCAL 0. The resource parser counts it (before session 18 it read
    LOCAL only and reported no spills for builds like this one)."""
    from cake_kernels import compile_check as cc

    text = (" Function rmsnorm_bwd_rows_kernel:\n  REG:128 STACK:312 SHARED:1024 LOCAL:8 CONSTANT[0]:680 "
            "TEXTURE:0 SURFACE:0 SAMPLER:0\n")
    orig = cc.cuobjdump
    try:
        cc.cuobjdump = lambda cubin, *args: text
        assert cc._resources(b"") == {"registers": 128, "shared_bytes": 1024, "local_bytes": 320}
    finally:
        cc.cuobjdump = orig
    # a real build that spills: the padded two-row tile at H 6144 (8192 columns, 8 warps)
    rows = _check("--H", "6144", "--programs", "bwd.twosum_pair.p2x.r2.w8.fw.pf.wr")  # a prefix: its twins too
    (own,) = [r for r in rows if r["program"] == "bwd.twosum_pair.p2x.r2.w8.fw.pf.wr" and r["kernel"] == "rmsnorm_bwd_rows_kernel"]
    assert own["local_bytes"] > 100, own


def test_tma_programs_fit_shared_memory_at_every_supported_width():
    # Round 6 on the H200 (Triton 3.6): the 6-stage one-row program needed 245,940 bytes at 8192-wide
    # residual rows and the launch failed; the registry now leaves that key out (tma_buffer_bytes).
    tma = [p for p in registry.all_programs() if p.launch.loads == "tma"]
    p6 = registry.get("bwd.twosum_pair.p1x.w8.s6.wr.tma")
    assert p6.supports(8192, "plain", "bf16") and not p6.supports(8192, "residual", "bf16")
    assert p6.launch.tma_buffer_bytes(8192, True) > registry.TMA_SHARED_BUDGET
    for H in (512, 1024, 2048, 4096, 6144, 8192):
        for p in tma:
            for form in ("plain", "residual"):
                if p.supports(H, form, "fp32"):
                    assert p.launch.tma_buffer_bytes(H, form == "residual") <= registry.TMA_SHARED_BUDGET
    names = ",".join(p.name for p in tma)
    for residual in (False, True):
        rows = _check("--H", "1024,4096,8192", "--programs", names, *(["--residual"] if residual else []))
        main = [r for r in rows if r["kernel"] == "rmsnorm_bwd_tma_kernel"]
        assert main and not [r for r in rows if r["error"]]
        for r in main:
            assert r["num_stages"] == registry.get(r["program"]).launch.stages
            assert 0 < r["shared_bytes"] <= registry.TMA_SHARED_BUDGET + 16384, r


_TMA_BOXES = """
import json, sys
from cake_kernels import compile_check as cc, registry
out = {}
for name, H in json.loads(sys.argv[1]):
    prog = registry.get(name)
    fn, sig, meta, warps = cc.kernels_of(prog, H, False, "fp32")[0]
    divisible, ones = cc.runtime_specialization(sig, H)
    k = cc.compile_kernel(fn, sig, {**meta, **ones}, warps, "sm_90a", prog.launch.stages, divisible)
    out[f"{name}@{H}"] = {"boxes": [d["block_size"] for d in k.metadata.tensordesc_meta], "tile": [meta["ROWS"], meta["BLOCK_H"]],
                          "shared": int(k.metadata.shared)}
print(json.dumps(out))
"""


def test_tmc_programs_read_a_step_as_one_box_and_pipeline_it():
    """What `.tmc` is for: Triton builds a `.tma` program's [rows, BLOCK_H] tile from [rows, 256]
    boxes (BLOCK_H / 256 copies per tensor per step), a `.tmc` program's from one [rows, BLOCK_H /
    64, 64] box; and its loop is still pipelined: `stages - 1` tiles of g and x in shared memory
    (the buffers Triton allocates for a loop of `num_stages`)."""
    cases = [("bwd.twosum_pair.p1x.w16.s4.wr.tmc", 8192), ("bwd.twosum_pair.p1x.r4.w8.s4.wr.xs.tmc", 1536),
             ("bwd.twosum_pair.p1x.w16.s4.wr.tma", 8192)]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, "-c", _TMA_BOXES, json.dumps(cases)], capture_output=True, text=True, env=env,
                         timeout=1200)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout)
    for name, H in cases:
        r = got[f"{name}@{H}"]
        rows, block_h = r["tile"]
        want = [[rows, block_h // registry.TMA_CHUNK, registry.TMA_CHUNK]] if name.endswith(".tmc") else [[rows, 256]]
        assert r["boxes"] == want * 2, (name, r)  # g and x
        stages = registry.get(name).launch.stages
        assert r["shared"] >= (stages - 1) * 2 * rows * block_h * 2, (name, r)


def test_register_capped_programs_build_at_their_cap():
    """A `.mr` program's rows kernel is built with Triton's `maxnreg` (runner.register_cap), so its
    registers stay at or under the cap and every program its grid asks for per SM is resident; the
    base reports what ptxas picks unasked (session 32, Triton 3.6: 149 at H 1536, one of two resident)."""
    capped = [p for p in registry.all_programs() if p.launch.max_registers]
    assert capped
    rows = _check("--H", "1536", "--w-dtypes", "fp32,bf16", "--programs", ",".join(p.name for p in capped))
    own = [r for r in rows if r["kernel"].startswith("rmsnorm_bwd_rows")]
    assert own and not [r for r in rows if r["error"]]
    for r in own:
        prog = registry.get(r["program"])
        assert 0 < r["registers"] <= prog.launch.max_registers, r
        assert r["resident_per_sm"] >= r["programs_per_sm"], r
    # the reduce launch is not capped: it builds as the base's does
    base_rows = _check("--H", "1536", "--w-dtypes", "fp32", "--programs", "bwd.twosum_pair.p2x.r2.w8.fw.pf.wr.sp.xs")
    reduce_regs = {r["program"]: r["registers"] for r in rows + base_rows if r["kernel"].startswith("reduce")
                   and r["w_dtype"] == "fp32" and r["program"].removesuffix(".mr128") == "bwd.twosum_pair.p2x.r2.w8.fw.pf.wr.sp.xs"}
    assert len(reduce_regs) == 2 and len(set(reduce_regs.values())) == 1, reduce_regs


def test_grid_sync_programs_fit_their_whole_grid_at_every_supported_key():
    """A `.gs` program's barrier needs every program of its grid resident at once (its cooperative
    launch is refused otherwise), so the registry offers it only where its programs per SM fit: at
    the H where each program's registers are closest to the limit, with both weights and forms."""
    names = ",".join(p.name for p in registry.all_programs() if p.launch.reduce == "grid_sync")
    for residual in (False, True):
        rows = _check("--H", "256,512,2048,4096", "--w-dtypes", "fp32,bf16", "--programs", names, *(["--residual"] if residual else []))
        assert rows and not [r for r in rows if r["error"]]
        assert any(runner.grid_sync_fp64(registry.get(r["program"])) for r in rows)  # the H 256 `f64` programs
        for r in rows:  # one launch: the `.gs` kernel, or with the `.ur` / `.rw` options its v2 build, `.uf` its
            prog = registry.get(r["program"])  # flat one, `f64` its FP64 one
            kernel = ("rmsnorm_bwd_grid_sync_fp64_kernel" if runner.grid_sync_fp64(prog)
                      else "rmsnorm_bwd_grid_sync_flat_kernel" if runner.grid_sync_flat(prog)
                      else "rmsnorm_bwd_grid_sync_v2_kernel" if runner.grid_sync_v2(prog) else "rmsnorm_bwd_grid_sync_kernel")
            assert r["kernel"] == kernel, r
        short = [(r["program"], r["H"], r["w_dtype"], residual) for r in rows if r["resident_per_sm"] < r["programs_per_sm"]]
        assert not short


def test_routed_compiles_what_the_runtime_runs_at_each_key(tmp_path):
    """`--routed TABLE`: every program a table runs, built per (program, H, weight, residual) with the
    keys and T spans it serves, and the runtime's fallback where a window is not trusted."""
    from cake_kernels.routes.dispatch import FALLBACK
    from cake_kernels.routes.table import write_table

    doc = {"schema": "cake-routes/1", "arch": "sm_90a", "policy": {}, "evidence_fingerprint": "x", "routes": [
        {"op": "bwd", "H": 512, "w_dtype": "fp32", "form": "plain", "mode": "det", "windows": [
            {"lo": 1, "hi": 4096, "program": "bwd.twosum_pair.p2x.w8.fw.pf.wr", "reason": "fastest"},
            {"lo": 4097, "hi": None, "program": "bwd.twosum_pair.p2x.w8.fw.pf.wr", "reason": "no-eligible-program"}]},
        {"op": "bwd", "H": 512, "w_dtype": "fp32", "form": "heads_contiguous", "mode": "det", "windows": [
            {"lo": 1, "hi": None, "program": "bwd.twosum_pair.p2x.w8.fw.pf.wr", "reason": "fastest"}]}]}
    write_table(doc, tmp_path / "t.json")
    rows = _check("--routed", str(tmp_path / "t.json"))
    got = {(r["program"], r["kernel"]): r for r in rows}
    own = got[("bwd.twosum_pair.p2x.w8.fw.pf.wr", "rmsnorm_bwd_rows_kernel")]
    assert own["routed_at"] == ["plain det T 1-4096", "heads_contiguous det T 1-"] and own["H"] == 512
    assert own["programs_per_sm"] == 2 and own["resident_per_sm"] >= 1
    assert got[(FALLBACK["bwd"], "rmsnorm_bwd_rows_kernel")]["routed_at"] == ["plain det T 4097-"]
    assert ("bwd.twosum_pair.p2x.w8.fw.pf.wr", "reduce_partials_wide_kernel") in got
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, "-m", "cake_kernels.compile_check", "--routed", str(tmp_path / "none.json")],
                         capture_output=True, text=True, env=env)
    assert res.returncode == 2 and "--routed" in res.stderr and "none.json" in res.stderr


def test_bad_arguments_are_named():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    for args, what in ((["--arch", "sm_61"], "--arch"), (["--H", "5k"], "--H"), (["--programs", "nope."], "--programs")):
        res = subprocess.run([sys.executable, "-m", "cake_kernels.compile_check", *args], capture_output=True, text=True, env=env)
        assert res.returncode == 2 and what in res.stderr, (args, res.stderr)


def test_resident_per_sm_counts_registers_threads_blocks_and_shared_memory():
    from cake_kernels.compile_check import resident_per_sm

    # round 7 (Triton 3.6): p2x.r2.w8 at H 2048, 8 warps: 128 registers fit two programs, 149 one
    assert resident_per_sm(128, 8) == 2
    assert resident_per_sm(149, 8) == 1
    # registers are allocated per warp in units of 256: 105 and 106 both take 112 per thread
    assert resident_per_sm(105, 2) == resident_per_sm(106, 2) == resident_per_sm(112, 2) == 9
    assert resident_per_sm(113, 2) == 8
    assert resident_per_sm(16, 1) == 32  # the 32-blocks-per-SM limit
    assert resident_per_sm(16, 16) == 4  # 2048 threads per SM
    assert resident_per_sm(32, 4, shared_bytes=100_000, shared_limit=232448) == 2
    for regs in range(1, 256):
        for warps in (1, 2, 4, 8, 16):
            n = resident_per_sm(regs, warps)
            block = warps * 32 * (-(-regs // 8) * 8)  # registers one block holds
            assert n * block <= 65536 and n * warps <= 64 and n <= 32
            assert n == 32 or (n + 1) * block > 65536 or (n + 1) * warps > 64  # the next block would not fit
    assert resident_per_sm(255, 16) == 0  # 16 warps cannot take more than 128 registers per thread


def test_runtime_specialization_marks_what_the_launcher_specializes():
    from cake_kernels.compile_check import runtime_specialization

    sig = {"G": "*bf16", "W": "*fp32", "n_rows": "i32", "NH": "i32", "H": "i32", "H_f": "fp32", "sgt": "i64", "sgh": "i64"}
    divisible, ones = runtime_specialization(sig, 2048)
    assert divisible == {"G", "W", "n_rows", "H", "sgt", "sgh"} and ones == {"NH": 1}
    divisible, _ = runtime_specialization(sig, 1000)  # 1000 is not a multiple of 16: nor are its row strides
    assert divisible == {"G", "W", "n_rows", "sgh"}


def test_weight_dtype_builds_report_programs_per_sm():
    rows = _check("--H", "2048", "--w-dtypes", "fp32,bf16", "--programs", "bwd.twosum_pair.p2x.r2.w8.fw.pf.wr")
    main = [r for r in rows if r["kernel"] == "rmsnorm_bwd_rows_kernel" and r["program"] == "bwd.twosum_pair.p2x.r2.w8.fw.pf.wr"]
    assert sorted(r["w_dtype"] for r in main) == ["bf16", "fp32"]
    for r in main:
        assert r["programs_per_sm"] == 2 and 1 <= r["resident_per_sm"] <= 4 and not r["error"]
    # Its `.wc` twin is given a BF16 weight only and builds the FP32-weight kernel: the same registers.
    wc = [r for r in rows if r["kernel"] == "rmsnorm_bwd_rows_kernel" and r["program"].endswith(".wc")]
    assert [r["w_dtype"] for r in wc] == ["bf16"]
    assert wc[0]["registers"] == next(r["registers"] for r in main if r["w_dtype"] == "fp32")
    # (the name is a prefix: the `.xs` twins' split-rstd rows kernels are selected too)
    reduce = [r for r in rows if r["kernel"].startswith("reduce_")]
    assert reduce and all(r["programs_per_sm"] is None and r["resident_per_sm"] is None for r in reduce)


def test_bad_weight_dtype_is_refused_by_name():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, "-m", "cake_kernels.compile_check", "--w-dtypes", "fp16"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 2 and "--w-dtypes" in res.stderr and "fp32" in res.stderr


def _sass_paths(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "sass_paths.py")
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, env=env, timeout=600,
                          cwd=os.path.join(os.path.dirname(__file__), "..", ".."))


def test_sass_paths_shows_the_flat_and_fast_forward_paths_shorter():
    """scripts/sass_paths.py (the figures behind `.fl` and `.fs`): a one-row forward's path up to its
    EXIT is shorter with fast statistics, and longer when the row is indexed by head."""
    def paths(*extra):
        res = _sass_paths("--programs", "fwd.row.r1.w1.hs,fwd.row.r1.w1.hs.fs", "--H", "256", *extra)
        assert res.returncode == 0, res.stderr[-2000:]
        rows = [line.split("|")[1:-1] for line in res.stdout.splitlines() if line.startswith("| fwd.")]
        return {r[0].strip(): int(r[4]) for r in rows}
    flat, heads = paths(), paths("--heads")
    assert flat["fwd.row.r1.w1.hs.fs"] < flat["fwd.row.r1.w1.hs"] < heads["fwd.row.r1.w1.hs"]
    bad = _sass_paths("--programs", "fwd.nope")
    assert bad.returncode == 2 and "--programs" in bad.stderr and "fwd.nope" in bad.stderr
