"""The op as users call it: autograd, residual, torch.compile, main_grad, autocast, the module, bad input.

On CPU the op dispatches to the reference program; the forced-program tests run Triton programs
under the interpreter (tests/conftest.py sets TRITON_INTERPRET=1 without a GPU). Gradients are
checked against torch.autograd on an FP64 copy of the same math, with the budgets of
ROUTING-POLICY.md section 2.
"""

from __future__ import annotations

import pytest
import torch

import cake_kernels
from cake_kernels import RMSNorm, registry, rmsnorm_train, rmsnorm_train_backward, rmsnorm_train_forward
from cake_kernels.reference import dw_err_over_tol, oracle, reference_backward, reference_forward

EPS = 1e-6


def _bf16(*shape, seed=0, scale=1.0):
    gen = torch.Generator().manual_seed(seed)
    return (scale * torch.randn(*shape, generator=gen)).to(torch.bfloat16)


def _weight(H, dtype=torch.float32, seed=1):
    gen = torch.Generator().manual_seed(seed)
    return (1.0 + 0.1 * torch.randn(H, generator=gen)).to(dtype)


def _fp64_autograd(x, w, g, eps=EPS, residual=None, g_h=None):
    """torch.autograd on FP64 copies: (y64, dx64, dw64[, dres64]); h_new rounded to BF16 as the op does."""
    x64 = x.double().requires_grad_()
    w64 = w.double().requires_grad_()
    if residual is not None:
        r64 = residual.double().requires_grad_()
        # h_new = BF16(x + residual) in the op; its rounding has gradient 1 (straight through).
        h = x64 + r64
        h = h + ((x.float() + residual.float()).to(torch.bfloat16).double() - h).detach()
    else:
        h = x64
    y = h * torch.rsqrt((h * h).mean(-1, keepdim=True) + eps) * w64
    loss = (y * g.double()).sum()
    if residual is not None:
        loss = loss + (h * g_h.double()).sum()
    loss.backward()
    out = [y.detach(), x64.grad, w64.grad]
    if residual is not None:
        out.append(r64.grad)
    return out


def _within(actual, expect, atol, rtol):
    """max |a - e| / (atol + rtol |e|): <= 1 means within the budget."""
    e = (actual.detach().double() - expect).abs() / (atol + rtol * expect.abs())
    return float(e.max()) if e.numel() else 0.0


# ---------------------------------------------------------------- autograd against torch.autograd


@pytest.mark.parametrize("w_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", [(37, 200), (2, 5, 64), (3, 4, 256), (1, 1)])
def test_autograd_matches_fp64_autograd(shape, w_dtype):
    x = _bf16(*shape, seed=2).requires_grad_()
    w = _weight(shape[-1], w_dtype).requires_grad_()
    g = _bf16(*shape, seed=3)
    y = rmsnorm_train(x, w, EPS)
    assert y.dtype == torch.bfloat16 and y.shape == x.shape
    y.backward(g)
    y64, dx64, dw64 = _fp64_autograd(x.detach(), w.detach(), g)
    assert _within(y, y64, 1e-2, 1e-2) <= 1
    assert _within(x.grad, dx64, 1e-2, 1e-2) <= 1
    assert w.grad.dtype == w_dtype  # dw is returned in the weight's dtype
    if w_dtype == torch.float32:
        assert float(dw_err_over_tol(w.grad, dw64).max()) <= 1
    else:  # one BF16 rounding of the FP32 dw
        assert _within(w.grad, dw64, 1e-2, 2 ** -8) <= 1


def test_autograd_matches_fp32_torch_rms_norm():
    """The forward agrees with torch's own FP32 rms_norm, and the backward with its autograd."""
    H = 96
    x = _bf16(20, H, seed=4).requires_grad_()
    w = _weight(H).requires_grad_()
    g = _bf16(20, H, seed=5)
    rmsnorm_train(x, w, EPS).backward(g)
    xf = x.detach().float().requires_grad_()
    wf = w.detach().clone().requires_grad_()
    yf = torch.nn.functional.rms_norm(xf, (H,), wf, EPS)
    yf.backward(g.float())
    y = rmsnorm_train(x.detach(), w.detach(), EPS)
    assert torch.allclose(y.float(), yf.detach(), rtol=2 ** -7, atol=1e-6)
    assert torch.allclose(x.grad.float(), xf.grad, rtol=2 ** -7, atol=1e-5)
    assert torch.allclose(w.grad, wf.grad, rtol=1e-5, atol=1e-5)


