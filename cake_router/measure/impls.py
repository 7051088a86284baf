"""Implementations the harness times and checks: this package's programs and the peers.

Every implementation is prepared once per workload on preallocated buffers and exposes one
closure per op (`fwd`, `bwd`, `2xfwd+bwd`) that the timing protocol captures in a CUDA graph, and
a `dw_for_accuracy` function that returns (dx, dw FP32) for an input. Peers that need an FP32
weight to return an FP32 dw get one (their description says so). A peer that is missing or fails
is reported with the reason and the run goes on.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

import torch

from cake_kernels import registry, runner
from cake_kernels.reference import reference_backward, reference_forward

EPS = 1e-6

PEERS: dict[str, str] = {
    "peer.eager": "eager PyTorch, explicit FP32 statistics (the contract math in torch ops); dw FP32 via torch.sum",
    "peer.torch_compile.default": "torch.compile (default mode) of the explicit FP32-statistics reference, emulate_precision_casts on",
    "peer.torch_compile.max_autotune": "torch.compile max-autotune-no-cudagraphs of the explicit FP32-statistics reference, emulate_precision_casts on",
    "peer.liger": "Liger-Kernel 0.8.5 rms_norm (casting mode gemma, offset 0); given an FP32 weight so that dw is FP32",
    "peer.quack.heuristic": "QuACK 0.6.5 rmsnorm_fwd/rmsnorm_bwd (heuristic config); given an FP32 weight so that dw is FP32",
    "peer.quack.tuned": "QuACK 0.6.5 rmsnorm_fwd_tuned/rmsnorm_bwd_tuned (autotuned before timing); given an FP32 weight so that dw is FP32",
}
PEER_VERSIONS = {"peer.liger": ("liger_kernel", "0.8.5"), "peer.quack.heuristic": ("quack", "0.6.5"), "peer.quack.tuned": ("quack", "0.6.5")}


class PeerUnavailable(RuntimeError):
    """A peer cannot run here (not installed, wrong version, unsupported form): the reason is recorded."""


def peer_record(name: str) -> dict:
    return {"schema": "cake-evidence/1", "kind": "program", "name": name, "op": "bwd", "deterministic": name != "peer.liger" and not name.startswith("peer.quack"),
            "family": "peer", "runnable": False, "fingerprint": _peer_fingerprint(name), "description": PEERS[name]}


def _peer_fingerprint(name: str) -> str:
    mod = PEER_VERSIONS.get(name)
    if mod:
        return f"{mod[0]}=={mod[1]}"
    return f"torch=={torch.__version__}"


@dataclass
class Workload:
    H: int
    form: str
    w_dtype: str
    T: int


@dataclass
class Prepared:
    """Closures on fixed buffers for one implementation and workload."""

    name: str
    ops: dict[str, Callable[[], None]] = field(default_factory=dict)
    dw_for_accuracy: Callable | None = None  # (inp, xn, rstd) -> (dx, dw FP32)


def _xn_rstd(inp):
    y, rstd, h = reference_forward(inp.x, inp.w, EPS, inp.residual)
    return (h if h is not None else inp.x), rstd


@dataclass
class SharedOutputs:
    """Output buffers every program of a workload writes into (one set per workload, not per
    program: at T = 1M and H = 8192 one BF16 tensor is 17 GB). Timing never reads them."""

    y: torch.Tensor
    rstd: torch.Tensor
    h: torch.Tensor | None
    dx: torch.Tensor
    dw: torch.Tensor

    @classmethod
    def for_inputs(cls, inp) -> "SharedOutputs":
        x = inp.x
        return cls(
            y=torch.empty(x.shape, dtype=torch.bfloat16, device=x.device),
            rstd=torch.empty(x.shape[:-1], dtype=torch.float32, device=x.device),
            h=torch.empty(x.shape, dtype=torch.bfloat16, device=x.device) if inp.residual is not None else None,
            dx=torch.empty(x.shape, dtype=torch.bfloat16, device=x.device),
            dw=torch.empty(x.shape[-1], dtype=torch.float32, device=x.device),
        )


def prepare_program(name: str, inp, wl: Workload, fwd_for_step: str, out: SharedOutputs) -> Prepared:
    """One of this package's programs. `2xfwd+bwd` pairs a bwd program with `fwd_for_step`."""
    prog = registry.get(name)
    x, w, res, g, gh = inp.x, inp.w, inp.residual, inp.g, inp.g_h_new
    prep = Prepared(name)
    fwd_name = name if prog.op == "fwd" else fwd_for_step
    y, rstd, h, dx, dw = out.y, out.rstd, out.h, out.dx, out.dw

    def fwd():
        runner.forward(fwd_name, x, w, EPS, res, y_out=y, rstd_out=rstd, h_out=h)

    fwd()
    xn = h if h is not None else x
    if prog.op == "fwd":
        prep.ops["fwd"] = fwd
        return prep
    ws = runner.workspace_for(prog, xn)

    def bwd():
        runner.backward(prog, g, xn, w, rstd, gh, ws, dx_out=dx, dw_out=dw)

    def step():
        fwd()
        fwd()
        bwd()

    prep.ops["bwd"] = bwd
    prep.ops["2xfwd+bwd"] = step

    prep.dw_for_accuracy = program_dw_for_accuracy(name)
    return prep


