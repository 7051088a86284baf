"""Integrations: `patch(model)` swaps a model's RMSNorm modules for ones that call `rmsnorm_train`.

What is swapped:

- `torch.nn.RMSNorm` with one normalized dimension and a weight (`elementwise_affine=True`);
  `eps=None` becomes FP32 machine epsilon, which is what `torch.nn.functional.rms_norm` uses for a
  BF16 input (its math runs in FP32).
- Hugging Face Llama/Qwen-style norms: a module whose class name ends with "RMSNorm", with a 1-D
  `weight` parameter [H] as its only parameter and state, an eps attribute named
  `variance_epsilon` or `eps`, and a forward computing `weight * x * rsqrt(mean(x^2) + eps)`.
  The math is checked by running the module's own forward once on a small FP32 probe input (with a
  probe weight, through `torch.func.functional_call`, so nothing of the module changes). A Gemma-
  style norm, which scales by `(1 + weight)`, is recognised by that probe and skipped with a
  `PatchWarning`; so is any other module whose forward does something else (an offset, a gate, an
  extra argument). Skipping is always safe: the module keeps running its own code. (Forward hooks
  registered on a module see that one probe call.)

The replacement (`PatchedRMSNorm`) holds the *same* Parameter object as the module it replaces,
under the same name, so optimizers built before or after patching, `state_dict` keys and values,
tied or shared references and `weight.main_grad` (mixed-precision training) keep working, and the
weight keeps its dtype. It runs `rmsnorm_train` only for what that op accepts: a BF16 input (with
its last dimension contiguous, on the weight's device) and a BF16 or FP32 weight. Any other call,
for example an FP32 or FP16 input, or extra arguments, runs the original module's forward
unchanged (the original module is kept, outside the module tree, for that).

Differences from the original forward on BF16 input (see tests/cake_kernels/test_integrations.py):

- Output dtype: always BF16. Hugging Face's `weight * x.to(input_dtype)` returns FP32 when the
  weight is FP32 and the input BF16; `torch.nn.RMSNorm` likewise promotes.
- Rounding: `rmsnorm_train` rounds once, `BF16((x * rstd) * w)` in FP32. Hugging Face's Llama norm
  rounds twice, `BF16(w * BF16(x * rstd))` with a BF16 weight, so elements differ by up to about
  1.5 BF16 ulps (relative 2^-8 per rounding); the single rounding is the more accurate of the two.
- The weight gradient is summed in FP32 and cast once to the weight's dtype (or accumulated into
  `weight.main_grad`).
"""

from __future__ import annotations

import math
import numbers
import warnings

import torch

from cake_kernels.op import RMSNorm as _CakeRMSNorm
from cake_kernels.op import rmsnorm_train
from cake_kernels.registry import H_MAX

_EPS_ATTRS = ("variance_epsilon", "eps")
_WEIGHT_DTYPES = (torch.bfloat16, torch.float32)
# Probe size: rows x H of the math check; small, but enough rows that an offset or a gate shows.
_PROBE_ROWS = 4
# Relative tolerance of the math probe (FP32 on both sides; a different formula is off by O(1)).
_PROBE_RTOL = 1e-4


class PatchWarning(UserWarning):
    """`patch` left an RMSNorm-like module alone (the message says which module and why)."""