def test_forward_and_backward_functions_agree_with_autograd():
    x, g = _bf16(33, 128, seed=6), _bf16(33, 128, seed=7)
    w = _weight(128)
    y, rstd = rmsnorm_train_forward(x, w, EPS)
    dx, dw = rmsnorm_train_backward(g, x, w, rstd)
    assert rstd.dtype == torch.float32 and rstd.shape == (33,) and dw.dtype == torch.float32
    xa = x.clone().requires_grad_()
    wa = w.clone().requires_grad_()
    ya = rmsnorm_train(xa, wa, EPS)
    ya.backward(g)
    assert torch.equal(ya, y) and torch.equal(xa.grad, dx) and torch.equal(wa.grad, dw)


# ---------------------------------------------------------------- residual form


def test_residual_gradient_flows_to_both_inputs():
    T, H = 29, 160
    x = _bf16(T, H, seed=8).requires_grad_()
    res = _bf16(T, H, seed=9, scale=0.5).requires_grad_()
    w = _weight(H).requires_grad_()
    g, g_h = _bf16(T, H, seed=10), _bf16(T, H, seed=11)
    y, h = rmsnorm_train(x, w, EPS, residual=res)
    assert torch.equal(h, (x.float() + res.float()).to(torch.bfloat16))
    torch.autograd.backward([y, h], [g, g_h])
    # The one dx is the gradient of both inputs.
    assert torch.equal(x.grad, res.grad)
    _, rstd, h2 = rmsnorm_train_forward(x.detach(), w.detach(), EPS, residual=res.detach())
    dx, dw = rmsnorm_train_backward(g, h2, w.detach(), rstd, g_h_new=g_h)
    assert torch.equal(x.grad, dx) and torch.equal(w.grad, dw)
    y64, dx64, dw64, dres64 = _fp64_autograd(x.detach(), w.detach(), g, residual=res.detach(), g_h=g_h)
    assert _within(y, y64, 1e-2, 1e-2) <= 1
    assert _within(x.grad, dx64, 1e-2, 1e-2) <= 1 and torch.equal(dx64, dres64)
    assert float(dw_err_over_tol(w.grad, dw64).max()) <= 1


def test_residual_with_only_y_used():
    """h_new unused downstream: its gradient is None and dx is the normalization's alone."""
    x = _bf16(8, 64, seed=12).requires_grad_()
    res = _bf16(8, 64, seed=13).requires_grad_()
    w = _weight(64).requires_grad_()
    y, _ = rmsnorm_train(x, w, EPS, residual=res)
    g = _bf16(8, 64, seed=14)
    y.backward(g)
    _, rstd, h = rmsnorm_train_forward(x.detach(), w.detach(), EPS, residual=res.detach())
    dx, _ = rmsnorm_train_backward(g, h, w.detach(), rstd)
    assert torch.equal(x.grad, dx) and torch.equal(res.grad, dx)


def test_head_view_gradient_lands_in_the_wide_buffer():
    """A [T, nh, 256] view of a wider projection output: the gradient reaches only its columns."""
    T = 5
    wide = _bf16(T, 32 * 256, seed=15).requires_grad_()
    q = wide[:, : 24 * 256].view(T, 24, 256)
    w = _weight(256).requires_grad_()
    g = _bf16(T, 24, 256, seed=16)
    rmsnorm_train(q, w, EPS).backward(g)
    _, dx64, dw64 = _fp64_autograd(q.detach(), w.detach(), g)
    assert _within(wide.grad[:, : 24 * 256].reshape(T, 24, 256), dx64, 1e-2, 1e-2) <= 1
    assert torch.count_nonzero(wide.grad[:, 24 * 256:]) == 0
    assert float(dw_err_over_tol(w.grad, dw64).max()) <= 1


# ---------------------------------------------------------------- torch.compile


def _loss_plain(x, w):
    return (rmsnorm_train(x, w, EPS).float() ** 2).sum()


def _loss_residual(x, w, r):
    y, h = rmsnorm_train(x, w, EPS, residual=r)
    return (y.float() ** 2).sum() + (h.float() * 0.5).sum()


def _grads(fn, *args):
    leaves = [a.detach().clone().requires_grad_() for a in args]
    loss = fn(*leaves)
    loss.backward()
    return loss.detach(), [a.grad for a in leaves]


