"""Compile every Triton program for a GPU target without a GPU, and read its registers and spills.

    python -m cake_kernels.compile_check [--arch sm_90a] [--H 5120,8192] [--programs bwd.twosum]
                                         [--residual] [--json]
    python -m cake_kernels.compile_check --routed sm_90a [--json]    # what the shipped table runs

Triton's NVIDIA backend (LLVM, and the ptxas and cuobjdump it ships) compiles a kernel to a cubin
on any machine: this catches a kernel that no longer compiles for the GPU (the CPU interpreter runs
Python and never compiles) and shows what bounds it (registers per thread, local-memory spills,
shared memory) before any GPU time is spent. The compile-time arguments are the runner's own
(`runner.forward_meta`, `runner.backward_meta`), so what compiles here is what the op launches.
The Triton version here may differ from the GPU node's; the registers are this version's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass

from cake_kernels import registry, runner

ARCHES = {"sm_80": 80, "sm_90a": 90, "sm_100a": 100}
# Shared memory one block may opt into (bytes): the launch fails above it ("out of resource: shared
# memory"), which is how round 6's self-test found a `.tma` residual build that needs 245,940 bytes.
SHARED_LIMIT = {"sm_80": 166912, "sm_90a": registry.HOPPER_SHARED_LIMIT, "sm_100a": 232448}
_PTR_W = {"fp32": "*fp32", "bf16": "*bf16"}
# Register file per SM (Hopper, Ampere, Blackwell), and the allocation unit: a warp's registers are
# allocated in units of 256 (8 per thread).
REGISTERS_PER_SM = 65536
MAX_THREADS_PER_SM = 2048


def resident_per_sm(registers: int, num_warps: int, shared_bytes: int = 0,
                    shared_limit: int = registry.HOPPER_SHARED_LIMIT) -> int:
    """Blocks of `num_warps` warps at `registers` per thread that fit on one SM at once (registers,
    threads, the 32-block limit and shared memory). A persistent grid asking for more programs per SM
    than this runs a second partial wave: round 7 on the H200, `p2x.r2.w8` at H 2048 built with a BF16
    weight took 149 registers against 128 with an FP32 one (Triton 3.6), so one program per SM ran
    where two were planned, 1.27x slower."""
    per_warp = -(-max(registers, 1) * 32 // 256) * 256
    fit = min(REGISTERS_PER_SM // (per_warp * num_warps), MAX_THREADS_PER_SM // (32 * num_warps), 32)
    if shared_bytes:
        fit = min(fit, shared_limit // shared_bytes)
    return fit


@dataclass
class Compiled:
    program: str
    kernel: str
    H: int
    residual: bool
    num_warps: int
    registers: int | None
    local_bytes: int | None  # per thread: spills (and stack arrays) live there
    shared_bytes: int | None  # what the launch asks for: static plus the pipeline's dynamic buffers
    num_stages: int | None = None
    error: str | None = None
    w_dtype: str = "fp32"
    programs_per_sm: int | None = None  # what a persistent program's grid asks for
    resident_per_sm: int | None = None  # what the registers let run at once (REGISTERS_PER_SM)


def _fwd_signature(w: str) -> dict:
    return {"X": "*bf16", "RES": "*bf16", "W": _PTR_W[w], "Y": "*bf16", "RSTD": "*fp32", "HNEW": "*bf16",
            "n_rows": "i32", "NH": "i32", "H": "i32", "H_f": "fp32", "eps": "fp32",
            "sxt": "i64", "sxh": "i64", "srt": "i64", "srh": "i64"}


def _bwd_common(w: str) -> dict:
    return {"G": "*bf16", "X": "*bf16", "W": _PTR_W[w], "RSTD": "*fp32", "GRES": "*bf16", "DX": "*bf16", "DW": "*fp32"}


_BWD_TAIL = {"n_rows": "i32", "NH": "i32", "H": "i32", "H_f": "fp32",
             "sgt": "i64", "sgh": "i64", "sxt": "i64", "sxh": "i64", "srt": "i64", "srh": "i64"}


def kernels_of(program: registry.Program, H: int, residual: bool, w: str = "fp32", sms: int = 132):
    """(kernel function, signature, constexprs, num_warps) of each kernel the program launches on a
    GPU of `sms` SMs (the H200's 132; only the `.gs` programs' reduce tile depends on it). A `.gs`
    program is listed as the GPU launches it, PHASE 0; the CPU interpreter runs that launch as two,
    PHASE 1 and 2 (runner._launch_grid_sync)."""
    from cake_kernels.programs import backward as bk

    if program.op == "fwd":
        meta, warps = runner.forward_launch_meta(program, H, residual, exact=True)
        return [(runner.forward_kernel(program), _fwd_signature(w), meta, warps)]
    meta, warps = runner.backward_launch_meta(program, H, residual, exact=True)
    if program.launch.weight_cast == "fp32":
        w = "fp32"  # the runner casts the weight first: the FP32-weight build is what runs
    if program.launch.grid == "column_tasks":
        sig = {**_bwd_common(w), **_BWD_TAIL, "n_col_tasks": "i32"}
        return [(runner.column_task_kernel(program), sig, meta, warps)]
    ws = "*fp64" if program.mode == 3 else "*fp32"
    if program.launch.reduce == "grid_sync":
        sig = {**_bwd_common(w), "WS": ws, "COUNTER": "*i32", **_BWD_TAIL, "n_partials": "i32"}
        if runner.grid_sync_fp64(program):
            gs = {**meta, **runner.grid_sync_v2_constexprs(program, H, warps, sms), "PHASE": 0}
            return [(bk.rmsnorm_bwd_grid_sync_fp64_kernel, sig, gs, warps)]
        if runner.grid_sync_flat(program):
            gs = {**meta, **runner.grid_sync_flat_constexprs(program, H, warps, sms), "PHASE": 0}
            return [(bk.rmsnorm_bwd_grid_sync_flat_kernel, sig, gs, warps)]
        if runner.grid_sync_v2(program):
            gs = {**meta, **runner.grid_sync_v2_constexprs(program, H, warps, sms), "PHASE": 0}
            return [(bk.rmsnorm_bwd_grid_sync_v2_kernel, sig, gs, warps)]
        gs = {**meta, **runner.grid_sync_constexprs(program, H, warps, sms), "PHASE": 0}
        return [(bk.rmsnorm_bwd_grid_sync_kernel, sig, gs, warps)]
    if program.launch.loads != "pointer":
        desc = f"tensordesc<bf16[{meta['ROWS']}, {meta['BLOCK_H']}]>"
        if program.launch.loads == "tma_chunks":
            c = registry.TMA_CHUNK
            desc = f"tensordesc<bf16[{meta['ROWS']}, {max(meta['BLOCK_H'] // c, 1)}, {c}]>"
        sig = {"GD": desc, "XD": desc, "W": _PTR_W[w], "RSTD": "*fp32", "GRES": "*bf16", "DX": "*bf16", "WS": ws,
               "n_rows": "i32", "NH": "i32", "H": "i32", "H_f": "fp32", "srt": "i64", "srh": "i64"}
        out = [(runner.tma_kernel(program), sig, meta, warps)]
    else:
        sig = {**_bwd_common(w), "WS": ws, "COUNTER": "*i32", **_BWD_TAIL}
        out = [(runner.backward_rows_kernel(program), sig, meta, warps)]
    red_sig = {"WS": ws, "DW": "*fp32", "P": "i32", "H": "i32"}
    if program.launch.reduce == "split":
        _, _, _, meta1, _, meta2, rwarps = runner.split_reduce_meta(1, H)  # P sizes the grids only, not the builds
        out.append((bk.reduce_partials_split_kernel, {"WS": ws, "FIRST": "*fp64", "P": "i32", "H": "i32",
                                                       "ROWS_PER_SPLIT": "i32"}, meta1, rwarps))
        out.append((bk.reduce_partials_wide_kernel, red_sig, meta2, rwarps))
        return out
    if program.launch.reduce == "one_pass":
        # the tile follows P, as many programs as the GPU runs: programs_per_sm x sms
        rmeta, rwarps = runner.one_pass_reduce_meta(program.launch.programs_per_sm * sms)
        out.append((bk.reduce_partials_wide_kernel, red_sig, rmeta, rwarps))
        return out
    spec = runner.reduce_meta(program, H)
    if spec is not None:
        kname, _, rmeta, rwarps = spec
        out.append((getattr(bk, kname), red_sig, rmeta, rwarps))
    return out


def _triton_version() -> str:
    import triton

    return triton.__version__


def _tool(name: str) -> str:
    import triton

    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)


def cuobjdump(cubin: bytes, *args: str) -> str:
    """The output of Triton's bundled cuobjdump with `args` on a cubin."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([_tool("cuobjdump"), *args, f.name], capture_output=True, text=True, timeout=60).stdout