class PatchedRMSNorm(torch.nn.Module):
    """An RMSNorm that runs `cake_kernels.rmsnorm_train` on BF16 input (made by `patch`).

    `weight` is the replaced module's own Parameter. Inputs the op does not take run the original
    module's forward (kept as `original`, not registered as a submodule, so `state_dict`,
    `parameters()` and `named_modules()` look exactly as before patching, but for the class).
    """

    def __init__(self, original: torch.nn.Module, weight: torch.nn.Parameter, eps: float, *, deterministic: bool = True):
        super().__init__()
        self.weight = weight  # the same Parameter object: registered under the same name
        self.eps = float(eps)
        self.deterministic = deterministic
        # object.__setattr__ keeps the original out of _modules (no "original.weight" key).
        object.__setattr__(self, "original", original)
        self.source = type(original).__qualname__

    def uses_op(self, x) -> bool:
        """Whether a call on `x` runs `rmsnorm_train` (else the original forward runs)."""
        w = self.weight
        return (
            isinstance(x, torch.Tensor)
            and x.dtype == torch.bfloat16
            and w.dtype in _WEIGHT_DTYPES
            and x.dim() >= 1
            and x.shape[-1] == w.shape[0]
            and x.device == w.device
            and (x.stride(-1) == 1 or x.numel() == 0)
        )

    def forward(self, x, *args, **kwargs):
        if args or kwargs or not self.uses_op(x):
            orig = self.original
            if orig._parameters.get("weight") is not self.weight:
                # `module.to(...)` with torch.__future__.set_overwrite_module_params_on_conversion(True)
                # replaces our Parameter by a new one; the unregistered original must follow it.
                orig._parameters["weight"] = self.weight
            return orig(x, *args, **kwargs)
        return rmsnorm_train(x, self.weight, self.eps, deterministic=self.deterministic)

    def extra_repr(self) -> str:
        return f"({self.weight.shape[0]},), eps={self.eps}, deterministic={self.deterministic}, replaces={self.source}"


def _skip(name: str, module: torch.nn.Module, why: str) -> None:
    warnings.warn(
        f"cake_kernels.patch: left {name or '<root>'} ({type(module).__qualname__}) unpatched: {why}",
        PatchWarning, stacklevel=3,
    )


def _single_weight(module: torch.nn.Module) -> tuple[torch.nn.Parameter | None, str | None]:
    """The module's `weight` Parameter when it is its only parameter and state; else (None, why)."""
    w = module._parameters.get("weight")
    if not isinstance(w, torch.nn.Parameter):
        return None, "it has no weight parameter"
    if w.dim() != 1:
        return None, f"its weight has shape {list(w.shape)}; only a 1-D weight [H] is supported"
    if not w.is_floating_point():
        return None, f"its weight has dtype {w.dtype}"
    if not 1 <= w.shape[0] <= H_MAX:
        return None, f"H={w.shape[0]} is outside [1, {H_MAX}]"
    others = [n for n, _ in module.named_parameters() if n != "weight"]
    if others:
        return None, f"it has other parameters ({', '.join(others)}) that the op would ignore"
    persistent = [n for n, _ in module.named_buffers() if n.rsplit(".", 1)[-1] not in getattr(module, "_non_persistent_buffers_set", set())]
    if persistent or list(module.children()):
        return None, "it has buffers or submodules that the op would ignore"
    return w, None


def _probe_math(module: torch.nn.Module, H: int, eps: float) -> str:
    """Run the module's own forward on a probe: 'standard', 'offset' ((1 + w) scaling) or why not."""
    w = module.weight
    if w.device.type == "meta":
        return "its weight is on the meta device (materialize the model before patching)"
    gen = torch.Generator(device="cpu").manual_seed(1234)
    x = torch.randn(_PROBE_ROWS, H, generator=gen).to(w.device)
    pw = (0.5 + torch.rand(H, generator=gen)).to(w.device)  # in [0.5, 1.5): w and 1 + w differ a lot
    try:
        with torch.no_grad():
            out = torch.func.functional_call(module, {"weight": pw}, (x,))
    except Exception as exc:  # noqa: BLE001 - any failure means "cannot verify", never a crash
        return f"its forward failed on a probe input ({type(exc).__name__}: {exc})"
    if not isinstance(out, torch.Tensor) or out.shape != x.shape:
        return "its forward does not return one tensor shaped like its input"
    out = out.double()
    x64 = x.double()
    n = x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + eps)
    for kind, expect in (("standard", n * pw.double()), ("offset", n * (1.0 + pw.double()))):
        if torch.allclose(out, expect, rtol=_PROBE_RTOL, atol=_PROBE_RTOL):
            return kind
    return "its forward is not weight * x * rsqrt(mean(x^2) + eps)"


