"""Two costs of Triton's CPU interpreter that the kernel tests need not pay, removed without changing
a single result bit.

1. `tl.reduce` with a combine function, folded a whole slice at a time.

Triton's CPU interpreter (`triton.runtime.interpreter.ReduceOps.generic_reduce`) reduces with a
user combine function one output element at a time: for every element of the input it wraps
scalars in interpreter tensors and calls the combine function, so the compensated programs' TwoSum
tile reduce (`_twosum_combine` over a [ROWS, BLOCK_H] tile) calls it hundreds of thousands of
times per test, most of a test's time. The fold it performs is the same for every output element:
acc = x[0]; acc = combine(acc, x[k]) for k = 1, 2, ... along the axis. `install` replaces it with
that very fold applied to whole slices, so each step is one call on [BLOCK_H]-wide tensors.

A combine function is elementwise (Triton compiles it for scalars), so each element goes through
the same IEEE operations in the same order as before, and results are bit for bit the element
loop's (tests/test_interpreter_speedups.py checks it against the original on several combine
functions, axes and dtypes). Anything the vector fold cannot take falls back to the original loop.

2. Device-function calls inside a launch re-patch `triton.language`.

Each call of a `@triton.jit` helper from an interpreted kernel runs the interpreter's `_patch_lang`,
which walks every member of `tl`, `tl.tensor` and `tl.math` (inspect.getmembers) to wrap builtins
that the launch itself already wrapped, and never restores what it sets: about 1.4 ms a call, 40 %
of a row-loop program's interpreted time. Inside a launch whose patch covers the helper's language
modules, `install` makes that call a no-op; anywhere else (a helper that sees another language
module, a call outside a launch) the interpreter's own patch runs as before.

Test-only: the package never patches Triton. `install` changes nothing where this Triton's
interpreter lacks the parts it replaces.
"""

from __future__ import annotations

import numpy as np


def _vector_fold(self, input):
    from triton import language as tl
    from triton.runtime.interpreter import _get_np_dtype

    original_axis = self.axis
    input, axis = self.unravel(input, self.axis)
    datas = [arg.handle.data for arg in input]
    shape = datas[0].shape
    out_shape = shape[:axis] + shape[axis + 1:]
    np_dtypes = [_get_np_dtype(arg.dtype) for arg in input]
    acc = [np.take(d, 0, axis=axis).astype(t, copy=True) for d, t in zip(datas, np_dtypes)]
    for k in range(1, shape[axis]):
        acc_t = tuple(self.to_tensor(a, arg.dtype) for a, arg in zip(acc, input))
        in_t = tuple(self.to_tensor(np.take(d, k, axis=axis), arg.dtype) for d, arg in zip(datas, input))
        ret = self.combine_fn.fn(*acc_t, *in_t)
        ret = ret if isinstance(ret, tuple) else (ret,)
        if len(ret) != len(acc):
            raise ValueError("combine function returned a different number of values")
        acc = [_like(r.handle.data if isinstance(r, tl.core.tensor) else r, a, t) for r, a, t in zip(ret, acc, np_dtypes)]
    out = []
    for a, arg in zip(acc, input):
        data = np.asarray(a).reshape(out_shape)
        if self.keep_dims:
            if original_axis is not None:
                data = np.expand_dims(data, axis)
            else:
                for _ in range(len(shape)):
                    data = np.expand_dims(data, 0)
        elif original_axis is None:
            data = data.item()
        out.append(self.to_tensor(data, arg.dtype))
    return out


def _like(value, acc: np.ndarray, np_dtype) -> np.ndarray:
    """A combine result as the accumulator's shape and dtype (a constant result is broadcast; the
    element loop stored each result into an array of the input's dtype the same way)."""
    v = np.asarray(value)
    if v.size == acc.size:
        v = v.reshape(acc.shape)
    elif v.size == 1:
        v = np.full(acc.shape, v.reshape(()))
    else:
        raise ValueError("combine function changed the shape of its operands")
    return v.astype(np_dtype, copy=True)


def _install_fold(interpreter) -> bool:
    ops = getattr(interpreter, "ReduceOps", None)
    original = getattr(ops, "generic_reduce", None)
    if original is None or getattr(original, "_cake_slice_fold", False):
        return original is not None

    def generic_reduce(self, input):
        try:
            return _vector_fold(self, input)
        except Exception:
            generic_reduce.fallbacks += 1
            return original(self, input)

    generic_reduce.fallbacks = 0
    generic_reduce._cake_slice_fold = True
    generic_reduce._cake_original = original
    ops.generic_reduce = generic_reduce
    return True


def _lang_modules(interpreter, fn) -> frozenset:
    tl = interpreter.tl
    return frozenset(id(v) for v in fn.__globals__.values() if v is tl or v is tl.core)


def _install_launch_patch(interpreter) -> bool:
    executor = getattr(interpreter, "GridExecutor", None)
    original_patch = getattr(interpreter, "_patch_lang", None)
    scope_type = getattr(interpreter, "_LangPatchScope", None)
    if executor is None or original_patch is None or scope_type is None or not hasattr(interpreter, "tl"):
        return False
    if getattr(original_patch, "_cake_once_per_launch", False):
        return True
    # "covered": the language modules the running launch patched (None outside a launch); the
    # launch restores its patch itself, and the wrapped GridExecutor.__call__ below clears this.
    state = {"starting": False, "covered": None}
    langs: dict = {}

    def _patch_lang(fn):
        if state["starting"]:  # the launch's own patch
            state["starting"] = False
            state["covered"] = _lang_modules(interpreter, fn)
            return original_patch(fn)
        covered = state["covered"]
        if covered is not None:
            mine = langs.get(fn)
            if mine is None:
                mine = langs[fn] = _lang_modules(interpreter, fn)
            if mine <= covered:  # a helper inside the launch: its modules are patched already
                _patch_lang.skipped += 1
                return scope_type()
        return original_patch(fn)

    _patch_lang.skipped = 0
    _patch_lang._cake_once_per_launch = True
    _patch_lang._cake_original = original_patch
    original_call = executor.__call__

    def __call__(self, *args, **kwargs):
        state["starting"] = True
        try:
            return original_call(self, *args, **kwargs)
        finally:
            state["starting"] = False
            state["covered"] = None

    __call__._cake_original = original_call
    executor.__call__ = __call__
    interpreter._patch_lang = _patch_lang
    return True


def install() -> bool:
    """Install both (each only where this Triton's interpreter has the part it replaces). Returns
    whether the slice fold is in place; a second call changes nothing."""
    try:
        from triton.runtime import interpreter
    except Exception:
        return False
    _install_launch_patch(interpreter)
    return _install_fold(interpreter)