def _resources(cubin: bytes) -> dict:
    """Registers, shared memory and local memory per thread of a cubin's kernel. Local memory counts
    the stack frame too: ptxas places spilled values there once a build reaches its register cap
    (session 18: a 16-warp build capped at 128 registers reported REG:64 LOCAL:0 STACK:800), and it
    is the same DRAM-backed local memory as LOCAL."""
    m = re.search(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)", cuobjdump(cubin, "--dump-resource-usage"))
    if not m:
        return {}
    return {"registers": int(m[1]), "shared_bytes": int(m[3]), "local_bytes": int(m[4]) + int(m[2])}


def _require_compiler(arch: str) -> None:
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        raise RuntimeError("compile_check: TRITON_INTERPRET is set, so Triton does not compile; run without it")
    if arch not in ARCHES:
        raise ValueError(f"arch: {arch!r} is not one of {tuple(ARCHES)}")


def compile_kernel(fn, signature: dict, meta: dict, num_warps: int, arch: str = "sm_90a", num_stages: int | None = None,
                   divisible: frozenset = frozenset(), max_registers: int = 0):
    """Triton's compiled kernel of `fn` for `arch` (no GPU needed). Arguments `fn` does not take are
    dropped, so the same arguments compile an older version of a kernel too (scripts/sass_identity.py).
    `num_stages` None is Triton's default (what the runner's reduce launches use). `divisible` names
    the arguments to compile as multiples of 16 (pointers: 16-byte aligned), as Triton's launcher
    specializes them at run time (`runtime_specialization`). `max_registers` (0: none) is the `.mr`
    programs' cap (Triton's `maxnreg`, runner.register_cap)."""
    _require_compiler(arch)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    names = list(fn.arg_names)
    meta = {k: v for k, v in meta.items() if k in names}
    sig = {**{k: v for k, v in signature.items() if k in names}, **{k: "constexpr" for k in meta}}
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(names) if n in divisible and sig.get(n) != "constexpr"}
    options = {"num_warps": num_warps} if num_stages is None else {"num_warps": num_warps, "num_stages": num_stages}
    if max_registers:
        options["maxnreg"] = max_registers
    return triton.compile(ASTSource(fn=fn, signature=sig, constexprs=meta, attrs=attrs),
                          target=GPUTarget("cuda", ARCHES[arch], 32), options=options)