def program_dw_for_accuracy(name: str) -> Callable:
    """The accuracy pass's (inp, xn, rstd) -> (dx, dw FP32) of one of this package's backward programs:
    it holds nothing of a timing input (the runner allocates dx, dw and the workspace per call)."""
    prog = registry.get(name)

    def acc(inp2, xn2, rstd2):
        return runner.backward(prog, inp2.g, xn2, inp2.w, rstd2, inp2.g_h_new)

    return acc


# --------------------------------------------------------------------------------------------
# peers


def _explicit_fwd(x, w, res):
    """The eager peer's forward (row chunks: an eager [1M, 8192] FP32 copy would not fit beside the rest)."""
    y, rstd, h = reference_forward(x, w, EPS, res)
    return y, rstd, h


def _whole_tensor_fwd(x, w, res):
    """The forward's math in one expression over the whole tensor: what torch.compile is given.

    `reference_forward` loops over row chunks to bound the oracle's FP32 memory; dynamo unrolls
    that loop into a graph per chunk (seen on the H200: 7.2 ms at T 65536, H 4096, 27x our
    forward), which is not what a user compiles. Same operations in the same order, so the same
    values as `reference_forward`.
    """
    h = None
    if res is not None:
        h = (x.float() + res.float()).to(torch.bfloat16)
        x = h
    xf = x.float()
    rstd = 1.0 / torch.sqrt((xf * xf).sum(dim=-1) / x.shape[-1] + EPS)
    y = ((xf * rstd[..., None]) * w.float()).to(torch.bfloat16)
    return y, rstd, h


def _explicit_bwd(g, xn, w, rstd, gh):
    return reference_backward(g, xn, w, rstd, gh)


def _compiled(mode: str, backend: str = "inductor"):
    import torch._dynamo.config as dcfg
    import torch._inductor.config as icfg

    icfg.emulate_precision_casts = True
    # dynamic=False compiles once per shape, and a session measures many shapes with the same two
    # functions: past dynamo's recompile limit (8) it would silently run them eagerly and the
    # timings would be eager PyTorch's under the compiled peer's name. Raise the limit, and make
    # hitting it an error (recorded as the peer's failure) rather than a silent fallback.
    dcfg.recompile_limit = max(dcfg.recompile_limit, 4096)
    dcfg.fail_on_recompile_limit_hit = True
    kw = {"mode": "max-autotune-no-cudagraphs"} if mode == "max_autotune" else {}
    return (torch.compile(_whole_tensor_fwd, dynamic=False, backend=backend, **kw),
            torch.compile(_explicit_bwd, dynamic=False, backend=backend, **kw))


def _check_version(name: str):
    modname, version = PEER_VERSIONS[name]
    try:
        mod = importlib.import_module(modname)
    except Exception as exc:  # ImportError, or a broken install raising anything at import
        raise PeerUnavailable(f"{modname} is not importable: {exc!r}") from None
    try:
        from importlib.metadata import version as dist_version

        dist = {"liger_kernel": "liger-kernel", "quack": "quack-kernels"}[modname]
        got = dist_version(dist)
    except Exception:
        got = getattr(mod, "__version__", "unknown")
    if got != version:
        raise PeerUnavailable(f"{modname} {got} installed, {version} required")
    return mod


def _quack_rmsnorm_module():
    """The module `quack.rmsnorm`. Not `import quack.rmsnorm as qr`: QuACK's package exports a
    function named `rmsnorm`, and that form binds the package attribute, the function (seen on the
    H200 with 0.6.5: "'function' object has no attribute 'rmsnorm_fwd'")."""
    return importlib.import_module("quack.rmsnorm")


