"""The one runner: the only code that launches programs.

The runtime op, the measurement harness and the tests all call `forward` / `backward` here. The
runner validates device, dtype, shape and strides (errors name the argument and what is
accepted), derives the row addressing (rows read in place at any row stride when the last
dimension is contiguous), allocates outputs and workspace, and launches. A caller-owned
`Workspace` (from `workspace_for`) makes a call CUDA-graph safe: nothing is allocated inside it.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass

import torch

from cake_kernels import registry
from cake_kernels.reference import reference_backward, reference_forward
from cake_kernels.registry import H_MAX, Program

_W_DTYPES = {torch.bfloat16: "bf16", torch.float32: "fp32"}
# Nominal SM count when Triton runs in the CPU interpreter (keeps interpreted grids small).
_INTERPRETER_SMS = 4
RED_BLOCK = 256
REDUCE_WARPS = 4
# Columns per step of the fixed-order reduce that the last program of a single-launch `twosum` runs.
SINGLE_RED_BLOCK = 1024
# The `.wr` programs' reduce (programs/backward.py, reduce_partials_wide_kernel): columns per
# program and partial rows per step.
WIDE_RED_COLS = 32
WIDE_RED_ROWS = 128


@dataclass(frozen=True)
class Rows:
    """How a [..., H] tensor maps to rows: row r = t * NH + h starts at t * st + h * sh."""

    tensor: torch.Tensor
    NH: int
    st: int
    sh: int
    rows: int


@dataclass
class Workspace:
    """Scratch a backward program needs: FP32/FP64 partials and an arrival counter (zeroed once;
    the single-launch programs reset it themselves). Reused across calls and graph replays."""

    partials: torch.Tensor | None
    counter: torch.Tensor | None
    weight32: torch.Tensor | None = None  # `.wc` programs: the FP32 copy of a BF16 weight


def w_dtype_name(weight: torch.Tensor) -> str:
    try:
        return _W_DTYPES[weight.dtype]
    except KeyError:
        raise TypeError(f"weight: dtype {weight.dtype} is not accepted; use torch.bfloat16 or torch.float32") from None


def heads_follow(t: torch.Tensor | None) -> bool:
    """Whether a per-head view [T, NH, H]'s heads follow one another in memory (stride(0) = NH x
    stride(1), or a single token or head), so that its T x NH rows are plain rows of stride stride(1)."""
    if t is None or t.dim() != 3:
        return True
    T, NH = t.shape[0], t.shape[1]
    return T <= 1 or NH <= 1 or t.stride(0) == NH * t.stride(1)


def flat_heads(program: Program, *views: torch.Tensor | None) -> bool:
    """Whether `program` addresses these operands as flat rows: a `.fl` program (heads_rows `flat`)
    given per-head views whose heads all follow one another. One NH serves every operand of a launch,
    so one operand that does not flatten keeps them all indexed by head."""
    return program.launch.heads_rows == "flat" and all(heads_follow(v) for v in views)


def rows_of(name: str, t: torch.Tensor, H: int, flat: bool = False) -> Rows:
    """Row addressing of `t` ([..., H], last dimension contiguous), without copying when possible.
    `flat` (see `flat_heads`): a per-head view whose heads follow one another is addressed as plain
    rows (NH = 1) instead of by head."""
    if t.dim() == 0 or t.shape[-1] != H:
        raise ValueError(f"{name}: expected shape [..., {H}], got {list(t.shape)}")
    if t.stride(-1) != 1 and t.numel() > 0 and H > 1:
        raise ValueError(
            f"{name}: the last dimension must be contiguous (stride 1), got strides {list(t.stride())}; "
            f"pass {name}.contiguous()"
        )
    if t.dim() == 1:
        return Rows(t, 1, H, 0, 1)
    if t.dim() == 2:
        return Rows(t, 1, t.stride(0), 0, t.shape[0])
    if t.dim() == 3:
        if flat and heads_follow(t):
            # NH = 1 is compiled in as a constant by Triton's launcher (it specializes integers equal
            # to 1): no row // NH division per row in the build (registry.LaunchPolicy heads_rows).
            return Rows(t, 1, t.stride(1) if t.shape[1] > 1 else t.stride(0), 0, t.shape[0] * t.shape[1])
        return Rows(t, t.shape[1], t.stride(0), t.stride(1), t.shape[0] * t.shape[1])
    rows2d = t.reshape(-1, H)  # a view when the leading dims collapse, else the one copy
    return Rows(rows2d, 1, rows2d.stride(0), 0, rows2d.shape[0])


def _check_x(name: str, t: torch.Tensor) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dtype != torch.bfloat16:
        raise TypeError(f"{name}: dtype {t.dtype} is not accepted; use torch.bfloat16")


def _check_same_device(ref: torch.Tensor, **others: torch.Tensor | None) -> None:
    for name, t in others.items():
        if t is not None and t.device != ref.device:
            raise ValueError(f"{name}: on {t.device}, but x is on {ref.device}; put every input on one device")


def _check_weight(weight: torch.Tensor, H: int) -> torch.Tensor:
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"weight: expected a torch.Tensor, got {type(weight).__name__}")
    w_dtype_name(weight)
    if weight.dim() != 1 or weight.shape[0] != H:
        raise ValueError(f"weight: expected shape [{H}] (the last dimension of x), got {list(weight.shape)}")
    return weight.contiguous()


def _check_H(H: int, program: Program) -> None:
    if not (program.H_min <= H <= program.H_max):
        raise ValueError(f"x: hidden size H={H} is outside [{program.H_min}, {program.H_max}] supported by program {program.name!r}")


def check_eps(eps) -> float:
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise TypeError(f"eps: expected a positive finite float, got {eps!r}") from None
    if not (e > 0 and math.isfinite(e)):
        raise ValueError(f"eps: expected a positive finite float, got {eps!r}")
    return e


def _check_launchable(program: Program, device: torch.device) -> None:
    if program.launch.grid == "reference":
        return
    from cake_kernels.programs.common import interpreting

    if device.type != "cuda" and not interpreting():
        raise ValueError(
            f"program {program.name!r} is a Triton program: inputs must be CUDA tensors "
            f"(got {device}), or set TRITON_INTERPRET=1 to run it in the CPU interpreter"
        )


@functools.lru_cache(maxsize=None)
def _sm_count(device_index: int) -> int:
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return _sm_count(device.index if device.index is not None else torch.cuda.current_device())
    return _INTERPRETER_SMS


def _exact_products() -> bool:
    from cake_kernels.programs.common import interpreting

    return not interpreting()


def _grid_programs(program: Program, n_rows: int, device: torch.device) -> int:
    lp = program.launch
    n_blocks = -(-n_rows // lp.rows)
    if lp.grid == "persistent":
        return max(1, min(n_blocks, lp.programs_per_sm * sm_count(device)))
    return n_blocks


def _out(name: str, given: torch.Tensor | None, shape, dtype, device) -> torch.Tensor:
    if given is None:
        return torch.empty(shape, dtype=dtype, device=device)
    if tuple(given.shape) != tuple(shape) or given.dtype != dtype or given.device != device or not given.is_contiguous():
        raise ValueError(f"{name}: expected a contiguous {dtype} tensor of shape {list(shape)} on {device}")
    return given


def _into(out: torch.Tensor | None, value: torch.Tensor) -> torch.Tensor:
    if out is None:
        return value
    out.copy_(value.reshape(out.shape))
    return out


def forward(
    program: Program | str, x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, residual: torch.Tensor | None = None,
    *, y_out: torch.Tensor | None = None, rstd_out: torch.Tensor | None = None, h_out: torch.Tensor | None = None,
):
    """Run a forward program. Returns (y, rstd, h_new or None); y and h_new shaped like x, rstd like x[..., 0].

    `*_out` are caller-owned outputs (contiguous), written in place: graph capture, poisoning tests.
    """
    program = registry.get(program) if isinstance(program, str) else program
    if program.op != "fwd":
        raise ValueError(f"program: {program.name!r} is a {program.op} program; forward needs a fwd program")
    _check_x("x", x)
    if residual is not None:
        _check_x("residual", residual)
        if residual.shape != x.shape:
            raise ValueError(f"residual: expected the shape of x {list(x.shape)}, got {list(residual.shape)}")
    H = x.shape[-1] if x.dim() else 0
    _check_same_device(x, weight=weight, residual=residual)
    weight = _check_weight(weight, H)
    eps = check_eps(eps)
    _check_H(H, program)
    _check_launchable(program, x.device)
    if program.launch.grid == "reference":
        y, rstd, h_new = reference_forward(x, weight, eps, residual)
        return _into(y_out, y), _into(rstd_out, rstd), (_into(h_out, h_new) if h_new is not None else None)
    flat = flat_heads(program, x, residual)
    xr = rows_of("x", x, H, flat)
    rr = rows_of("residual", residual, H, flat) if residual is not None else None
    y = _out("y_out", y_out, x.shape, torch.bfloat16, x.device)
    rstd = _out("rstd_out", rstd_out, x.shape[:-1], torch.float32, x.device)
    h_new = _out("h_out", h_out, x.shape, torch.bfloat16, x.device) if residual is not None else None
    if xr.rows == 0:
        return y, rstd, h_new
    meta, warps = forward_launch_meta(program, H, residual is not None)
    grid = (_grid_programs(program, xr.rows, x.device),)
    kernel = forward_kernel(program)
    kernel[grid](
        xr.tensor, rr.tensor if rr else xr.tensor, weight, y, rstd, h_new if h_new is not None else y,
        xr.rows, xr.NH, H, float(H), eps,
        xr.st, xr.sh, rr.st if rr else 0, rr.sh if rr else 0,
        **meta, num_warps=warps, num_stages=program.launch.stages,
    )
    return y, rstd, h_new


def workspace_for(program: Program | str, x: torch.Tensor) -> Workspace:
    """The workspace `backward(program, ...)` needs for inputs shaped like x (reusable, graph safe)."""
    program = registry.get(program) if isinstance(program, str) else program
    H = x.shape[-1]
    rows = x.numel() // H if H else 0
    if program.op != "bwd" or program.launch.grid != "persistent" or program.mode == 0 or rows == 0:
        return Workspace(None, None)
    P = _grid_programs(program, rows, x.device)
    dtype = torch.float64 if program.mode == 3 else torch.float32
    partials = torch.empty((_workspace_rows(program, P, H), H), dtype=dtype, device=x.device)
    # single launch: the last-arrival counter; `.gs`: the grid barrier's arrival count and generation
    counter = (torch.zeros(2 if program.launch.reduce == "grid_sync" else 1, dtype=torch.int32, device=x.device)
               if program.single_launch else None)
    weight32 = torch.empty(H, dtype=torch.float32, device=x.device) if program.launch.weight_cast == "fp32" else None
    return Workspace(partials, counter, weight32)


def backward(
    program: Program | str, g: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor,
    g_h_new: torch.Tensor | None = None, workspace: Workspace | None = None, *,
    dx_out: torch.Tensor | None = None, dw_out: torch.Tensor | None = None,
):
    """Run a backward program. Returns (dx BF16 shaped like x, dw FP32 [H]).

    `x` is the normalized input (h_new for the residual form); `g_h_new` is the incoming gradient
    of h_new, added to dx. `workspace` (from `workspace_for`) and `dw_out` make the call allocation-
    free for CUDA graph capture.
    """
    program = registry.get(program) if isinstance(program, str) else program
    if program.op != "bwd":
        raise ValueError(f"program: {program.name!r} is a {program.op} program; backward needs a bwd program")
    _check_x("g", g)
    _check_x("x", x)
    if g.shape != x.shape:
        raise ValueError(f"g: expected the shape of x {list(x.shape)}, got {list(g.shape)}")
    if g_h_new is not None:
        _check_x("g_h_new", g_h_new)
        if g_h_new.shape != x.shape:
            raise ValueError(f"g_h_new: expected the shape of x {list(x.shape)}, got {list(g_h_new.shape)}")
    H = x.shape[-1] if x.dim() else 0
    _check_same_device(x, g=g, weight=weight, rstd=rstd, g_h_new=g_h_new)
    weight = _check_weight(weight, H)
    if not isinstance(rstd, torch.Tensor) or rstd.dtype != torch.float32:
        raise TypeError(f"rstd: expected a torch.float32 tensor (the forward's rstd), got {getattr(rstd, 'dtype', type(rstd))}")
    n_rows = x.numel() // H if H else 0
    if rstd.numel() != n_rows:
        raise ValueError(f"rstd: expected {n_rows} values (one per row of x), got {rstd.numel()}")
    _check_H(H, program)
    _check_launchable(program, x.device)
    if program.launch.grid == "reference":
        dx, dw = reference_backward(g, x, weight, rstd, g_h_new)
        return _into(dx_out, dx), _into(dw_out, dw)
    rstd = rstd.reshape(-1).contiguous()
    flat = flat_heads(program, g, x, g_h_new)
    gr, xr = rows_of("g", g, H, flat), rows_of("x", x, H, flat)
    # A view TMA cannot read in place (`tma_readable`), or a `.gs` grid the driver refused on this
    # device before: the fallback twin does the same work with pointer loads (for `.gs`, in two
    # launches), before anything is allocated for this program.
    if ((program.launch.loads != "pointer" and n_rows and not tma_readable(program, H, gr, xr))
            or (program.launch.reduce == "grid_sync" and (program.name, str(x.device)) in _COOPERATIVE_REFUSED)):
        return _fallback_backward(program, n_rows, g, x, weight, rstd, g_h_new, workspace, dx_out, dw_out)
    gres = rows_of("g_h_new", g_h_new, H, flat) if g_h_new is not None else None
    dx = _out("dx_out", dx_out, x.shape, torch.bfloat16, x.device)
    dw = _out("dw_out", dw_out, (H,), torch.float32, x.device)
    if n_rows == 0:
        dw.zero_()
        return dx, dw

    from cake_kernels.programs import backward as bk

    lp = program.launch
    meta, warps = backward_launch_meta(program, H, gres is not None)
    common = (
        n_rows, xr.NH, H, float(H),
        gr.st, gr.sh, xr.st, xr.sh, gres.st if gres else 0, gres.sh if gres else 0,
    )
    gres_t = gres.tensor if gres else gr.tensor
    if lp.grid == "column_tasks":
        n_col = -(-H // lp.column_block)
        n_row_tasks = -(-n_rows // lp.rows)
        column_task_kernel(program)[(n_col + n_row_tasks,)](
            gr.tensor, xr.tensor, weight, rstd, gres_t, dx, dw, *common, n_col, **meta, num_warps=warps, num_stages=lp.stages,
        )
        return dx, dw
    P = _grid_programs(program, n_rows, x.device)
    if program.mode == 0:
        dw.zero_()  # the atomic family's memset: part of the program, inside its timed span
        ws = Workspace(None, None)
    else:
        ws = workspace if workspace is not None else workspace_for(program, x)
        if ws.partials is None or ws.partials.shape[0] < _workspace_rows(program, P, H) or ws.partials.shape[1] != H:
            raise ValueError(f"workspace: too small for program {program.name!r} at {n_rows} rows x H={H}; use workspace_for(program, x)")
        if program.single_launch and ws.counter is None:
            raise ValueError(f"workspace: program {program.name!r} needs an arrival counter; use workspace_for(program, x)")
        if lp.reduce == "grid_sync" and ws.counter.numel() < 2:
            # a one-word counter (another single-launch program's) would put the generation past its end
            raise ValueError(f"workspace: program {program.name!r} needs a two-word barrier counter; use workspace_for(program, x)")
    partials = ws.partials if ws.partials is not None else dw
    counter = ws.counter if ws.counter is not None else dw
    if lp.weight_cast == "fp32" and weight.dtype != torch.float32:
        # Exact (BF16 values are FP32 values); the kernel below is then the FP32-weight build.
        w32 = ws.weight32 if ws.weight32 is not None and ws.weight32.shape == (H,) else torch.empty(H, dtype=torch.float32, device=x.device)
        weight = w32.copy_(weight)
    if lp.reduce == "grid_sync":
        key = (program.name, str(x.device))
        if _capturing(x.device) and _COOPERATIVE_ACCEPTED.get(key, 0) < P:
            # A refused launch inside a capture invalidates the capture (seen on an H100: every later
            # call fails with "operation failed due to a previous error during capture"), so a grid
            # the driver has not yet accepted here is not tried while capturing.
            warnings.warn(f"{program.name}: captured into a CUDA graph before its cooperative grid of {P} programs ran on "
                          f"{x.device}; the graph holds its two-launch twin {program.fallback} (run the call once before "
                          f"capturing, as a warm-up does, to capture the one-launch program)", RuntimeWarning, stacklevel=2)
            return _fallback_backward(program, n_rows, g, x, weight, rstd, g_h_new, workspace, dx, dw)
        try:
            launch = (_launch_grid_sync_fp64 if grid_sync_fp64(program) else _launch_grid_sync_flat if grid_sync_flat(program)
                      else _launch_grid_sync_v2 if grid_sync_v2(program) else _launch_grid_sync)
            launch(program, P, H, warps, meta, (gr.tensor, xr.tensor, weight, rstd, gres_t, dx, dw, partials, counter, *common),
                   sm_count(x.device))
            _COOPERATIVE_ACCEPTED[key] = max(P, _COOPERATIVE_ACCEPTED.get(key, 0))
            return dx, dw
        except RuntimeError as exc:
            if not cooperative_refusal(exc):
                raise
            _COOPERATIVE_REFUSED.add((program.name, str(x.device)))
            warnings.warn(f"{program.name}: the driver refused its cooperative grid of {P} programs on {x.device} ({exc}); "
                          f"running its two-launch twin {program.fallback} here from now on", RuntimeWarning, stacklevel=2)
        # The refused launch ran nothing, and the twin writes every element of dx and dw.
        return _fallback_backward(program, n_rows, g, x, weight, rstd, g_h_new, workspace, dx, dw)
    if lp.loads != "pointer":
        chunk = registry.TMA_CHUNK if lp.loads == "tma_chunks" else 0
        gd, xd = (tma_descriptor(r, H, lp.rows, meta["BLOCK_H"], chunk) for r in (gr, xr))
        tma_kernel(program)[(P,)](
            gd, xd, weight, rstd, gres_t, dx, partials, n_rows, xr.NH, H, float(H),
            gres.st if gres else 0, gres.sh if gres else 0, **meta, num_warps=warps, num_stages=lp.stages,
            **register_cap(program),
        )
    else:
        backward_rows_kernel(program)[(P,)](
            gr.tensor, xr.tensor, weight, rstd, gres_t, dx, dw, partials, counter, *common,
            **meta, num_warps=warps, num_stages=lp.stages, **register_cap(program),
        )
    if lp.reduce == "split":
        splits, per_split, grid1, meta1, grid2, meta2, rwarps = split_reduce_meta(P, H)
        first = partials[P:P + splits]
        bk.reduce_partials_split_kernel[grid1](partials, first, P, H, per_split, **meta1, num_warps=rwarps)
        bk.reduce_partials_wide_kernel[grid2](first, dw, splits, H, **meta2, num_warps=rwarps)
        return dx, dw
    if lp.reduce == "one_pass":
        # Sized by the grid's largest P, not this call's: one build per device whatever T is (and the
        # build `compile_check.kernels_of` lists); fewer partial rows are masked.
        rmeta, rwarps = one_pass_reduce_meta(lp.programs_per_sm * sm_count(x.device))
        bk.reduce_partials_wide_kernel[(-(-H // rmeta["BLOCK_C"]),)](partials, dw, P, H, **rmeta, num_warps=rwarps)
        return dx, dw
    spec = reduce_meta(program, H)
    if spec is not None:
        kname, grid, rmeta, rwarps = spec
        getattr(bk, kname)[grid](partials, dw, P, H, **rmeta, num_warps=rwarps)
    return dx, dw


def tma_row_stride(r: Rows) -> int | None:
    """The one row stride (in elements) of BF16 rows `r` when a TMA descriptor can read them in place
    (16-byte aligned base and row stride, every row the same distance apart), else None."""
    stride = r.st if r.NH == 1 else (r.sh if r.st == r.NH * r.sh else None)
    if stride is None or (stride * r.tensor.element_size()) % 16 or r.tensor.data_ptr() % 16:
        return None
    return stride


def tma_readable(program: Program, H: int, *rows: Rows) -> bool:
    """Whether a `.tma` / `.tmc` program's descriptors can read these rows in place: every operand's
    row stride is one TMA can take (`tma_row_stride`), and for `.tmc` the rows are whole 64-wide
    chunks (registry.TMA_CHUNK)."""
    if program.launch.loads == "tma_chunks" and H % registry.TMA_CHUNK:
        return False
    return all(tma_row_stride(r) is not None for r in rows)


def tma_descriptor(r: Rows, H: int, rows: int, block_h: int, chunk: int = 0):
    """A [n_rows, H] tensor descriptor over rows `r` with [rows, block_h] tiles (zero padding past
    the last row and column); with a `chunk` (`.tmc`; H % chunk == 0) a [n_rows, H / chunk, chunk]
    one with [rows, block_h / chunk, chunk] tiles. `tma_row_stride(r)` must not be None."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    if chunk:
        return TensorDescriptor(r.tensor, [r.rows, H // chunk, chunk], [tma_row_stride(r), chunk, 1],
                                [rows, max(block_h // chunk, 1), chunk])
    return TensorDescriptor(r.tensor, [r.rows, H], [tma_row_stride(r), 1], [rows, block_h])


def split_reduce_meta(P: int, H: int) -> tuple[int, int, tuple[int, int], dict, tuple[int], dict, int]:
    """The two-pass reduce of the `.sr` programs' [P, H] FP64 partials (programs/backward.py
    `reduce_partials_split_kernel` says why): (splits S, partial rows per split, first-pass grid and
    compile-time arguments, second-pass grid and compile-time arguments, warps). The first pass
    writes S FP64 rows into the workspace after the P partial rows (`workspace_for` allocates P + S);
    the second is the wide reduce over those S rows. Not part of `reduce_meta`: that function's
    source is in every program's fingerprint."""
    rows_per_split, cols = 64, 32
    splits = -(-P // rows_per_split)
    n_cols = -(-H // cols)
    return (splits, rows_per_split, (n_cols, splits), dict(BLOCK_P=rows_per_split, BLOCK_C=cols),
            (n_cols,), dict(BLOCK_P=128, BLOCK_C=cols), 4)


def one_pass_reduce_meta(P: int) -> tuple[dict, int]:
    """(compile-time arguments, warps) of the `.op` programs' reduce: `reduce_partials_wide_kernel`
    with a tile as tall as the grid's partial rows (P = programs per SM x SMs, the most a call has;
    `backward` passes that, so one build serves every T), up to 512 rows, so that P <= 512 partial
    rows are summed in one step (the `.wr` tile of 128 rows takes 3 dependent steps at P = 264).

    Why: ncu on an H100 (session 27, H 4096 FP32 T 4096) had the `.wr` reduce of `pair.p2x.w8.pf.wr`
    at 8.0 us beside a rows kernel of 33.3 (6 % achieved occupancy, 16 % of DRAM peak for 4.3 MB of
    FP32 partials): latency, one L2 round trip per step. Its own function, and literals instead of
    module constants, because `reduce_meta` and the runner's constants are in every program's
    fingerprint (fingerprint.py).
    """
    block_p = 1
    while block_p < min(P, 512):
        block_p *= 2
    return dict(BLOCK_P=block_p, BLOCK_C=32), (8 if block_p >= 256 else 4)


def grid_sync_meta(P: int, H: int, warps: int) -> dict:
    """The `.gs` reduce's tile for a full grid of P programs (programs per SM x SMs): BLOCK_C columns
    (at least 4, one 32-byte sector of FP64, and at most 64) by BLOCK_P partial rows, about 8 FP64
    values per thread; BLOCK_C grows with H / P so that the column blocks go round the grid about
    once. Not part of `backward_meta`: that function's source is in every program's fingerprint (this
    one is in the `.gs` programs')."""
    def pow2(n: int) -> int:  # the least power of two >= n
        return 1 << max(0, (n - 1).bit_length())

    cols = min(64, max(4, pow2(-(-H // max(P, 1)))))
    rows = max(1, min(pow2(P), (256 * warps) // cols))
    return dict(RED_P=rows, RED_C=cols)


def grid_sync_constexprs(program: Program, H: int, warps: int, sms: int) -> dict:
    """The constexprs a `.gs` program adds to its rows kernel's (all but PHASE, which the launch
    picks): the reduce tile and whether rstd is split from the products. Shared by the launch and
    compile_check, so that the build checked is the build launched."""
    # The reduce tile is sized for the full grid, not this call's P (fewer programs at small T), so
    # that one build serves every T of an H: a runtime op must not recompile as T changes.
    return {**grid_sync_meta(max(program.launch.programs_per_sm, 1) * sms, H, warps),
            "SPLIT_RSTD": program.launch.products == "split_rstd"}


# (program name, device) pairs whose cooperative grid the driver refused: their fallback runs there
# without another refused launch per call.
_COOPERATIVE_REFUSED: set[tuple[str, str]] = set()
# (program name, device) -> the largest cooperative grid the driver has accepted there: what a CUDA
# graph capture may launch without risking a refusal.
_COOPERATIVE_ACCEPTED: dict[tuple[str, str], int] = {}


def _capturing(device: torch.device) -> bool:
    """Whether the current stream of `device` is being captured into a CUDA graph."""
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()


def cooperative_refusal(exc: BaseException) -> bool:
    """Whether `exc` is the driver refusing a cooperative grid that cannot be resident at once
    (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, which Triton's launcher raises as a RuntimeError
    "Triton Error [CUDA]: too many blocks in cooperative launch"). Nothing ran, and the error is not
    sticky, so the caller can launch something else."""
    return isinstance(exc, RuntimeError) and "cooperative launch" in str(exc)


def _fallback_backward(program: Program, n_rows: int, g, x, weight, rstd, g_h_new, workspace, dx_out, dw_out):
    """`backward` by `program.fallback`, with the caller's workspace where it holds the fallback's partials."""
    fb = registry.get(program.fallback)
    if workspace is not None and workspace.partials is not None and workspace.partials.shape[0] < _grid_programs(fb, n_rows, x.device):
        workspace = None  # sized for this program's grid: the fallback allocates its own
    return backward(fb, g, x, weight, rstd, g_h_new, workspace, dx_out=dx_out, dw_out=dw_out)


def _launch_grid_sync(program: Program, P: int, H: int, warps: int, meta: dict, args: tuple, sms: int) -> None:
    """A `.gs` program's launch: one cooperative grid of P programs on the GPU; in the CPU
    interpreter, which runs programs one after another, the two halves of the barrier as two launches
    (programs/backward.py `rmsnorm_bwd_grid_sync_kernel`)."""
    from cake_kernels.programs import backward as bk
    from cake_kernels.programs.common import interpreting

    meta = {**meta, **grid_sync_constexprs(program, H, warps, sms)}
    kernel = bk.rmsnorm_bwd_grid_sync_kernel[(P,)]
    if interpreting():
        for phase in (1, 2):
            kernel(*args, P, **meta, PHASE=phase, num_warps=warps, num_stages=program.launch.stages)
    else:
        kernel(*args, P, **meta, PHASE=0, num_warps=warps, num_stages=program.launch.stages, launch_cooperative_grid=True)


def grid_sync_v2(program: Program) -> bool:
    """Whether a `.gs` program takes the reduce or barrier option (`.ur`, `.rw`): it is then built
    from `rmsnorm_bwd_grid_sync_v2_kernel`, and `rmsnorm_bwd_grid_sync_kernel` stays as shipped."""
    lp = program.launch
    return (lp.reduce == "grid_sync" and lp.reduce_tiles != "flat"
            and (lp.reduce_tiles != "looped" or lp.barrier_wait != "all"))


def grid_sync_fp64(program: Program) -> bool:
    """Whether a `.gs` program sums dw in FP64 (family `f64`): it is then built from
    `rmsnorm_bwd_grid_sync_fp64_kernel` (the `f64_pair` rows kernel, the barrier, the looped reduce)."""
    return program.launch.reduce == "grid_sync" and program.launch.products == "fp64"


def _launch_grid_sync_fp64(program: Program, P: int, H: int, warps: int, meta: dict, args: tuple, sms: int) -> None:
    """`_launch_grid_sync_v2` for the `f64` programs (programs/backward.py
    `rmsnorm_bwd_grid_sync_fp64_kernel`): the same cooperative launch, and the same two launches in
    the CPU interpreter. Its own function, so that the `.gs` launches' sources (in their programs'
    fingerprints) stay as they are."""
    from cake_kernels.programs import backward as bk
    from cake_kernels.programs.common import interpreting

    meta = {**meta, **grid_sync_v2_constexprs(program, H, warps, sms)}
    kernel = bk.rmsnorm_bwd_grid_sync_fp64_kernel[(P,)]
    if interpreting():
        for phase in (1, 2):
            kernel(*args, P, **meta, PHASE=phase, num_warps=warps, num_stages=program.launch.stages)
    else:
        kernel(*args, P, **meta, PHASE=0, num_warps=warps, num_stages=program.launch.stages, launch_cooperative_grid=True)


def grid_sync_flat(program: Program) -> bool:
    """Whether a `.gs` program sums its partials with the flat reduce (`.uf`): it is then built from
    `rmsnorm_bwd_grid_sync_flat_kernel`, which runs the v2 kernel's rows and barrier as they are."""
    return program.launch.reduce == "grid_sync" and program.launch.reduce_tiles == "flat"


def grid_sync_flat_constexprs(program: Program, H: int, warps: int, sms: int) -> dict:
    """`grid_sync_v2_constexprs` (the reduce tile, REDUCERS_WAIT) with RED_TILES the flat reduce's
    unrolled tiles over the full grid's partial rows; with the launch's `reduce_columns` (`.uf8`), tiles
    of that many columns by as many rows as keep about 8 FP64 values per thread. Refused past 12 tiles."""
    # The flat reduce keeps one accumulator tile per thread, not one per unrolled tile, so it can take
    # more tiles than the unrolled reduce's 8: 9 tiles of [64 x 8] were measured (H100, H 512).
    max_tiles = 12
    meta = grid_sync_v2_constexprs(program, H, warps, sms)
    P = max(program.launch.programs_per_sm, 1) * sms
    if program.launch.reduce_columns:
        cols = program.launch.reduce_columns
        meta = {**meta, "RED_C": cols, "RED_P": max(1, min(1 << max(0, (P - 1).bit_length()), (256 * warps) // cols))}
    tiles = -(-P // meta["RED_P"])
    if tiles > max_tiles:
        raise ValueError(f"program {program.name!r}: {P} partial rows at H={H} take {tiles} flat reduce tiles of "
                         f"{meta['RED_P']} on a GPU of {sms} SMs; accepted: at most {max_tiles} "
                         f"(run {program.name.split('.uf', 1)[0]!r} instead)")
    return {**meta, "RED_TILES": tiles}


def _launch_grid_sync_flat(program: Program, P: int, H: int, warps: int, meta: dict, args: tuple, sms: int) -> None:
    """`_launch_grid_sync_v2` for the `.uf` programs (programs/backward.py
    `rmsnorm_bwd_grid_sync_flat_kernel`)."""
    from cake_kernels.programs import backward as bk
    from cake_kernels.programs.common import interpreting

    meta = {**meta, **grid_sync_flat_constexprs(program, H, warps, sms)}
    kernel = bk.rmsnorm_bwd_grid_sync_flat_kernel[(P,)]
    if interpreting():
        for phase in (1, 2):
            kernel(*args, P, **meta, PHASE=phase, num_warps=warps, num_stages=program.launch.stages)
    else:
        kernel(*args, P, **meta, PHASE=0, num_warps=warps, num_stages=program.launch.stages, launch_cooperative_grid=True)


def grid_sync_v2_constexprs(program: Program, H: int, warps: int, sms: int) -> dict:
    """`grid_sync_constexprs` and the options of a `.ur` / `.rw` program: RED_TILES, the unrolled
    tiles that cover the full grid's partial rows (0: looped), and REDUCERS_WAIT."""
    max_tiles = 8  # more would hold too many FP64 values per thread at once (a literal: see fingerprint._host_sources)
    meta = grid_sync_constexprs(program, H, warps, sms)
    P = max(program.launch.programs_per_sm, 1) * sms
    tiles = -(-P // meta["RED_P"]) if program.launch.reduce_tiles == "unrolled" else 0
    if tiles > max_tiles:
        raise ValueError(f"program {program.name!r}: {P} partial rows at H={H} take {tiles} unrolled reduce tiles of "
                         f"{meta['RED_P']} on a GPU of {sms} SMs; accepted: at most {max_tiles} "
                         f"(run {program.name.rsplit('.ur', 1)[0]!r} instead)")
    return {**meta, "RED_TILES": tiles, "REDUCERS_WAIT": program.launch.barrier_wait == "reducers"}


def _launch_grid_sync_v2(program: Program, P: int, H: int, warps: int, meta: dict, args: tuple, sms: int) -> None:
    """`_launch_grid_sync` for the `.ur` / `.rw` programs (programs/backward.py
    `rmsnorm_bwd_grid_sync_v2_kernel`): the same cooperative launch, and the same two launches in
    the CPU interpreter."""
    from cake_kernels.programs import backward as bk
    from cake_kernels.programs.common import interpreting

    meta = {**meta, **grid_sync_v2_constexprs(program, H, warps, sms)}
    kernel = bk.rmsnorm_bwd_grid_sync_v2_kernel[(P,)]
    if interpreting():
        for phase in (1, 2):
            kernel(*args, P, **meta, PHASE=phase, num_warps=warps, num_stages=program.launch.stages)
    else:
        kernel(*args, P, **meta, PHASE=0, num_warps=warps, num_stages=program.launch.stages, launch_cooperative_grid=True)


def _workspace_rows(program: Program, P: int, H: int) -> int:
    """Rows of a two-launch program's workspace: its P partial rows, and for `.sr` programs the
    first pass's rows after them."""
    return P + (split_reduce_meta(P, H)[0] if program.launch.reduce == "split" else 0)


def reduce_meta(program: Program, H: int) -> tuple[str, tuple[int], dict, int] | None:
    """(kernel name in programs/backward.py, grid, compile-time arguments, warps) of the fixed-order
    partials reduce a two-launch backward program runs after its rows kernel; None for programs
    without one (atomic, single-launch, column-task)."""
    if program.op != "bwd" or program.launch.grid != "persistent" or program.mode == 0 or program.single_launch:
        return None
    if program.launch.reduce == "wide":
        return ("reduce_partials_wide_kernel", (-(-H // WIDE_RED_COLS),),
                dict(BLOCK_P=WIDE_RED_ROWS, BLOCK_C=WIDE_RED_COLS), REDUCE_WARPS)
    return "reduce_partials_kernel", (-(-H // RED_BLOCK),), dict(BLOCK=RED_BLOCK), REDUCE_WARPS


def backward_rows_kernel(program: Program):
    """The jit kernel a persistent pointer-load backward program launches (its launch policy's
    `gres_load`, `l2_prefetch`, `reload` and `products`: FP64 sums for `f64_pair`); all take
    `backward_meta`'s arguments."""
    from cake_kernels.programs import backward as bk

    if program.launch.gres_load == "prefetched":
        return bk.rmsnorm_bwd_rows_gres_prefetch_kernel
    if program.launch.l2_prefetch != "none":
        return bk.rmsnorm_bwd_rows_l2_prefetch_kernel
    if program.launch.reload:
        return bk.rmsnorm_bwd_rows_reload_prefetch_kernel if program.launch.prefetch else bk.rmsnorm_bwd_rows_reload_kernel
    if program.launch.products == "fp64":
        return bk.rmsnorm_bwd_rows_fp64_kernel
    return bk.rmsnorm_bwd_rows_split_rstd_kernel if program.launch.products == "split_rstd" else bk.rmsnorm_bwd_rows_kernel


def forward_kernel(program: Program):
    """The jit kernel a forward program launches (its launch policy's `prefetch` and `weight_load`)."""
    from cake_kernels.programs import forward as fw

    lp = program.launch
    if lp.static_h and not lp.chunk:
        return fw.rmsnorm_fwd_row_static_fast_kernel if lp.stats == "fast" else fw.rmsnorm_fwd_row_static_kernel
    if lp.chunk:
        return fw.rmsnorm_fwd_looped_static_kernel if lp.static_h else fw.rmsnorm_fwd_looped_kernel
    if lp.weight_load == "beside_rows":
        return fw.rmsnorm_fwd_prefetch_weight_beside_kernel if lp.prefetch else fw.rmsnorm_fwd_weight_beside_kernel
    if lp.weight_load == "row_tile":
        return fw.rmsnorm_fwd_prefetch_weight_tile_kernel if lp.prefetch else fw.rmsnorm_fwd_weight_tile_kernel
    return fw.rmsnorm_fwd_prefetch_kernel if lp.prefetch else fw.rmsnorm_fwd_kernel


def forward_meta(program: Program, H: int, has_residual: bool, exact: bool | None = None) -> tuple[dict, int]:
    """The forward kernel's compile-time arguments and warp count for rows of H columns (what
    `forward` launches with; `cake_kernels.compile_check` compiles the same)."""
    lp = program.launch
    block_h, block_b = lp.tiles_for(H)
    exact = _exact_products() if exact is None else exact
    return (dict(BLOCK_H=block_h, ROWS=lp.rows, HAS_RES=has_residual, EXACT=exact, BLOCK_B=block_b),
            lp.warps_for(block_h + block_b))


def looped_forward_meta(program: Program, H: int, has_residual: bool, exact: bool | None = None) -> tuple[dict, int]:
    """`forward_meta` of a looped (`chunk`) forward: the chunk (at most next_pow2(H)) and exactly the
    policy's warps (a chunk bounds what a thread holds, so no warps are added for wide rows)."""
    lp = program.launch
    exact = _exact_products() if exact is None else exact
    return (dict(CHUNK=min(lp.chunk, 1 << max(H - 1, 0).bit_length()), ROWS=lp.rows, HAS_RES=has_residual, EXACT=exact),
            lp.warps)


def static_looped_forward_meta(program: Program, H: int, has_residual: bool, exact: bool | None = None) -> tuple[dict, int]:
    """`looped_forward_meta` of a `.hs` program: H itself is a compile-time argument (one build per H)."""
    meta, warps = looped_forward_meta(program, H, has_residual, exact)
    return dict(meta, H_C=H, ROW_GRID=program.launch.grid == "row_blocks"), warps


def static_row_forward_meta(program: Program, H: int, has_residual: bool, exact: bool | None = None) -> tuple[dict, int]:
    """`forward_meta` of a one-row `.hs` program (no chunk): the row's tile and H itself (one build per H),
    with the register-held programs' warps for the tile's width."""
    lp = program.launch
    exact = _exact_products() if exact is None else exact
    block_h = lp.tiles_for(H)[0]
    return dict(BLOCK_H=block_h, HAS_RES=has_residual, EXACT=exact, H_C=H), lp.warps_for(block_h)


def forward_launch_meta(program: Program, H: int, has_residual: bool, exact: bool | None = None) -> tuple[dict, int]:
    """The compile-time arguments and warps `forward` launches `program` with at rows of H columns."""
    if program.launch.static_h and not program.launch.chunk:
        return static_row_forward_meta(program, H, has_residual, exact)
    if program.launch.static_h:
        return static_looped_forward_meta(program, H, has_residual, exact)
    if program.launch.chunk:
        return looped_forward_meta(program, H, has_residual, exact)
    return forward_meta(program, H, has_residual, exact)


def static_column_task_meta(program: Program, H: int, has_gres: bool, exact: bool | None = None) -> tuple[dict, int]:
    """`backward_meta` of a column-task program compiled per H (`.hs`): H itself is a compile-time
    argument too (one build per H)."""
    meta, warps = backward_meta(program, H, has_gres, exact)
    return dict(meta, H_C=H), warps


def backward_launch_meta(program: Program, H: int, has_gres: bool, exact: bool | None = None) -> tuple[dict, int]:
    """The compile-time arguments and warps `backward` launches `program`'s own kernel with."""
    if program.launch.grid == "column_tasks" and program.launch.static_h:
        return static_column_task_meta(program, H, has_gres, exact)
    if program.launch.loads == "tma_chunks":
        return tma_chunks_meta(program, H, has_gres, exact)
    meta, warps = backward_meta(program, H, has_gres, exact)
    if program.launch.l2_prefetch != "none":
        meta = {**meta, **l2_prefetch_meta(program)}
    return meta, warps


def tma_chunks_meta(program: Program, H: int, has_gres: bool, exact: bool | None = None) -> tuple[dict, int]:
    """The compile-time arguments and warps of a `.tmc` backward's rows kernel
    (`rmsnorm_bwd_tma_chunks_kernel`): a `.tma` program's, and which products it takes. Apart from
    `backward_meta`, so that the other programs' fingerprints (which hash that) stay as measured."""
    lp = program.launch
    exact = _exact_products() if exact is None else exact
    block_h = lp.tiles_for(H)[0]
    return (dict(BLOCK_H=block_h, ROWS=lp.rows, FOLD=max(lp.fold // lp.rows, 1), STAGES=lp.stages, HAS_GRES=has_gres,
                 EXACT=exact, SPLIT_RSTD=lp.products == "split_rstd"), lp.warps_for(block_h))


def tma_kernel(program: Program):
    """The rows kernel of a `.tma` backward: with split-rstd products (`.xs.tma`) its own build, so
    that the `.tma` programs with mul.rn products keep theirs; `.tmc` programs' one kernel takes both
    (`.fw.tmc`: the one that folds into the workspace row by atomics; `f64_pair` `.tmc`: FP64 sums)."""
    from cake_kernels.programs import backward as bk

    if program.launch.loads == "tma_chunks":
        if program.launch.products == "fp64":
            return bk.rmsnorm_bwd_tma_chunks_fp64_kernel
        if program.launch.fold_in == "workspace":
            return bk.rmsnorm_bwd_tma_chunks_red_fold_kernel
        return bk.rmsnorm_bwd_tma_chunks_kernel
    return bk.rmsnorm_bwd_tma_split_rstd_kernel if program.launch.products == "split_rstd" else bk.rmsnorm_bwd_tma_kernel


def register_cap(program: Program) -> dict:
    """The compile option that caps a `.mr` backward's rows kernel at `max_registers` per thread
    (Triton's `maxnreg`; a separate build in Triton's cache), or none. The CPU interpreter drops it."""
    return {"maxnreg": program.launch.max_registers} if program.launch.max_registers else {}


def l2_prefetch_meta(program: Program) -> dict:
    """The L2-prefetch constexprs of a `.l2p` / `.l2b` backward (`rmsnorm_bwd_rows_l2_prefetch_kernel`)."""
    return dict(L2_PREFETCH={"lines": 1, "bulk": 2}[program.launch.l2_prefetch], L2_AHEAD=program.launch.l2_ahead)


def column_task_kernel(program: Program):
    """The jit kernel a `column_tasks` program launches (compiled per H for `.hs`)."""
    from cake_kernels.programs import backward as bk

    return bk.rmsnorm_bwd_column_task_static_kernel if program.launch.static_h else bk.rmsnorm_bwd_column_task_kernel


def backward_meta(program: Program, H: int, has_gres: bool, exact: bool | None = None) -> tuple[dict, int]:
    """The backward kernel's compile-time arguments and warp count (the column-task kernel for
    `column_tasks` programs, else the rows kernel), as `backward` launches it."""
    lp = program.launch
    exact = _exact_products() if exact is None else exact
    block_h, block_b = lp.tiles_for(H)  # two tiles for split programs
    if lp.grid == "column_tasks":
        return (dict(BLOCK_C=lp.column_block, COL_ROWS=lp.column_rows, BLOCK_H=block_h, ROWS=lp.rows,
                     HAS_GRES=has_gres, EXACT=exact), lp.warps_for(block_h))
    if lp.loads == "tma":
        return (dict(BLOCK_H=block_h, ROWS=lp.rows, FOLD=max(lp.fold // lp.rows, 1), STAGES=lp.stages,
                     HAS_GRES=has_gres, EXACT=exact), lp.warps_for(block_h))
    return (dict(BLOCK_H=block_h, ROWS=lp.rows, MODE=program.mode, FOLD=max(lp.fold // lp.rows, 1),
                 FOLD_WS=lp.fold_in == "workspace", PREFETCH=lp.prefetch, HAS_GRES=has_gres,
                 SINGLE=program.single_launch, EXACT=exact, RED_BLOCK=SINGLE_RED_BLOCK, BLOCK_B=block_b),
            lp.warps_for(block_h + block_b))


def validate_H(H: int) -> None:
    if not (1 <= H <= H_MAX):
        raise ValueError(f"x: hidden size H={H} is outside the supported range [1, {H_MAX}]")
