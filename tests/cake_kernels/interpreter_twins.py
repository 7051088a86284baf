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
recorded, not run (`helpers.recorded_launches`, which test_launched_kernels uses too), so classing the whole registry takes a second or two. The program's op,
family, determinism and reduce are part of the key too, in case the runner's host code ever reads
them beyond what it launches. A test that also runs a partner program (the base it is compared
with) lists the partner's calls as cases too, so two tests are twins only when every run is.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterable, NamedTuple, Union

import pytest
import torch

from cake_kernels import registry, runner
from cake_kernels.programs.common import interpreting
from cake_kernels.reference import reference_forward
from tests.cake_kernels.helpers import Launch, inputs, recorded_launches


class Case(NamedTuple):
    """One call a test makes: T, H, the weight dtype and the form of the inputs (the values do not
    matter: what a program launches depends on shapes, strides and dtypes only), and `program`, the
    name of another program the test runs on them (its base, its twin), or None for the program
    under test."""

    T: int
    H: int
    w_dtype: str = "bf16"
    form: str = "plain"
    program: str | None = None


def _describe(value):
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), tuple(value.stride()), str(value.dtype))
    if isinstance(value, (bool, int, float, str, type(None))):
        return value
    # TMA descriptors and the like: their type and whatever shape they carry.
    return (type(value).__name__, repr(getattr(value, "block_shape", None)), repr(getattr(value, "shape", None)))


def _trace(program, cases: Iterable[Case], log: list) -> tuple:
    out = []
    for case in cases:
        runs = registry.get(case.program) if case.program else program
        inp = inputs("gaussian", case.T, case.H, case.w_dtype, form=case.form, seed=0)
        log.clear()
        try:  # as the tests do, the runner is called whatever the program's `supports` says
            if runs.op == "fwd":
                runner.forward(runs, inp.x, inp.w, 1e-6, inp.residual)
            else:
                _, rstd, h = reference_forward(inp.x, inp.w, 1e-6, inp.residual)
                xn = h if inp.residual is not None else inp.x
                runner.backward(runs, inp.g, xn, inp.w, rstd, inp.g_h_new)
        except Exception as exc:  # a refusal is part of what the program does on this case
            log.append(Launch("refused", (), (type(exc).__name__, str(exc)), {}, None, None))
        launches = tuple((launch.kernel, launch.grid, tuple(_describe(a) for a in launch.args),  # warps, stages: not read
                          tuple(sorted((k, _describe(v)) for k, v in launch.meta.items()))) for launch in log)
        out.append((case, runs.op, runs.family, runs.deterministic, runs.launch.reduce, launches))
    return tuple(out)


Cases = Union[Iterable[Case], Callable[[registry.Program], Iterable[Case]]]


def classes(names: Iterable[str], cases: Cases, sms: int | None = None) -> list[list[str]]:
    """`names` grouped into interpreter twins on `cases` (or on `cases(program)` where the test's
    shapes or partner programs depend on the program), each group in the order given. `sms`: the
    SM count the test patches into the runner (it sizes persistent grids), if any."""
    fixed = None if callable(cases) else tuple(cases)
    groups: dict[tuple, list[str]] = {}
    log: list = []
    with recorded_launches(log), _sm_count(sms):
        for name in names:
            p = registry.get(name)
            groups.setdefault(_trace(p, fixed if fixed is not None else tuple(cases(p)), log), []).append(name)
    return list(groups.values())


@contextlib.contextmanager
def _sm_count(sms: int | None):
    saved = runner.sm_count
    if sms is not None:
        runner.sm_count = lambda device: sms
    try:
        yield
    finally:
        runner.sm_count = saved


def one_per_class(names: Iterable[str], cases: Cases, sms: int | None = None) -> list[str]:
    """The first program of each class of interpreter twins on `cases` (all of `names` on a GPU)."""
    names = list(names)
    if not interpreting():
        return names
    return [group[0] for group in classes(names, cases, sms)]


SKIP_REASON = "an interpreter twin: under TRITON_INTERPRET=1 it launches what an earlier program of this test ran"


class Thinned:
    """A per-program test's programs, all of them in `names` (so each one's cheap structural checks
    run), and `run_kernels(name)`, which skips the rest of the test for an interpreter twin of a
    program listed before it."""

    def __init__(self, names: Iterable[str], cases: Cases, sms: int | None = None):
        self.names = list(names)
        self.runs = set(one_per_class(self.names, cases, sms))

    def run_kernels(self, name: str) -> None:
        if name not in self.runs:
            pytest.skip(SKIP_REASON)

