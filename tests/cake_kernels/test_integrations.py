"""cake_kernels.patch on torch.nn.RMSNorm and on small randomly initialised Hugging Face models (CPU).

The models are built from tiny configs (no weight download) and run in BF16 with eager attention.
The patched norm rounds once, BF16((x * rstd) * w); Hugging Face's Llama norm rounds twice,
BF16(w * BF16(x * rstd)). With u = 2^-8 (BF16 unit roundoff) the patched output is within u of the
FP64 value per element and Hugging Face's within 2u + u^2, so the two differ by at most about 3u
(measured: at most 2u, on about a quarter of the elements). Through a whole model the difference
compounds; it is bounded here against an FP64 copy of the same model: the patched model must be
about as close to FP64 as the unpatched BF16 model is.
"""

from __future__ import annotations

import copy
import pickle
import warnings

import pytest
import torch

import cake_kernels
from cake_kernels import rmsnorm_train
from cake_kernels.integrations import PatchedRMSNorm, PatchWarning, patch

transformers = pytest.importorskip("transformers")

U = 2.0 ** -8  # BF16 unit roundoff (round to nearest)


def _rel(a, b) -> float:
    a, b = a.detach().double(), b.detach().double()
    return float((a - b).norm() / b.norm())


def _quiet_patch(model, **kw) -> tuple[int, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        n = patch(model, **kw)
    return n, [str(w.message) for w in caught if issubclass(w.category, PatchWarning)]


# ---------------------------------------------------------------- torch.nn.RMSNorm


def test_torch_rmsnorm_swapped_in_place_keeping_the_parameter():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.RMSNorm(32, eps=1e-5), torch.nn.Linear(32, 8))
    model.to(torch.bfloat16)
    weight = model[1].weight
    keys = list(model.state_dict())
    opt = torch.optim.SGD(model.parameters(), lr=0.5)  # built before patching
    assert patch(model) == 1
    assert isinstance(model[1], PatchedRMSNorm)
    assert model[1].weight is weight and weight.dtype == torch.bfloat16 and model[1].eps == 1e-5
    assert list(model.state_dict()) == keys
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "1.weight", "2.weight", "2.bias"]
    x = torch.randn(4, 32).bfloat16()
    h = model[0](x)
    assert model[1].uses_op(h)
    assert torch.equal(model[1](h), rmsnorm_train(h, weight, 1e-5))
    before = weight.detach().clone()
    model(x).float().sum().backward()
    grad = weight.grad.clone()
    opt.step()  # the optimizer still holds the very Parameter the patched module uses
    assert torch.equal(weight.detach(), (before - 0.5 * grad).to(torch.bfloat16))
    assert patch(model) == 0  # idempotent


def test_torch_rmsnorm_eps_none_uses_fp32_epsilon():
    norm = torch.nn.RMSNorm(16).to(torch.bfloat16)
    model = torch.nn.Sequential(norm)
    assert patch(model) == 1
    assert model[0].eps == torch.finfo(torch.float32).eps
    x = torch.full((2, 16), 1e-4).bfloat16()  # mean(x^2) ~ 1e-8: eps matters
    expect = torch.nn.functional.rms_norm(x, (16,), norm.weight, None)
    assert torch.allclose(model[0](x).float(), expect.float(), rtol=U)


@pytest.mark.filterwarnings("ignore:Mismatch dtype between input and weight")
def test_non_bf16_input_runs_the_original_forward():
    norm = torch.nn.RMSNorm(16, eps=1e-6)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
    model = torch.nn.Sequential(norm)
    patch(model)
    for dtype in (torch.float32, torch.float16, torch.float64):
        x = torch.randn(3, 16, dtype=dtype)
        assert not model[0].uses_op(x)
        assert torch.equal(model[0](x), norm(x)), dtype
    x = torch.randn(16, 3).bfloat16().t()  # last dimension not contiguous: original forward
    assert not model[0].uses_op(x) and torch.equal(model[0](x), norm(x))


def test_fallback_follows_a_replaced_parameter():
    """With overwrite-on-conversion, `.to()` makes a new Parameter; the fallback must use it."""
    model = torch.nn.Sequential(torch.nn.RMSNorm(8, eps=1e-6))
    patch(model)
    old = torch.__future__.get_overwrite_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    try:
        model.double()
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(old)
    with torch.no_grad():
        model[0].weight.fill_(2.0)
    x = torch.randn(3, 8, dtype=torch.float64)
    expect = torch.nn.functional.rms_norm(x, (8,), model[0].weight, 1e-6)
    assert torch.equal(model(x), expect)
    assert model[0].original.weight is model[0].weight


def test_skips_what_it_cannot_run_with_a_warning():
    model = torch.nn.Sequential(
        torch.nn.RMSNorm(16, elementwise_affine=False),
        torch.nn.RMSNorm((4, 16)),
        torch.nn.RMSNorm(16),
    )
    n, msgs = _quiet_patch(model)
    assert n == 1 and isinstance(model[2], PatchedRMSNorm)
    assert isinstance(model[0], torch.nn.RMSNorm) and isinstance(model[1], torch.nn.RMSNorm)
    assert any("0 (RMSNorm) unpatched: it has no weight parameter" in m for m in msgs)
    assert any("1 (RMSNorm) unpatched" in m and "[4, 16]" in m for m in msgs)