def runtime_specialization(signature: dict, H: int, heads: bool = False) -> tuple[frozenset, dict]:
    """(arguments divisible by 16, arguments that become the constant 1) of a launch on contiguous
    [T, H] rows with T a multiple of 16, as Triton's launcher specializes them: every pointer is
    16-byte aligned, an integer that is a multiple of 16 (T, H, the row strides, the zero strides of
    absent tensors) is marked so, and an integer equal to 1 (the heads per row, NH) is compiled in as
    a constant. Registers and SASS then match the GPU's build (round 7: 106 registers for
    `p8x.w2.fw.pf.wr` at H 512 under Triton 3.6, as ncu read on the H200; 96 without it).
    `heads`: a per-head view indexed by head instead ([T, NH, H] with NH > 1 at run time and head
    strides that are not multiples of 16), the build the head forms run where a program does not
    view them as flat rows."""
    ints = {"n_rows": 16, "NH": 1, "H": H, "sgt": H, "sxt": H, "sgh": 0, "sxh": 0, "srt": 0, "srh": 0}
    if heads:
        ints |= {"NH": 3, "sgh": 17, "sxh": 17, "srh": 17}
    divisible = {n for n, t in signature.items() if t.startswith("*") or (n in ints and ints[n] % 16 == 0 and ints[n] != 1)}
    ones = {n: 1 for n in signature if ints.get(n) == 1}
    return frozenset(divisible), ones


