"""A program's fingerprint: the device code it launches and the host code that fixes that code's
compile-time arguments, plus its launch policy (evidence-format.md: "a changed kernel is a new
program").

The sources hashed are those of the kernels the runner launches for the program (its own kernel and,
for two-launch backward programs, the partials reduce), every `@triton.jit` helper those reach
(followed through the names each one uses), the values of plain constants they read, and the
functions that turn a launch policy into compile-time arguments (`runner.*_meta`,
`LaunchPolicy.tiles_for` and `warps_for`). Until session 6 the fingerprint hashed whole modules
(the kernel module, `common` and `runner`), so adding one kernel gave every program a new
fingerprint and evidence could no longer tell a changed program from an unchanged one.

The same program gets the same fingerprint compiled or under TRITON_INTERPRET (the hashed text is
the Python source either way), on any Triton version.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import textwrap

_SIMPLE = (int, float, str, bool)


def _python_fn(obj):
    """The Python function behind a `@triton.jit` object (compiled JITFunction or the interpreter's
    InterpretedFunction), else None."""
    fn = getattr(obj, "fn", None)
    return fn if inspect.isfunction(fn) and type(obj).__module__.startswith("triton") else None


def _names_used(fn) -> list[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    return sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})


def device_closure(kernels) -> list[tuple[str, str]]:
    """(qualified name, source or value) of the given jit kernels, every jit helper they reach and
    every plain constant (int, float, str, bool) they read from their module, sorted by name."""
    seen: dict[str, str] = {}
    todo = list(kernels)
    while todo:
        obj = todo.pop()
        fn = _python_fn(obj)
        if fn is None:
            continue
        qual = f"{fn.__module__}.{fn.__qualname__}"
        if qual in seen:
            continue
        seen[qual] = inspect.getsource(fn)
        glb = fn.__globals__
        for name in _names_used(fn):
            if name not in glb:
                continue
            val = glb[name]
            if _python_fn(val) is not None:
                todo.append(val)
            elif isinstance(val, _SIMPLE):
                seen[f"{fn.__module__}.{name}"] = repr(val)
    return sorted(seen.items())


def launched_kernels(program) -> list:
    """The jit kernels the runner launches for `program`: the ones `compile_check.kernels_of` builds
    (which kernels does not depend on H or the residual)."""
    if program.launch.grid == "reference":
        return []
    from cake_kernels import compile_check

    return [fn for fn, _, _, _ in compile_check.kernels_of(program, 4096, False)]


@functools.lru_cache(maxsize=None)
def _host_sources() -> str:
    from cake_kernels import registry, runner

    fns = (runner.forward_meta, runner.backward_meta, runner.reduce_meta,
           registry.LaunchPolicy.tiles_for, registry.LaunchPolicy.warps_for)
    consts = {k: getattr(runner, k) for k in sorted(vars(runner)) if k.isupper() and isinstance(getattr(runner, k), _SIMPLE)}
    return "\n".join(inspect.getsource(f) for f in fns) + repr(sorted(consts.items()))


def program_fingerprint(program, launch_json: str) -> str:
    """sha256 (first 32 hex digits) over the launch policy, mode, single-launch flag, the device
    closure of the launched kernels and the host code that sets their compile-time arguments; for
    reference programs the reference module's source instead of kernels."""
    h = hashlib.sha256()
    h.update(launch_json.encode())
    h.update(f"|{program.op}|{program.mode}|{program.single_launch}|".encode())
    kernels = launched_kernels(program)
    if kernels:
        for qual, src in device_closure(kernels):
            h.update(f"\n#{qual}\n{src}".encode())
        h.update(_host_sources().encode())
        if program.launch.reduce == "split":  # `.sr` backwards only, likewise
            from cake_kernels import runner

            h.update(inspect.getsource(runner.split_reduce_meta).encode())
            h.update(inspect.getsource(runner._workspace_rows).encode())
        if program.launch.reduce == "one_pass":  # `.op` backwards only, likewise
            from cake_kernels import runner

            h.update(inspect.getsource(runner.one_pass_reduce_meta).encode())
        if program.launch.reduce == "grid_sync":  # `.gs` backwards only, likewise
            from cake_kernels import runner

            h.update(inspect.getsource(runner.grid_sync_meta).encode())
            h.update(inspect.getsource(runner.grid_sync_constexprs).encode())
            h.update(inspect.getsource(runner._launch_grid_sync).encode())
            if runner.grid_sync_v2(program):  # `.ur` / `.rw` only: the shipped `.gs` keep theirs
                h.update(inspect.getsource(runner.grid_sync_v2_constexprs).encode())
                h.update(inspect.getsource(runner._launch_grid_sync_v2).encode())
            if runner.grid_sync_fp64(program):  # `f64` only, likewise
                h.update(inspect.getsource(runner._launch_grid_sync_fp64).encode())
            if runner.grid_sync_flat(program):  # `.uf` only, likewise
                h.update(inspect.getsource(runner.grid_sync_v2_constexprs).encode())
                h.update(inspect.getsource(runner.grid_sync_flat_constexprs).encode())
                h.update(inspect.getsource(runner._launch_grid_sync_flat).encode())
        if program.launch.loads == "tma_chunks":  # `.tmc` backwards only, likewise
            from cake_kernels import runner

            h.update(inspect.getsource(runner.tma_chunks_meta).encode())
        if program.launch.max_registers:  # `.mr` backwards only, likewise
            from cake_kernels import runner

            h.update(inspect.getsource(runner.register_cap).encode())
        if program.launch.l2_prefetch != "none":  # `.l2p` / `.l2b` backwards only, likewise
            from cake_kernels import runner

            h.update(inspect.getsource(runner.l2_prefetch_meta).encode())
        if program.launch.chunk:  # looped forwards only: the others' fingerprints stay as measured
            from cake_kernels import runner

            h.update(inspect.getsource(runner.looped_forward_meta).encode())
            if program.launch.static_h:
                h.update(inspect.getsource(runner.static_looped_forward_meta).encode())
        elif program.launch.static_h and program.launch.grid == "column_tasks":  # `.hs` column tasks only
            from cake_kernels import runner

            h.update(inspect.getsource(runner.static_column_task_meta).encode())
        elif program.launch.static_h:  # one-row `.hs` forwards only, likewise
            from cake_kernels import runner

            h.update(inspect.getsource(runner.static_row_forward_meta).encode())
    else:
        from cake_kernels import reference

        h.update(inspect.getsource(reference).encode())
    return "sha256:" + h.hexdigest()[:32]