@pytest.mark.parametrize("fn, n_inputs", [(_loss_plain, 2), (_loss_residual, 3)])
def test_compile_fullgraph_traces_forward_and_backward(fn, n_inputs):
    """fullgraph=True fails on any graph break: the custom ops and their fake kernels must trace.

    aot_eager runs the same Dynamo + AOTAutograd tracing as the default backend, without the C++
    code generation (see the slow test below for inductor)."""
    torch._dynamo.reset()
    args = [_bf16(12, 64, seed=20), _weight(64)] + ([_bf16(12, 64, seed=21)] if n_inputs == 3 else [])
    eager_loss, eager_grads = _grads(fn, *args)
    compiled = torch.compile(fn, fullgraph=True, backend="aot_eager")
    loss, grads = _grads(compiled, *args)
    assert torch.equal(loss, eager_loss)
    for a, b in zip(grads, eager_grads):
        assert torch.equal(a, b)


@pytest.mark.slow
def test_compile_fullgraph_default_backend():
    """The default backend (inductor), forward and backward, residual form (about 50 s cold on 2 cores)."""
    torch._dynamo.reset()
    args = [_bf16(12, 64, seed=22), _weight(64), _bf16(12, 64, seed=23)]
    eager_loss, eager_grads = _grads(_loss_residual, *args)
    loss, grads = _grads(torch.compile(_loss_residual, fullgraph=True), *args)
    assert torch.allclose(loss, eager_loss, rtol=1e-5)
    for a, b in zip(grads, eager_grads):
        assert torch.equal(a, b)


# ---------------------------------------------------------------- main_grad, autocast, dtypes


def test_main_grad_accumulates_in_fp32_and_weight_grad_stays_none():
    H = 64
    w = torch.nn.Parameter(_weight(H, torch.bfloat16))
    w.main_grad = torch.zeros(H, dtype=torch.float32)
    expect = torch.zeros(H, dtype=torch.float32)
    for step in range(2):
        x = _bf16(16, H, seed=30 + step).requires_grad_()
        g = _bf16(16, H, seed=40 + step)
        rmsnorm_train(x, w, EPS).backward(g)
        _, rstd = rmsnorm_train_forward(x.detach(), w.detach(), EPS)
        expect += rmsnorm_train_backward(g, x.detach(), w.detach(), rstd)[1]
        assert w.grad is None
        assert torch.equal(w.main_grad, expect), f"step {step}"
    assert w.main_grad.dtype == torch.float32 and torch.count_nonzero(w.main_grad) > 0


def test_main_grad_under_compile_matches_eager():
    """The main_grad accumulation happens inside the compiled backward too (aot_eager)."""
    torch._dynamo.reset()

    def step(x, w):
        return (rmsnorm_train(x, w, EPS).float() ** 2).sum()

    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    sums = []
    for fn in (step, compiled):
        w = torch.nn.Parameter(_weight(32, torch.bfloat16))
        w.main_grad = torch.zeros(32)
        for i in range(2):
            fn(_bf16(6, 32, seed=90 + i).requires_grad_(), w).backward()
        assert w.grad is None
        sums.append(w.main_grad.clone())
    assert torch.count_nonzero(sums[0]) > 0 and torch.equal(sums[0], sums[1])


@pytest.mark.parametrize("bad, what", [
    (torch.zeros(64, dtype=torch.bfloat16), "BF16 buffer"),
    (torch.zeros(65, dtype=torch.float32), "wrong shape"),
    ([0.0] * 64, "a list"),
])
def test_bad_main_grad_is_rejected(bad, what):
    w = torch.nn.Parameter(_weight(64, torch.bfloat16))
    w.main_grad = bad
    with pytest.raises(TypeError, match="weight.main_grad"):
        rmsnorm_train(_bf16(4, 64), w, EPS)


def test_autocast_bf16_region():
    """Under torch.autocast("cpu") a Linear feeds the op its BF16 output; FP32 weights stay FP32."""
    H = 64
    lin = torch.nn.Linear(H, H)
    norm = RMSNorm(H, EPS)
    x = torch.randn(10, H)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = lin(x)
        assert h.dtype == torch.bfloat16
        y = norm(h)
        # A BF16 input given directly inside the region works too.
        y2 = rmsnorm_train(h.detach(), norm.weight.detach(), EPS)
    assert y.dtype == torch.bfloat16 and torch.equal(y.detach(), y2)
    y.float().sum().backward()
    assert norm.weight.grad.dtype == torch.float32 and lin.weight.grad.dtype == torch.float32
    assert torch.isfinite(lin.weight.grad).all()


