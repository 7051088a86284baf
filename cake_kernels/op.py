"""The RMSNorm-train op: functional API, autograd, `torch.library` custom ops and the module.

`cake::rmsnorm_fwd` and `cake::rmsnorm_bwd` are custom ops (with fake implementations), so
`torch.compile(fullgraph=True)` traces through them and CUDA graph capture works; the autograd
function around them carries the mixed-precision `main_grad` convention.
"""

from __future__ import annotations

from typing import Optional

import torch

from cake_kernels import runner
from cake_kernels.routes import dispatch


def route_shape(x: torch.Tensor, residual: torch.Tensor | None) -> tuple[str, int]:
    """(form, T) of a call: the route key's form and its token count."""
    H = x.shape[-1]
    rows = x.numel() // H if H else 0
    if residual is not None:
        return "residual", rows
    if x.dim() == 3 and H == 256:
        return ("heads_contiguous" if x.is_contiguous() else "heads_strided"), x.shape[0]
    return "plain", rows


def _pick_forward(program: str, x, weight, residual) -> str:
    if program:
        return program
    form, T = route_shape(x, residual)
    return dispatch.choose("fwd", x.device, x.shape[-1], runner.w_dtype_name(weight), form, "any", T)


@torch.library.custom_op("cake::rmsnorm_fwd", mutates_args=())
def _fwd_op(x: torch.Tensor, weight: torch.Tensor, residual: Optional[torch.Tensor], eps: float, program: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    prog = _pick_forward(program, x, weight, residual)
    y, rstd, h_new = runner.forward(prog, x, weight, eps, residual)
    return y, rstd, (h_new if h_new is not None else x.new_empty(0))


@_fwd_op.register_fake
def _fwd_fake(x, weight, residual, eps, program):
    y = torch.empty(x.shape, dtype=torch.bfloat16, device=x.device)
    rstd = torch.empty(x.shape[:-1], dtype=torch.float32, device=x.device)
    h = torch.empty(x.shape, dtype=torch.bfloat16, device=x.device) if residual is not None else x.new_empty(0)
    return y, rstd, h


@torch.library.custom_op("cake::rmsnorm_bwd", mutates_args=())
def _bwd_op(g: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor, g_h_new: Optional[torch.Tensor], deterministic: bool, program: str) -> tuple[torch.Tensor, torch.Tensor]:
    prog = program
    if not prog:
        form, T = ("residual", x.numel() // x.shape[-1]) if g_h_new is not None else route_shape(x, None)
        prog = dispatch.choose("bwd", x.device, x.shape[-1], runner.w_dtype_name(weight), form, "det" if deterministic else "nondet", T)
    return runner.backward(prog, g, x, weight, rstd, g_h_new)


@_bwd_op.register_fake
def _bwd_fake(g, x, weight, rstd, g_h_new, deterministic, program):
    return torch.empty(x.shape, dtype=torch.bfloat16, device=x.device), torch.empty(x.shape[-1], dtype=torch.float32, device=x.device)


def _check_eps_type(eps) -> None:
    # float("1e-6") and True would pass a float() check; only real numbers are accepted.
    if isinstance(eps, (str, bytes, bool)) or not isinstance(eps, (int, float)):
        raise TypeError(f"eps: expected a positive finite float, got {eps!r}")


def _check_last_dim(name: str, t: torch.Tensor) -> None:
    # The reference program (CPU) would accept any layout; every device must reject the same inputs.
    if t.stride(-1) != 1 and t.numel() > 0 and t.shape[-1] > 1:
        raise ValueError(f"{name}: the last dimension must be contiguous (stride 1), got strides {list(t.stride())}; pass {name}.contiguous()")


def _validate_common(x, weight, eps, residual):
    runner._check_x("x", x)
    if x.dim() == 0:
        raise ValueError("x: expected shape [..., H], got a scalar")
    _check_eps_type(eps)
    _check_last_dim("x", x)
    runner.validate_H(x.shape[-1])
    runner._check_weight(weight, x.shape[-1])
    runner._check_same_device(x, weight=weight, residual=residual)
    if residual is not None:
        runner._check_x("residual", residual)
        if residual.shape != x.shape:
            raise ValueError(f"residual: expected the shape of x {list(x.shape)}, got {list(residual.shape)}")
        _check_last_dim("residual", residual)
    return runner.check_eps(eps)


def rmsnorm_train_forward(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, *, residual: torch.Tensor | None = None, program: str | None = None):
    """Forward only: returns (y, rstd), or (y, rstd, h_new) with `residual` (h_new = BF16(x + residual))."""
    eps = _validate_common(x, weight, eps, residual)
    y, rstd, h = torch.ops.cake.rmsnorm_fwd(x, weight, residual, eps, program or "")
    return (y, rstd, h) if residual is not None else (y, rstd)


def rmsnorm_train_backward(g, x, weight, rstd, *, deterministic: bool = True, g_h_new=None, program: str | None = None):
    """Backward only: returns (dx BF16, dw FP32 [H]) whatever the weight dtype.

    `x` is the normalized input (h_new for the residual form) and `g_h_new` the incoming gradient
    of h_new. `program=` forces a registered program (tests, the harness).
    """
    runner._check_x("g", g)
    _validate_common(x, weight, 1.0, None)
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic: expected a bool, got {deterministic!r}")
    return torch.ops.cake.rmsnorm_bwd(g, x, weight, rstd, g_h_new, deterministic, program or "")


class _RMSNormTrain(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, residual, eps, deterministic, main_grad):
        y, rstd, h = torch.ops.cake.rmsnorm_fwd(x, weight, residual, eps, "")
        has_res = residual is not None
        ctx.save_for_backward(h if has_res else x, weight, rstd)
        ctx.has_res = has_res
        ctx.deterministic = deterministic
        ctx.main_grad = main_grad
        ctx.x_shape = x.shape
        if has_res:
            return y, h
        return y

    @staticmethod
    def backward(ctx, *grads):
        xn, weight, rstd = ctx.saved_tensors
        g = grads[0]
        g_h = grads[1] if ctx.has_res else None
        if g is None:
            g = torch.zeros(xn.shape, dtype=torch.bfloat16, device=xn.device)
        g = g.to(torch.bfloat16)
        if g_h is not None:
            g_h = g_h.to(torch.bfloat16)
        dx, dw = torch.ops.cake.rmsnorm_bwd(g, xn, weight, rstd, g_h, ctx.deterministic, "")
        if ctx.main_grad is not None:
            ctx.main_grad.add_(dw)
            dweight = None
        else:
            dweight = dw.to(weight.dtype)
        dres = dx if ctx.has_res else None
        return dx, dweight, dres, None, None, None


def rmsnorm_train(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, *, residual: torch.Tensor | None = None, deterministic: bool = True):
    """RMSNorm for training (autograd). Returns y (BF16), or (y, h_new) with `residual`.

    x: BF16 [..., H] (rows [T, H], or per-head views [T, nh, 256] with a shared weight[256]);
    weight: [H], BF16 or FP32. The backward returns dw in the weight's dtype, or accumulates the
    FP32 dw into `weight.main_grad` when that FP32 tensor attribute exists (then weight.grad is
    left alone). With `residual`, the one dx is the gradient of both x and residual.
    """
    eps = _validate_common(x, weight, eps, residual)
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic: expected a bool, got {deterministic!r}")
    main_grad = getattr(weight, "main_grad", None)
    if main_grad is not None and not (isinstance(main_grad, torch.Tensor) and main_grad.dtype == torch.float32 and main_grad.shape == weight.shape):
        raise TypeError("weight.main_grad: expected an FP32 tensor shaped like weight (the mixed-precision gradient buffer)")
    return _RMSNormTrain.apply(x, weight, residual, eps, deterministic, main_grad)


class RMSNorm(torch.nn.Module):
    """Drop-in for `torch.nn.RMSNorm(H, eps)` with the same parameter and state_dict (`weight`)."""

    def __init__(self, normalized_shape: int, eps: float = 1e-6, *, dtype: torch.dtype = torch.float32, device=None, deterministic: bool = True):
        super().__init__()
        if isinstance(normalized_shape, (tuple, list, torch.Size)):
            if len(normalized_shape) != 1:
                raise ValueError(f"normalized_shape: only a single hidden size is supported, got {tuple(normalized_shape)}")
            normalized_shape = int(normalized_shape[0])
        if dtype not in (torch.float32, torch.bfloat16):
            raise TypeError(f"dtype: {dtype} is not accepted; use torch.float32 or torch.bfloat16")
        self.normalized_shape = (int(normalized_shape),)
        _check_eps_type(eps)
        self.eps = runner.check_eps(eps)
        self.deterministic = deterministic
        self.weight = torch.nn.Parameter(torch.ones(self.normalized_shape, dtype=dtype, device=device))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None):
        return rmsnorm_train(x, self.weight, self.eps, residual=residual, deterministic=self.deterministic)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, deterministic={self.deterministic}"
