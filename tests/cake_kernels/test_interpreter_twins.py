"""The interpreter-twin classes that thin the per-program interpreter tests group only programs that
really compute the same thing there, and keep apart those that do not."""

from __future__ import annotations

import pytest
import torch

from cake_kernels import registry, runner
from cake_kernels.programs import backward as bk
from cake_kernels.reference import reference_forward
from tests.cake_kernels.helpers import inputs
from tests.cake_kernels.interpreter_twins import Case, classes, one_per_class

BASE = "bwd.twosum_pair.p2x.w8.fw.pf"


def _class_of(name, names, cases):
    (group,) = [g for g in classes(names, cases) if name in g]
    return group


@pytest.mark.interpreter
def test_warps_alone_make_twins():
    assert _class_of("bwd.twosum_pair.p2x.w8", ["bwd.twosum_pair.p2x.w8", "bwd.twosum_pair.p2x.w4"],
                     [Case(64, 64)]) == ["bwd.twosum_pair.p2x.w8", "bwd.twosum_pair.p2x.w4"]


def test_a_compile_time_difference_keeps_programs_apart():
    # `.wc` builds the FP32 weight copy: a different constexpr, so a different interpreted program.
    names = [BASE + ".wr", BASE + ".wr.wc"]
    assert registry.get(names[1]).launch.weight_cast == "fp32"
    assert classes(names, [Case(64, 64)]) == [[names[0]], [names[1]]]


@pytest.mark.interpreter
def test_twins_on_some_shapes_only_stay_apart_where_shapes_differ():
    # The unpadded split tile (`.sp`) is its base at a power-of-two H (the runner launches it there,
    # though routes never take it) and two tiles at H 96.
    names = [BASE, BASE + ".sp"]
    assert classes(names, [Case(64, 64)]) == [names]
    assert classes(names, [Case(64, 64), Case(64, 96)]) == [[BASE], [BASE + ".sp"]]


def test_per_program_cases():
    names = ["bwd.twosum_pair.p2x.w8", "bwd.twosum_pair.p2x.w4"]
    # The same programs at different shapes are not twins.
    assert classes(names, lambda p: [Case(64, 64 if p.name.endswith("w8") else 128)]) == [[names[0]], [names[1]]]


def test_recording_puts_the_kernels_back():
    kernel = bk.rmsnorm_bwd_rows_kernel
    classes([BASE], [Case(8, 64)])
    assert bk.rmsnorm_bwd_rows_kernel is kernel and hasattr(kernel, "arg_names")


@pytest.mark.interpreter
@pytest.mark.parametrize("T, H", [(65, 64), (33, 1000)])
def test_twins_return_bitwise_equal_results(T, H):
    # What the classing claims, checked by running: every class of the compensated programs on
    # this shape returns the same dx and dw bits from each of its first two members.
    names = [p.name for p in registry.all_programs() if p.family == "twosum_pair" and p.launch.grid != "reference"
             and p.supports(H, "plain", "fp32")]
    pairs = [g[:2] for g in classes(names, [Case(T, H, "fp32")]) if len(g) > 1]
    assert len(pairs) >= 3
    inp = inputs("gaussian", T, H, "fp32", seed=3)
    _, rstd, _ = reference_forward(inp.x, inp.w, 1e-6)
    for a, b in pairs[:4]:
        dxa, dwa = runner.backward(a, inp.g, inp.x, inp.w, rstd)
        dxb, dwb = runner.backward(b, inp.g, inp.x, inp.w, rstd)
        assert torch.equal(dxa, dxb) and torch.equal(dwa, dwb), (a, b)


def test_every_program_stays_on_a_gpu(monkeypatch):
    names = ["bwd.twosum_pair.p2x.w8", "bwd.twosum_pair.p2x.w4"]
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert one_per_class(names, [Case(64, 64)]) == names
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert one_per_class(names, [Case(64, 64)]) == names[:1]