# ---------------------------------------------------------------- the module


def test_module_state_dict_parity_with_torch_rmsnorm():
    H = 48
    ours = RMSNorm(H, eps=1e-5)
    theirs = torch.nn.RMSNorm(H, eps=1e-5)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    with torch.no_grad():
        theirs.weight.copy_(_weight(H))
    ours.load_state_dict(theirs.state_dict())  # strict
    assert torch.equal(ours.weight, theirs.weight)
    with torch.no_grad():
        ours.weight.mul_(2)
    theirs.load_state_dict(ours.state_dict())
    assert torch.equal(theirs.weight, ours.weight)
    x = _bf16(6, H, seed=50)
    expect = torch.nn.functional.rms_norm(x.float(), (H,), theirs.weight.detach(), 1e-5)
    assert torch.allclose(ours(x).float(), expect, rtol=2 ** -7, atol=1e-6)
    # The parameter is what optimizers see, as for torch.nn.RMSNorm.
    assert [n for n, _ in ours.named_parameters()] == ["weight"]
    assert RMSNorm((H,)).normalized_shape == torch.nn.RMSNorm((H,)).normalized_shape


def test_module_rejects_bad_construction():
    with pytest.raises(ValueError, match="normalized_shape"):
        RMSNorm((4, 8))
    with pytest.raises(TypeError, match="dtype"):
        RMSNorm(8, dtype=torch.float16)
    with pytest.raises(ValueError, match="eps"):
        RMSNorm(8, eps=0.0)


# ---------------------------------------------------------------- bad input


def _good(H=64):
    return _bf16(4, H), _weight(H)


@pytest.mark.parametrize("case, exc, name", [
    ("x_fp32", TypeError, "x:"),
    ("x_fp16", TypeError, "x:"),
    ("x_not_tensor", TypeError, "x:"),
    ("x_scalar", ValueError, "x:"),
    ("w_fp16", TypeError, "weight:"),
    ("w_fp64", TypeError, "weight:"),
    ("w_shape", ValueError, "weight:"),
    ("w_2d", ValueError, "weight:"),
    ("w_not_tensor", TypeError, "weight:"),
    ("res_fp32", TypeError, "residual:"),
    ("res_shape", ValueError, "residual:"),
    ("eps_zero", ValueError, "eps:"),
    ("eps_negative", ValueError, "eps:"),
    ("eps_nan", ValueError, "eps:"),
    ("eps_inf", ValueError, "eps:"),
    ("eps_word", TypeError, "eps:"),
    ("eps_none", TypeError, "eps:"),
    ("H_too_big", ValueError, "H=16385"),
    ("det_int", TypeError, "deterministic"),
    ("det_str", TypeError, "deterministic"),
    ("device_meta_x", ValueError, "weight: on cpu"),
    ("device_meta_res", ValueError, "residual: on meta"),
])
def test_bad_input_names_the_argument(case, exc, name):
    x, w = _good()
    kw = {}
    eps = EPS
    if case == "x_fp32":
        x = x.float()
    elif case == "x_fp16":
        x = x.half()
    elif case == "x_not_tensor":
        x = x.tolist()
    elif case == "x_scalar":
        x = torch.tensor(1.0, dtype=torch.bfloat16)
    elif case == "w_fp16":
        w = w.half()
    elif case == "w_fp64":
        w = w.double()
    elif case == "w_shape":
        w = _weight(65)
    elif case == "w_2d":
        w = w[None, :]
    elif case == "w_not_tensor":
        w = w.tolist()
    elif case == "res_fp32":
        kw["residual"] = x.float()
    elif case == "res_shape":
        kw["residual"] = _bf16(5, 64)
    elif case.startswith("eps_"):
        eps = {"eps_zero": 0.0, "eps_negative": -1e-6, "eps_nan": float("nan"), "eps_inf": float("inf"),
               "eps_word": "tiny", "eps_none": None}[case]
    elif case == "H_too_big":
        x, w = _good(16385)
    elif case == "det_int":
        kw["deterministic"] = 1
    elif case == "det_str":
        kw["deterministic"] = "yes"
    elif case == "device_meta_x":  # a second device without a GPU: the meta device
        x = torch.empty(4, 64, dtype=torch.bfloat16, device="meta")
    elif case == "device_meta_res":
        kw["residual"] = torch.empty(4, 64, dtype=torch.bfloat16, device="meta")
    with pytest.raises(exc, match=name):
        rmsnorm_train(x, w, eps, **kw)