def prepare_peer(name: str, inp, wl: Workload) -> Prepared:
    x, g, res, gh = inp.x, inp.g, inp.residual, inp.g_h_new
    w = inp.w.float()  # peers get an FP32 weight so that their dw is FP32 (see PEERS)
    prep = Prepared(name)
    if name == "peer.eager" or name.startswith("peer.torch_compile"):
        if name == "peer.eager":
            f_fwd, f_bwd = _explicit_fwd, _explicit_bwd
        else:
            f_fwd, f_bwd = _compiled(name.rsplit(".", 1)[1])
        y, rstd, h = f_fwd(x, w, res)
        xn = h if h is not None else x
        prep.ops["fwd"] = lambda: f_fwd(x, w, res)
        prep.ops["bwd"] = lambda: f_bwd(g, xn, w, rstd, gh)

        def step():
            f_fwd(x, w, res)
            _, r2, h2 = f_fwd(x, w, res)
            f_bwd(g, h2 if h2 is not None else x, w, r2, gh)

        prep.ops["2xfwd+bwd"] = step
        prep.dw_for_accuracy = lambda i, xn2, r2: f_bwd(i.g, xn2, i.w.float(), r2, i.g_h_new)
        return prep
    if name == "peer.liger":
        _check_version(name)
        from liger_kernel.ops import rms_norm as lrn

        if wl.form.startswith("heads") and not x.is_contiguous():
            raise PeerUnavailable("Liger rms_norm needs a contiguous input (views strided heads by a copy): not a like-for-like comparison")

        def lfwd(xx):
            Y, X2, RSTD, BS, NW, CM = lrn.rms_norm_forward(xx, w, EPS, 0.0, "gemma", None)
            return Y, RSTD, BS, NW, CM

        def rows(xx):
            # Liger's backward indexes X by X.stride(0) as rows of H and never reshapes it: its autograd
            # function hands it the 2-D view that rms_norm_forward returns. A [T, heads, H] tensor
            # there has a row stride of heads x H: the kernel reads past the end (rounds 4-9 on the
            # H200: non-finite dw at the head forms, an illegal address from 16,384 rows of 256).
            return xx.reshape(-1, xx.shape[-1])

        def pre(xx):
            return (xx.float() + res.float()).to(torch.bfloat16) if res is not None else xx

        xn = rows(pre(x))
        Y, RSTD, BS, NW, CM = lfwd(xn)

        def lbwd(xx, rr):
            dX, dW = lrn.rms_norm_backward(g, xx, w, rr, 0.0, CM, BS, NW, False, None)
            if gh is not None:
                dX = dX + gh
            return dX, dW

        prep.ops["fwd"] = lambda: lfwd(pre(x))
        prep.ops["bwd"] = lambda: lbwd(xn, RSTD)

        def lstep():
            lfwd(pre(x))
            xx = pre(x)
            _, r2, *_ = lfwd(xx)
            lbwd(rows(xx), r2)

        prep.ops["2xfwd+bwd"] = lstep

        def lacc(i, xn2, r2):
            dX, dW = lrn.rms_norm_backward(i.g, rows(xn2), i.w.float(), r2.reshape(-1), 0.0, CM, BS, NW, False, None)
            return (dX + i.g_h_new if i.g_h_new is not None else dX), dW.float()

        prep.dw_for_accuracy = lacc
        return prep
    if name.startswith("peer.quack"):
        _check_version(name)
        qr = _quack_rmsnorm_module()

        tuned = name.endswith("tuned")
        if wl.form == "heads_strided":
            raise PeerUnavailable("QuACK rmsnorm needs a contiguous last-two-dims layout for per-head views")

        def qfwd():
            if tuned:
                out = torch.empty(x.shape, dtype=torch.bfloat16, device=x.device)
                r = torch.empty(x.shape[:-1], dtype=torch.float32, device=x.device)
                ro = torch.empty_like(x) if res is not None else None
                qr.rmsnorm_fwd_tuned(x, w, out, rstd=r, residual=res, residual_out=ro, eps=EPS)
                return out, (ro if ro is not None else x), r
            return qr.rmsnorm_fwd(x, w, residual=res, eps=EPS, store_rstd=True)

        out, xn, rstd = qfwd()

        def qbwd(xx, ww, rr, gg, ghh):
            if tuned:
                dx = torch.empty_like(xx)
                sm = torch.cuda.get_device_properties(xx.device).multi_processor_count
                dwp = torch.empty((sm, xx.shape[-1]), dtype=torch.float32, device=xx.device)
                qr.rmsnorm_bwd_tuned(xx, ww, gg, rr, dx, dw_partial=dwp, dresidual_out=ghh, has_dw_partial=True, sm_count=sm)
                return dx, dwp.sum(0)
            dx, dw, _, _ = qr.rmsnorm_bwd(xx, ww, gg, rr, dresidual_out=ghh, has_residual=res is not None)
            return dx, dw

        prep.ops["fwd"] = qfwd
        prep.ops["bwd"] = lambda: qbwd(xn, w, rstd, g, gh)

        def qstep():
            qfwd()
            _, xx, rr = qfwd()
            qbwd(xx, w, rr, g, gh)

        prep.ops["2xfwd+bwd"] = qstep

        def qacc(i, xn2, r2):
            # The accuracy input's own weight: dx depends on it (dw does not). Until session 26 the
            # timing input's weight was passed here, so QuACK's stored dx figures are wrong (its dw
            # figures are right); dx is not part of the in-budget rule (ROUTING-POLICY section 3).
            return qbwd(xn2, i.w.float(), r2.reshape(xn2.shape[:-1]), i.g, i.g_h_new)

        prep.dw_for_accuracy = qacc
        return prep
    raise PeerUnavailable(f"unknown peer {name!r}; known: {', '.join(PEERS)}")