def test_shared_norm_gets_one_shared_replacement():
    norm = torch.nn.RMSNorm(8)
    model = torch.nn.ModuleDict({"a": torch.nn.Sequential(norm), "b": torch.nn.Sequential(norm)})
    assert patch(model) == 1
    assert model["a"][0] is model["b"][0] and model["a"][0].weight is norm.weight


def test_deterministic_flag_main_grad_and_copies():
    model = torch.nn.Sequential(torch.nn.RMSNorm(8)).to(torch.bfloat16)
    assert patch(model, deterministic=False) == 1 and model[0].deterministic is False
    w = model[0].weight
    w.main_grad = torch.zeros(8)
    x = torch.randn(5, 8).bfloat16().requires_grad_()
    model(x).float().sum().backward()
    assert w.grad is None and torch.count_nonzero(w.main_grad) > 0
    del w.main_grad
    clone = copy.deepcopy(model)  # the kept original shares the copy's Parameter, not the source's
    assert clone[0].original.weight is clone[0].weight and clone[0].weight is not w
    again = pickle.loads(pickle.dumps(model))
    assert again[0].original.weight is again[0].weight
    assert torch.equal(again(x.detach()), model(x.detach()))


def test_bad_arguments():
    with pytest.raises(TypeError, match="model: expected a torch.nn.Module"):
        patch("not a model")
    with pytest.raises(TypeError, match="deterministic"):
        patch(torch.nn.Sequential(), deterministic="yes")
    with pytest.raises(ValueError, match="model: is itself an RMSNorm"):
        patch(torch.nn.RMSNorm(8))


# ---------------------------------------------------------------- Hugging Face norms, one module


class OffsetRMSNorm(torch.nn.Module):
    """A Gemma-style norm under a Llama-style name: scales by (1 + weight)."""

    def __init__(self, H, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(H))
        self.variance_epsilon = eps

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.variance_epsilon) * (1.0 + self.weight.float())).type_as(x)


class BiasRMSNorm(torch.nn.Module):
    def __init__(self, H):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(H))
        self.bias = torch.nn.Parameter(torch.zeros(H))
        self.eps = 1e-6

    def forward(self, x):
        return torch.nn.functional.rms_norm(x, (x.shape[-1],), self.weight, self.eps) + self.bias


class NoEpsRMSNorm(torch.nn.Module):
    def __init__(self, H):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(H))

    def forward(self, x):
        return x


def test_hf_llama_norm_elementwise_bound():
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    torch.manual_seed(1)
    hf = LlamaRMSNorm(256, eps=1e-6).to(torch.bfloat16)
    with torch.no_grad():
        hf.weight.copy_(1 + 0.3 * torch.randn(256))
    model = torch.nn.Sequential(hf)
    assert patch(model) == 1 and model[0].weight is hf.weight
    x = (torch.randn(512, 256) * torch.exp(torch.randn(512, 1))).bfloat16()
    y_hf, y_ours = hf(x), model[0](x)
    x64 = x.double()
    y64 = x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + 1e-6) * hf.weight.double()
    e_ours = ((y_ours.double() - y64).abs() / y64.abs()).max().item()
    e_hf = ((y_hf.double() - y64).abs() / y64.abs()).max().item()
    diff = ((y_ours.double() - y_hf.double()).abs() / y64.abs()).max().item()
    assert e_ours <= U * (1 + 1e-3)  # one rounding (plus FP32 statistics)
    assert e_hf <= (2 * U + U * U) * (1 + 1e-3)  # two roundings
    assert diff <= 3 * U
    assert e_ours <= e_hf


def test_hf_llama_norm_gradients_against_fp64():
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    torch.manual_seed(2)
    hf = LlamaRMSNorm(128, eps=1e-6).to(torch.bfloat16)
    with torch.no_grad():
        hf.weight.copy_(1 + 0.3 * torch.randn(128))
    ours = copy.deepcopy(hf)
    model = torch.nn.Sequential(ours)
    patch(model)
    x = torch.randn(300, 128).bfloat16()
    g = torch.randn(300, 128).bfloat16()
    x64 = x.double().requires_grad_()
    w64 = hf.weight.detach().double().requires_grad_()
    (x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + 1e-6) * w64).backward(g.double())
    for mod in (hf, model[0]):
        xi = x.clone().requires_grad_()
        mod(xi).backward(g)
        # dx: the budget of ROUTING-POLICY.md section 2; dw: BF16 weight, so within rounding of dw64.
        assert ((xi.grad.double() - x64.grad).abs() / (1e-2 + 1e-2 * x64.grad.abs())).max() <= 1
        assert mod.weight.grad.dtype == torch.bfloat16
    ours_dw = (model[0].weight.grad.double() - w64.grad).abs() / w64.grad.abs()
    assert ours_dw.max() <= U * (1 + 1e-3)  # FP32 sum, one rounding to BF16
    assert _rel(model[0].weight.grad, w64.grad) <= _rel(hf.weight.grad, w64.grad) * 1.05