@pytest.mark.parametrize("eps", ["1e-6", True])
def test_eps_string_or_bool_rejected(eps):
    x, w = _good()
    with pytest.raises(TypeError, match="eps:"):
        rmsnorm_train(x, w, eps)


@pytest.mark.parametrize("which", ["x", "residual"])
def test_non_contiguous_last_dim_rejected_by_the_op(which):
    t = _bf16(64, 4).t()  # [4, 64], last stride 4
    x, w = _good()
    kw = {}
    if which == "x":
        x = t
    else:
        kw["residual"] = t
    with pytest.raises(ValueError, match=f"{which}: the last dimension must be contiguous"):
        rmsnorm_train(x, w, EPS, **kw)


def test_non_contiguous_last_dim_rejected_by_a_triton_program():
    x = _bf16(64, 4).t()
    with pytest.raises(ValueError, match="x: the last dimension must be contiguous"):
        rmsnorm_train_forward(x, _weight(64), EPS, program="fwd.row.r1.w8")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device to put x and weight on two real devices")
def test_wrong_device_cuda():
    with pytest.raises(ValueError, match="weight: on cpu"):
        rmsnorm_train(_bf16(4, 64).cuda(), _weight(64), EPS)


def test_backward_bad_input_names_the_argument():
    x, w = _good()
    g = _bf16(4, 64, seed=60)
    _, rstd = rmsnorm_train_forward(x, w, EPS)
    with pytest.raises(TypeError, match="g:"):
        rmsnorm_train_backward(g.float(), x, w, rstd)
    with pytest.raises(ValueError, match="g:"):
        rmsnorm_train_backward(g[:3], x, w, rstd)
    with pytest.raises(TypeError, match="rstd:"):
        rmsnorm_train_backward(g, x, w, rstd.double())
    with pytest.raises(ValueError, match="rstd:"):
        rmsnorm_train_backward(g, x, w, rstd[:3])
    with pytest.raises(TypeError, match="deterministic"):
        rmsnorm_train_backward(g, x, w, rstd, deterministic="no")
    with pytest.raises(TypeError, match="g_h_new:"):
        rmsnorm_train_backward(g, x, w, rstd, g_h_new=g.float())
    with pytest.raises(KeyError, match="not registered"):
        rmsnorm_train_backward(g, x, w, rstd, program="bwd.no_such_program")
    with pytest.raises(ValueError, match="program:"):
        rmsnorm_train_backward(g, x, w, rstd, program="fwd.row.r1.w8")
    with pytest.raises(ValueError, match="program:"):
        rmsnorm_train_forward(x, w, EPS, program="bwd.reference")


# ---------------------------------------------------------------- NaN and Inf


@pytest.mark.interpreter
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("program", [None, "bwd.twosum_pair.p2x.w8"])
def test_nan_and_inf_propagate_without_a_crash(bad, program):
    T, H = 6, 32
    x = _bf16(T, H, seed=70)
    x[2, 5] = bad
    w = _weight(H)
    g = _bf16(T, H, seed=71)
    y, rstd = rmsnorm_train_forward(x, w, EPS)
    dx, dw = rmsnorm_train_backward(g, x, w, rstd, program=program)
    clean = [r for r in range(T) if r != 2]
    y_ref, rstd_ref, _ = reference_forward(x[clean], w, EPS)
    assert torch.equal(y[clean], y_ref) and torch.equal(rstd[clean], rstd_ref)
    assert not torch.isfinite(y[2].float()).all()
    assert not torch.isfinite(dx[2].float()).all()
    assert torch.isfinite(dx[clean].float()).all()
    # The bad row reaches every dw column (NaN rstd) or its own column (Inf): never a finite lie.
    assert not torch.isfinite(dw[5])


# ---------------------------------------------------------------- forced Triton programs


