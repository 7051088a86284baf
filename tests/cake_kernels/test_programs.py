"""Every Triton program against the FP64 oracle, under the interpreter on CPU (or on the GPU).

The full H x T matrix runs on one representative program per family (the interpreter is slow);
every program runs a smaller matrix; forms, families and weight dtypes run on every family.
Outputs are NaN-poisoned before each run, so an unwritten element fails.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import pytest
import torch

from cake_kernels import compile_check, registry, runner
from cake_kernels.inputs import make_inputs
from cake_kernels.reference import oracle, reference_forward
from tests.cake_kernels.helpers import inputs, recorded_launches, run_backward_checked, run_forward_checked
from tests.cake_kernels.interpreter_twins import Case, Thinned, _describe

HS = (1, 7, 256, 512, 1000, 4096)
TS = (0, 1, 2, 63, 64, 65, 257)
FAMILY_REPRESENTATIVES = [
    "fwd.row.r1.w8", "fwd.persist.p2x.r2.w8",
    "bwd.atomic.p2x.w8", "bwd.pair.p2x.r2.w8", "bwd.blocked.p2x.f16.w8",
    "bwd.twosum_pair.p2x.w8", "bwd.twosum.p2x.w8", "bwd.column_task.c64.w4", "bwd.f64_pair.p1x.w16.pf.wr",
]
TRITON_PROGRAMS = [p.name for p in registry.all_programs() if p.launch.grid != "reference"]


def _family_tested(p) -> bool:
    """Whether the family lists below take `p`: the `.fl`, `.gp`, `.l2p` / `.l2b` and `.mr` twins are left
    out, each checked against its base instead (test_flat_head_rows_match_their_base,
    test_gres_prefetch_programs_match_their_base, test_l2_prefetch_programs_match_their_base,
    test_register_capped_programs_match_their_base)."""
    return (p.launch.heads_rows == "indexed" and p.launch.gres_load == "in_step" and p.launch.l2_prefetch == "none"
            and not p.launch.max_registers)


def _run(name, inp):
    prog = registry.get(name)
    if prog.op == "fwd":
        run_forward_checked(prog, inp)
    else:
        run_backward_checked(prog, inp)


def test_registry_contract():
    progs = registry.all_programs()
    names = [p.name for p in progs]
    assert len(names) == len(set(names))
    families = {p.family for p in progs if p.op == "bwd"}
    assert {"atomic", "pair", "twosum_pair", "twosum", "column_task", "blocked", "f64_pair", "f64"} <= families
    for p in progs:
        assert p.op in ("fwd", "bwd") and isinstance(p.deterministic, bool)
        assert p.fingerprint.startswith("sha256:")
        assert p.evidence_record()["name"] == p.name
        if p.family == "atomic":
            assert not p.deterministic
    # Several launch configurations per family.
    for fam in ("atomic", "pair", "twosum_pair", "twosum", "column_task", "blocked", "f64_pair", "f64", "row", "persistent"):
        assert sum(p.family == fam for p in progs) >= 2, fam
    # Launch-policy options appear in the name, so two programs never differ only in a hidden option.
    for p in progs:
        lp = p.launch
        assert (lp.fold_in == "workspace") == (".fw" in p.name), p.name
        parts = p.name.split(".")
        # `.l2p{N}` / `.l2b{N}` twins (L2 prefetch, N tiles ahead) are their base's name plus that, the last part
        # `.mr{N}` twins (the rows kernel's register cap) are their base's name plus that, the last part
        assert (lp.max_registers > 0) == (parts[-1] == f"mr{lp.max_registers}"), p.name
        if lp.max_registers:
            parts = parts[:-1]
        l2 = {"none": "", "lines": f"l2p{lp.l2_ahead}", "bulk": f"l2b{lp.l2_ahead}"}[lp.l2_prefetch]
        assert (lp.l2_prefetch != "none") == (parts[-1] == l2), p.name
        if l2:
            parts = parts[:-1]
        # `.ur` / `.uf` / `.rw` twins (the grid barrier's reduce and wait options) are their `.gs` base's
        # name plus `.ur`, `.uf`, `.rw`, `.ur.rw`, `.uf.rw` or `.uf8.rw`, the last parts
        assert (lp.barrier_wait == "reducers") == (parts[-1] == "rw"), p.name
        if lp.barrier_wait == "reducers":
            parts = parts[:-1]
        assert (lp.reduce_tiles == "unrolled") == (parts[-1] == "ur"), p.name
        # `.uf8`: the flat reduce in tiles of 8 columns (reduce_columns)
        assert (lp.reduce_tiles == "flat") == (parts[-1] == f"uf{lp.reduce_columns or ''}"), p.name
        if lp.reduce_tiles != "looped":
            parts = parts[:-1]
        # `.gp` twins (GRES prefetch) are their base's name plus `.gp`, the last part
        assert (lp.gres_load == "prefetched") == (parts[-1] == "gp"), p.name
        if lp.gres_load == "prefetched":
            parts = parts[:-1]
        # `.fl` twins (flat head rows) are their base's name plus `.fl`, the last part
        assert (lp.heads_rows == "flat") == (parts[-1] == "fl"), p.name
        if lp.heads_rows == "flat":
            parts = parts[:-1]
        # `.fs` twins (fast statistics) are their `.hs` base's name plus `.fs`
        assert (lp.stats == "fast") == (parts[-1] == "fs"), p.name
        if lp.stats == "fast":
            parts = parts[:-1]
        # `.sr` twins (two-pass reduce) are their `.wr` base's name plus `.sr`, the last part (a `.tma`
        # or `.tmc` program's last but its `.tma` / `.tmc`)
        tail = parts[-2] if parts[-1] in ("tma", "tmc") else parts[-1]
        assert (lp.reduce == "split") == (tail == "sr") and (lp.reduce == "split") <= ("wr" in parts), p.name
        if lp.reduce == "split":
            parts = parts[:-2] + parts[-1:] if parts[-1] in ("tma", "tmc") else parts[:-1]
        assert lp.prefetch == ("pf" in parts), p.name
        assert (lp.reduce in ("wide", "split")) == ("wr" in parts), p.name
        assert (lp.reduce == "one_pass") == (parts[-1] == "op"), p.name
        # `.gs` (one launch, grid barrier): a `.wr` program's name with `.gs` in place of `.wr`
        assert (lp.reduce == "grid_sync") == ("gs" in parts) and (lp.reduce == "grid_sync") <= p.single_launch, p.name
        # `.tma` (`.tmc`) ends the name, or comes right before a `.wc` (its weight-cast twin)
        core = parts[:-1] if parts[-1] == "wc" else parts
        assert (lp.loads == "tma") == (core[-1] == "tma") and (lp.loads == "tma") <= (f"s{lp.stages}" in parts), p.name
        assert (lp.loads == "tma_chunks") == (core[-1] == "tmc") and (lp.loads == "tma_chunks") <= (f"s{lp.stages}" in parts), p.name
        assert lp.split_h == ("sp" in parts), p.name
        assert (lp.weight_load == "beside_rows") == (parts[-1] == "wx"), p.name
        assert (lp.weight_load == "row_tile") == (parts[-1] == "wt"), p.name
        assert (lp.weight_cast == "fp32") == (parts[-1] == "wc"), p.name
        assert (lp.products == "split_rstd") == ("xs" in parts), p.name
        assert (lp.products == "fp64") == (p.family in ("f64_pair", "f64")), p.name
        assert (lp.chunk > 0) == (f"c{lp.chunk}" in parts) and (lp.chunk > 0) <= (parts[-1] in (f"c{lp.chunk}", "hs")), p.name
        assert lp.static_h == (parts[-1] == "hs"), p.name
        assert (lp.rows > 1 and p.op == "bwd" and lp.grid == "persistent") <= (f".r{lp.rows}." in p.name), p.name


def _split_twin(name: str) -> str:
    twin = name.replace(".sp", "").removesuffix(".wx").removesuffix(".wt").removesuffix(".wc")  # bitwise their bases (tests below)
    if twin not in registry.names():
        twin = twin.removesuffix(".xs")  # no unsplit split-rstd twin: the unsplit program with mul.rn products
    if twin not in registry.names() and ".rl.mr" in twin:
        twin = twin[:twin.index(".mr")]  # a register cap moves no arithmetic (test_register_capped_programs...)
    return twin


def _split_calls(prog):
    """(H, T, form, weight dtype) of test_split_row_programs."""
    shapes = ((3, 5), (7, 2), (1000, 3), (1536, 17), (5120, 2)) if prog.op == "fwd" else ((3, 70), (1000, 9), (1536, 33))
    return [(H, T, form, "bf16" if H % 2 or "fp32" not in prog.w_dtypes else "fp32")
            for H, T in shapes for form in ("plain", "residual")]


def _with_partner(calls, partner):
    """The interpreter-twin cases of a test that runs its program and `partner` on each call."""
    return [Case(T, H, w, form, who) for H, T, form, w in calls for who in (None, partner)]


SPLIT_PROGRAMS = Thinned(
    [p.name for p in registry.all_programs() if (p.launch.split_h) and _family_tested(p)],
    lambda p: _with_partner(_split_calls(p), _split_twin(p.name)))


@pytest.mark.interpreter
@pytest.mark.parametrize("name", SPLIT_PROGRAMS.names)
def test_split_row_programs(name):
    """Rows held as two tiles: H that is not a power of two, against FP64 (poisoned outputs), with a
    residual, and equal to the unsplit twin up to summation order (rstd and dx's row mean)."""
    prog = registry.get(name)
    assert prog.launch.tiles_for(5120) == (4096, 1024) and prog.launch.tiles_for(6144) == (4096, 2048)
    assert prog.launch.tiles_for(4096) == (4096, 0)
    w = prog.w_dtypes[0]
    assert not prog.supports(4096, "plain", w) and prog.supports(6144 if prog.H_max >= 6144 else 1536, "plain", w)
    twin = _split_twin(name)
    SPLIT_PROGRAMS.run_kernels(name)
    for H, T, form, w_dtype in _split_calls(prog):
        inp = inputs("same_sign", T, H, w_dtype, form=form, seed=H + T)
        if prog.op == "fwd":
            y, rstd, h = run_forward_checked(prog, inp)
            y2, rstd2, h2 = runner.forward(twin, inp.x, inp.w, 1e-6, inp.residual)
            torch.testing.assert_close(rstd, rstd2, rtol=2e-6, atol=0)
            torch.testing.assert_close(y.float(), y2.float(), rtol=1e-2, atol=0)
            if h is not None:
                assert torch.equal(h, h2)
        else:
            dx, dw, worst = run_backward_checked(prog, inp)
            dx2, dw2, worst2 = run_backward_checked(registry.get(twin), inp)
            torch.testing.assert_close(dx.float(), dx2.float(), rtol=1e-2, atol=1e-2)
            if prog.family.startswith("twosum") and prog.launch.products == registry.get(twin).launch.products:
                assert torch.equal(dw, dw2)  # compensated per column: the split changes no column's sum
            else:
                torch.testing.assert_close(dw, dw2, rtol=1e-5, atol=1e-5)


def _weight_read_calls(prog):
    """(H, T, form, weight dtype) of test_weight_read_programs_are_bitwise_their_base."""
    H_T = ((5120, 9), (1536, 5)) if prog.launch.split_h else ((256, 37), (1000, 11), (7, 3))
    return [(H, T, form, ("fp32", "bf16")[i % 2]) for i, (H, T) in enumerate(H_T)
            for form in (("plain", "residual", "heads_strided") if H == 256 else ("plain", "residual"))]


WEIGHT_READ_PROGRAMS = Thinned(
    [p.name for p in registry.all_programs() if (p.launch.weight_load != "hoisted") and _family_tested(p)],
    lambda p: _with_partner(_weight_read_calls(p), p.name.removesuffix(".wx").removesuffix(".wt")), sms=1)


@pytest.mark.interpreter
@pytest.mark.parametrize("name", WEIGHT_READ_PROGRAMS.names)
def test_weight_read_programs_are_bitwise_their_base(name, monkeypatch):
    """`.wx` and `.wt` programs move the weight's read, not the arithmetic: y, rstd and h_new equal
    the base program's bit for bit, with either weight, several tiles per persistent program (a
    small grid) and a residual, also for split rows."""
    base = name.removesuffix(".wx").removesuffix(".wt")
    prog = registry.get(name)
    assert prog.launch.weight_load != "hoisted" and registry.get(base).launch.weight_load == "hoisted"
    assert runner.forward_kernel(prog) is not runner.forward_kernel(registry.get(base))
    WEIGHT_READ_PROGRAMS.run_kernels(name)
    monkeypatch.setattr(runner, "sm_count", lambda device: 1)  # 2-8 programs: several tiles each
    for H, T, form, w_dtype in _weight_read_calls(prog):
        inp = inputs("outlier_rows", T, H, w_dtype, form=form, seed=H + T)
        y, rstd, h = run_forward_checked(prog, inp)
        y2, rstd2, h2 = runner.forward(base, inp.x, inp.w, 1e-6, inp.residual)
        assert torch.equal(y, y2) and torch.equal(rstd, rstd2), (H, T, form)
        assert (h is None and h2 is None) or torch.equal(h, h2)


def _check_against_register_held_row(prog, shapes, head_forms):
    """`prog` at each (H, T) in every form (the head views where H is 256), against FP64 with poisoned
    outputs, and against `fwd.row.r1.w8`: rstd and y up to the sum order, h_new bit for bit."""
    for i, (H, T) in enumerate(shapes):
        for form in head_forms if H == 256 else ("plain", "residual"):
            inp = inputs("outlier_rows", T, H, ("fp32", "bf16")[i % 2] if H % 2 == 0 else "bf16", form=form, seed=H + T)
            y, rstd, h = run_forward_checked(prog, inp)
            y2, rstd2, h2 = runner.forward("fwd.row.r1.w8", inp.x, inp.w, 1e-6, inp.residual)
            torch.testing.assert_close(rstd, rstd2, rtol=2e-6, atol=0)
            torch.testing.assert_close(y.float(), y2.float(), rtol=1e-2, atol=0)
            assert (h is None and h2 is None) or torch.equal(h, h2)


LOOPED_PROGRAMS = [p.name for p in registry.all_programs() if (p.launch.chunk) and _family_tested(p)]


@pytest.mark.interpreter
@pytest.mark.parametrize("name", LOOPED_PROGRAMS)
def test_looped_forward_programs(name, monkeypatch):
    """`.c{chunk}` forwards stream the row in chunks over two passes: rows of several chunks with a
    masked last one, and rows narrower than a chunk, against FP64 (poisoned outputs) in every form,
    with several row blocks per persistent program; y and rstd as the register-held program's up to
    the sum order, h_new bit for bit."""
    prog = registry.get(name)
    chunk = prog.launch.chunk
    kernel = "rmsnorm_fwd_looped_static_kernel" if prog.launch.static_h else "rmsnorm_fwd_looped_kernel"
    assert runner.forward_kernel(prog).fn.__name__ == kernel
    meta = runner.forward_launch_meta(prog, 100, False, exact=True)[0]
    assert meta["CHUNK"] == 128  # at most next_pow2(H)
    assert meta.get("H_C") == (100 if prog.launch.static_h else None)
    monkeypatch.setattr(runner, "sm_count", lambda device: 1)
    shapes = [(min(2 * chunk, registry.H_MAX) + 37 if chunk < 8192 else chunk + 37, 3), (256, 9), (7, 5)]
    if prog.launch.static_h:
        shapes.append((2 * chunk if chunk < 8192 else chunk, 4))  # a multiple of the chunk: no masks
    _check_against_register_held_row(prog, shapes, ("plain", "residual", "heads_strided"))


def test_looped_launch_policy_is_validated():
    with pytest.raises(ValueError, match="chunk"):
        registry.LaunchPolicy("row_blocks", chunk=1000)
    with pytest.raises(ValueError, match="chunk"):
        registry.LaunchPolicy("persistent", programs_per_sm=2, chunk=1024, prefetch=True)
    registry.LaunchPolicy("row_blocks", static_h=True)  # a one-row register-held `.hs` forward
    for bad in (dict(rows=2), dict(grid="persistent", programs_per_sm=2), dict(prefetch=True), dict(split_h=True),
                dict(weight_load="row_tile")):
        with pytest.raises(ValueError, match="static_h"):
            registry.LaunchPolicy(**{"grid": "row_blocks", "static_h": True, **bad})


STATIC_ROW_PROGRAMS = [p.name for p in registry.all_programs() if (p.launch.static_h and not p.launch.chunk) and _family_tested(p)
                       and p.launch.stats == "ieee" and p.op == "fwd"]


@pytest.mark.interpreter
@pytest.mark.parametrize("name", STATIC_ROW_PROGRAMS)
def test_static_row_forward_programs(name):
    """One-row `.hs` forwards (no chunk) hold the row as a 1-D tile compiled per H: unmasked at H a
    power of two, masked otherwise, in every form, against FP64 (poisoned outputs); y and rstd as the
    2-D one-row program's up to the sum order, h_new bit for bit."""
    prog = registry.get(name)
    assert runner.forward_kernel(prog).fn.__name__ == "rmsnorm_fwd_row_static_kernel"
    meta, warps = runner.forward_launch_meta(prog, 100, True, exact=True)
    assert meta == dict(BLOCK_H=128, HAS_RES=True, EXACT=True, H_C=100) and warps == prog.launch.warps
    assert runner.forward_launch_meta(prog, 8192, False)[1] == max(prog.launch.warps, 8)  # the tile's width
    _check_against_register_held_row(prog, ((256, 9), (512, 3), (100, 5), (7, 4), (1, 2)),
                                     ("plain", "residual", "heads_strided", "heads_contiguous"))


# `.sr` twins are checked against their `.wr` base (test_split_reduce_programs_match_their_wide_twin).
def _weight_cast_calls(prog):
    """(H, T, form) of test_weight_cast_programs_run_the_fp32_weight_build."""
    H_T = ((1536, 9), (1000, 5)) if prog.launch.split_h else ((256, 40), (512, 17), (7, 5))
    return [(H, T, form) for H, T in H_T if prog.supports(H, "plain", "bf16") for form in ("plain", "residual")]


WEIGHT_CAST_PROGRAMS = Thinned(
    [p.name for p in registry.all_programs() if (p.launch.weight_cast == "fp32" and p.launch.reduce != "split") and _family_tested(p)],
    lambda p: [c for H, T, form in _weight_cast_calls(p)
               for c in (Case(T, H, "bf16", form), Case(T, H, "fp32", form, p.name.removesuffix(".wc")))], sms=1)


@pytest.mark.interpreter
@pytest.mark.parametrize("name", WEIGHT_CAST_PROGRAMS.names)
def test_weight_cast_programs_run_the_fp32_weight_build(name, monkeypatch):
    """`.wc` programs take BF16 weights only and give, bit for bit, what their base program gives
    with the same weight in FP32 (the cast is exact), the FP32 copy held in their workspace."""
    base = registry.get(name.removesuffix(".wc"))
    prog = registry.get(name)
    assert prog.w_dtypes == ("bf16",) and not prog.supports(512, "plain", "fp32")
    WEIGHT_CAST_PROGRAMS.run_kernels(name)
    monkeypatch.setattr(runner, "sm_count", lambda device: 1)  # several tiles and folds per program
    for H, T, form in _weight_cast_calls(prog):
        inp = inputs("outlier_rows", T, H, "bf16", form=form, seed=H + T)
        dx, dw, _ = run_backward_checked(prog, inp)
        _, rstd, h = reference_forward(inp.x, inp.w, 1e-6, inp.residual)
        xn = h if h is not None else inp.x
        ws = runner.workspace_for(prog, xn)
        dx1, dw1 = runner.backward(prog, inp.g, xn, inp.w, rstd, inp.g_h_new, ws)
        dx2, dw2 = runner.backward(base, inp.g, xn, inp.w.float(), rstd, inp.g_h_new)
        assert torch.equal(dx1, dx2) and torch.equal(dw1, dw2), (H, T, form)
        assert torch.equal(ws.weight32, inp.w.float())


def _split_rstd_terms(g, x, r):
    """The split of `rmsnorm_bwd_rows_split_rstd_kernel` in FP32 torch arithmetic: (a, b, x * r_lo)."""
    r_hi = (r.view(torch.int32) & ~0xFFFF).view(torch.float32)
    r_lo = r - r_hi
    return g * (x * r_hi), g * (x * r_lo), x * r_lo


def test_split_rstd_products_are_exact():
    """The arithmetic claim the `.xs` kernel rests on, over BF16 g and x across 60 binades and rstd
    across 40: a = g * (x * r_hi) and x * r_lo are exact FP32 products, and b = g * (x * r_lo) is within
    2^-31 of |g * x * rstd| of its exact value, so a + b is the product up to that. (Products that
    leave FP32's normal range, below 2^-126 or above 2^128, are not exact; terms that small are far
    below the 1e-4 tolerance, and terms that large overflow the mul.rn programs too.)"""
    gen = torch.Generator().manual_seed(11)
    n = 200_000
    g = (torch.randn(n, generator=gen) * torch.exp2(torch.randint(-30, 30, (n,), generator=gen).float())).bfloat16().float()
    x = (torch.randn(n, generator=gen) * torch.exp2(torch.randint(-30, 30, (n,), generator=gen).float())).bfloat16().float()
    r = (torch.rand(n, generator=gen) + 0.5) * torch.exp2(torch.randint(-20, 20, (n,), generator=gen).float())
    a, b, xl = _split_rstd_terms(g, x, r)
    g64, x64, r64 = g.double(), x.double(), r.double()
    r_hi64 = (r.view(torch.int32) & ~0xFFFF).view(torch.float32).double()
    assert torch.equal(a.double(), g64 * (x64 * r_hi64))
    assert torch.equal(xl.double(), x64 * (r64 - r_hi64))
    exact = g64 * x64 * r64
    assert bool(((a.double() + b.double() - exact).abs() <= exact.abs() * 2.0**-31).all())
    # The EFT programs' single rounding, for scale: g * (x * rstd) in FP32 is off by up to 2^-24 relative.
    assert float(((g * (x * r)).double() - exact).abs().div(exact.abs()).max()) > 2.0**-31


def _xs_calls(prog):
    """(H, T, input family, form) of test_split_rstd_programs_match_their_eft_base."""
    w = prog.w_dtypes[0]
    return [(H, T, fam, form)
            for H, T, fam in ((1536, 40, "outlier_rows"), (512, 300, "gaussian"), (256, 33, "same_sign"), (7, 5, "gaussian"))
            if prog.supports(H, "plain", w) for form in ("plain", "residual")]


XS_PROGRAMS = Thinned(
    [p.name for p in registry.all_programs()
     if (p.launch.products == "split_rstd" and p.launch.reduce not in ("split", "grid_sync")) and _family_tested(p)
     and not p.launch.reload],  # `.rl`: no eft twin; test_reload_programs_match_the_register_held_build
    lambda p: _with_partner([(H, T, form, p.w_dtypes[0]) for H, T, _, form in _xs_calls(p)], p.name.replace(".xs", "")),
    sms=1)


@pytest.mark.interpreter
@pytest.mark.parametrize("name", XS_PROGRAMS.names)
def test_split_rstd_programs_match_their_eft_base(name, monkeypatch):
    """`.xs` programs: dx bit for bit as the program with mul.rn products, dw at the FP32 rounding floor
    against FP64 as that program's (both compensated with exact products; only their error terms differ)."""
    prog = registry.get(name)
    base = registry.get(name.replace(".xs", ""))
    assert base.launch.products == "eft" and prog.launch == replace(base.launch, products="split_rstd")
    XS_PROGRAMS.run_kernels(name)
    monkeypatch.setattr(runner, "sm_count", lambda device: 1)  # several tiles and folds per program
    for H, T, fam, form in _xs_calls(prog):
        inp = inputs(fam, T, H, prog.w_dtypes[0], form=form, seed=H + T)
        dx, dw, worst = run_backward_checked(prog, inp)
        dx2, dw2, worst2 = run_backward_checked(base, inp)
        assert torch.equal(dx, dx2), (H, T, form)
        assert worst <= max(worst2, 6.0e-4) * 1.01, (H, T, form, worst, worst2)


def test_split_rstd_products_need_a_two_launch_compensated_program():
    lp = registry.LaunchPolicy("persistent", products="split_rstd")
    with pytest.raises(ValueError, match="products"):
        registry.Program("bwd.pair.x", "bwd", "pair", True, lp, "", mode=1)
    with pytest.raises(ValueError, match="products"):
        registry.Program("bwd.twosum.x", "bwd", "twosum", True, lp, "", mode=3, single_launch=True)
    with pytest.raises(ValueError, match="products"):
        registry.LaunchPolicy("persistent", products="fma")


def test_launch_policy_rejects_an_unknown_fold_location():
    with pytest.raises(ValueError, match="fold_in"):
        registry.LaunchPolicy("persistent", fold_in="shared")
    with pytest.raises(ValueError, match="reduce: 'tree' is not one of"):
        registry.LaunchPolicy("persistent", reduce="tree")
    with pytest.raises(ValueError, match="weight_load: 'late' is not one of"):
        registry.LaunchPolicy("row_blocks", weight_load="late")
    with pytest.raises(ValueError, match="weight_cast: 'fp16' is not one of"):
        registry.LaunchPolicy("persistent", weight_cast="fp16")


def _wide_reduce_shapes(prog):
    """(H, T) of test_wide_reduce_programs_match_their_serial_twin."""
    return [(H, T) for H, T in ((256, 300), (1000, 41)) if prog.supports(H, "plain", "fp32")]


def _serial_twin(name: str) -> str | None:
    twin = name.replace(".wr", "")
    return twin if twin in registry.names("bwd") else None


WIDE_REDUCE_PROGRAMS = Thinned(
    [p.name for p in registry.all_programs() if (p.launch.reduce == "wide") and _family_tested(p)],
    lambda p: _with_partner([(H, T, "plain", "fp32") for H, T in _wide_reduce_shapes(p)], _serial_twin(p.name) or p.name))


@pytest.mark.interpreter
@pytest.mark.parametrize("name", WIDE_REDUCE_PROGRAMS.names)
def test_wide_reduce_programs_match_their_serial_twin(name):
    """`.wr` programs differ from their serial-reduce twin only in the partials reduce: dx is
    bitwise equal and dw equal up to the FP64 summation order of the partials (FP32 result)."""
    twin = _serial_twin(name)
    prog = registry.get(name)
    assert prog.launch.reduce == "wide" and runner.reduce_meta(prog, 512)[0] == "reduce_partials_wide_kernel"
    WIDE_REDUCE_PROGRAMS.run_kernels(name)
    for H, T in _wide_reduce_shapes(prog):
        inp = inputs("same_sign", T, H, "fp32", seed=T)
        dx, dw, _ = run_backward_checked(prog, inp)
        if twin is not None:
            dx2, dw2, _ = run_backward_checked(registry.get(twin), inp)
            assert torch.equal(dx, dx2)
            torch.testing.assert_close(dw, dw2, rtol=1e-6, atol=0)


@pytest.mark.interpreter
def test_wide_reduce_sums_more_partials_than_one_tile():
    """P above the wide reduce's 128-row tile (and not a multiple of it): the fixed-order FP64 sum
    of every partial row, through the kernel the `.wr` programs launch."""
    from cake_kernels.programs import backward as bk

    P, H = 301, 70
    ws = torch.randn(P, H, dtype=torch.float64)
    dw = torch.full((H,), float("nan"), dtype=torch.float32)
    bk.reduce_partials_wide_kernel[(-(-H // runner.WIDE_RED_COLS),)](
        ws, dw, P, H, BLOCK_P=runner.WIDE_RED_ROWS, BLOCK_C=runner.WIDE_RED_COLS)
    torch.testing.assert_close(dw, ws.sum(0).float(), rtol=1e-6, atol=1e-12)


ONE_PASS_PROGRAMS = Thinned(
    [p.name for p in registry.all_programs() if (p.launch.reduce == "one_pass") and _family_tested(p)],
    lambda p: _with_partner([(H, T, "plain", "fp32") for H, T in _wide_reduce_shapes(p)], p.name[:-3] + ".wr"))


@pytest.mark.interpreter
@pytest.mark.parametrize("name", ONE_PASS_PROGRAMS.names)
def test_one_pass_reduce_programs_match_their_wide_twin(name):
    """`.op` programs differ from their `.wr` twin only in the reduce's tile: dx bitwise equal, dw
    equal up to the FP64 summation order of the partials (FP32 result)."""
    twin = registry.get(name[:-3] + ".wr")
    prog = registry.get(name)
    assert replace(prog.launch, reduce="wide") == twin.launch and prog.mode == twin.mode
    ONE_PASS_PROGRAMS.run_kernels(name)
    for H, T in _wide_reduce_shapes(prog):
        inp = inputs("same_sign", T, H, "fp32", seed=T)
        dx, dw, _ = run_backward_checked(prog, inp)
        dx2, dw2, _ = run_backward_checked(twin, inp)
        assert torch.equal(dx, dx2)
        torch.testing.assert_close(dw, dw2, rtol=1e-6, atol=0)


def test_one_pass_reduce_tile_follows_the_partials():
    """One step up to 512 partial rows (the tile is the next power of two), then 512-row steps."""
    assert runner.one_pass_reduce_meta(264) == (dict(BLOCK_P=512, BLOCK_C=32), 8)
    assert runner.one_pass_reduce_meta(132) == (dict(BLOCK_P=256, BLOCK_C=32), 8)
    assert runner.one_pass_reduce_meta(100) == (dict(BLOCK_P=128, BLOCK_C=32), 4)
    assert runner.one_pass_reduce_meta(1) == (dict(BLOCK_P=1, BLOCK_C=32), 4)
    assert runner.one_pass_reduce_meta(2112) == (dict(BLOCK_P=512, BLOCK_C=32), 8)


@pytest.mark.interpreter
@pytest.mark.parametrize("P", [1, 7, 264, 530])
def test_one_pass_reduce_sums_every_partial_in_fixed_order(P):
    """The `.op` reduce's launch (one tile up to 512 rows, then 512-row steps) over FP32 and FP64
    partials: the FP64 sum of every partial row, whatever P."""
    from cake_kernels.programs import backward as bk

    H = 70
    meta, warps = runner.one_pass_reduce_meta(P)
    for dtype in (torch.float32, torch.float64):
        ws = torch.randn(P, H, dtype=torch.float64).to(dtype)
        dw = torch.full((H,), float("nan"), dtype=torch.float32)
        bk.reduce_partials_wide_kernel[(-(-H // meta["BLOCK_C"]),)](ws, dw, P, H, **meta, num_warps=warps)
        torch.testing.assert_close(dw, ws.double().sum(0).float(), rtol=1e-6, atol=1e-12)


def _split_reduce_calls(prog):
    """(H, T, form, weight dtype) of test_split_reduce_programs_match_their_wide_twin."""
    out = []
    for form, T, H in (("plain", 400, 256), ("heads_contiguous", 60, 256), ("residual", 33, 200)):
        w_dtype = "bf16" if "bf16" in prog.w_dtypes and T % 2 == 0 else "fp32"
        if prog.supports(H, form, w_dtype):
            out.append((H, T, form, w_dtype))
    return out


# The `.sr.tma` programs have no `.wr` twin with TMA loads: test_tma_programs_against_fp64_and_their_fallback
# holds them to FP64 and to their pointer-load fallback (the same split-rstd math with the wide reduce).
SPLIT_REDUCE_PROGRAMS = Thinned(
    [p.name for p in registry.all_programs() if p.launch.reduce == "split" and p.launch.loads == "pointer" and _family_tested(p)
     and p.family != "f64_pair"],  # no `.wr` twins: test_fp64_sum_programs_give_the_exact_dw_rounded
    lambda p: _with_partner(_split_reduce_calls(p), p.name.removesuffix(".sr")), sms=12)


@pytest.mark.interpreter
@pytest.mark.parametrize("name", SPLIT_REDUCE_PROGRAMS.names)
def test_split_reduce_programs_match_their_wide_twin(name, monkeypatch):
    """`.sr` programs differ from their `.wr` twin only in the partials reduce: dx bitwise equal, dw
    equal up to the FP64 summation order, and bitwise the same run to run. 12 SMs make the grid (and
    P) large enough for several splits: 16 programs per SM give P = 192, three splits of 64."""
    monkeypatch.setattr(runner, "sm_count", lambda device: 12)
    twin = registry.get(name.removesuffix(".sr"))
    prog = registry.get(name)
    assert twin.launch.reduce == "wide" and replace(prog, name=twin.name, launch=twin.launch, description=twin.description) == twin
    SPLIT_REDUCE_PROGRAMS.run_kernels(name)
    for H, T, form, w_dtype in _split_reduce_calls(prog):
        inp = inputs("same_sign", T, H, w_dtype, form=form, seed=T)
        dx, dw, _ = run_backward_checked(prog, inp)
        dx2, dw2, _ = run_backward_checked(twin, inp)
        assert torch.equal(dx, dx2)
        torch.testing.assert_close(dw, dw2, rtol=1e-6, atol=0)
        dx3, dw3, _ = run_backward_checked(prog, inp)
        assert torch.equal(dw, dw3) and torch.equal(dx, dx3)


@pytest.mark.interpreter
def test_split_reduce_sums_every_partial_row_once():
    """Both passes of the `.sr` reduce, with the last split short (P not a multiple of 64) and H not
    a multiple of the 32-column block: the FP64 sum of every partial row; the first pass's rows
    after the P partial rows hold the per-split sums."""
    from cake_kernels.programs import backward as bk

    P, H = 301, 70
    splits, per_split, grid1, meta1, grid2, meta2, _ = runner.split_reduce_meta(P, H)
    assert (splits, per_split, grid1, grid2) == (5, 64, (3, 5), (3,))
    ws = torch.randn(P + splits, H, dtype=torch.float64)
    ws[P:] = float("nan")
    dw = torch.full((H,), float("nan"), dtype=torch.float32)
    first = ws[P:]
    bk.reduce_partials_split_kernel[grid1](ws, first, P, H, per_split, **meta1)
    bk.reduce_partials_wide_kernel[grid2](first, dw, splits, H, **meta2)
    for s in range(splits):
        torch.testing.assert_close(first[s], ws[s * 64:min(P, (s + 1) * 64)].sum(0), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(dw, ws[:P].sum(0).float(), rtol=1e-6, atol=1e-12)


@pytest.mark.interpreter
def test_split_reduce_workspace_holds_the_first_pass_rows():
    prog = registry.get(SPLIT_REDUCE_PROGRAMS.names[0])
    x = torch.zeros(300, 256, dtype=torch.bfloat16)
    P = min(300, prog.launch.programs_per_sm * runner.sm_count(x.device))
    ws = runner.workspace_for(prog, x)
    assert ws.partials.shape == (P + runner.split_reduce_meta(P, 256)[0], 256)
    short = runner.Workspace(ws.partials[:P], None, None)
    inp = inputs("gaussian", 300, 256, "fp32", seed=1)
    with pytest.raises(ValueError, match="workspace: too small"):
        run_backward_checked(prog, inp, workspace=short)


def test_split_reduce_needs_a_two_launch_compensated_program():
    with pytest.raises(ValueError, match="reduce='split' needs a two-launch compensated persistent program"):
        registry.Program("bwd.x", "bwd", "pair", True, registry.LaunchPolicy("persistent", reduce="split"), "", mode=1)
    with pytest.raises(ValueError, match="reduce: 'halves' is not one of"):
        registry.LaunchPolicy("persistent", reduce="halves")


@pytest.mark.interpreter
@pytest.mark.parametrize("name", FAMILY_REPRESENTATIVES)
@pytest.mark.parametrize("H", HS)
def test_family_representative_full_matrix(name, H):
    for i, T in enumerate(TS):
        if T * H > 300_000 and H > 1000:
            T = 65  # 4096 x 257 costs minutes in the interpreter; 1000 x 257 still covers T = 257
        _run(name, inputs("gaussian", T, H, ("bf16", "fp32")[i % 2], seed=i))


def _every_program_shapes(prog) -> list[tuple[int, int]]:
    return [(H, T) for H, T in ((7, 0), (7, 1), (256, 65), (1000, 2), (512, 63)) if H <= prog.H_max]


def _w_dtype_for(T: int) -> str:
    return "bf16" if T % 2 else "fp32"


# Under the interpreter, the kernels of one program per class of interpreter twins on these shapes
# run (warps and stages alone do not change what the interpreter runs:
# tests/cake_kernels/interpreter_twins.py); on a GPU, every program's. The costly per-program
# tests above are thinned the same way, on their own shapes and partner programs.
EVERY_PROGRAM = Thinned(
    TRITON_PROGRAMS, lambda p: [Case(T, H, _w_dtype_for(T)) for H, T in _every_program_shapes(p)])


@pytest.mark.interpreter
@pytest.mark.parametrize("name", EVERY_PROGRAM.names)
def test_every_program(name):
    prog = registry.get(name)
    shapes = _every_program_shapes(prog)
    assert len(shapes) >= 3  # every program takes H up to 256 at least
    EVERY_PROGRAM.run_kernels(name)
    for H, T in shapes:
        _run(name, inputs("gaussian", T, H, _w_dtype_for(T), seed=T))


@pytest.mark.interpreter
@pytest.mark.parametrize("name", FAMILY_REPRESENTATIVES)
@pytest.mark.parametrize("form", ["plain", "residual", "heads_strided", "heads_contiguous"])
def test_forms_families_dtypes(name, form):
    for fam in ("gaussian", "same_sign", "outlier_rows"):
        for w_dtype in ("bf16", "fp32"):
            H = 256 if form.startswith("heads") else 512
            T = 9 if form == "heads_strided" else 33
            _run(name, inputs(fam, T, H, w_dtype, form, seed=hash((fam, w_dtype)) % 1000))


@pytest.mark.interpreter
@pytest.mark.parametrize("name", FAMILY_REPRESENTATIVES)
def test_strided_and_misaligned_views(name):
    torch.manual_seed(1)
    H, T = 200, 37
    inp = inputs("gaussian", T, H, "bf16")
    # Rows of a wider buffer, starting one element in (misaligned), row stride 203 elements.
    buf = torch.randn(T * 203 + 8).bfloat16()
    xv = buf[1:1 + T * 203].view(T, 203)[:, :H]
    xv.copy_(inp.x)
    assert xv.stride() == (203, 1) and xv.data_ptr() % 16 != 0
    gbuf = torch.randn(T, H + 3).bfloat16()
    gv = gbuf[:, 3:]
    gv.copy_(inp.g)
    inp.x, inp.g = xv, gv
    _run(name, inp)


@pytest.mark.interpreter
def test_non_contiguous_last_dim_rejected():
    x = torch.randn(8, 64).bfloat16().t()  # [64, 8], last stride 64
    with pytest.raises(ValueError, match="x: the last dimension must be contiguous"):
        runner.forward("fwd.row.r1.w8", x, torch.ones(8), 1e-6)


@pytest.mark.interpreter
def test_t_zero_launches_nothing_and_dw_is_zero():
    inp = inputs("gaussian", 0, 64)
    for name in ("bwd.pair.p2x.w8", "bwd.twosum.p2x.w8", "bwd.column_task.c64.w4", "bwd.atomic.p2x.w8"):
        _, dw, _ = run_backward_checked(registry.get(name), inp)
        assert torch.equal(dw, torch.zeros(64))


TMA_PROGRAMS = [p.name for p in registry.all_programs() if (p.launch.loads == "tma") and _family_tested(p)]


def _against_fallback(prog, w: str, cases, twin: str | None = None) -> int:
    """`prog` at each (H, T, form) of `cases` it takes, on same-sign inputs: against FP64 with poisoned
    outputs, dx bitwise equal to its pointer-load fallback and dw up to the partials' order; with a
    `twin` (same arithmetic, same tile order) dx and dw bitwise equal to it. Returns the cases run."""
    ran = 0
    for H, T, form in cases:
        if not prog.supports(H, form, w):
            continue
        ran += 1
        inp = inputs("same_sign", T, H, w, form=form, seed=T)
        dx, dw, _ = run_backward_checked(prog, inp)
        dx2, dw2, _ = run_backward_checked(registry.get(prog.fallback), inp)
        assert torch.equal(dx, dx2)
        torch.testing.assert_close(dw, dw2, rtol=1e-6, atol=0)
        if twin and registry.get(twin).supports(H, form, w):
            dx3, dw3, _ = run_backward_checked(registry.get(twin), inp)
            assert torch.equal(dx, dx3) and torch.equal(dw, dw3)
    return ran


@pytest.mark.interpreter
@pytest.mark.parametrize("name", TMA_PROGRAMS)
def test_tma_programs_against_fp64_and_their_fallback(name):
    """`.tma` programs read g and x through tensor descriptors (zero padding past the last row and
    column): against FP64 with poisoned outputs in the forms they take, dx bitwise equal to the
    pointer-load fallback (same math per row), dw equal up to the partials' summation order."""
    prog = registry.get(name)
    w = "fp32" if "fp32" in prog.w_dtypes else "bf16"  # `.wc` twins take BF16 weights only
    assert prog.launch.loads == "tma" and prog.fallback and not prog.supports(1000 + 4, "plain", w)
    assert not prog.supports(256, "heads_strided", w)
    cases = ((256, 37, "plain"), (1000, 9, "residual"), (256, 5, "heads_contiguous"), (512, 70, "plain"))
    assert _against_fallback(prog, w, cases) >= 2, name  # the H <= 256 programs take two of the four


@pytest.mark.interpreter
def test_tma_program_falls_back_on_a_view_it_cannot_describe():
    """A view whose base is not 16-byte aligned (x[:, 1:] of a wider tensor) runs the fallback; an
    aligned strided view (row stride != H) is read in place through the descriptor."""
    name = TMA_PROGRAMS[0]
    prog = registry.get(name)
    H, T = 256, 21
    inp = inputs("gaussian", T, H, "fp32", seed=3)
    wide_g = torch.randn(T, H + 8).to(torch.bfloat16)
    wide_x = torch.randn(T, H + 8).to(torch.bfloat16)
    for off in (1, 8):  # 2 bytes off 16-byte alignment; then 16 bytes: aligned
        g, x = wide_g[:, off:off + H], wide_x[:, off:off + H]
        rows = runner.rows_of("x", x, H)
        assert (runner.tma_row_stride(rows) is None) == (off == 1)
        rstd = torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6)
        dx, dw = runner.backward(prog, g, x, inp.w, rstd)
        dx2, dw2 = runner.backward(prog.fallback, g, x, inp.w, rstd)
        assert torch.equal(dx, dx2)
        if off == 1:
            assert torch.equal(dw, dw2)  # the fallback ran
        else:
            torch.testing.assert_close(dw, dw2, rtol=1e-6, atol=0)


TMC_PROGRAMS = [p.name for p in registry.all_programs() if p.launch.loads == "tma_chunks" and _family_tested(p)]
FW_TMC_PROGRAMS = [n for n in TMC_PROGRAMS if registry.get(n).launch.fold_in == "workspace"]


def _tma_twin(name: str) -> str | None:
    """The `.tma` program of a `.tmc` program's shape, if registered: the same arithmetic in the same
    order, only the boxes differ. For a `.fw.tmc` program, the register-fold `.tmc` program of its
    grid, tile, warps and products (stages, which do not change the order, may differ)."""
    prog = registry.get(name)
    if prog.launch.fold_in == "workspace":
        want = replace(prog.launch, fold_in="registers", stages=0)
        twins = sorted(p.name for p in registry.all_programs() if p.launch.loads == "tma_chunks"
                       and replace(p.launch, stages=0) == want and p.H_max == prog.H_max and p.w_dtypes == prog.w_dtypes)
        return twins[0] if twins else None
    twin = name.replace(".tmc", ".tma")
    return twin if twin in registry.names() else None


def test_every_workspace_fold_tmc_program_has_a_register_fold_twin():
    """`.fw.tmc` programs are checked bit for bit against a register-fold `.tmc` program (the test
    below): each has one, and it is not itself."""
    assert FW_TMC_PROGRAMS
    for name in FW_TMC_PROGRAMS:
        twin = _tma_twin(name)
        assert twin and registry.get(twin).launch.fold_in == "registers", name
    with pytest.raises(ValueError, match="fold_in"):
        registry.LaunchPolicy("persistent", loads="tma", fold_in="workspace")


@pytest.mark.interpreter
@pytest.mark.parametrize("name", TMC_PROGRAMS)
def test_tmc_programs_equal_their_tma_twin_and_fallback(name):
    """`.tmc` programs read g and x as [rows, H / 64, 64] (one box per step, chunks past H / 64
    zero): against FP64 with poisoned outputs, dx and dw bitwise equal to the `.tma` program of the
    same shape where one is registered (the same per-row math and tile order; for `.fw.tmc`, whose FP64
    folds are added to the workspace row by atomics, the register-fold `.tmc` program), dx bitwise
    equal to the pointer-load fallback and dw up to the partials' order. H 1536 takes 24 of the
    tile's 32 chunks."""
    prog = registry.get(name)
    w = "fp32" if "fp32" in prog.w_dtypes else "bf16"
    assert prog.launch.loads == "tma_chunks" and prog.fallback
    assert not prog.supports(520, "plain", w) and not prog.supports(1000 + 4, "plain", w)  # H % 64 != 0
    assert not prog.supports(256, "heads_strided", w)
    cases = ((256, 37, "plain"), (512, 9, "residual"), (256, 5, "heads_contiguous"), (1536, 11, "plain"))
    assert _against_fallback(prog, w, cases, _tma_twin(name)) == 4, name
    # rows that are not whole chunks (a view the 3-D descriptor cannot cover) run the fallback
    inp = inputs("gaussian", 6, 1000, w, seed=2)
    dx, dw, _ = run_backward_checked(prog, inp)
    dx2, dw2, _ = run_backward_checked(registry.get(prog.fallback), inp)
    assert torch.equal(dx, dx2) and torch.equal(dw, dw2)


@pytest.mark.interpreter
@pytest.mark.parametrize("name", FW_TMC_PROGRAMS)
def test_workspace_fold_tmc_programs_fold_by_atomics_in_order(name, monkeypatch):
    """`.fw.tmc` programs over several folds per program (2 programs, 1100 rows: each program's 550
    rows fold after 256 (an exchange) and 512 (an add), then the last 38 are added): dx and dw
    bitwise the register-fold `.tmc` twin's, whose FP64 total takes the same folds in the same
    order; the workspace row needs no zeroing (it is filled with NaN first)."""
    monkeypatch.setattr(runner, "sm_count", lambda device: 2)
    prog, twin = registry.get(name), registry.get(_tma_twin(name))
    w = prog.w_dtypes[0]
    inp = inputs("same_sign", 1100, 256, w, seed=11)
    rstd = reference_forward(inp.x, inp.w, 1e-6)[1]
    ws = runner.workspace_for(prog, inp.x)
    ws.partials.fill_(float("nan"))
    dx, dw = runner.backward(prog, inp.g, inp.x, inp.w, rstd, None, ws)
    dx2, dw2 = runner.backward(twin, inp.g, inp.x, inp.w, rstd)
    assert torch.equal(dx, dx2) and torch.equal(dw, dw2)
    assert torch.isfinite(dw).all()


@pytest.mark.gpu
@pytest.mark.parametrize("name", FW_TMC_PROGRAMS)
def test_workspace_fold_tmc_programs_on_the_gpu_are_deterministic(name):
    """On the GPU, where the atomics are real: at H 8192 and 5120 (tiles padded to 8192) over 3
    folds per program and a partial one, three runs of a `.fw.tmc` program give dx and dw bit for bit
    equal to each other and to its register-fold `.tmc` twin's; the workspace starts as NaN."""
    dev = torch.device("cuda")
    prog, twin = registry.get(name), registry.get(_tma_twin(name))
    rows = 3 * 256 * prog.launch.programs_per_sm * runner.sm_count(dev) + 77
    for H in (8192, 5120):
        inp = make_inputs("same_sign", rows, H, prog.w_dtypes[0], seed=H, device=dev)  # drawn on the GPU
        g, x, w = inp.g, inp.x, inp.w
        _, rstd, _ = reference_forward(x, w, 1e-6)
        dx2, dw2 = runner.backward(twin, g, x, w, rstd)
        ws = runner.workspace_for(prog, x)
        for _ in range(3):
            ws.partials.fill_(float("nan"))
            dx, dw = runner.backward(prog, g, x, w, rstd, None, ws)
            torch.cuda.synchronize()
            assert torch.equal(dx, dx2) and torch.equal(dw, dw2), (name, H)
        del inp, g, x, dx, dx2, ws


# (the `.fl.rw` twins are checked against their `.fl` base: test_grid_sync_reduce_and_barrier_options_are_bitwise_their_base)
FLAT_HEADS_PROGRAMS = [p.name for p in registry.all_programs() if p.launch.heads_rows == "flat" and not runner.grid_sync_v2(p)
                       and p.launch.l2_prefetch == "none"]


def _rows_fields(r: runner.Rows) -> tuple:
    return (r.tensor.data_ptr(), r.NH, r.st, r.sh, r.rows)


def test_rows_of_flattens_only_heads_that_follow_one_another():
    x = torch.zeros(5, 4, 256, dtype=torch.bfloat16)
    assert _rows_fields(runner.rows_of("x", x, 256, flat=True)) == (x.data_ptr(), 1, 256, 0, 20)
    assert _rows_fields(runner.rows_of("x", x, 256)) == (x.data_ptr(), 4, 1024, 256, 20)
    gap = torch.zeros(5, 6, 256, dtype=torch.bfloat16)[:, :4]  # heads of a token followed by 2 other heads
    assert not runner.heads_follow(gap)
    assert _rows_fields(runner.rows_of("x", gap, 256, flat=True)) == (gap.data_ptr(), 4, 1536, 256, 20)
    one_token = torch.zeros(3, 6, 256, dtype=torch.bfloat16)[1:2, :4]
    assert _rows_fields(runner.rows_of("x", one_token, 256, flat=True)) == (one_token.data_ptr(), 1, 256, 0, 4)
    one_head = torch.zeros(5, 8, 256, dtype=torch.bfloat16)[:, 2:3]
    assert _rows_fields(runner.rows_of("x", one_head, 256, flat=True)) == (one_head.data_ptr(), 1, 2048, 0, 5)
    prog, base = registry.get("bwd.twosum_pair.p16x.w1.fw.pf.wr.fl"), registry.get("bwd.twosum_pair.p16x.w1.fw.pf.wr")
    assert runner.flat_heads(prog, x, x, None) and not runner.flat_heads(base, x, x, None)
    assert not runner.flat_heads(prog, x, gap, None)  # one NH per launch: one operand keeps them all indexed
    with pytest.raises(ValueError, match="heads_rows"):
        registry.LaunchPolicy("persistent", heads_rows="flatten")


@pytest.mark.interpreter
@pytest.mark.parametrize("name", FLAT_HEADS_PROGRAMS)
def test_flat_head_rows_match_their_base(name, monkeypatch):
    """`.fl` twins read the same rows in the same order as their base: outputs bit for bit the
    base's on contiguous heads (addressed as flat rows), on heads that do not follow one another
    (addressed by head, as the base) and on plain rows; and in budget against FP64."""
    monkeypatch.setattr(runner, "sm_count", lambda device: 3)  # several tiles and partials per program
    prog, base = registry.get(name), registry.get(name.removesuffix(".fl"))
    assert replace(prog, name=base.name, launch=base.launch, description=base.description, forms=base.forms) == base
    assert prog.launch == replace(base.launch, heads_rows="flat") and prog.forms == ("heads_contiguous",)
    assert prog.fingerprint != base.fingerprint
    w_dtype = prog.w_dtypes[0]
    inp = inputs("outlier_rows", 37, 256, w_dtype, form="heads_contiguous", seed=5)
    assert runner.flat_heads(prog, inp.x, inp.g, None)
    pad = lambda t: torch.cat([t, torch.zeros_like(t[:, :1])], dim=1)[:, :-1]  # noqa: E731 (heads with a gap)
    gapped = replace(inp, x=pad(inp.x), g=pad(inp.g))
    assert not runner.heads_follow(gapped.x) and torch.equal(gapped.x, inp.x)
    plain = inputs("gaussian", 21, 256, w_dtype, seed=6)
    for case in (inp, gapped, plain):
        if prog.op == "fwd":
            got, want = run_forward_checked(prog, case), run_forward_checked(base, case)
        else:
            got, want = run_backward_checked(prog, case)[:2], run_backward_checked(base, case)[:2]
        for a, b in zip(got, want):
            assert (a is None and b is None) or torch.equal(a, b), name


FAST_STATS_PROGRAMS = [p.name for p in registry.all_programs() if p.launch.stats == "fast" and _family_tested(p)]


@pytest.mark.interpreter
@pytest.mark.parametrize("name", FAST_STATS_PROGRAMS)
def test_fast_statistics_forwards_against_their_base(name):
    """`.fs` forwards: y and rstd in contract against FP64 in every form (run_forward_checked: rstd
    relative L2 <= 1e-5, y within tolerance; poisoned outputs), rstd within 2^-20 relative of the IEEE
    base's row by row, y within one BF16 step of it, h_new bit for bit."""
    prog, base = registry.get(name), registry.get(name.removesuffix(".fs"))
    assert prog.launch == replace(base.launch, stats="fast") and base.launch.stats == "ieee"
    assert runner.forward_kernel(prog).fn.__name__ == "rmsnorm_fwd_row_static_fast_kernel"
    assert runner.forward_launch_meta(prog, 100, True) == runner.forward_launch_meta(base, 100, True)
    for form, H, T in (("plain", 512, 9), ("plain", 100, 5), ("plain", 7, 3), ("residual", 256, 4),
                       ("heads_contiguous", 256, 3), ("heads_strided", 256, 2)):
        for fam in ("gaussian", "outlier_rows"):
            inp = inputs(fam, T, H, "bf16" if T % 2 else "fp32", form=form, seed=H + T)
            y, rstd, h = run_forward_checked(prog, inp)
            y0, rstd0, h0 = run_forward_checked(base, inp)
            assert float(((rstd.double() - rstd0.double()).abs() / rstd0.double()).max()) <= 2.0**-20, (form, H)
            step = (y0.float().abs() * 2.0**-7).clamp_min(2.0**-126)  # one BF16 step (8 significant bits)
            assert bool(((y.float() - y0.float()).abs() <= step).all()), (form, H)
            assert (h is None and h0 is None) or torch.equal(h, h0)


def test_fast_statistics_need_the_one_row_static_forward():
    with pytest.raises(ValueError, match="stats"):
        registry.LaunchPolicy("row_blocks", stats="fast")
    with pytest.raises(ValueError, match="stats"):
        registry.LaunchPolicy("row_blocks", static_h=True, chunk=256, stats="fast")
    with pytest.raises(ValueError, match="stats"):
        registry.LaunchPolicy("row_blocks", stats="approx")


STATIC_COLUMN_TASKS = [p.name for p in registry.all_programs() if p.launch.grid == "column_tasks" and p.launch.static_h]


@pytest.mark.interpreter
@pytest.mark.parametrize("name", STATIC_COLUMN_TASKS)
def test_static_column_tasks_against_their_runtime_h_twin(name):
    """`.hs` column tasks: the twin's tasks, sums and order with H compiled in: dw bit for bit, dx within
    one BF16 step (mean(g*w*x) by a product with 1/H instead of a division), in budget against FP64;
    at H a power of two and not, every form."""
    prog, base = registry.get(name), registry.get(name.removesuffix(".hs"))
    assert prog.launch == replace(base.launch, static_h=True)
    assert runner.column_task_kernel(prog).fn.__name__ == "rmsnorm_bwd_column_task_static_kernel"
    assert runner.backward_launch_meta(prog, 300, True)[0] == dict(runner.backward_meta(base, 300, True)[0], H_C=300)
    for form, H, T in (("plain", 512, 1), ("plain", 512, 37), ("plain", 300, 5), ("plain", 7, 2), ("residual", 256, 6),
                       ("heads_contiguous", 256, 3), ("heads_strided", 256, 2)):
        inp = inputs("outlier_rows", T, H, "bf16" if T % 2 else "fp32", form=form, seed=H + T)
        dx, dw, _ = run_backward_checked(prog, inp)
        dx0, dw0, _ = run_backward_checked(base, inp)
        assert torch.equal(dw, dw0), (form, H, T)
        step = (dx0.float().abs() * 2.0**-7).clamp_min(2.0**-126)
        assert bool(((dx.float() - dx0.float()).abs() <= step).all()), (form, H, T)


GRES_PREFETCH_PROGRAMS = [p.name for p in registry.all_programs() if p.launch.gres_load == "prefetched"]


@pytest.mark.interpreter
@pytest.mark.parametrize("name", GRES_PREFETCH_PROGRAMS)
def test_gres_prefetch_programs_match_their_base(name, monkeypatch):
    """`.gp` twins (residual form) load the incoming gradient of h_new with the next tile: dx and dw bit
    for bit their base's, in the residual form (several tiles and folds per program, rows past the
    end) and in the plain form (no GRES), at H split into two tiles and not."""
    monkeypatch.setattr(runner, "sm_count", lambda device: 2)
    prog, base = registry.get(name), registry.get(name.removesuffix(".gp"))
    assert replace(prog, name=base.name, launch=base.launch, description=base.description, forms=base.forms) == base
    assert prog.launch == replace(base.launch, gres_load="prefetched") and prog.forms == ("residual",)
    assert runner.backward_rows_kernel(prog).fn.__name__ == "rmsnorm_bwd_rows_gres_prefetch_kernel"
    w_dtype = prog.w_dtypes[0]
    for form, H, T in (("residual", 384, 37), ("residual", 256, 9), ("plain", 384, 11)):
        if not base.supports(H, form, w_dtype):
            continue
        inp = inputs("outlier_rows", T, H, w_dtype, form=form, seed=H + T)
        dx, dw, _ = run_backward_checked(prog, inp)
        dx0, dw0, _ = run_backward_checked(base, inp)
        assert torch.equal(dx, dx0) and torch.equal(dw, dw0), (name, form, H, T)


def test_gres_prefetch_needs_a_prefetching_two_launch_compensated_program():
    with pytest.raises(ValueError, match="gres_load"):
        registry.LaunchPolicy("persistent", gres_load="early")
    lp = registry.LaunchPolicy("persistent", fold=256, fold_in="workspace", gres_load="prefetched")
    with pytest.raises(ValueError, match="gres_load"):
        registry.Program("bwd.twosum_pair.x", "bwd", "twosum_pair", True, lp, "", mode=3)  # no prefetch
    with pytest.raises(ValueError, match="gres_load"):
        registry.Program("bwd.twosum.x", "bwd", "twosum", True, replace(lp, prefetch=True), "", mode=3, single_launch=True)
    with pytest.raises(ValueError, match="gres_load"):
        registry.Program("bwd.twosum_pair.x", "bwd", "twosum_pair", True, replace(lp, prefetch=True, products="split_rstd"),
                         "", mode=3)


L2_PREFETCH_PROGRAMS = [p.name for p in registry.all_programs() if p.launch.l2_prefetch != "none"]
# The interpreter does not issue the prefetch, so there a `.l2b4` program runs what its `.l2p4` twin
# runs (the same kernel and arguments but the kind): one of each pair is run against the base.
L2_PREFETCH_RUN = [n for n in L2_PREFETCH_PROGRAMS if registry.get(n).launch.l2_prefetch == "lines"]


def _l2_base(name: str) -> registry.Program:
    return registry.get(name.rsplit(".", 1)[0])


@pytest.mark.interpreter
@pytest.mark.parametrize("name", L2_PREFETCH_RUN)
def test_l2_prefetch_programs_match_their_base(name, monkeypatch):
    """`.l2p4` twins compute what their base computes, bit for bit, on every form they take, with
    several tiles per program so that the tiles asked for ahead run past the last row. The
    interpreter does not issue the prefetch (inline PTX), so this checks the kernel's arithmetic and
    addressing; on the GPU, scripts/device/l2_prefetch_probe.py compares both kinds with their base
    bit for bit at full size, prefetch issued, and compile_check builds them for sm_90a."""
    monkeypatch.setattr(runner, "sm_count", lambda device: 2)
    prog, base = registry.get(name), _l2_base(name)
    assert replace(prog, name=base.name, launch=base.launch, description=base.description) == base
    assert prog.launch == replace(base.launch, l2_prefetch=prog.launch.l2_prefetch, l2_ahead=4)
    assert name.endswith({"lines": ".l2p4", "bulk": ".l2b4"}[prog.launch.l2_prefetch])
    assert runner.backward_rows_kernel(prog).fn.__name__ == "rmsnorm_bwd_rows_l2_prefetch_kernel"
    assert prog.fingerprint != base.fingerprint
    H = min(base.H_max, 384)
    w_dtype = prog.w_dtypes[0]
    cases = [(form, H if form in ("plain", "residual") else 256, T)
             for form in prog.forms for T in ((53,) if form != "plain" else (53, 3))]
    for form, h, T in cases:
        if not prog.supports(h, form, w_dtype):
            continue
        inp = inputs("outlier_rows", T, h, w_dtype, form=form, seed=h + T)
        dx, dw, _ = run_backward_checked(prog, inp)
        dx0, dw0, _ = run_backward_checked(base, inp)
        assert torch.equal(dx, dx0) and torch.equal(dw, dw0), (name, form, h, T)


def test_l2_prefetch_meta_names_the_kind_and_distance():
    for name in L2_PREFETCH_PROGRAMS:
        prog = registry.get(name)
        meta, warps = runner.backward_launch_meta(prog, 256, False, exact=True)
        base_meta, base_warps = runner.backward_launch_meta(_l2_base(name), 256, False, exact=True)
        assert meta == {**base_meta, "L2_PREFETCH": {"lines": 1, "bulk": 2}[prog.launch.l2_prefetch], "L2_AHEAD": 4}
        assert warps == base_warps


def test_l2_prefetch_needs_a_prefetching_two_launch_split_rstd_program():
    with pytest.raises(ValueError, match="l2_prefetch"):
        registry.LaunchPolicy("persistent", l2_prefetch="dram", l2_ahead=2)
    for kind, ahead in (("lines", 0), ("none", 2), ("bulk", 17)):
        with pytest.raises(ValueError, match="l2_ahead"):
            registry.LaunchPolicy("persistent", l2_prefetch=kind, l2_ahead=ahead)
    lp = registry.LaunchPolicy("persistent", fold=256, fold_in="workspace", prefetch=True, products="split_rstd",
                               reduce="wide", l2_prefetch="lines", l2_ahead=4)
    registry.Program("bwd.twosum_pair.x", "bwd", "twosum_pair", True, lp, "", mode=3)  # accepted
    for bad in (replace(lp, prefetch=False), replace(lp, products="eft"), replace(lp, split_h=True),
                replace(lp, gres_load="prefetched", products="eft")):
        with pytest.raises(ValueError, match="l2_prefetch"):
            registry.Program("bwd.twosum_pair.x", "bwd", "twosum_pair", True, bad, "", mode=3)
    with pytest.raises(ValueError, match="l2_prefetch"):
        registry.Program("bwd.twosum.x", "bwd", "twosum", True, replace(lp, reduce="grid_sync"), "", mode=3,
                         single_launch=True)


REGISTER_CAPPED = [p.name for p in registry.all_programs() if p.launch.max_registers]


@pytest.mark.interpreter
@pytest.mark.parametrize("name", REGISTER_CAPPED)
def test_register_capped_programs_match_their_base(name, monkeypatch):
    """`.mr` twins launch their base's kernels with the same arguments, the rows kernel with Triton's
    `maxnreg` compile option added (the reduce keeps ptxas's own choice), so dx and dw are the
    base's bit for bit: a register cap changes where values live, not the arithmetic (the interpreter
    ignores the option; compile_check builds the capped kernel for sm_90a)."""
    monkeypatch.setattr(runner, "sm_count", lambda device: 2)
    prog = registry.get(name)
    base = registry.get(name.removesuffix(f".mr{prog.launch.max_registers}"))
    assert prog.launch == replace(base.launch, max_registers=prog.launch.max_registers)
    assert runner.register_cap(prog) == {"maxnreg": prog.launch.max_registers} and runner.register_cap(base) == {}
    assert prog.fingerprint != base.fingerprint
    w = prog.w_dtypes[0]
    for H, T, form in ((1536, 37, "plain"), (1536, 9, "residual"), (1000, 70, "plain")):
        if not prog.supports(H, form, w):
            continue
        inp = inputs("outlier_rows", T, H, w, form=form, seed=H + T)
        logs = []
        for p in (prog, base):
            log: list = []
            with recorded_launches(log):
                runner.backward(p, inp.g, inp.x, inp.w, torch.ones(inp.x.numel() // H), inp.g_h_new)
            logs.append(log)
        capped, plain = logs
        assert [la.meta.get("maxnreg") for la in capped] == [prog.launch.max_registers] + [None] * (len(capped) - 1)
        def same(la):  # kernel, grid, argument shapes/strides/dtypes and scalars, options but the cap
            return (la.kernel, la.grid, [_describe(a) for a in la.args], {k: v for k, v in la.meta.items() if k != "maxnreg"},
                    la.warps, la.stages)
        assert [same(la) for la in capped] == [same(la) for la in plain]
        dx, dw, _ = run_backward_checked(prog, inp)
        dx0, dw0, _ = run_backward_checked(base, inp)
        assert torch.equal(dx, dx0) and torch.equal(dw, dw0), (name, form, H, T)


def test_max_registers_is_validated():
    for bad in (-8, 7, 24, 129, 256):
        with pytest.raises(ValueError, match="max_registers"):
            registry.LaunchPolicy("persistent", max_registers=bad)
    lp = registry.LaunchPolicy("persistent", fold=256, fold_in="workspace", prefetch=True, reduce="wide", max_registers=128)
    registry.Program("bwd.twosum_pair.x", "bwd", "twosum_pair", True, lp, "", mode=3)  # accepted
    with pytest.raises(ValueError, match="max_registers"):
        registry.Program("bwd.twosum.x", "bwd", "twosum", True, replace(lp, reduce="grid_sync"), "", mode=3,
                         single_launch=True)
    with pytest.raises(ValueError, match="max_registers"):
        registry.Program("fwd.persist.x", "fwd", "persistent", True, registry.LaunchPolicy("persistent", max_registers=64), "")
    with pytest.raises(ValueError, match="max_registers"):
        registry.Program("bwd.pair.x", "bwd", "pair", True, registry.LaunchPolicy("row_blocks", max_registers=64), "", mode=1)


GRID_SYNC_PROGRAMS = [p.name for p in registry.all_programs() if p.launch.reduce == "grid_sync" and _family_tested(p)
                      and not runner.grid_sync_v2(p) and not runner.grid_sync_flat(p)]
# `f64` (one launch, FP64 sums): each against its two-launch `f64_pair` fallback
# (test_fp64_grid_sync_programs_match_their_two_launch_twin).
F64_GRID_SYNC_PROGRAMS = [p.name for p in registry.all_programs() if runner.grid_sync_fp64(p)]
GRID_SYNC_V2_PROGRAMS = [p.name for p in registry.all_programs() if runner.grid_sync_v2(p) and not runner.grid_sync_fp64(p)]


@pytest.mark.interpreter
@pytest.mark.parametrize("name", GRID_SYNC_PROGRAMS)
def test_grid_sync_programs_match_their_two_launch_twin(name, monkeypatch):
    """`.gs` programs run their `.wr` twin's rows kernel as it is and sum the same partials in one
    launch: dx bitwise equal, dw equal up to the FP64 summation order, bitwise the same run to run,
    and within budget against FP64. Under the interpreter the barrier's two sides run as two launches
    (runner._launch_grid_sync); 3 SMs make several programs, and H 1000 more column blocks than
    programs, so the reduce's walk over column blocks goes round the grid. (Run to run determinism:
    test_determinism_overflow.py, which takes every deterministic program.)"""
    prog = registry.get(name)
    twin = registry.get(name.replace("bwd.twosum.", "bwd.twosum_pair.").replace(".gs", ".wr"))
    assert prog.launch == replace(twin.launch, reduce="grid_sync") and prog.single_launch and prog.mode == twin.mode == 3
    monkeypatch.setattr(runner, "sm_count", lambda device: 3)
    w = prog.w_dtypes[0]
    for H, T, fam, form in ((256, 70, "gaussian", "plain"), (1000, 23, "outlier_rows", "residual")):
        if not prog.supports(H, form, w):
            continue
        inp = inputs(fam, T, H, w, form=form, seed=H + T)
        dx, dw, worst = run_backward_checked(prog, inp)
        dx2, dw2, _ = run_backward_checked(twin, inp)
        assert torch.equal(dx, dx2), (H, T, form)
        torch.testing.assert_close(dw, dw2, rtol=1e-6, atol=0)
        assert worst <= 6.0e-4, (H, T, form, worst)


@pytest.mark.interpreter
def test_grid_sync_reduce_is_the_same_whichever_program_sums_a_column_block():
    """The `.gs` reduce over P partial rows, run by grids of 1, 3 and 7 programs with more column
    blocks than programs: the fixed-order FP64 sum, bit for bit the same whatever the grid."""
    from cake_kernels.programs import backward as bk

    P, H = 37, 70
    ws = torch.randn(P, H, dtype=torch.float64) * torch.logspace(-8, 8, H, dtype=torch.float64)
    meta = runner.grid_sync_meta(P, H, 1)
    assert meta == {"RED_P": 64, "RED_C": 4}  # 18 column blocks of 4; the 37 rows in one tile
    for rows in (meta["RED_P"], 8):  # one tile of partial rows, and five
        outs = []
        for grid in (1, 3, 7):
            dw = torch.full((H,), float("nan"), dtype=torch.float32)
            bk.reduce_columns_strided[(grid,)](ws, dw, P, H, BLOCK_P=rows, BLOCK_C=meta["RED_C"])
            outs.append(dw)
        assert all(torch.equal(outs[0], o) for o in outs[1:]), rows
        torch.testing.assert_close(outs[0], ws.sum(0).float(), rtol=1e-6, atol=0)


def test_grid_sync_meta_spreads_column_blocks_over_the_grid():
    # H 512 at 4 programs per SM on 132 SMs: 512 / 528 -> 4-column blocks (one 32-byte sector), 128 of
    # them; 2 warps hold 512 FP64 values, so tiles of 128 partial rows.
    assert runner.grid_sync_meta(528, 512, 2) == {"RED_P": 128, "RED_C": 4}
    # H 8192 at one program per SM: 62 columns per program -> 64-column blocks, 64 partial rows a tile.
    assert runner.grid_sync_meta(132, 8192, 16) == {"RED_P": 64, "RED_C": 64}
    # few programs: the tile's rows are P rounded up to a power of two
    assert runner.grid_sync_meta(3, 1000, 8) == {"RED_P": 4, "RED_C": 64}


def test_grid_sync_needs_a_single_launch_compensated_pointer_program():
    lp = registry.LaunchPolicy("persistent", reduce="grid_sync")
    for kwargs in (dict(mode=3, single_launch=False), dict(mode=1, single_launch=True)):
        with pytest.raises(ValueError, match="reduce='grid_sync' needs a single-launch compensated persistent"):
            registry.Program("bwd.twosum.x", "bwd", "twosum", True, lp, "", **kwargs)
    with pytest.raises(ValueError, match="grid_sync"):
        registry.Program("bwd.twosum.x", "bwd", "twosum", True, replace(lp, loads="tma"), "", mode=3, single_launch=True)
    ok = registry.Program("bwd.twosum.x", "bwd", "twosum", True, replace(lp, products="split_rstd"), "", mode=3,
                          single_launch=True)
    assert runner.reduce_meta(ok, 512) is None  # no second launch


@pytest.mark.interpreter
def test_grid_sync_workspace_holds_the_barrier_words():
    name = GRID_SYNC_PROGRAMS[0]
    x = torch.zeros(10, 256, dtype=torch.bfloat16)
    ws = runner.workspace_for(name, x)
    assert ws.counter is not None and ws.counter.shape == (2,) and int(ws.counter.abs().sum()) == 0
    # a single-launch program's one-word counter is refused, before any launch
    other = runner.workspace_for("bwd.twosum.p2x.w8.fw.pf", x)
    small = runner.Workspace(ws.partials, other.counter, ws.weight32)
    w, rstd = torch.ones(256), torch.ones(10)
    with pytest.raises(ValueError, match="two-word barrier counter"):
        runner.backward(name, x, x, w, rstd, None, small)


def _grid_sync_base(name: str) -> str:
    """The `.gs` program a `.ur` / `.rw` program is a twin of."""
    return name.removesuffix(".rw").removesuffix(".ur")


@pytest.mark.interpreter
@pytest.mark.parametrize("name", GRID_SYNC_V2_PROGRAMS)
def test_grid_sync_reduce_and_barrier_options_are_bitwise_their_base(name, monkeypatch):
    """`.ur` (the reduce's tiles unrolled) and `.rw` (only the reducing programs wait) change when
    the partials' loads are issued and who waits, not what is summed in which order: dx and dw are
    bit for bit the `.gs` base's. The unrolled tiles cover the full grid's rows while a small T runs
    fewer programs, whose masked tiles must add nothing. 3 SMs: several programs, and tiles of few
    rows. (The interpreter runs the barrier's two sides as two launches: the waiting itself runs on the
    GPU, test_grid_sync_program_on_the_gpu_in_a_cuda_graph.)"""
    prog, base = registry.get(name), registry.get(_grid_sync_base(name))
    assert prog.launch == replace(base.launch, reduce_tiles=prog.launch.reduce_tiles, barrier_wait=prog.launch.barrier_wait)
    assert prog.fallback == base.fallback and prog.launch != base.launch
    monkeypatch.setattr(runner, "sm_count", lambda device: 3)
    meta = runner.grid_sync_v2_constexprs(prog, 256, runner.backward_launch_meta(prog, 256, False)[1], 3)
    assert (meta["RED_TILES"] >= 1) == name.endswith((".ur", ".ur.rw")) and meta["REDUCERS_WAIT"] == name.endswith(".rw")
    w = prog.w_dtypes[-1]
    form = prog.forms[-1]
    for T in (1, 70):
        inp = inputs("outlier_rows", T, 256, w, form=form, seed=T)
        dx, dw, worst = run_backward_checked(prog, inp)
        dx2, dw2, _ = run_backward_checked(base, inp)
        assert torch.equal(dx, dx2) and torch.equal(dw, dw2), T
        assert worst <= 6.0e-4, (T, worst)


GRID_SYNC_FLAT_PROGRAMS = [p.name for p in registry.all_programs() if runner.grid_sync_flat(p)]


@pytest.mark.interpreter
@pytest.mark.parametrize("name", GRID_SYNC_FLAT_PROGRAMS)
def test_grid_sync_flat_reduce_programs_keep_the_rows_and_sum_the_same_partials(name, monkeypatch):
    """`.uf` runs its `.gs` base's rows and barrier as they are and sums the same FP64 partials in
    another fixed order: dx bit for bit the base's, dw equal up to that order (FP64 sums rounded to
    FP32), within budget against FP64. 3 SMs: several programs, tiles of few rows, and at T 1 all
    but one program's partial rows absent (masked tiles add nothing)."""
    prog = registry.get(name)
    base = registry.get(name.removesuffix(".rw").removesuffix(".uf").removesuffix(".uf8"))
    assert prog.launch == replace(base.launch, reduce_tiles="flat", barrier_wait=prog.launch.barrier_wait,
                                  reduce_columns=prog.launch.reduce_columns)
    assert prog.fallback == base.fallback and prog.deterministic and not runner.grid_sync_v2(prog)
    monkeypatch.setattr(runner, "sm_count", lambda device: 3)
    meta = runner.grid_sync_flat_constexprs(prog, 256, runner.backward_launch_meta(prog, 256, False)[1], 3)
    assert meta["RED_TILES"] >= 1 and meta["REDUCERS_WAIT"] == name.endswith(".rw")
    assert meta["RED_C"] == (prog.launch.reduce_columns or runner.grid_sync_meta(3 * prog.launch.programs_per_sm, 256, 2)["RED_C"])
    for w in prog.w_dtypes:
        for T in (1, 70):
            inp = inputs("outlier_rows", T, 256, w, form="plain", seed=T)
            dx, dw, worst = run_backward_checked(prog, inp)
            dx2, dw2, _ = run_backward_checked(base, inp)
            assert torch.equal(dx, dx2), (w, T)
            torch.testing.assert_close(dw, dw2, rtol=1e-6, atol=0)
            assert worst <= 6.0e-4, (w, T, worst)


@pytest.mark.interpreter
def test_grid_sync_flat_reduce_is_fixed_order_and_bounded():
    """The flat reduce over P partial rows below its tiles' cover, by grids of 1, 3 and 7 programs: bit
    for bit the same whatever the grid, the FP64 sum to FP32 rounding, +0.0 for a column of -0.0 (as
    the tree reduces give); and a grid whose flat tiles would exceed 8 is refused, the program and the
    accepted count named."""
    from cake_kernels.programs import backward as bk

    P, H, rows = 37, 70, 8
    ws = torch.randn(P, H, dtype=torch.float64) * torch.logspace(-8, 8, H, dtype=torch.float64)
    ws[:, 5] = -0.0
    outs = []
    for grid in (1, 3, 7):
        dw = torch.full((H,), float("nan"), dtype=torch.float32)
        bk.reduce_columns_flat[(grid,)](ws, dw, P, H, BLOCK_P=rows, BLOCK_C=4, TILES=6)  # 48 rows' cover, 37 used
        outs.append(dw)
    assert all(torch.equal(outs[0], o) for o in outs[1:])
    torch.testing.assert_close(outs[0], ws.sum(0).float(), rtol=1e-6, atol=0)
    assert outs[0][5] == 0 and not torch.signbit(outs[0][5])
    prog = registry.get("bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.uf.rw")
    assert runner.grid_sync_flat_constexprs(prog, 512, 2, 132)["RED_TILES"] == 5  # 528 rows in tiles of 128
    with pytest.raises(ValueError, match=r"bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.uf.rw.*at most 12.*'bwd.twosum.p4x.r4.w2.fw.pf.gs.xs'"):
        runner.grid_sync_flat_constexprs(prog, 512, 2, 400)  # 1600 rows: 13 tiles of 128
    prog8 = registry.get("bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.uf8.rw")
    meta8 = runner.grid_sync_flat_constexprs(prog8, 512, 2, 132)  # 528 rows in 9 tiles of [64 x 8]: 64 reducers
    assert (meta8["RED_P"], meta8["RED_C"], meta8["RED_TILES"]) == (64, 8, 9)
    assert runner.grid_sync_flat_constexprs(prog8, 16384, 2, 132)["RED_C"] == 8  # fixed, where the grid's own tile is 32 wide
    assert prog8.fingerprint != registry.get("bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.uf.rw").fingerprint


@pytest.mark.interpreter
def test_grid_sync_unrolled_reduce_is_bounded_and_exact():
    """The unrolled reduce against the looped one over the same tiles, with P below the tiles' cover
    (the last tile part masked, one whole tile masked) and a column of -0.0, bit for bit; and a grid whose
    tiles would exceed the bound is refused with the program and the accepted count named."""
    from cake_kernels.programs import backward as bk

    P, H, rows = 37, 70, 8
    ws = torch.randn(P, H, dtype=torch.float64) * torch.logspace(-8, 8, H, dtype=torch.float64)
    ws[:, 5] = -0.0
    looped = torch.full((H,), float("nan"), dtype=torch.float32)
    bk.reduce_columns_strided[(3,)](ws, looped, P, H, BLOCK_P=rows, BLOCK_C=4)
    unrolled = torch.full((H,), float("nan"), dtype=torch.float32)
    bk.reduce_columns_unrolled[(3,)](ws, unrolled, P, H, BLOCK_P=rows, BLOCK_C=4, TILES=6)  # 48 rows' cover, 40 used
    assert torch.equal(looped, unrolled) and not torch.signbit(unrolled[5])
    prog = registry.get("bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.ur")
    assert runner.grid_sync_v2_constexprs(prog, 512, 2, 132)["RED_TILES"] == 5  # 528 rows in tiles of 128
    with pytest.raises(ValueError, match=r"p4x.r4.w2.fw.pf.gs.xs.ur'.*unrolled reduce tiles.*accepted: at most 8"):
        runner.grid_sync_v2_constexprs(prog, 512, 2, 2 * 132)


def test_grid_sync_options_need_the_grid_barrier():
    with pytest.raises(ValueError, match=r"reduce_columns: 12 is not one of \(0, 4, 8, 16, 32, 64\)"):
        registry.LaunchPolicy("persistent", reduce="grid_sync", reduce_tiles="flat", reduce_columns=12)
    with pytest.raises(ValueError, match=r"reduce_columns: an option of the flat reduce"):
        registry.LaunchPolicy("persistent", reduce="grid_sync", reduce_tiles="unrolled", reduce_columns=8)
    with pytest.raises(ValueError, match="reduce_tiles: 'wide' is not one of"):
        registry.LaunchPolicy("persistent", reduce="grid_sync", reduce_tiles="wide")
    with pytest.raises(ValueError, match="barrier_wait: 'some' is not one of"):
        registry.LaunchPolicy("persistent", reduce="grid_sync", barrier_wait="some")
    for option in (dict(reduce_tiles="unrolled"), dict(barrier_wait="reducers")):
        with pytest.raises(ValueError, match=r"reduce_tiles / barrier_wait: options of .*reduce='grid_sync'"):
            registry.LaunchPolicy("persistent", reduce="wide", **option)


def test_grid_sync_programs_fall_back_to_their_two_launch_twin():
    for name in GRID_SYNC_PROGRAMS + GRID_SYNC_V2_PROGRAMS + GRID_SYNC_FLAT_PROGRAMS:
        prog = registry.get(name)
        fb = registry.get(prog.fallback)
        assert fb.family == "twosum_pair" and fb.launch == replace(
            prog.launch, reduce="wide", heads_rows=fb.launch.heads_rows, reduce_tiles="looped", barrier_wait="all",
            reduce_columns=0), name
        assert set(prog.forms) <= set(fb.forms) and set(prog.w_dtypes) <= set(fb.w_dtypes) and fb.H_max >= prog.H_max, name


@pytest.mark.interpreter
def test_refused_cooperative_grid_runs_the_two_launch_twin(monkeypatch):
    """Where the driver refuses a `.gs` program's cooperative grid (fewer SMs than the device reports,
    under MPS or a green context), the backward runs its two-launch twin into the same outputs, says
    so once, and does not try the refused launch again on that device. Any other launch error is
    raised as it is. (The refusal itself comes from the driver: the GPU test below provokes it.)"""
    name = "bwd.twosum.p4x.r4.w2.fw.pf.gs.xs"
    prog = registry.get(name)
    calls = []

    def refuse(*args, **kwargs):
        calls.append(1)
        raise RuntimeError("Triton Error [CUDA]: too many blocks in cooperative launch")

    monkeypatch.setattr(runner, "_COOPERATIVE_REFUSED", set())
    monkeypatch.setattr(runner, "_launch_grid_sync", refuse)
    inp = inputs("gaussian", 40, 256, "fp32", seed=5)
    _, rstd, _ = reference_forward(inp.x, inp.w, 1e-6)
    dx_out, dw_out = torch.empty_like(inp.x), torch.empty(256, dtype=torch.float32)
    with pytest.warns(RuntimeWarning, match=f"{prog.fallback}"):
        dx, dw = runner.backward(prog, inp.g, inp.x, inp.w, rstd, dx_out=dx_out, dw_out=dw_out)
    assert dx is dx_out and dw is dw_out
    dx2, dw2 = runner.backward(prog.fallback, inp.g, inp.x, inp.w, rstd)
    assert torch.equal(dx, dx2) and torch.equal(dw, dw2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dx3, dw3 = runner.backward(prog, inp.g, inp.x, inp.w, rstd)
    assert len(calls) == 1 and torch.equal(dw3, dw2)

    def fail(*args, **kwargs):
        raise RuntimeError("Triton Error [CUDA]: an illegal memory access was encountered")

    monkeypatch.setattr(runner, "_launch_grid_sync", fail)
    with pytest.raises(RuntimeError, match="illegal memory access"):
        runner.backward("bwd.twosum.p8x.w2.fw.pf.gs", inp.g, inp.x, inp.w, rstd)
    assert runner.cooperative_refusal(RuntimeError("Triton Error [CUDA]: too many blocks in cooperative launch"))
    assert not runner.cooperative_refusal(ValueError("too many blocks in cooperative launch"))


@pytest.mark.interpreter
def test_grid_sync_under_capture_launches_only_a_grid_already_accepted(monkeypatch):
    """While a CUDA graph is captured, a `.gs` program launches its cooperative grid only if the
    driver has accepted one as large on that device (a refusal there would invalidate the capture);
    otherwise the two-launch twin runs, with a warning. (The capture is simulated here; the GPU tests
    below capture for real.)"""
    name = "bwd.twosum.p4x.r4.w2.fw.pf.gs.xs"
    prog = registry.get(name)
    launches = []
    original = runner._launch_grid_sync

    def counted(*args, **kwargs):
        launches.append(args[1])
        return original(*args, **kwargs)

    capturing = [True]
    monkeypatch.setattr(runner, "_COOPERATIVE_REFUSED", set())
    monkeypatch.setattr(runner, "_COOPERATIVE_ACCEPTED", {})
    monkeypatch.setattr(runner, "_launch_grid_sync", counted)
    monkeypatch.setattr(runner, "_capturing", lambda device: capturing[0])
    inp = inputs("gaussian", 40, 256, "fp32", seed=5)
    _, rstd, _ = reference_forward(inp.x, inp.w, 1e-6)
    dx2, dw2 = runner.backward(prog.fallback, inp.g, inp.x, inp.w, rstd)
    with pytest.warns(RuntimeWarning, match="captured into a CUDA graph before its cooperative grid"):
        dx, dw = runner.backward(prog, inp.g, inp.x, inp.w, rstd)
    assert launches == [] and torch.equal(dx, dx2) and torch.equal(dw, dw2)
    capturing[0] = False
    runner.backward(prog, inp.g, inp.x, inp.w, rstd)
    assert len(launches) == 1 and runner._COOPERATIVE_ACCEPTED == {(name, str(inp.x.device)): launches[0]}
    capturing[0] = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runner.backward(prog, inp.g, inp.x, inp.w, rstd)
    assert len(launches) == 2
    monkeypatch.setattr(runner, "_COOPERATIVE_ACCEPTED", {(name, str(inp.x.device)): launches[0] - 1})
    with pytest.warns(RuntimeWarning, match="captured into a CUDA graph before"):
        runner.backward(prog, inp.g, inp.x, inp.w, rstd)  # a smaller grid accepted is not enough
    assert len(launches) == 2


@pytest.mark.gpu
def test_grid_sync_refused_by_the_driver_on_the_gpu_falls_back(monkeypatch):
    """A grid twice what the device holds at once (the runner told there are twice the SMs): the
    driver refuses the cooperative launch, and the two-launch twin's dx and dw come back."""
    dev = torch.device("cuda")
    name = "bwd.twosum.p4x.r4.w2.fw.pf.gs.xs"
    prog = registry.get(name)
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    monkeypatch.setattr(runner, "_COOPERATIVE_REFUSED", set())
    monkeypatch.setattr(runner, "sm_count", lambda device: 2 * sms)
    inp = inputs("gaussian", 65536, 512, "fp32", seed=4)
    g, x, w = inp.g.to(dev), inp.x.to(dev), inp.w.to(dev)
    _, rstd, _ = reference_forward(x, w, 1e-6)
    with pytest.warns(RuntimeWarning, match="refused its cooperative grid"):
        dx, dw = runner.backward(prog, g, x, w, rstd)
    dx2, dw2 = runner.backward(prog.fallback, g, x, w, rstd)
    torch.cuda.synchronize()
    assert torch.equal(dx, dx2) and torch.equal(dw, dw2)


def _captured_backward(prog, g, x, w, rstd, ws):
    """A CUDA graph of one `runner.backward` call into fresh outputs: (graph, dx_out, dw_out)."""
    dx_out, dw_out = torch.empty_like(x), torch.empty(x.shape[-1], dtype=torch.float32, device=x.device)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        runner.backward(prog, g, x, w, rstd, None, ws, dx_out=dx_out, dw_out=dw_out)
    dx_out.zero_()
    dw_out.zero_()
    return graph, dx_out, dw_out


@pytest.mark.gpu
def test_grid_sync_captured_before_any_launch_holds_the_twin(monkeypatch):
    """A `.gs` call met first inside a CUDA graph capture: a refused launch there would invalidate the
    capture (seen on an H100), so the graph holds the two-launch twin, with a warning; once the
    cooperative grid has run outside a capture, a capture holds the one-launch program (its barrier's
    generation then advances on every replay)."""
    dev = torch.device("cuda")
    prog = registry.get("bwd.twosum.p4x.r4.w2.fw.pf.gs.xs")
    monkeypatch.setattr(runner, "_COOPERATIVE_ACCEPTED", {})
    inp = inputs("gaussian", 65536, 512, "fp32", seed=6)
    g, x, w = inp.g.to(dev), inp.x.to(dev), inp.w.to(dev)
    _, rstd, _ = reference_forward(x, w, 1e-6)
    ws = runner.workspace_for(prog, x)
    with pytest.warns(RuntimeWarning, match="captured into a CUDA graph before its cooperative grid"):
        graph, dx_out, dw_out = _captured_backward(prog, g, x, w, rstd, ws)
    graph.replay()
    dx2, dw2 = runner.backward(prog.fallback, g, x, w, rstd)
    torch.cuda.synchronize()
    assert torch.equal(dx_out, dx2) and torch.equal(dw_out, dw2)
    assert ws.counter.tolist() == [0, 0]  # the twin never touched the barrier

    dx3, dw3 = runner.backward(prog, g, x, w, rstd, None, ws)  # eager: the driver accepts the grid
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graph, dx_out, dw_out = _captured_backward(prog, g, x, w, rstd, ws)
    graph.replay()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(dx_out, dx3) and torch.equal(dw_out, dw3)
    assert ws.counter.tolist() == [0, 3]


@pytest.mark.gpu
def test_grid_sync_refused_then_captured_holds_the_twin(monkeypatch):
    """A grid the driver refused eagerly (the runner told there are twice the SMs) is not tried again
    inside a capture: the capture survives and replays the two-launch twin's dx and dw."""
    dev = torch.device("cuda")
    prog = registry.get("bwd.twosum.p4x.r4.w2.fw.pf.gs.xs")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    monkeypatch.setattr(runner, "_COOPERATIVE_REFUSED", set())
    monkeypatch.setattr(runner, "_COOPERATIVE_ACCEPTED", {})
    monkeypatch.setattr(runner, "sm_count", lambda device: 2 * sms)
    inp = inputs("gaussian", 65536, 512, "fp32", seed=7)
    g, x, w = inp.g.to(dev), inp.x.to(dev), inp.w.to(dev)
    _, rstd, _ = reference_forward(x, w, 1e-6)
    ws = runner.workspace_for(prog, x)
    with pytest.warns(RuntimeWarning, match="refused its cooperative grid"):
        runner.backward(prog, g, x, w, rstd, None, ws)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graph, dx_out, dw_out = _captured_backward(prog, g, x, w, rstd, ws)
    graph.replay()
    dx2, dw2 = runner.backward(prog.fallback, g, x, w, rstd)
    torch.cuda.synchronize()
    assert torch.equal(dx_out, dx2) and torch.equal(dw_out, dw2)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["bwd.twosum.p4x.r4.w2.fw.pf.gs.xs", "bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.ur",
                                  "bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.ur.rw", "bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.uf.rw",
                                  "bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.uf8.rw"])
def test_grid_sync_program_on_the_gpu_in_a_cuda_graph(name):
    """On the GPU a `.gs` program is one cooperative launch with the barrier: the same dx as its
    two-launch twin, dw equal up to summation order (and for the `.ur` / `.rw` options, bit for bit
    the `.gs` base's; `.uf` sums in another order), the barrier's count back at 0 and its generation
    advanced once per launch, and the launch captured into a CUDA graph and replayed."""
    dev = torch.device("cuda")
    prog = registry.get(name)
    twin = registry.get("bwd.twosum_pair.p4x.r4.w2.fw.pf.wr.xs")
    inp = inputs("gaussian", 4096, 512, "fp32", seed=3)
    g, x, w = inp.g.to(dev), inp.x.to(dev), inp.w.to(dev)
    _, rstd, _ = reference_forward(x, w, 1e-6)
    ws = runner.workspace_for(prog, x)
    dx, dw = runner.backward(prog, g, x, w, rstd, None, ws)
    dx2, dw2 = runner.backward(twin, g, x, w, rstd)
    dx3, dw3 = runner.backward(_grid_sync_base(name).removesuffix(".uf").removesuffix(".uf8"), g, x, w, rstd)
    torch.cuda.synchronize()
    assert torch.equal(dx, dx2) and torch.equal(dx, dx3)
    assert torch.equal(dw, dw3) or (runner.grid_sync_flat(prog) and torch.allclose(dw, dw3, rtol=1e-6, atol=0))
    torch.testing.assert_close(dw, dw2, rtol=1e-6, atol=0)
    assert ws.counter.tolist() == [0, 1]
    dw_out = torch.empty_like(dw)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        runner.backward(prog, g, x, w, rstd, None, ws, dx_out=dx, dw_out=dw_out)
    graph.replay()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(dw_out, runner.backward(prog, g, x, w, rstd, None, ws)[1])
    assert ws.counter[0].item() == 0


RELOAD_PROGRAMS = [p.name for p in registry.all_programs() if p.launch.reload]


def _held_twin(prog: registry.Program) -> registry.Program:
    """The register-held `.xs` build of a `.rl` program's shape (with or without `.pf`): the same
    tile, warps, grid and fold, prefetching, uncapped (registered as `...fw.pf.wr...xs` where that
    shape won somewhere)."""
    return replace(prog, name=prog.name + ".held", launch=replace(prog.launch, reload=False, prefetch=True, max_registers=0))


@pytest.mark.interpreter
@pytest.mark.parametrize("name", [n for n in RELOAD_PROGRAMS if not registry.get(n).launch.max_registers])
def test_reload_programs_match_the_register_held_build(name, monkeypatch):
    """`.rl` programs read each tile twice instead of holding it; the arithmetic is the split-rstd
    kernel's, so dx and dw are those of the register-held build with the same shape, bit for bit, on
    every form, with split tiles and with rows left over at the end of a program's tiles (a partial
    last tile, programs with no tile)."""
    monkeypatch.setattr(runner, "sm_count", lambda device: 2)
    prog = registry.get(name)
    held = _held_twin(prog)
    assert runner.backward_rows_kernel(prog).fn.__name__ == (
        "rmsnorm_bwd_rows_reload_prefetch_kernel" if prog.launch.prefetch else "rmsnorm_bwd_rows_reload_kernel")
    assert runner.backward_rows_kernel(held).fn.__name__ == "rmsnorm_bwd_rows_split_rstd_kernel"
    assert prog.fingerprint != held.fingerprint
    H = 320 if prog.launch.split_h else 384  # 320: tiles of 256 and 64 columns
    for form, h, T in [(f, H if f in ("plain", "residual") else 256, T) for f in prog.forms
                       for T in ((53,) if f != "plain" else (53, 3))]:
        for w_dtype in prog.w_dtypes:
            if not prog.supports(h, form, w_dtype) and not (form.startswith("heads") and h == 256):
                continue
            inp = inputs("outlier_rows", T, h, w_dtype, form=form, seed=h + T)
            dx, dw, err = run_backward_checked(prog, inp)
            dx0, dw0, _ = run_backward_checked(held, inp)
            assert torch.equal(dx, dx0) and torch.equal(dw, dw0), (name, form, h, T, w_dtype)
            assert err <= 1.0, (name, form, h, T, w_dtype, err)


def test_reload_shapes_and_names():
    for name in RELOAD_PROGRAMS:
        prog = registry.get(name)
        lp = prog.launch
        assert (lp.products, lp.fold_in, lp.reduce, prog.mode, prog.single_launch) == (
            "split_rstd", "workspace", "wide", 3, False)
        assert (".fw.pf.wr." in name) == lp.prefetch and (".fw.pf.wr." if lp.prefetch else ".fw.wr.") in name
        assert ".xs.rl" in name and (name.endswith(f".rl.mr{lp.max_registers}") if lp.max_registers else name.endswith(".rl"))
        assert (".sp." in name) == lp.split_h and f"p{lp.programs_per_sm}x" in name
        meta, warps = runner.backward_launch_meta(prog, 6144, False, exact=True)
        held_meta, held_warps = runner.backward_launch_meta(_held_twin(prog), 6144, False, exact=True)
        assert meta == {**held_meta, "PREFETCH": lp.prefetch} and warps == held_warps


def test_reload_needs_a_two_launch_split_rstd_program():
    lp = registry.LaunchPolicy("persistent", fold=256, fold_in="workspace", products="split_rstd", reduce="wide", reload=True)
    registry.Program("bwd.twosum_pair.x", "bwd", "twosum_pair", True, lp, "", mode=3)  # accepted
    registry.Program("bwd.twosum_pair.x", "bwd", "twosum_pair", True, replace(lp, prefetch=True), "", mode=3)  # accepted
    for bad in (replace(lp, products="eft"), replace(lp, loads="tma_chunks"),
                replace(lp, prefetch=True, l2_prefetch="lines", l2_ahead=2)):
        with pytest.raises(ValueError, match="reload"):
            registry.Program("bwd.twosum_pair.x", "bwd", "twosum_pair", True, bad, "", mode=3)
    with pytest.raises(ValueError, match="reload"):
        registry.Program("bwd.pair.x", "bwd", "pair", True, replace(lp, fold_in="registers"), "", mode=1)
    with pytest.raises(ValueError, match="reload"):
        registry.Program("bwd.twosum.x", "bwd", "twosum", True, replace(lp, reduce="grid_sync"), "", mode=3,
                         single_launch=True)


# `f64_pair` (products 'fp64'): dw summed in FP64 from exact products. Every shape's own program (the
# `.wc` and `.fl` twins are held to their base by the weight-cast and flat-heads tests).
F64_PROGRAMS = [p.name for p in registry.all_programs() if p.family == "f64_pair" and p.launch.weight_cast == "none"
                and _family_tested(p)]


def _dw_exact(g, x, w, rstd):
    """The oracle's dw: the sum over rows of g * x * rstd in FP64 (each term exact there: BF16 g and
    x, FP32 rstd), rounded once to FP32."""
    return oracle(g, x, w, rstd, want_dx=False)["dw64"].float()


def test_fp64_sums_are_offered_where_their_kernels_take_them():
    assert len(F64_PROGRAMS) >= 10
    for name in F64_PROGRAMS:
        prog = registry.get(name)
        assert prog.deterministic and prog.mode == 3 and not prog.single_launch, name
        kernel = runner.backward_rows_kernel(prog) if prog.launch.loads == "pointer" else runner.tma_kernel(prog)
        assert kernel.fn.__name__.endswith("fp64_kernel"), name
    for bad in (dict(split_h=True, loads="tma_chunks"), dict(reduce="grid_sync", loads="tma_chunks"), dict(loads="tma"),
                dict(reload=True), dict(gres_load="prefetched")):
        with pytest.raises(ValueError, match="products: 'fp64'"):
            registry.LaunchPolicy("persistent", products="fp64", **bad)
    with pytest.raises(ValueError, match=r"products: 'kahan' is not one of \('eft', 'split_rstd', 'fp64'\)"):
        registry.LaunchPolicy("persistent", products="kahan")


@pytest.mark.interpreter
@pytest.mark.parametrize("name", F64_PROGRAMS)
def test_fp64_sum_programs_give_the_exact_dw_rounded(name, monkeypatch):
    """dw of an `f64_pair` program is the exact sum of g * x * rstd rounded once to FP32, element for
    element (its terms are exact and its FP64 additions' error is far below half an FP32 ulp at these
    sizes), on the gaussian family whose columns cross zero (the compensated programs' binding family)
    and on large same-sign rows; T not a multiple of the tile's rows, several tiles and programs (3 SMs),
    rows held as two tiles (`.sp`, H 1000 and 1536),
    and dx that of the compensated programs' rows kernel (the same `_store_dx`): bitwise where H is a
    power of two, else within one BF16 ulp (the row's mean is its sum times 1/H, `_inverse`)."""
    monkeypatch.setattr(runner, "sm_count", lambda device: 3)
    prog = registry.get(name)
    w = prog.w_dtypes[-1]
    ran = 0
    for family, T, H, form in (("gaussian", 301, 256, "plain"), ("same_sign", 67, 512, "residual"),
                               ("gaussian", 45, 256, "heads_contiguous"), ("outlier_rows", 9, 2048, "plain"),
                               ("gaussian", 33, 1536, "plain"), ("same_sign", 21, 1000, "residual")):
        if not prog.supports(H, form, w):
            continue
        ran += 1
        inp = inputs(family, T, H, w, form=form, seed=T)
        dx, dw, _ = run_backward_checked(prog, inp)
        _, rstd, h = reference_forward(inp.x, inp.w, 1e-6, inp.residual)
        xn = h if inp.residual is not None else inp.x
        want = _dw_exact(inp.g, xn, inp.w, rstd)
        assert torch.equal(dw, want), (name, family, (dw - want).abs().max())
        twin = registry.get("bwd.twosum_pair.p2x.w4.fw.pf.wr.xs")
        if twin.supports(H, form, w):
            want_dx = runner.backward(twin, inp.g, xn, inp.w, rstd, inp.g_h_new)[0]
            if H & (H - 1) == 0:  # 1/H exact: the mean as a product is the quotient
                assert torch.equal(dx, want_dx), (name, family)
            else:  # within one FP32 ulp of the quotient: at most one BF16 ulp in dx
                torch.testing.assert_close(dx.float(), want_dx.float(), rtol=2**-7, atol=2**-20 * want_dx.float().abs().max().item())
    assert ran >= 2, name


@pytest.mark.gpu
@pytest.mark.parametrize("name", F64_PROGRAMS + [p.name for p in registry.all_programs() if p.family == "f64"
                                                 and p.launch.heads_rows == "indexed"])
def test_fp64_sum_programs_on_the_gpu_give_the_exact_dw_rounded(name):
    """On the GPU (the compiled build: ptxas may fuse the FP64 product into its add, which changes
    nothing, the product being exact; the one-launch `f64` programs' cooperative grid and barrier):
    dw is the exact sum rounded once, run after run, at an H the program is offered for (a split
    row's at H 1536)."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    prog = registry.get(name)
    w = prog.w_dtypes[-1]
    H = next(h for h in (4096, 1536, 512, 256) if prog.supports(h, "plain", w))
    inp = make_inputs("gaussian", 20000, H, w, seed=3, device="cuda")
    rstd = reference_forward(inp.x, inp.w, 1e-6)[1]  # plain rows: x is the normalized input
    want = _dw_exact(inp.g, inp.x, inp.w, rstd)
    for _ in range(3):
        dx, dw = runner.backward(prog, inp.g, inp.x, inp.w, rstd)
        assert torch.equal(dw, want), (name, (dw - want).abs().max())


@pytest.mark.interpreter
@pytest.mark.parametrize("name", F64_GRID_SYNC_PROGRAMS)
def test_fp64_grid_sync_programs_match_their_two_launch_twin(name, monkeypatch):
    """`f64` programs run their `f64_pair` twin's rows kernel as it is, then the grid barrier and the
    looped reduce in one launch (the interpreter runs the barrier's two sides as two launches): dx
    bitwise the twin's, dw the exact sum rounded once (as the twin's, whatever the reduce's order),
    on contiguous heads (flat rows for the `.fl` twins) and plain rows; 3 SMs for several programs."""
    monkeypatch.setattr(runner, "sm_count", lambda device: 3)
    prog = registry.get(name)
    twin = registry.get(prog.fallback)
    assert prog.single_launch and twin.family == "f64_pair" and runner.grid_sync_fp64(prog)
    assert prog.launch == replace(twin.launch, reduce="grid_sync", barrier_wait="reducers")
    fn = compile_check.kernels_of(prog, 256, False)[0][0]
    assert fn.fn.__name__ == "rmsnorm_bwd_grid_sync_fp64_kernel"
    ran = 0
    for fam, T, form in (("gaussian", 70, "heads_contiguous"), ("outlier_rows", 150, "plain")):
        w = prog.w_dtypes[ran % len(prog.w_dtypes)]
        if not prog.supports(256, form, w):
            continue
        ran += 1
        inp = inputs(fam, T, 256, w, form=form, seed=T)
        dx, dw, _ = run_backward_checked(prog, inp)
        dx2, dw2, _ = run_backward_checked(twin, inp)
        assert torch.equal(dx, dx2) and torch.equal(dw, dw2), (name, form)
        assert torch.equal(dw, _dw_exact(inp.g, inp.x, inp.w, reference_forward(inp.x, inp.w, 1e-6)[1]))
    assert ran >= 1
    with pytest.raises(ValueError, match="products: 'fp64'"):
        registry.LaunchPolicy("persistent", products="fp64", reduce="grid_sync", reduce_tiles="flat", reduce_columns=8)