def _hf_eps(module: torch.nn.Module) -> float | None:
    for attr in _EPS_ATTRS:
        v = getattr(module, attr, None)
        if isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v)) and float(v) > 0:
            return float(v)
    return None


def _replacement(name: str, module: torch.nn.Module, deterministic: bool) -> PatchedRMSNorm | None:
    """The module to put in place of `module`, or None (with a PatchWarning when it looked like a norm)."""
    if isinstance(module, (PatchedRMSNorm, _CakeRMSNorm)):
        return None  # already runs the op
    is_torch = isinstance(module, torch.nn.RMSNorm) and type(module).forward is torch.nn.RMSNorm.forward
    if not is_torch and not type(module).__name__.endswith("RMSNorm"):
        return None
    w, why = _single_weight(module)
    if w is None:
        _skip(name, module, why)
        return None
    H = w.shape[0]
    if is_torch:
        if len(module.normalized_shape) != 1:
            _skip(name, module, f"normalized_shape {tuple(module.normalized_shape)} has more than one dimension")
            return None
        # eps=None: F.rms_norm uses the epsilon of its FP32 math type for a BF16 input.
        eps = module.eps if module.eps is not None else torch.finfo(torch.float32).eps
        return PatchedRMSNorm(module, w, eps, deterministic=deterministic)
    eps = _hf_eps(module)
    if eps is None:
        _skip(name, module, f"no positive eps attribute ({' or '.join(_EPS_ATTRS)})")
        return None
    kind = _probe_math(module, H, eps)
    if kind == "offset":
        _skip(name, module, "it scales by (1 + weight) (Gemma-style); rmsnorm_train scales by weight")
        return None
    if kind != "standard":
        _skip(name, module, kind)
        return None
    return PatchedRMSNorm(module, w, eps, deterministic=deterministic)


def patch(model: torch.nn.Module, *, deterministic: bool = True) -> int:
    """Swap, in place, the RMSNorm modules of `model` for `PatchedRMSNorm`; return how many.

    Swaps `torch.nn.RMSNorm` and Hugging Face Llama/Qwen-style `*RMSNorm` modules (see the module
    docstring for the exact conditions); Gemma-style `(1 + weight)` norms and anything whose math
    does not match are skipped with a `PatchWarning`. Each replacement keeps the original's
    Parameter object and dtype; on non-BF16 input it runs the original forward. Patching twice
    swaps nothing the second time. `deterministic` selects the det/nondet backward routes.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic: expected a bool, got {deterministic!r}")
    if _replacement("", model, deterministic) is not None:
        raise ValueError(
            f"model: is itself an RMSNorm ({type(model).__qualname__}) and cannot be replaced in place; "
            "patch the model that contains it, or use cake_kernels.RMSNorm directly"
        )
    # Collect first, then swap: never mutate the module tree while iterating it. A module reachable
    # from several parents (a shared norm) is judged once and gets one replacement, shared the same way.
    reps: dict[int, PatchedRMSNorm | None] = {}
    swaps: list[tuple[torch.nn.Module, str, PatchedRMSNorm]] = []
    for parent_name, parent in model.named_modules(remove_duplicate=False):
        for child_name, child in parent._modules.items():
            if child is None:
                continue
            if id(child) not in reps:
                full = f"{parent_name}.{child_name}" if parent_name else child_name
                reps[id(child)] = _replacement(full, child, deterministic)
            if reps[id(child)] is not None:
                swaps.append((parent, child_name, reps[id(child)]))
    for parent, child_name, rep in swaps:
        setattr(parent, child_name, rep)
    return sum(r is not None for r in reps.values())