@pytest.mark.interpreter
@pytest.mark.parametrize("form", ["plain", "residual"])
def test_forced_triton_backward_program(form):
    """bwd.twosum_pair.p2x.w8 (the documented fallback) through the public API, in the interpreter."""
    T, H = 70, 192
    x = _bf16(T, H, seed=80)
    w = _weight(H)
    g = _bf16(T, H, seed=81)
    kw, g_h = {}, None
    if form == "residual":
        kw["residual"] = _bf16(T, H, seed=82, scale=0.5)
        g_h = _bf16(T, H, seed=83)
    out = rmsnorm_train_forward(x, w, EPS, program="fwd.row.r1.w8", **kw)
    ref = reference_forward(x, w, EPS, kw.get("residual"))
    assert torch.allclose(out[1], ref[1], rtol=1e-6)
    xn = out[2] if form == "residual" else x
    if form == "residual":
        assert torch.equal(out[2], ref[2])
    rstd = ref[1]
    dx, dw = rmsnorm_train_backward(g, xn, w, rstd, g_h_new=g_h, program="bwd.twosum_pair.p2x.w8")
    dx_ref, dw_ref = reference_backward(g, xn, w, rstd, g_h)
    o = oracle(g, xn, w, rstd, g_h_new=g_h)
    assert float(dw_err_over_tol(dw, o["dw64"]).max()) <= 1
    assert _within(dx, o["dx64"].reshape(dx.shape), 1e-2, 1e-2) <= 1
    assert torch.allclose(dw, dw_ref, rtol=1e-5, atol=1e-5)
    # Deterministic program: bitwise the same on a second run.
    dx2, dw2 = rmsnorm_train_backward(g, xn, w, rstd, g_h_new=g_h, program="bwd.twosum_pair.p2x.w8")
    assert torch.equal(dx, dx2) and torch.equal(dw, dw2)


def test_public_api_surface():
    assert callable(cake_kernels.patch)
    progs = registry.all_programs()
    assert {"fwd.reference", "bwd.reference", "bwd.twosum_pair.p2x.w8"} <= {p.name for p in progs}
    for p in progs:
        assert p.op in ("fwd", "bwd") and p.family and isinstance(p.deterministic, bool)


# ---------------------------------------------------------------- CUDA graphs (GPU only)


@pytest.mark.gpu
def test_cuda_graph_capture_and_replay():
    """Forward and backward captured in one CUDA graph replay on new inputs like eager calls do."""
    dev = torch.device("cuda")
    T, H = 300, 1024
    x = _bf16(T, H, seed=100).to(dev)
    g = _bf16(T, H, seed=101).to(dev)
    w = _weight(H).to(dev)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: route table load, Triton compilation
        for _ in range(2):
            _, rstd = rmsnorm_train_forward(x, w, EPS)
            rmsnorm_train_backward(g, x, w, rstd)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y, rstd = rmsnorm_train_forward(x, w, EPS)
        dx, dw = rmsnorm_train_backward(g, x, w, rstd)
    x.copy_(_bf16(T, H, seed=102).to(dev))
    g.copy_(_bf16(T, H, seed=103).to(dev))
    graph.replay()
    torch.cuda.synchronize()
    y_e, rstd_e = rmsnorm_train_forward(x, w, EPS)
    dx_e, dw_e = rmsnorm_train_backward(g, x, w, rstd_e)  # det mode: bitwise reproducible
    assert torch.equal(y, y_e) and torch.equal(rstd, rstd_e)
    assert torch.equal(dx, dx_e) and torch.equal(dw, dw_e)
    o = oracle(g, x, w, rstd)
    assert float(dw_err_over_tol(dw, o["dw64"]).max()) <= 1


@pytest.mark.gpu
def test_cuda_graphed_module_autograd():
    """torch.cuda.make_graphed_callables on the RMSNorm module: forward and backward replayed."""
    dev = torch.device("cuda")
    H = 512
    norm = RMSNorm(H, EPS, device=dev)
    sample = _bf16(64, H, seed=110).to(dev).requires_grad_()
    graphed = torch.cuda.make_graphed_callables(norm, (sample,))
    x = _bf16(64, H, seed=111).to(dev).requires_grad_()
    g = _bf16(64, H, seed=112).to(dev)
    graphed(x).backward(g)
    dx_graph, dw_graph = x.grad.clone(), norm.weight.grad.clone()
    x.grad = None
    norm.weight.grad = None
    norm(x).backward(g)
    assert torch.equal(x.grad, dx_graph) and torch.equal(norm.weight.grad, dw_graph)