def test_gemma_style_and_unknown_norms_are_skipped_with_a_warning():
    from transformers.models.gemma.modeling_gemma import GemmaRMSNorm

    model = torch.nn.ModuleDict({
        "gemma": GemmaRMSNorm(32), "offset": OffsetRMSNorm(32), "bias": BiasRMSNorm(32), "noeps": NoEpsRMSNorm(32),
    })
    before = {k: type(v) for k, v in model.items()}
    n, msgs = _quiet_patch(model)
    assert n == 0 and {k: type(v) for k, v in model.items()} == before
    text = "\n".join(msgs)
    assert "gemma (GemmaRMSNorm) unpatched: it scales by (1 + weight)" in text
    assert "offset (OffsetRMSNorm) unpatched: it scales by (1 + weight)" in text
    assert "bias (BiasRMSNorm) unpatched: it has other parameters (bias)" in text
    assert "noeps (NoEpsRMSNorm) unpatched: no positive eps attribute" in text


# ---------------------------------------------------------------- whole Hugging Face models


def _tiny(arch: str, seed: int = 0):
    from transformers import GemmaConfig, GemmaForCausalLM, LlamaConfig, LlamaForCausalLM, Qwen3Config, Qwen3ForCausalLM

    cls, cfg_cls = {"llama": (LlamaForCausalLM, LlamaConfig), "qwen3": (Qwen3ForCausalLM, Qwen3Config),
                    "gemma": (GemmaForCausalLM, GemmaConfig)}[arch]
    torch.manual_seed(seed)
    cfg = cfg_cls(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=16, max_position_embeddings=64, tie_word_embeddings=False,
                  attn_implementation="eager")
    model = cls(cfg).to(torch.float64)
    with torch.no_grad():  # norms away from their all-ones (or all-zeros) init, so the weight matters
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1 + 0.2 * torch.randn_like(p))
    bf16 = model.to(torch.bfloat16)
    fp64 = copy.deepcopy(bf16).to(torch.float64)  # exactly the BF16 weights, in FP64
    return bf16, fp64


def _run(model, ids):
    out = model(ids).logits
    out.double().pow(2).mean().backward()
    return out.detach(), {k: p.grad for k, p in model.named_parameters()}


@pytest.mark.parametrize("arch, n_norms", [("llama", 5), ("qwen3", 9)])
def test_patched_hf_model_matches_unpatched(arch, n_norms):
    """Llama: 2 layers x 2 norms + final norm; Qwen3 also q_norm/k_norm over [B, S, heads, 16] views."""
    hf, fp64 = _tiny(arch)
    patched = copy.deepcopy(hf)
    params = {k: id(p) for k, p in patched.named_parameters()}
    keys = list(patched.state_dict())
    n, msgs = _quiet_patch(patched)
    assert n == n_norms and not msgs
    assert {k: id(p) for k, p in patched.named_parameters()} == params  # same Parameter objects
    assert list(patched.state_dict()) == keys
    assert all(p.dtype == torch.bfloat16 for p in patched.parameters())
    assert sum(isinstance(m, PatchedRMSNorm) for m in patched.modules()) == n_norms
    patched.load_state_dict(hf.state_dict())  # strict: the unpatched checkpoint loads as is

    ids = torch.randint(0, 128, (2, 16), generator=torch.Generator().manual_seed(3))
    y_hf, g_hf = _run(hf, ids)
    y_p, g_p = _run(patched, ids)
    y_64, g_64 = _run(fp64, ids)
    # Measured (seeds 0-2): logits differ by 0.006-0.008 relative L2, the worst parameter gradient
    # by 0.013-0.027; the bounds leave about 2.5x headroom.
    assert _rel(y_p, y_hf) <= 0.02
    assert max(_rel(g_p[k], g_hf[k]) for k in g_hf) <= 0.06
    # Against FP64 the patched model is about as accurate as the unpatched one (measured: logits
    # always closer, gradients within 1.35x).
    assert _rel(y_p, y_64) <= 1.1 * _rel(y_hf, y_64)
    worst_p = max(_rel(g_p[k], g_64[k]) for k in g_64)
    worst_hf = max(_rel(g_hf[k], g_64[k]) for k in g_64)
    assert worst_p <= 1.6 * worst_hf + 0.005
    # FP32 activations fall back to Hugging Face's own forward: identical results.
    hf32, p32 = copy.deepcopy(hf).float(), copy.deepcopy(patched).float()
    with torch.no_grad():
        assert torch.equal(p32(ids).logits, hf32(ids).logits)


def test_gemma_model_is_left_alone():
    hf, _ = _tiny("gemma")
    patched = copy.deepcopy(hf)
    n, msgs = _quiet_patch(patched)
    assert n == 0 and len(msgs) == 5 and all("(1 + weight)" in m for m in msgs)
    ids = torch.randint(0, 128, (1, 8))
    with torch.no_grad():
        assert torch.equal(patched(ids).logits, hf(ids).logits)


def test_exported_from_the_package():
    assert cake_kernels.patch is patch