def compile_program(name: str, H: int, residual: bool = False, arch: str = "sm_90a", w: str = "fp32",
                    heads: bool = False) -> list[Compiled]:
    """Compile one program's kernels for `arch` at rows of H columns with a `w` weight ("fp32" or
    "bf16"), specialized as a launch on contiguous rows is (`runtime_specialization`), or with
    `heads` as a per-head view indexed by head; one entry per kernel. The program's own kernel also
    reports how many of its programs fit on an SM at once."""
    _require_compiler(arch)
    if w not in _PTR_W:
        raise ValueError(f"w: {w!r} is not one of {tuple(_PTR_W)}")
    prog = registry.get(name)
    out = []
    # The first kernel is the program's own, launched with its num_stages (which sizes a pipelined
    # loop's shared-memory buffers); a second is the fixed-order reduce, launched with the default.
    for i, (fn, sig, meta, warps) in enumerate(kernels_of(prog, H, residual, w)):
        kname = fn.fn.__name__ if hasattr(fn, "fn") else fn.__name__
        stages = prog.launch.stages if i == 0 else None
        divisible, ones = runtime_specialization(sig, H, heads)  # compile_kernel drops what fn does not take
        ppsm = prog.launch.programs_per_sm if i == 0 and prog.launch.grid == "persistent" else None
        try:
            cap = prog.launch.max_registers if i == 0 else 0  # the rows kernel's cap, not the reduce's
            compiled = compile_kernel(fn, sig, {**meta, **ones}, warps, arch, stages, divisible, cap)
            res = _resources(compiled.asm["cubin"])
            shared = max(int(compiled.metadata.shared), res.get("shared_bytes") or 0)
            err = None
            if shared > SHARED_LIMIT[arch]:
                err = f"needs {shared} bytes of shared memory; {arch} allows {SHARED_LIMIT[arch]} per block"
            resident = (resident_per_sm(res["registers"], warps, shared, SHARED_LIMIT[arch])
                        if i == 0 and res.get("registers") else None)
            out.append(Compiled(name, kname, H, residual, warps, res.get("registers"), res.get("local_bytes"),
                                shared, stages, err, w, ppsm, resident))
        except Exception as exc:  # a kernel that does not compile: reported, the others go on
            out.append(Compiled(name, kname, H, residual, warps, None, None, None, stages,
                                f"{type(exc).__name__}: {exc}"[:2000], w, ppsm))
    return out


