"""Interpreter twins: programs that launch the very same thing on a test's shapes.

Many registered programs differ from another only in what the Triton interpreter ignores (warps,
pipeline stages) or in an option that changes nothing at the shapes a test uses (an unpadded split
tile at a power-of-two H, flat head rows on plain rows, a residual prefetch without a residual).
Under TRITON_INTERPRET=1 such programs run the same Python over the same numbers, so a CPU test
that runs both tests one thing twice at several seconds a program. `one_per_class` keeps the first
program of each class for the expensive per-program interpreter tests; on a GPU, where warps and
stages change the compiled code, every program stays.

Two programs are twins on a set of cases when each case records the same launches: kernel, grid,
scalar arguments, tensors' shapes, strides and dtypes, and compile-time arguments. Launches are
recorded, not run (every jit kernel of the program modules is swapped for a recorder, as in
test_launched_kernels), so classing the whole registry costs well under a second. The program's op,
family, determinism and reduce are part of the key too, in case the runner's host code ever reads
them beyond what it launches.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterable, NamedTuple, Union

import torch

from cake_kernels import registry, runner
from cake_kernels.programs import backward as bk
from cake_kernels.programs import forward as fw
from cake_kernels.reference import reference_forward
from tests.cake_kernels.helpers import inputs


class Case(NamedTuple):
    """One call a test makes: T, H, the weight dtype, and whether a residual goes in (the values
    do not matter: what a program launches depends on shapes, strides and dtypes only)."""

    T: int
    H: int
    w_dtype: str = "bf16"
    residual: bool = False


def _describe(value):
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), tuple(value.stride()), str(value.dtype))
    if isinstance(value, (bool, int, float, str, type(None))):
        return value
    # TMA descriptors and the like: their type and whatever shape they carry.
    return (type(value).__name__, repr(getattr(value, "block_shape", None)), repr(getattr(value, "shape", None)))


class _Recorder:
    def __init__(self, name: str, log: list):
        self.name, self.log = name, log
        self.__name__ = name

    def __getitem__(self, grid):
        def launch(*args, num_warps=None, num_stages=None, **meta):
            g = grid(meta) if callable(grid) else grid
            self.log.append((self.name, tuple(g), tuple(_describe(a) for a in args),
                             tuple(sorted((k, _describe(v)) for k, v in meta.items()))))
        return launch


@contextlib.contextmanager
def _recording(log: list):
    saved = []
    try:
        for module in (bk, fw):
            for name, value in list(vars(module).items()):
                if name.endswith("_kernel") and hasattr(value, "arg_names"):
                    saved.append((module, name, value))
                    setattr(module, name, _Recorder(name, log))
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def _trace(program, cases: Iterable[Case], log: list) -> tuple:
    out = []
    for case in cases:
        inp = inputs("gaussian", case.T, case.H, case.w_dtype, form="residual" if case.residual else "plain", seed=0)
        log.clear()
        try:  # as the tests do, the runner is called whatever the program's `supports` says
            if program.op == "fwd":
                runner.forward(program, inp.x, inp.w, 1e-6, inp.residual)
            else:
                _, rstd, h = reference_forward(inp.x, inp.w, 1e-6, inp.residual)
                xn = h if inp.residual is not None else inp.x
                runner.backward(program, inp.g, xn, inp.w, rstd, inp.g_h_new)
        except Exception as exc:  # a refusal is part of what the program does on this case
            log.append(("refused", type(exc).__name__, str(exc)))
        out.append(tuple(log))
    return tuple(out)


Cases = Union[Iterable[Case], Callable[[registry.Program], Iterable[Case]]]


def classes(names: Iterable[str], cases: Cases) -> list[list[str]]:
    """`names` grouped into interpreter twins on `cases` (or on `cases(program)` where the test's
    shapes depend on the program), each group in the order given."""
    fixed = None if callable(cases) else tuple(cases)
    groups: dict[tuple, list[str]] = {}
    log: list = []
    with _recording(log):
        for name in names:
            p = registry.get(name)
            key = (p.op, p.family, p.deterministic, p.launch.reduce,
                   _trace(p, fixed if fixed is not None else tuple(cases(p)), log))
            groups.setdefault(key, []).append(name)
    return list(groups.values())


def one_per_class(names: Iterable[str], cases: Cases) -> list[str]:
    """The first program of each class of interpreter twins on `cases` (all of `names` on a GPU)."""
    names = list(names)
    if not _interpreting():
        return names
    return [group[0] for group in classes(names, cases)]


def _interpreting() -> bool:
    from cake_kernels.programs.common import interpreting

    return interpreting()