def routed_builds(table) -> list[tuple[str, int, str, bool, list[str]]]:
    """(program, H, weight dtype, residual, ["form T lo-hi", ...]) of every Triton program a route
    table runs, one per build: a program routed at several keys of one build (plain rows and a head
    form, say) is compiled once and lists them all. Head forms build as plain rows of 256 columns
    (the `.fl` programs' build; the indexed ones divide by NH at run time, which this leaves out)."""
    from cake_kernels.routes import dispatch

    builds: dict[tuple[str, int, str, bool], list[str]] = {}
    for op, H, w, form, mode in table.keys():
        for win in table.windows(op, H, w, form, mode):
            # what the runtime runs in the window: its program, or the fallback for an untrusted one
            name = dispatch.route(table, table.arch, op, H, w, form, mode, win.lo, warn=False)
            if registry.get(name).launch.grid == "reference":
                continue
            span = f"{form} {mode} T {win.lo}-{'' if win.hi is None else win.hi}"
            builds.setdefault((name, H, w, form == "residual"), []).append(span)
    return [(*k, v) for k, v in sorted(builds.items())]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cake_kernels.compile_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="sm_90a", help=f"target: {', '.join(ARCHES)}")
    ap.add_argument("--H", default="6144", help="comma list of hidden sizes")
    ap.add_argument("--programs", default="", help="comma list of name prefixes (default: every Triton program)")
    ap.add_argument("--residual", action="store_true", help="compile the residual variants (HAS_RES / HAS_GRES)")
    ap.add_argument("--heads", action="store_true",
                    help="compile the per-head builds (NH > 1 at run time) of the programs offered for a head form")
    ap.add_argument("--w-dtypes", default="fp32", help="comma list of weight dtypes to build with: fp32, bf16")
    ap.add_argument("--routed", default=None, metavar="TABLE",
                    help="instead of --H/--programs/--residual/--w-dtypes: every program a route table runs, at the "
                         "keys it runs (an arch of a shipped table, e.g. sm_90a, or a table file)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.routed is not None:
        return _main_routed(args, ap)
    if args.arch not in ARCHES:
        ap.error(f"--arch: {args.arch!r} is not one of {', '.join(ARCHES)}")
    try:
        Hs = [int(v) for v in args.H.split(",") if v.strip()]
    except ValueError:
        ap.error(f"--H: {args.H!r} is not a comma list of integers")
    ws = [w for w in args.w_dtypes.split(",") if w]
    if not ws or any(w not in _PTR_W for w in ws):
        ap.error(f"--w-dtypes: {args.w_dtypes!r} is not a comma list of {', '.join(_PTR_W)}")
    if args.heads and args.residual:
        ap.error("--heads: the head forms have no residual; give --heads or --residual")
    pfx = [p for p in args.programs.split(",") if p]
    names = [p.name for p in registry.all_programs() if p.launch.grid != "reference"
             and (not pfx or any(p.name.startswith(x) for x in pfx))]
    if not names:
        ap.error(f"--programs: {args.programs!r} matches no Triton program")
    forms = ("heads_contiguous", "heads_strided") if args.heads else ("residual" if args.residual else "plain",)
    rows = []
    for name in names:
        prog = registry.get(name)
        for H in Hs:
            for w in ws:
                if any(prog.supports(H, f, w) for f in forms):
                    rows += compile_program(name, H, args.residual, args.arch, w, args.heads)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=f"{args.arch}: registers per thread and local memory (Triton {_triton_version()} here; spills show as "
                        "local bytes; per SM: programs a persistent grid asks for / that fit at once, ! = a second wave)")
        for c in ("program", "kernel", "H", "w", "warps", "stages", "regs", "local B", "shared B", "per SM", "error"):
            t.add_column(c)
        for r in rows:
            per_sm = "-" if r.programs_per_sm is None else (
                f"{r.programs_per_sm}/{r.resident_per_sm}" + ("!" if r.resident_per_sm is not None and r.resident_per_sm < r.programs_per_sm else ""))
            t.add_row(r.program, r.kernel, str(r.H), r.w_dtype, str(r.num_warps), str(r.num_stages or "-"), str(r.registers),
                      str(r.local_bytes), str(r.shared_bytes), per_sm, (r.error or "")[:80])
        Console().print(t)
    return 1 if any(r.error for r in rows) else 0


def _main_routed(args, ap) -> int:
    """`--routed`: compile what a route table runs and flag a persistent grid that asks an SM for
    more programs than fit (it runs a second, partial wave)."""
    from cake_kernels.routes.table import RouteTableError, load_table, routes_dir

    if args.arch not in ARCHES:
        ap.error(f"--arch: {args.arch!r} is not one of {', '.join(ARCHES)}")
    path = args.routed if os.path.sep in args.routed or args.routed.endswith(".json") else str(routes_dir() / f"{args.routed}.json")
    try:
        table = load_table(path)
    except (OSError, RouteTableError) as exc:
        ap.error(f"--routed: {path}: {exc}")
    out = []
    for name, H, w, residual, spans in routed_builds(table):
        for r in compile_program(name, H, residual, args.arch, w):
            out.append({**asdict(r), "routed_at": spans})
    waves = [r for r in out if r["resident_per_sm"] is not None and r["programs_per_sm"]
             and r["resident_per_sm"] < r["programs_per_sm"]]
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=f"{path}: what the table runs, compiled for {args.arch} (Triton {_triton_version()} here); "
                        f"{len(waves)} build(s) ask an SM for more programs than fit (!)")
        for c in ("program", "kernel", "H", "w", "res", "regs", "local B", "per SM", "routed at", "error"):
            t.add_column(c)
        for r in out:
            per_sm = "-" if r["programs_per_sm"] is None else f"{r['programs_per_sm']}/{r['resident_per_sm']}" + (
                "!" if r in waves else "")
            t.add_row(r["program"], r["kernel"], str(r["H"]), r["w_dtype"], "yes" if r["residual"] else "-", str(r["registers"]),
                      str(r["local_bytes"]), per_sm, "; ".join(r["routed_at"]), (r["error"] or "")[:60])
        Console().print(t)
    return 1 if any(r["error"] for r in out) else 0


if __name__ == "__main__":
    sys.exit(main())
