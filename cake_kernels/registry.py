"""The one registry of programs: name -> Program (data) + the kernel it launches.

A program is data: name, op, family, determinism, supported keys, launch policy, and a
fingerprint of the kernels it launches plus its launch policy (`cake_kernels.fingerprint`: a
changed kernel or policy is a new program for the evidence store, an unrelated kernel is not).
Adding a program is one entry in `_CATALOG`.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field, replace

FORMS = ("plain", "residual", "heads_strided", "heads_contiguous")
W_DTYPES = ("bf16", "fp32")
H_MAX = 16384
# Shared memory one block may opt into on Hopper (H100/H200), in bytes; a launch above it fails.
HOPPER_SHARED_LIMIT = 232448
# What a `.tma` program's pipelined tiles may take: the limit less 16 KiB for the reductions'
# scratch and the pipeline's barriers.
TMA_SHARED_BUDGET = HOPPER_SHARED_LIMIT - 16384
# `.tmc` shapes (programs per SM, rows, warps, stages, H_max, pointer twin, split-rstd products):
# chosen by compile_check (sm_90a, Triton 3.6, FP32 weight) so that the programs asked for per SM
# are resident: the H 1536 `.tma` shapes (188-202 registers at one program per SM, 128 at two);
# two rows of 16 warps up to H 4096 (123-126); one row of 16 warps (108-114 at H 4096, 128 and 80
# bytes of spill at H 5120-8192) or of 8 (172 at H 4096, 255 and 80 bytes above).
TMC_SHAPES = (
    (1, 4, 8, 4, 2048, "p1x.r4.w8", False), (1, 4, 8, 4, 2048, "p1x.r4.w8", True),
    (2, 2, 8, 4, 2048, "p2x.r2.w8", False), (2, 1, 8, 3, 2048, "p2x.w4", False),
    (1, 2, 16, 3, 4096, "p1x.w16", False), (1, 2, 16, 3, 4096, "p1x.w16", True),
    (1, 1, 16, 4, H_MAX, "p1x.w16", False), (1, 1, 16, 4, H_MAX, "p1x.w16", True), (1, 1, 8, 6, H_MAX, "p1x.w16", False),
)
# `.fw.tmc` shapes (the `.tmc` kernel with the FP64 total added to the workspace row by atomics,
# for the wide rows): compile_check (sm_90a, Triton 3.6, FP32 weight, H 5120-8192) gives the one-row
# 16-warp builds 128 registers and no spill (the `.tmc` ones: 128 and 80 bytes) with 4 or 6 stages,
# the 8-warp ones 243 and none (`.tmc`: 255 and 80). Two rows of 16 warps still spill (248 bytes),
# and two programs per SM at H 4096 are not resident (151 registers x 256 threads): not registered.
# Nor are narrower shapes: at H 1536-2048 the multi-row builds take the registers of their `.tmc`
# twins (four rows of 8 warps 182-188, two rows 123), so as many programs per SM are resident.
TMC_RED_FOLD_SHAPES = (
    (1, 1, 16, 4, H_MAX, "p1x.w16", False), (1, 1, 16, 4, H_MAX, "p1x.w16", True), (1, 1, 16, 6, H_MAX, "p1x.w16", False),
    (1, 1, 8, 6, H_MAX, "p1x.w16", False), (1, 1, 8, 4, H_MAX, "p1x.w16", False),
)
# `f64_pair` shapes (session 36, products 'fp64': dw summed in FP64, no TwoSum; programs/backward.py
# `_dw_step_fp64`): (programs per SM, rows, warps, reduce, H_max) with pointer loads and the next tile
# prefetched, and (programs per SM, rows, warps, stages, H_max) with one-box TMA loads (`.tmc`).
# For the rows where the compensated programs are issue- or register-bound: 256-wide heads and
# H 512 (many small programs; `.sr` where P is 12-20 x SMs), H 1536-2048 (`p2x.w8`: 141 registers
# at H 4096 under Triton 3.6, one of two programs resident), and the wide rows.
F64_SHAPES = (
    (16, 1, 1, "split", 256), (20, 1, 1, "split", 256), (16, 2, 1, "split", 256), (12, 2, 1, "split", 256),
    (8, 2, 2, "wide", 512), (4, 4, 2, "wide", 512), (8, 1, 2, "wide", 512),
    (1, 4, 8, "wide", 2048), (2, 2, 8, "wide", 2048), (2, 1, 8, "wide", 2048), (1, 1, 16, "wide", H_MAX),
)
# `f64_pair` split-row shapes (`.sp`: the row held as two power-of-two tiles, H not a power of two
# only): H 1536 as 1024 + 512 (the padded 2048-wide tile issues a 2048-wide row's instructions for
# 1536 columns), H 5120 and 6144 as 4096 + 1024 / 2048 (padded: 8192). (programs per SM, rows, warps,
# H_max): compile_check (sm_90a, Triton 3.6, FP32 weight) at H 5120-6144 fits the one-row 16-warp
# build alone (104-128 registers; multi-row and two-program builds spill 104-1344 bytes or leave one
# program of two resident). At H 1536 two rows of 8 warps (128 registers, both programs resident);
# not four rows of 8 (the 512-wide tile's rows then sit in different warps, and its row sums go
# through shared memory: in a build before x was scaled by rstd's power of two, 1,270 warp
# instructions a row in the steady step against the padded tile's 1,240, scripts/sass_paths.py).
F64_SPLIT_SHAPES = ((2, 2, 8, 2048), (1, 1, 16, H_MAX))
F64_TMC_SHAPES = (
    (1, 4, 8, 4, 2048), (1, 2, 16, 3, 4096), (1, 1, 16, 4, H_MAX), (1, 1, 8, 6, H_MAX), (2, 1, 8, 4, 4096),
)

# The chunk of a `.tmc` program's [rows, H / chunk, chunk] view: Triton (3.6 and 3.9) makes a box of
# at most 128 bytes in its last dimension (the 128-byte swizzle) and 256 values in the others, so that
# 64 BF16 values a chunk make a step of up to 256 chunks (H 16384) one box.
TMA_CHUNK = 64
# The name suffix letter of each L2-prefetch kind (`LaunchPolicy.l2_prefetch`): `.l2p{ahead}`, `.l2b{ahead}`.
L2_PREFETCH_LETTERS = {"lines": "p", "bulk": "b"}
# (programs per SM, rows per step, warps, split tile, register cap, largest H) of the `.rl` backwards
# (LaunchPolicy.reload): the shapes whose registers let the programs asked for per SM be resident
# (compile_check, sm_90a, Triton 3.6, FP32 / BF16 weight): `p2x.w16`, `p3x.w8`, `p4x.w4` and the
# two-row `p2x.r2.w8` up to H 2048 (60, 80, 118-128 and 103-122 registers); `p2x.w8` up to H 4096
# (118-128); at wider rows one 16-warp program (`p1x.w16`, 82-128; two rows: 103-128, at most 48
# bytes spilled), or two capped ones (the uncapped `.sp` build's 154-165 registers let one run):
# `p2x.w8.sp.mr128` (H 5120 and 6144: 24-104 bytes spilled per thread), `p2x.w16.mr64` (H <= 4096:
# at most 24 bytes) and `p2x.w16.sp.mr64` (32-112 bytes).
RELOAD_SHAPES = ((2, 1, 8, False, 0, 4096), (2, 1, 8, True, 0, 2048), (2, 1, 8, True, 128, H_MAX), (3, 1, 8, False, 0, 2048),
                 (4, 1, 8, False, 0, 2048), (4, 1, 8, True, 0, 2048), (2, 1, 16, False, 0, 2048), (2, 1, 16, True, 0, 2048),
                 (2, 1, 16, False, 64, 4096), (2, 1, 16, True, 64, H_MAX), (4, 1, 4, False, 0, 2048),
                 (2, 2, 8, False, 0, 2048), (2, 2, 8, True, 0, 2048), (1, 1, 16, False, 0, H_MAX),
                 (1, 1, 16, True, 0, H_MAX), (1, 2, 16, False, 0, H_MAX), (1, 2, 16, True, 0, H_MAX))
# With the next tile prefetched (`.pf...rl`, held as BF16 across the row sum; compile_check as above):
# `p2x.w8` 80-96 registers and `p4x.w8.sp` 64 (four resident) up to H 2048, the two-row `p2x.r2.w8`
# 110-128 and `p2x.w16` there; `p2x.w8.mr128` at H 4096 (0-8 bytes spilled) and `p2x.w8.sp.mr128` at
# H 5120-6144 (24-128 bytes; uncapped 186-206 registers, one resident), `p1x.r2.w16` to H 4096 (110-126).
RELOAD_PREFETCH_SHAPES = ((2, 1, 8, False, 0, 2048), (2, 1, 8, True, 0, 2048), (4, 1, 8, False, 0, 2048),
                          (4, 1, 8, True, 0, 2048), (2, 1, 8, True, 128, H_MAX), (2, 1, 8, False, 128, 4096),
                          (2, 1, 16, False, 0, 2048), (2, 2, 8, False, 0, 2048), (1, 2, 16, False, 0, 4096))


@dataclass(frozen=True)
class LaunchPolicy:
    """How a program is launched.

    grid: `row_blocks` (one program per `rows` rows), `persistent` (`programs_per_sm` x SMs programs
    striding over row blocks), `column_tasks` (ceil(H / column_block) column tasks + ceil(rows /
    rows) row tasks), or `reference` (PyTorch, no Triton).
    warps: the minimum; tiles above 32 elements per thread get more (up to 16), so very wide rows
    never spill (`warps_for`).
    fold: rows per fold (`blocked`: rows per FP32 block; `twosum`: rows between FP64 folds).
    fold_in: where the `twosum` families keep the FP64 running total between folds: `registers`
    (2 registers per column held by a thread) or `workspace` (the program's own [H] FP64 row,
    read-modify-written every fold, so wide rows do not spill; `.tmc` programs add each fold to it
    by atomics instead, which need no barrier in their pipelined loop).
    prefetch: persistent backward programs load the next tile while working on this one.
    split_h: programs hold a row whose H is not a power of two as two power-of-two tiles (largest
    power of two <= H, plus the rest) instead of one tile padded to next_pow2(H).
    reduce: how a two-launch backward program sums its [P, H] partials: `serial` (8 partial rows
    per step in H / 256 programs), `wide` (128 partial rows per step in H / 32 programs; names
    end `.wr`) or `split` (two passes: 64 partial rows per program in H / 32 x P / 64 programs, then
    the wide reduce over those sums; names end `.sr`; FP64 partials only), or `grid_sync` (one
    launch: a grid-wide barrier after the rows, then every program sums some columns; names end
    `.gs`; single-launch compensated programs, launched as a cooperative grid; programs/backward.py
    `rmsnorm_bwd_grid_sync_kernel`), or `one_pass` (the wide reduce's kernel with a tile of up to 512
    partial rows, so one step at P <= 512; names end `.op`; runner.one_pass_reduce_meta). All are
    fixed-order, so all are deterministic.
    loads: how a backward program reads g and x: `pointer` (masked loads into registers) or `tma`
    (tensor descriptors, software-pipelined `stages` deep through shared memory; names end `.tma`).
    TMA needs a 16-byte aligned base and row stride: rows of H % 8 == 0 BF16 values, one row stride.
    `tma_chunks` (names end `.tmc`): the same, with g and x viewed as [rows, H / 64, 64], so that a
    step's tile is one TMA box instead of one [rows, 256] box per 256 columns (H % 64 == 0;
    programs/backward.py `rmsnorm_bwd_tma_chunks_kernel` says why).
    weight_load: where a forward program reads the weight: `hoisted` (once, before its loop over
    tiles) or `beside_rows` (in each tile's step, right after the rows' reads are issued, so the two
    DRAM reads overlap at small T; names end `.wx`; programs/forward.py says why), or `row_tile`
    (as `beside_rows`, read through a [1, BLOCK_H] pointer tile so the loaded weight is already in
    the rows' layout: no shared-memory layout conversion for an FP32 weight; names end `.wt`).
    chunk: a forward program that streams each row in chunks of `chunk` columns over two passes
    (`.c{chunk}`): sums of squares into a [rows, chunk] FP32 accumulator, then the rows re-read
    (L1/L2 hits) and normalised chunk by chunk; 0 holds the whole row in registers (programs/forward.py
    `rmsnorm_fwd_looped_kernel` says why).
    gres_load: when a residual-form backward reads the incoming gradient of h_new: `in_step` (when
    dx is formed) or `prefetched` (names end `.gp`: with the next tile's g and x,
    `rmsnorm_bwd_rows_gres_prefetch_kernel`; prefetching two-launch compensated programs with
    `eft` products only). Why: residual H 6144 BF16 T 65536 ran at 64.5 % of copy where its plain
    twin reaches 84 %: the in-step load is a DRAM round trip per step that the prefetch does not cover.
    stats: how a forward computes rstd: `ieee` (the mean and rstd by IEEE division and square root,
    `common.rstd_of`) or `fast` (names end `.fs`: the mean as a product by the constant 1/H and
    `rsqrt.approx`, `common.rstd_fast`; relative error below 2^-22, against the contract's 1e-5).
    One-row `.hs` forwards only, where the three IEEE refinement sequences sit on the critical path
    of a launch-bound row (the forward's T <= 256 rows below torch.compile and Liger by 1-13 % after
    round 15; torch.compile's kernels use the approximate rsqrt).
    heads_rows: how a program addresses a contiguous per-head view [T, NH, 256]: `indexed` (each row r
    at (r // NH) * stride_t + (r % NH) * stride_h, NH a run-time argument) or `flat` (names end `.fl`:
    when every per-head operand's heads follow one another in memory, its T * NH rows are addressed
    as plain rows with NH = 1, which Triton's launcher compiles in as a constant, so the 64-bit
    division per row leaves the build; other views are addressed by head as before).
    `scripts/sass_paths.py --H 256 --w bf16 [--heads]` (Triton 3.9, sm_90a): the loop of
    `p16x.w1.fw.pf.wr` is 405 SASS instructions indexed by head against 333 flat (FP32 weight: 523
    against 432), `p8x.w2.fw.pf.wr` 272 against 206, `column_task.c32.w4` 945 against 306 (one
    division per row of a 64-row column tile); the one-row `.hs` forward's path 186 against 151.
    static_h: a forward compiled for each H (H a compile-time constant, as torch.compile compiles it;
    names end `.hs`). With a chunk: the looped forward with its chunk loop unrolled, and with one row
    per tile and H a multiple of the chunk no masks (programs/forward.py
    `rmsnorm_fwd_looped_static_kernel`). Without: one row per program held in registers as a 1-D
    tile, unmasked where H is a power of two (`rmsnorm_fwd_row_static_kernel`; row grid, one row).
    weight_cast: `fp32` (names end `.wc`): a backward program given a BF16 weight casts it to FP32
    first (exact: every BF16 value is an FP32 value), into its workspace, so the kernel is the
    FP32-weight build. Why: Triton builds a different kernel per weight dtype, and on the H200 the
    BF16-weight builds of the compensated backward ran 10-30 % slower at T >= 65536 (round 8: H 8192
    T 1M 15,603 against 14,082 us; H 1536 3,450 against 3,013), with more registers (session 8's
    compile_check: 149 against 128 for `p2x.r2.w8` at H 2048). The cast is one more kernel in the span.
    products: how a compensated (`twosum_pair`) backward program makes each dw product exact: `eft`
    (products rounded once by PTX `mul.rn`, their rounding errors recovered by FMAs) or `split_rstd`
    (rstd split into its leading 8 bits and the rest, so that the BF16 products are exact FP32
    products: four multiplies per element against six operations; names end `.xs`,
    programs/backward.py `rmsnorm_bwd_rows_split_rstd_kernel`). Why: ncu on the H200 (session 11) had
    the compensated rows kernel issue-bound at H 1536 (71 % of issue slots busy, 66 % of DRAM
    bandwidth; the uncompensated `pair` kernel: 40 % and 78 %). `fp64` (families `f64_pair`, `f64`):
    no compensation at all, dw summed in FP64: g * (x * 2^e) exact in FP32 (2^e rstd's power of
    two), converted, DFMA by rstd's significand (four instructions per element against `split_rstd`'s
    11 with its TwoSum; programs/backward.py `_dw_step_fp64`), and no fold.
    l2_prefetch, l2_ahead: a prefetching backward that also asks g and x of the tile `l2_ahead` steps
    after the next one into L2, holding no register for them: `lines` (PTX `prefetch.global.L2` per
    128-byte line; names end `.l2p{ahead}`) or `bulk` (`cp.async.bulk.prefetch.L2` per row, Hopper;
    `.l2b{ahead}`). Why: where registers cap the tiles in flight per SM (contiguous heads H 256 and
    plain H 1536 at 70-77 % of copy), later tiles are on their way without them
    (programs/backward.py `rmsnorm_bwd_rows_l2_prefetch_kernel`; two-launch split-rstd programs only).
    max_registers: a cap on the registers per thread of a two-launch backward's rows kernel (Triton's
    `maxnreg`, PTX `.maxnreg`; names end `.mr{N}`), 0 for ptxas's own choice. Why: ptxas sizes a
    build for one program, not for the `programs_per_sm` a persistent grid asks for; one register over
    the line (129 at 8 warps) halves the programs resident per SM and runs the grid as two waves.
    compile_check (sm_90a, Triton 3.6, H 1536): `p2x.r2.w8.fw.pf.wr.sp.xs.wc` 149 registers uncapped,
    one program resident of two; at 128 no spill and both resident. The cap holds only where it
    costs no spill: a spilled value goes through local memory (L1, then DRAM) in the loop.
    reload: a two-launch split-rstd backward that reads each tile twice, for the row sum and then
    again (from L1) for dx and dw, and reads the weight from L1 instead of holding it (names end
    `.rl`; programs/backward.py `rmsnorm_bwd_rows_reload_kernel`, with `prefetch` the next tile held
    as BF16 across the row sum: `rmsnorm_bwd_rows_reload_prefetch_kernel`). Why: what
    lives across the row sum is then the dw state alone, so wide rows fit in fewer registers and
    more programs run per SM (ncu, H100, plain H 6144 BF16 T 65536: the routed `.sp` build at 247
    registers, one 8-warp program per SM, 85 % of DRAM peak; torch.compile's, 128 registers and two
    blocks per SM, 90 %).
    """

    grid: str
    rows: int = 1
    warps: int = 4
    stages: int = 1
    programs_per_sm: int = 0
    fold: int = 0
    column_block: int = 0
    column_rows: int = 0
    fold_in: str = "registers"
    prefetch: bool = False
    split_h: bool = False
    reduce: str = "serial"
    loads: str = "pointer"
    weight_load: str = "hoisted"
    weight_cast: str = "none"
    products: str = "eft"
    chunk: int = 0
    static_h: bool = False
    heads_rows: str = "indexed"
    stats: str = "ieee"
    gres_load: str = "in_step"
    reduce_tiles: str = "looped"
    barrier_wait: str = "all"
    reduce_columns: int = 0
    l2_prefetch: str = "none"
    l2_ahead: int = 0
    max_registers: int = 0
    reload: bool = False

    def __post_init__(self) -> None:
        if self.max_registers and (self.max_registers % 8 or not 32 <= self.max_registers <= 248):
            raise ValueError(f"max_registers: {self.max_registers!r} is not 0 or a multiple of 8 in 32-248 "
                             "(registers are allocated 8 per thread at a time; 255 is ptxas's own limit)")
        if self.l2_prefetch not in ("none", "lines", "bulk"):
            raise ValueError(f"l2_prefetch: {self.l2_prefetch!r} is not one of ('none', 'lines', 'bulk')")
        if (self.l2_prefetch == "none") != (self.l2_ahead == 0) or not 0 <= self.l2_ahead <= 16:
            raise ValueError(f"l2_ahead: {self.l2_ahead!r} must be 1-16 with an L2 prefetch and 0 without "
                             f"(l2_prefetch={self.l2_prefetch!r})")
        if self.reduce_columns not in (0, 4, 8, 16, 32, 64):
            raise ValueError(f"reduce_columns: {self.reduce_columns!r} is not one of (0, 4, 8, 16, 32, 64) "
                             "(0: the grid's own tile, runner.grid_sync_meta)")
        if self.reduce_columns and self.reduce_tiles != "flat":
            raise ValueError("reduce_columns: an option of the flat reduce (reduce_tiles='flat') only")
        if self.reduce_tiles not in ("looped", "unrolled", "flat"):
            raise ValueError(f"reduce_tiles: {self.reduce_tiles!r} is not one of ('looped', 'unrolled', 'flat')")
        if self.barrier_wait not in ("all", "reducers"):
            raise ValueError(f"barrier_wait: {self.barrier_wait!r} is not one of ('all', 'reducers')")
        if (self.reduce_tiles != "looped" or self.barrier_wait != "all") and self.reduce != "grid_sync":
            raise ValueError("reduce_tiles / barrier_wait: options of the grid barrier and its reduce "
                             "(reduce='grid_sync') only")
        if self.gres_load not in ("in_step", "prefetched"):
            raise ValueError(f"gres_load: {self.gres_load!r} is not one of ('in_step', 'prefetched')")
        if self.stats not in ("ieee", "fast"):
            raise ValueError(f"stats: {self.stats!r} is not one of ('ieee', 'fast')")
        if self.stats == "fast" and not (self.static_h and not self.chunk):
            raise ValueError("stats: 'fast' is implemented by the one-row forward compiled per H only "
                             "(static_h=True, chunk=0)")
        if self.heads_rows not in ("indexed", "flat"):
            raise ValueError(f"heads_rows: {self.heads_rows!r} is not one of ('indexed', 'flat')")
        if self.fold_in not in ("registers", "workspace"):
            raise ValueError(f"fold_in: {self.fold_in!r} is not one of ('registers', 'workspace')")
        if self.reduce not in ("serial", "wide", "split", "grid_sync", "one_pass"):
            raise ValueError(f"reduce: {self.reduce!r} is not one of ('serial', 'wide', 'split', 'grid_sync', 'one_pass')")
        if self.loads not in ("pointer", "tma", "tma_chunks"):
            raise ValueError(f"loads: {self.loads!r} is not one of ('pointer', 'tma', 'tma_chunks')")
        if self.loads == "tma" and self.fold_in == "workspace":
            raise ValueError("fold_in: 'workspace' with TMA loads is built for loads='tma_chunks' only "
                             "(programs/backward.py `rmsnorm_bwd_tma_chunks_red_fold_kernel`)")
        if self.weight_load not in ("hoisted", "beside_rows", "row_tile"):
            raise ValueError(f"weight_load: {self.weight_load!r} is not one of ('hoisted', 'beside_rows', 'row_tile')")
        if self.weight_cast not in ("none", "fp32"):
            raise ValueError(f"weight_cast: {self.weight_cast!r} is not one of ('none', 'fp32')")
        if self.products not in ("eft", "split_rstd", "fp64"):
            raise ValueError(f"products: {self.products!r} is not one of ('eft', 'split_rstd', 'fp64')")
        if self.products == "fp64" and (self.loads == "tma" or self.gres_load != "in_step" or self.l2_prefetch != "none"
                                        or self.reload or (self.split_h and self.loads != "pointer")
                                        or (self.reduce == "grid_sync" and (self.loads != "pointer"
                                                                            or self.reduce_tiles != "looped"))):
            raise ValueError("products: 'fp64' (FP64 dw sums) is built for pointer or one-box TMA loads (split rows "
                             "and the grid barrier, with its looped reduce, with pointer loads only; loads 'pointer' or "
                             "'tma_chunks', gres_load 'in_step', no l2_prefetch, reload False)")
        if self.chunk and (self.chunk < 16 or self.chunk & (self.chunk - 1)):
            raise ValueError(f"chunk: {self.chunk!r} is not 0 or a power of two >= 16")
        if self.chunk and (self.prefetch or self.split_h or self.weight_load != "hoisted"):
            raise ValueError("chunk: a looped forward reads each chunk's weight in its second pass; it takes no "
                             "prefetch, split_h or weight_load option")
        if self.static_h and not self.chunk and self.grid != "column_tasks" and (self.grid != "row_blocks" or self.rows != 1 or self.prefetch
                                                 or self.split_h or self.weight_load != "hoisted"):
            raise ValueError("static_h: a register-held forward compiled per H (chunk 0) is one row per program "
                             "on a row_blocks grid with no prefetch, split_h or weight_load option")

    def tiles_for(self, H: int) -> tuple[int, int]:
        """(first tile, second tile) widths for rows of H columns; the second is 0 when unsplit."""
        if self.split_h and H > 1 and H & (H - 1):
            first = 1 << (H.bit_length() - 1)
            rest = H - first
            return first, 1 << (rest - 1).bit_length()
        return 1 << max(H - 1, 0).bit_length(), 0

    def tma_buffer_bytes(self, H: int, residual: bool) -> int:
        """Shared memory the pipelined tiles of a `.tma` program may need at rows of H columns: one
        [rows, tile] BF16 buffer per stage for g and x, and for the residual gradient too. Triton 3.6
        also pipelines that pointer load through shared memory (round 6 on the H200: 245,940 bytes
        for 6 stages of 8192-wide residual rows, over the limit), Triton 3.9 does not."""
        return self.stages * (3 if residual else 2) * self.rows * self.tiles_for(H)[0] * 2

    def warps_for(self, block_h: int) -> int:
        need = (block_h * self.rows) // (32 * 32)
        w = self.warps
        while w < need and w < 16:
            w *= 2
        return w


@dataclass(frozen=True)
class Program:
    name: str
    op: str  # "fwd" or "bwd"
    family: str  # forward: row / persistent / reference; backward: atomic, pair, blocked, twosum_pair, twosum, f64_pair, f64, column_task, reference
    deterministic: bool
    launch: LaunchPolicy
    description: str
    kernel_module: str | None = None  # module of the program's kernels
    mode: int = -1  # backward rows-kernel mode (programs/backward.py)
    single_launch: bool = False
    H_min: int = 1
    H_max: int = H_MAX
    forms: tuple[str, ...] = FORMS
    w_dtypes: tuple[str, ...] = W_DTYPES
    runnable: bool = True
    # The program launched instead when this one cannot run here: a `.tma` program given a view whose
    # base or row stride is not 16-byte aligned, or a `.gs` program whose cooperative grid the driver
    # refuses (fewer SMs than the device reports, under MPS or a green context, say). The same math
    # with pointer loads: the same family, or for `.gs` its two-launch twin (dw may differ in its
    # last bits where the number of partials or the reduce's order does).
    fallback: str | None = None
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.launch.chunk and self.op != "fwd":
            raise ValueError(f"program {self.name!r}: chunk (a looped forward) is a forward launch option")
        if self.launch.reduce == "split" and (self.mode != 3 or self.single_launch or self.launch.grid != "persistent"):
            raise ValueError(f"program {self.name!r}: reduce='split' needs a two-launch compensated persistent program "
                             "(FP64 partials: mode 3, single_launch False, grid 'persistent')")
        if self.launch.reduce == "grid_sync" and (self.mode != 3 or not self.single_launch or self.launch.grid != "persistent"
                                                  or self.launch.loads != "pointer" or self.launch.gres_load != "in_step"):
            raise ValueError(f"program {self.name!r}: reduce='grid_sync' needs a single-launch compensated persistent "
                             "program with pointer loads and the in-step residual load (mode 3, single_launch True, "
                             "grid 'persistent', loads 'pointer', gres_load 'in_step')")
        # A `.gs` program runs the two-launch rows kernel, then its own barrier and reduce.
        two_launch_rows = not self.single_launch or self.launch.reduce == "grid_sync"
        if self.launch.gres_load == "prefetched" and (self.mode != 3 or self.single_launch or self.launch.loads != "pointer"
                                                      or not self.launch.prefetch or self.launch.products != "eft"):
            raise ValueError(f"program {self.name!r}: gres_load='prefetched' needs a two-launch compensated prefetching "
                             "program with pointer loads and eft products")
        lp = self.launch
        if lp.l2_prefetch != "none" and (self.mode != 3 or self.single_launch or lp.grid != "persistent" or not lp.prefetch
                                         or lp.split_h or lp.loads != "pointer" or lp.products != "split_rstd"
                                         or lp.gres_load != "in_step"):
            raise ValueError(f"program {self.name!r}: l2_prefetch={lp.l2_prefetch!r} needs a two-launch compensated "
                             "persistent program that prefetches one-tile rows with pointer loads and split-rstd "
                             "products (mode 3, single_launch False, prefetch True, split_h False, products "
                             "'split_rstd', gres_load 'in_step')")
        if lp.reload and (self.mode != 3 or self.single_launch or lp.grid != "persistent"
                          or lp.loads != "pointer" or lp.products != "split_rstd" or lp.gres_load != "in_step"
                          or lp.l2_prefetch != "none" or lp.reduce == "grid_sync"):
            raise ValueError(f"program {self.name!r}: reload=True needs a two-launch compensated persistent program "
                             "with pointer loads and split-rstd products (mode 3, single_launch False, products "
                             "'split_rstd', gres_load 'in_step', no l2_prefetch, reduce not 'grid_sync')")
        if lp.max_registers and (self.op != "bwd" or self.single_launch or lp.grid != "persistent"
                                 or lp.reduce == "grid_sync"):
            raise ValueError(f"program {self.name!r}: max_registers={lp.max_registers} caps the rows kernel of a "
                             "two-launch persistent backward (single_launch False, grid 'persistent', reduce not "
                             "'grid_sync')")
        if self.launch.products != "eft" and (self.mode != 3 or not two_launch_rows
                                              or (self.launch.loads != "pointer" and self.launch.reduce == "grid_sync")):
            raise ValueError(f"program {self.name!r}: products={self.launch.products!r} needs a two-launch (or `.gs`) "
                             "compensated program (mode 3, single_launch False or reduce 'grid_sync'; TMA loads "
                             "two-launch only)")

    def supports(self, H: int, form: str, w_dtype: str) -> bool:
        if self.launch.split_h and self.launch.tiles_for(H)[1] == 0:
            return False  # a power of two is one tile: the split program would be its unsplit twin
        if self.launch.loads != "pointer" and H % 8:
            return False  # contiguous BF16 rows of H % 8 != 0 have a row stride TMA cannot take
        if self.launch.loads == "tma_chunks" and H % TMA_CHUNK:
            return False  # the [rows, H / 64, 64] view needs whole chunks
        if self.launch.loads != "pointer" and self.launch.tma_buffer_bytes(H, form == "residual") > TMA_SHARED_BUDGET:
            return False  # the launch would fail for shared memory (see tma_buffer_bytes)
        return self.H_min <= H <= self.H_max and form in self.forms and w_dtype in self.w_dtypes

    @property
    def fingerprint(self) -> str:
        launch = asdict(self.launch)
        for key, default in (("reduce", "serial"), ("loads", "pointer"), ("weight_load", "hoisted"), ("weight_cast", "none"),
                             ("products", "eft"), ("chunk", 0),
                             ("static_h", False), ("heads_rows", "indexed"), ("stats", "ieee"), ("gres_load", "in_step"),
                             ("reduce_tiles", "looped"), ("barrier_wait", "all"), ("reduce_columns", 0),
                             ("l2_prefetch", "none"), ("l2_ahead", 0), ("max_registers", 0),
                             ("reload", False)):
            if launch[key] == default:
                del launch[key]  # the field's default: programs from before it keep their launch JSON
        return _fingerprint(self, json.dumps(launch, sort_keys=True))

    def evidence_record(self) -> dict:
        """This program as a `cake-evidence/1` program record."""
        return {
            "schema": "cake-evidence/1", "kind": "program", "name": self.name, "op": self.op,
            "deterministic": self.deterministic, "family": self.family, "runnable": self.runnable,
            "fingerprint": self.fingerprint, "description": self.description,
        }


@functools.lru_cache(maxsize=None)
def _fingerprint(program: "Program", launch_json: str) -> str:
    from cake_kernels.fingerprint import program_fingerprint  # imports the kernels (Triton)

    return program_fingerprint(program, launch_json)


def _twin(base: Program, suffix: str, what: str, w_dtypes: tuple[str, ...] | None = None,
          forms: tuple[str, ...] | None = None, **launch) -> Program:
    """`base` with one launch-policy option changed, named `{base}.{suffix}` (the option shows in the name);
    `w_dtypes` / `forms` narrow the keys it is offered for where the option only acts on some."""
    return replace(base, name=f"{base.name}.{suffix}", launch=replace(base.launch, **launch),
                   w_dtypes=w_dtypes or base.w_dtypes, forms=forms or base.forms, description=f"as {base.name}, {what}")


def _shape(ppsm: int, rows: int, warps: int) -> str:
    """The shape part of a persistent backward's name: `p{programs per SM}x[.r{rows}].w{warps}`."""
    return f"p{ppsm}x" + (f".r{rows}" if rows > 1 else "") + f".w{warps}"


def _weight_cast_twin(base: Program, name: str | None = None) -> Program:
    """`base`'s `.wc` twin (a BF16 weight cast to FP32 first; BF16 weights only), named `name` where
    `.wc` does not end the name (`.wr.wc.sr`)."""
    twin = _twin(base, "wc", "a BF16 weight cast to FP32 first so that the FP32-weight build runs "
                 "(BF16 weights only)", w_dtypes=("bf16",), weight_cast="fp32")
    return replace(twin, name=name) if name else twin


def _catalog() -> list[Program]:
    # Mode numbers of programs/backward.py (kept literal here so the registry imports without Triton).
    ATOMIC, PAIR, BLOCKED, TWOSUM = 0, 1, 2, 3
    fwd_mod, bwd_mod = "cake_kernels.programs.forward", "cake_kernels.programs.backward"

    def tma_program(ppsm: int, rows: int, warps: int, stages: int, h_max: int, fallback: str, products: str = "eft",
                    reduce: str = "wide", like: str | None = None, loads: str = "tma",
                    fold_in: str = "registers") -> Program:
        """A `.tma` (or `.tmc`, `loads` 'tma_chunks') backward (`twosum_pair`, the FP64 fold in
        registers, or with `fold_in` 'workspace' (`.fw`, `.tmc` only) added to the workspace row by
        atomics): named by its shape, options and `.tma` (`.tmc`); `fallback` the pointer-load program
        run where a view cannot be described, `like` the program its description compares it with (the
        fallback unless given)."""
        name = (f"bwd.twosum_pair.{_shape(ppsm, rows, warps)}.s{stages}"
                + (".fw" if fold_in == "workspace" else "") + ".wr"
                + (".xs" if products == "split_rstd" else "") + (".sr" if reduce == "split" else "")
                + (".tmc" if loads == "tma_chunks" else ".tma"))
        limit = f"; H <= {h_max}" if h_max != H_MAX else ""
        read = f"{rows} rows at a time " if rows > 1 else ""
        return Program(
            name, "bwd", "twosum_pair", True,
            LaunchPolicy("persistent", rows=rows, warps=warps, stages=stages, programs_per_sm=ppsm, fold=256,
                         reduce=reduce, loads=loads, products=products, fold_in=fold_in),
            f"as {like or fallback} with the FP64 fold "
            + ("added to the workspace row by atomics" if fold_in == "workspace" else "in registers")
            + f", g and x read {read}through TMA descriptors "
            + ("of [rows, H / 64, 64], a step one box, " if loads == "tma_chunks" else "")
            + f"pipelined {stages} deep in shared memory ({ppsm} programs/SM; "
            + ("H % 64 == 0" if loads == "tma_chunks" else "H % 8 == 0") + f"{limit})",
            bwd_mod, mode=TWOSUM, H_max=h_max, forms=("plain", "residual", "heads_contiguous"), fallback=fallback)

    progs: list[Program] = [
        Program("fwd.reference", "fwd", "reference", True, LaunchPolicy("reference"),
                "PyTorch reference program (any device, FP32 statistics); the CPU path of the op"),
        Program("bwd.reference", "bwd", "reference", True, LaunchPolicy("reference"),
                "PyTorch reference program (any device); dw is a plain FP32 torch.sum over rows"),
    ]
    # 1 row with 16 warps: at T <= 256 a forward is one program per row and its latency is each
    # thread's chain of loads. Liger (one row per program, 16 warps at 8192-wide tiles) was 0.2-0.8 us
    # faster than our 8 warps there in rounds 3-5; this program tests whether the warps are why.
    # r2.w1 and r4.w2 (round 7): narrow rows with fewer warps per tile, so that more tiles are resident
    # per SM (compile_check, H 512: r4.w4 62 registers x 128 threads, 8 per SM, 32 rows; r2.w1 95 x 32,
    # 21 per SM, 42 rows) and the row sum crosses fewer warps.
    for rows, warps in ((1, 2), (1, 4), (1, 8), (1, 16), (2, 8), (4, 4), (8, 4), (2, 1), (4, 2)):
        progs.append(Program(
            f"fwd.row.r{rows}.w{warps}", "fwd", "row", True, LaunchPolicy("row_blocks", rows=rows, warps=warps),
            f"one program per {rows} row(s), full-row tile, {warps}+ warps", fwd_mod))
    for ppsm, rows, warps in ((2, 1, 8), (4, 1, 4), (2, 2, 8), (8, 2, 4)):
        progs.append(Program(
            f"fwd.persist.p{ppsm}x.r{rows}.w{warps}", "fwd", "persistent", True,
            LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm),
            f"persistent grid of {ppsm} programs per SM, {rows}-row tiles, {warps}+ warps", fwd_mod))
    # Split rows for H that is not a power of two (5120 = 4096 + 1024, 6144 = 4096 + 2048): the
    # shapes that won the unsplit forward at H 5120/6144 in round 3, and a one-row-per-program twin.
    for grid, ppsm, rows, warps in (("row_blocks", 0, 1, 4), ("persistent", 4, 1, 4), ("persistent", 2, 1, 8)):
        base = f"fwd.row.r{rows}.w{warps}" if grid == "row_blocks" else f"fwd.persist.p{ppsm}x.r{rows}.w{warps}"
        progs.append(Program(
            f"{base}.sp", "fwd", "row" if grid == "row_blocks" else "persistent", True,
            LaunchPolicy(grid, rows=rows, warps=warps, programs_per_sm=ppsm, split_h=True),
            f"as {base}, the row held as two power-of-two tiles (H not a power of two only)", fwd_mod))
    # Persistent forward with the next tile prefetched and the weight re-read per tile
    # (programs/forward.py, rmsnorm_fwd_prefetch_kernel), whole rows and split rows.
    # Registers bound what it gains (cake_kernels.compile_check): at H 8192 the prefetched row takes a
    # program from 123 to 177 registers, one program per SM instead of two, so only narrow rows and
    # split rows (H 5120: 112 registers, two programs per SM holding two rows each) are registered.
    for ppsm, rows, warps, split in ((4, 1, 4, False), (8, 1, 4, False), (2, 1, 16, False), (8, 2, 4, False),
                                     (4, 1, 4, True), (8, 1, 4, True), (2, 1, 16, True)):
        name = f"fwd.persist.p{ppsm}x.r{rows}.w{warps}.pf" + (".sp" if split else "")
        progs.append(Program(
            name, "fwd", "persistent", True,
            LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm, prefetch=True, split_h=split),
            f"persistent grid of {ppsm} programs per SM, {rows}-row tiles, {warps}+ warps, next tile prefetched, weight "
            "re-read per tile" + (", the row held as two power-of-two tiles (H not a power of two only)" if split else ""),
            fwd_mod))
    # Weight read beside the rows (`.wx`, programs/forward.py): the forwards that round 9 routed or
    # found fastest at T <= 4096, where a forward is one or two DRAM round trips and the FP32
    # weight's layout conversion made it two. Same arithmetic, bit for bit, as the program without `.wx`.
    by_name = {p.name: p for p in progs}
    for base in ("row.r1.w16", "row.r1.w8", "row.r1.w4", "row.r1.w4.sp", "persist.p2x.r1.w8.sp", "persist.p2x.r1.w16.pf",
                 "persist.p4x.r1.w4.pf", "persist.p8x.r1.w4.pf", "persist.p8x.r2.w4.pf", "persist.p4x.r1.w4.pf.sp",
                 "persist.p8x.r1.w4.pf.sp"):
        progs.append(_twin(by_name[f"fwd.{base}"], "wx", "the weight read in each tile's step beside the rows' reads "
                           "(two DRAM reads overlap at small T)", weight_load="beside_rows"))
    # Weight read as a row tile (`.wt`, programs/forward.py): the `.wx` bases, and the many-row tiles
    # routed at T >= 65536 for narrow rows, whose FP32 weight crossed shared memory once per program
    # (round 12's question: what that conversion costs at small T, and per tile at large T).
    for base in ("row.r1.w16", "row.r1.w8", "row.r1.w4", "row.r1.w4.sp", "persist.p2x.r1.w8.sp", "persist.p2x.r1.w16.pf",
                 "persist.p4x.r1.w4.pf", "persist.p8x.r1.w4.pf", "persist.p8x.r2.w4.pf", "persist.p4x.r1.w4.pf.sp",
                 "persist.p8x.r1.w4.pf.sp", "row.r8.w4", "row.r4.w4", "row.r4.w2", "row.r2.w1"):
        progs.append(_twin(by_name[f"fwd.{base}"], "wt", "the weight read beside the rows as a [1, H] tile in the rows' "
                           "layout (no shared-memory layout conversion)", weight_load="row_tile"))
    # Looped forwards (`.c{chunk}`, programs/forward.py `rmsnorm_fwd_looped_kernel`): the shape of the
    # kernel torch.compile generates for this forward (round 13a's TORCH_LOGS=output_code on the H200:
    # two passes over chunks of the row, the second re-reading it from cache), which ran 5-15 % faster
    # than our register-held rows at T 16-256 and 6-9 % at T >= 65536 with an FP32 weight at H 6144
    # and 8192 (round 12a). r2.w16.c2048 and r1.w16.c8192 are its configurations (XBLOCK, R0_BLOCK,
    # 16 warps) at H 2048 and H 4096-8192, r8.w4.c512 at H 512; the rest vary the chunk and warps.
    for grid, ppsm, rows, warps, chunk in (("row_blocks", 0, 1, 16, 2048), ("row_blocks", 0, 2, 16, 2048),
                                           ("row_blocks", 0, 1, 16, 8192), ("row_blocks", 0, 1, 16, 4096),
                                           ("row_blocks", 0, 1, 8, 2048), ("row_blocks", 0, 1, 8, 1024),
                                           ("row_blocks", 0, 8, 4, 512), ("row_blocks", 0, 4, 8, 1024),
                                           ("persistent", 2, 1, 16, 2048), ("persistent", 4, 1, 8, 2048)):
        base = f"fwd.row.r{rows}.w{warps}" if grid == "row_blocks" else f"fwd.persist.p{ppsm}x.r{rows}.w{warps}"
        progs.append(Program(
            f"{base}.c{chunk}", "fwd", "row" if grid == "row_blocks" else "persistent", True,
            LaunchPolicy(grid, rows=rows, warps=warps, programs_per_sm=ppsm, chunk=chunk),
            f"as {base} (exactly {warps} warps), the row streamed in {chunk}-column chunks over two passes "
            "(sums of squares, then re-read and normalised)", fwd_mod))
    # H compiled in (`.hs`): compile_check for sm_90a at H 8192, FP32 weight (session 13): torch.compile's
    # kernel in the configuration of `row.r1.w16.c2048` is 256 SASS instructions (8 IMAD, 1 ISETP, 6
    # BRA), ours 712 (93, 37, 36): runtime loop bounds and masks. ncu on the H200 (round 13d) read the
    # same: equal bytes, 0.49 against 0.73 warps issued per scheduler per cycle, 493 against 538 us.
    by_name = {p.name: p for p in progs}
    for base in ("row.r1.w16.c2048", "row.r1.w8.c2048", "row.r1.w16.c4096", "row.r1.w16.c8192", "row.r1.w8.c1024"):
        progs.append(_twin(by_name[f"fwd.{base}"], "hs", "compiled for each H (the chunk loop unrolled; no masks "
                           "where H is a multiple of the chunk)", static_h=True))
    # `.hs` only (round 14a: the five twins above beat every runtime-H forward at H 4096-8192 and T >= 4096,
    # and at T <= 256 on 21 of 42 plain rows, but ran 1.1-2.9x slower at H <= 2048 and T >= 4096 with one
    # row per program and 8-16 warps): fewer warps for the latency-bound small T and the head views'
    # H 256, and several rows per tile for narrow rows at large T (the register-held rows' shapes there:
    # r4.w2 at H 512, r4.w4 at H 2048; r8.w4.c512 is torch.compile's configuration at H 512).
    for rows, warps, chunk in ((1, 4, 2048), (1, 4, 1024), (1, 4, 512), (1, 2, 512), (1, 2, 256), (1, 1, 256),
                               (2, 4, 1024), (4, 2, 512), (4, 4, 1024), (4, 4, 2048), (8, 4, 512), (8, 4, 256)):
        base = f"fwd.row.r{rows}.w{warps}"
        progs.append(Program(
            f"{base}.c{chunk}.hs", "fwd", "row", True,
            LaunchPolicy("row_blocks", rows=rows, warps=warps, chunk=chunk, static_h=True),
            f"as {base} (exactly {warps} warps), the row streamed in {chunk}-column chunks over two passes, "
            "compiled for each H (the chunk loop unrolled)", fwd_mod))
    # One row per program, held in registers as a 1-D tile, H compiled in (`row.r1.w{N}.hs`, no chunk):
    # Liger's one-row shape, with H a constant (programs/forward.py `rmsnorm_fwd_row_static_kernel`).
    for warps in (1, 2, 4, 8, 16):
        progs.append(Program(
            f"fwd.row.r1.w{warps}.hs", "fwd", "row", True, LaunchPolicy("row_blocks", rows=1, warps=warps, static_h=True),
            f"one program per row, the row held in registers as a 1-D tile, {warps}+ warps, compiled for each H "
            "(no masks where H is a power of two)", fwd_mod))
    for ppsm, rows, warps in ((1, 1, 8), (2, 1, 8), (4, 1, 4), (2, 2, 8)):
        sfx = _shape(ppsm, rows, warps)
        progs.append(Program(
            f"bwd.atomic.{sfx}", "bwd", "atomic", False,
            LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm), 
            f"FP32 per-program dw sums added with atomics ({ppsm} programs/SM, {rows}-row tiles); nondeterministic",
            bwd_mod, mode=ATOMIC))
        progs.append(Program(
            f"bwd.pair.{sfx}", "bwd", "pair", True,
            LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm),
            f"FP32 per-program dw partials [P, H] + fixed-order FP64 reduce kernel ({ppsm} programs/SM, {rows}-row tiles)",
            bwd_mod, mode=PAIR))
    for ppsm, rows, warps in ((2, 1, 8), (4, 1, 4), (2, 2, 8)):
        sfx = _shape(ppsm, rows, warps) + ".pf"
        lp = LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm, prefetch=True)
        progs.append(Program(
            f"bwd.atomic.{sfx}", "bwd", "atomic", False, lp,
            f"FP32 per-program dw sums added with atomics ({ppsm} programs/SM, {rows}-row tiles, next tile prefetched); nondeterministic",
            bwd_mod, mode=ATOMIC))
        progs.append(Program(
            f"bwd.pair.{sfx}", "bwd", "pair", True, lp,
            f"FP32 per-program dw partials [P, H] + fixed-order FP64 reduce kernel ({ppsm} programs/SM, {rows}-row tiles, next tile prefetched)",
            bwd_mod, mode=PAIR))
    # Four-row tiles for narrow rows (H <= 2048). On the H200 (round 3) a one-row step at H 512 was
    # latency-bound: the compensated programs spent about 1.5 us per row per program at T 65536
    # (26 % of copy bandwidth); four rows per step put four times the bytes in flight per program.
    narrow = 2048
    for ppsm, rows, warps in ((4, 4, 4),):
        sfx = f"p{ppsm}x.r{rows}.w{warps}.pf"
        lp = LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm, prefetch=True)
        progs.append(Program(
            f"bwd.atomic.{sfx}", "bwd", "atomic", False, lp,
            f"FP32 per-program dw sums added with atomics ({ppsm} programs/SM, {rows}-row tiles, next tile prefetched; "
            f"H <= {narrow}); nondeterministic", bwd_mod, mode=ATOMIC, H_max=narrow))
        progs.append(Program(
            f"bwd.pair.{sfx}", "bwd", "pair", True, lp,
            f"FP32 per-program dw partials [P, H] + fixed-order FP64 reduce kernel ({ppsm} programs/SM, {rows}-row tiles, "
            f"next tile prefetched; H <= {narrow})", bwd_mod, mode=PAIR, H_max=narrow))
    for ppsm, fold, warps in ((2, 16, 8), (4, 16, 4), (2, 64, 8)):
        progs.append(Program(
            f"bwd.blocked.p{ppsm}x.f{fold}.w{warps}", "bwd", "blocked", True,
            LaunchPolicy("persistent", rows=1, warps=warps, programs_per_sm=ppsm, fold=fold),
            f"FP32 sums in blocks of {fold} rows folded into the FP32 running sum, [P, H] partials + fixed-order FP64 reduce",
            bwd_mod, mode=BLOCKED))
    # (programs/SM, rows per tile, warps, where the FP64 total lives, prefetch): the name gains
    # `.r{rows}` for tiles of several rows (summed by a TwoSum tree), `.fw` for the workspace-held
    # total and `.pf` for the prefetched next tile. On the H200 (bench/results/h200-2026-12-02b)
    # `.fw.pf` took these programs from 1.7-2.4 TB/s to 2.2-3.8 TB/s at T = 1M (ncu: the register-held
    # FP64 total left one or two programs per SM, 12.5 % occupancy, 40 % of DRAM bandwidth);
    # `.fw` without `.pf` was slower at every H and is not registered.
    # The last field: also registered as a single-launch `twosum` program.
    REG, WS = "registers", "workspace"
    for ppsm, rows, warps, fold_in, pf, single in (
            (1, 1, 8, REG, False, True), (2, 1, 8, REG, False, True), (4, 1, 4, REG, False, True),
            (2, 1, 4, REG, False, False), (8, 1, 4, REG, False, False),
            (1, 1, 16, WS, True, True), (2, 1, 8, WS, True, True), (4, 1, 4, WS, True, True),
            (2, 1, 4, WS, True, False), (2, 2, 8, WS, True, False), (4, 2, 4, WS, True, False),
            (4, 4, 4, WS, True, True), (8, 4, 4, WS, True, False)):
        sfx = (_shape(ppsm, rows, warps) + (".fw" if fold_in == WS else "")
               + (".pf" if pf else ""))
        where = "in the program's FP64 workspace row" if fold_in == WS else "in FP64 registers"
        tile = f"{rows}-row tiles summed by a TwoSum tree" if rows > 1 else "one row per step"
        tile += ", next tile prefetched" if pf else ""
        lp = LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm, fold=256, fold_in=fold_in, prefetch=pf)
        h_max = narrow if rows >= 4 else H_MAX  # four-row tiles: for narrow rows only (above)
        limit = f"; H <= {h_max}" if h_max != H_MAX else ""
        progs.append(Program(
            f"bwd.twosum_pair.{sfx}", "bwd", "twosum_pair", True, lp,
            f"error-free products + TwoSum per thread ({tile}), FP64 fold every 256 rows {where}, "
            f"[P, H] FP64 partials + fixed-order reduce kernel ({ppsm} programs/SM{limit})",
            bwd_mod, mode=TWOSUM, H_max=h_max))
        if single:
            progs.append(Program(
                f"bwd.twosum.{sfx}", "bwd", "twosum", True, lp,
                f"single launch: error-free products + TwoSum per thread ({tile}), FP64 fold every 256 rows {where}, "
                f"partials reduced in fixed order by the last program to finish ({ppsm} programs/SM{limit})",
                bwd_mod, mode=TWOSUM, single_launch=True, H_max=h_max))
    # Split rows (see the forward's): the shapes that won at H 5120/6144 in round 3, rows held as
    # two power-of-two tiles; registered for H that is not a power of two only (`supports`).
    for fam, ppsm, warps, mode in (("atomic", 2, 8, ATOMIC), ("pair", 2, 8, PAIR)):
        base = f"bwd.{fam}.p{ppsm}x.w{warps}.pf"
        progs.append(Program(
            f"{base}.sp", "bwd", fam, fam != "atomic",
            LaunchPolicy("persistent", rows=1, warps=warps, programs_per_sm=ppsm, prefetch=True, split_h=True),
            f"as {base}, the row held as two power-of-two tiles (H not a power of two only)", bwd_mod, mode=mode))
    for fam, ppsm, warps in (("twosum_pair", 1, 16), ("twosum_pair", 2, 8), ("twosum", 1, 16), ("twosum", 2, 8)):
        base = f"bwd.{fam}.p{ppsm}x.w{warps}.fw.pf"
        progs.append(Program(
            f"{base}.sp", "bwd", fam, True,
            LaunchPolicy("persistent", rows=1, warps=warps, programs_per_sm=ppsm, fold=256, fold_in=WS, prefetch=True,
                         split_h=True),
            f"as {base}, the row held as two power-of-two tiles (H not a power of two only)", bwd_mod, mode=TWOSUM,
            single_launch=fam == "twosum"))
    # The uncompensated `pair` programs with the wide reduce (`.wr`, below). At T 4096 they are in
    # budget (the H200's 120 inputs per family: `pair.p2x.w8.pf` worst err/tol 0.405 at H 4096 FP32,
    # 0.43 at H 8192), and their rows kernel is the cheaper one: on an H100 (session 26's ncu) it
    # took 32.2 us at H 4096 FP32 T 4096 against the routed compensated one's 45.5 (121 registers
    # against 255, so 2 programs of 8 warps per SM), yet the whole program took 57.7 us on the H200
    # against 42.6: the serial reduce walks P = 264 partial rows 8 at a time in H / 256 = 16 programs.
    # p1x.w16 holds an 8192-wide row at 16 columns a thread (p2x.w8 needs 225 registers there under
    # Triton 3.6, so one of its two programs per SM is resident).
    by_name = {p.name: p for p in progs}
    for base, name in (("p2x.w8.pf", "p2x.w8.pf.wr"), ("p2x.r2.w8.pf", "p2x.r2.w8.pf.wr"),
                       ("p4x.r4.w4.pf", "p4x.r4.w4.pf.wr"), ("p2x.w8.pf.sp", "p2x.w8.pf.wr.sp")):
        b = by_name[f"bwd.pair.{base}"]
        progs.append(replace(b, name=f"bwd.pair.{name}", launch=replace(b.launch, reduce="wide"),
                             description=f"as {b.name}, the partials summed by the wide fixed-order FP64 reduce kernel"))
    for split in (False, True):
        progs.append(Program(
            "bwd.pair.p1x.w16.pf.wr" + (".sp" if split else ""), "bwd", "pair", True,
            LaunchPolicy("persistent", rows=1, warps=16, programs_per_sm=1, prefetch=True, split_h=split, reduce="wide"),
            "FP32 per-program dw partials [P, H] + wide fixed-order FP64 reduce kernel (1 program/SM of 16 warps, "
            "next tile prefetched" + (", the row held as two power-of-two tiles (H not a power of two only)" if split else "")
            + ")", bwd_mod, mode=PAIR))
    # Wide reduce (`.wr`): the compensated two-launch shapes that won somewhere in rounds 1-4, and
    # more resident programs for narrow rows. On the H200 a persistent backward program keeps about
    # two tiles in flight (this one and the prefetched next), and the rounds-1-4 times follow bytes
    # in flight per SM: H 512 with 4 programs per SM had 16 KB in flight and reached 52 % of copy
    # bandwidth at T = 1M, H 2048 with 32 KB reached 90 %. At H <= 1024 a program needs 54 registers
    # (4 warps) or fewer, so 8 programs per SM fit (16 of 1-2 warps for the 256-wide head rows);
    # more programs mean more [P, H] partials, which the wide reduce sums in a few steps, not P / 8.
    # Multi-row tiles with few warps (round 7): when warps x 256 columns cover the row, Triton's
    # layout gives each thread the same columns of every row of the tile, so the TwoSum tree over the
    # tile's rows runs in registers (no shared memory, no barrier), and a tile element costs about 7-9
    # registers instead of a one-row tile's 12 (compile_check, H 512: r1.w2 96, r2.w2 143, r4.w2 225
    # registers): 14-16 rows per SM in flight at H 512 against 8-10, and 8 at H 2048 against 2.
    # Round 7 on the H200 (bench/results/h200-2026-12-03c): p4x.r4.w2 is the fastest in-budget backward
    # at H 512 from T 4097 (72.4 against 81.1 us at T 65536, 931 against 980 at 1M), p1x.r4.w8 with a
    # BF16 weight at H 1536-2048 (3-5 %). p10x.w2 does not fit: Triton 3.6 gives it 106 registers
    # (Triton 3.9: 96), so 8 of its 10 programs per SM are resident and the grid runs 1.25 waves
    # (ncu); p1x.r8.w16 spills at H 2048 (108 B) and is 3-4x slower. Both stay, measured and never routed.
    # p8x.r2.w2 (registered after round 7, not measured by the harness yet) was the fastest shape in the
    # round-7 probe at H 512, T 1M: 895 us against p4x.r4.w2's 932 (scripts/device/twosum_probe.py).
    # p16x.r2.w1 and p12x.r2.w1 (session 16, for the 256-wide head rows): round 15's ncu had the routed
    # p16x.w1 rows kernel latency-bound (58 % of DRAM peak, 24 % achieved occupancy, contiguous heads
    # BF16 T 65536), with about 2 KB per program in flight (this row and the prefetched next). A
    # two-row tile doubles that at the same 16 programs per SM: compile_check (sm_90a, H 256) gives the
    # `.xs` build 123 registers (FP32 weight) and 128 (BF16) under Triton 3.6, the H200's, against 96-102
    # for one row, so 16 stay resident (16 up to 128 registers); the eft build with a BF16 weight takes
    # 164 (12 resident; its `.wc` twin 128). p12x is the margin (resident up to 170).
    for ppsm, rows, warps, split, h_max in (
            (1, 1, 16, False, H_MAX), (2, 1, 8, False, H_MAX), (2, 1, 4, False, H_MAX), (4, 1, 4, False, H_MAX),
            (2, 2, 8, False, H_MAX), (2, 1, 16, False, narrow), (8, 1, 4, False, 1024), (8, 1, 2, False, 1024),
            (16, 1, 2, False, 256), (16, 1, 1, False, 256), (1, 1, 16, True, H_MAX), (2, 1, 8, True, H_MAX), (2, 1, 16, True, H_MAX),
            (10, 1, 2, False, 512), (7, 2, 2, False, 512), (4, 4, 2, False, 512), (1, 4, 8, False, narrow),
            (1, 8, 16, False, narrow), (8, 2, 2, False, 512), (2, 2, 8, True, H_MAX),
            (16, 2, 1, False, 256), (12, 2, 1, False, 256)):
        sfx = _shape(ppsm, rows, warps) + ".fw.pf.wr" + (".sp" if split else "")
        limit = f"; H <= {h_max}" if h_max != H_MAX else ""
        tile = (f"{rows}-row tiles summed by a TwoSum tree" if rows > 1 else "one row per step") + ", next tile prefetched"
        tile += ", the row held as two power-of-two tiles (H not a power of two only)" if split else ""
        progs.append(Program(
            f"bwd.twosum_pair.{sfx}", "bwd", "twosum_pair", True,
            LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm, fold=256, fold_in=WS, prefetch=True,
                         split_h=split, reduce="wide"),
            f"error-free products + TwoSum per thread ({tile}), FP64 fold every 256 rows in the program's FP64 "
            f"workspace row, [P, H] FP64 partials + wide fixed-order reduce kernel ({ppsm} programs/SM{limit})",
            bwd_mod, mode=TWOSUM, H_max=h_max))
    # TMA loads (`.tma`, programs/backward.py rmsnorm_bwd_tma_kernel): the `.wr` shapes above with
    # the next tiles waiting in shared memory instead of registers, `stages` deep. Round 6 on the
    # H200: fastest only at T = 4096 (H 512-4096, by 1-7 %), slower at every larger T (H 8192,
    # T 65536: 1461 against 928 us). Rows read in place need a 16-byte aligned base and row stride,
    # so head-strided views (a slice of a fused qkv, say) are left to the pointer programs.
    # Programs per SM are what fits (compile_check: 72 registers at H 512 with 4 warps, 7 programs
    # per SM; 222 at H 4096 with 8 warps, one), so that no program waits for a second wave.
    for ppsm, warps, stages, h_max, twin in (
            (7, 4, 4, 1024, "p8x.w4"), (6, 4, 8, 1024, "p8x.w4"), (8, 4, 8, 256, "p8x.w4"), (2, 4, 6, 2048, "p2x.w4"),
            (2, 4, 4, 4096, "p2x.w4"), (1, 8, 6, H_MAX, "p1x.w16"), (1, 16, 4, H_MAX, "p1x.w16")):
        progs.append(tma_program(ppsm, 1, warps, stages, h_max, f"bwd.twosum_pair.{twin}.fw.pf.wr"))
    # `.op` (reduce 'one_pass', above): twins of `.wr` programs whose partials take one reduce step
    # instead of three at P = 264 (runner.one_pass_reduce_meta says why): the new `pair` shapes and the
    # compensated ones routed at the backward floor's rows (H 4096 FP32 and H 8192 BF16, T 4096).
    by_name = {p.name: p for p in progs}
    for base in ("pair.p2x.w8.pf.wr", "pair.p2x.r2.w8.pf.wr", "pair.p1x.w16.pf.wr",
                 "twosum_pair.p2x.w4.fw.pf.wr", "twosum_pair.p1x.w16.fw.pf.wr"):
        b = by_name[f"bwd.{base}"]
        progs.append(replace(b, name=f"bwd.{base.removesuffix('.wr')}.op", launch=replace(b.launch, reduce="one_pass"),
                             description=f"as {b.name}, the partials summed in one step of up to 512 partial rows"))
    # `.xs` (products, above): split-rstd twins of the compensated shapes routed at T >= 4096 after
    # round 10, and of `p2x.r2.w8.fw.pf.wr.sp`, the two-row tile that H 1536 runs unpadded (1024 + 512
    # columns; session 11's ncu: the padded 2048-wide tile issues H 2048's instructions for 3/4 of its bytes).
    by_name = {p.name: p for p in progs}
    xs_bases = ("p8x.r2.w2.fw.pf.wr", "p4x.r4.w2.fw.pf.wr", "p2x.r2.w8.fw.pf.wr", "p2x.r2.w8.fw.pf.wr.sp",
                "p1x.r4.w8.fw.pf.wr", "p2x.w4.fw.pf.wr", "p1x.w16.fw.pf.wr", "p2x.w8.fw.pf.wr.sp", "p16x.w1.fw.pf.wr",
                "p16x.r2.w1.fw.pf.wr", "p12x.r2.w1.fw.pf.wr")
    for base in xs_bases:
        progs.append(_twin(by_name[f"bwd.twosum_pair.{base}"], "xs", "its products made exact by a split rstd "
                           "instead of mul.rn and FMA residuals (four multiplies per element)", products="split_rstd"))
    # `.wc` (weight_cast, above): BF16-weight twins of the backward programs that win somewhere with
    # an FP32 weight (round 8's table) or with a BF16 one at T >= 4096. BF16 weights only: with an
    # FP32 weight a twin would be its base.
    by_name = {p.name: p for p in progs}
    for base in ("twosum_pair.p8x.r2.w2.fw.pf.wr", "twosum_pair.p4x.r4.w2.fw.pf.wr", "twosum_pair.p1x.r4.w8.fw.pf.wr",
                 "twosum_pair.p2x.r2.w8.fw.pf.wr", "twosum_pair.p2x.w8.fw.pf.wr", "twosum_pair.p2x.w4.fw.pf",
                 "twosum_pair.p2x.w4.fw.pf.wr", "twosum_pair.p1x.w16.fw.pf.wr", "twosum_pair.p16x.w1.fw.pf.wr",
                 "twosum_pair.p1x.w16.fw.pf.wr.sp", "twosum_pair.p2x.w8.fw.pf.wr.sp", "twosum_pair.p2x.w8.fw.pf.sp",
                 "twosum.p2x.w8.fw.pf", "twosum_pair.p2x.r2.w8.fw.pf.wr.sp", "twosum_pair.p16x.r2.w1.fw.pf.wr",
                 "twosum_pair.p12x.r2.w1.fw.pf.wr", *(f"twosum_pair.{b}.xs" for b in xs_bases)):
        progs.append(_weight_cast_twin(by_name[f"bwd.{base}"]))
    # `.sr` (reduce, above): two-pass reduce twins of the `.wr` programs routed at H <= 512, where
    # the wide reduce has H / 32 = 8-16 programs for 528-2112 partial rows (round 15's ncu: 44.8 us
    # of 188 at contiguous heads BF16 T 65536).
    by_name = {p.name: p for p in progs}
    for base in ("p16x.w1.fw.pf.wr", "p16x.w1.fw.pf.wr.xs", "p10x.w2.fw.pf.wr", "p8x.w2.fw.pf.wr",
                 "p4x.r4.w2.fw.pf.wr.xs", "p4x.r4.w2.fw.pf.wr.xs.wc", "p16x.r2.w1.fw.pf.wr.xs", "p16x.r2.w1.fw.pf.wr.xs.wc",
                 "p12x.r2.w1.fw.pf.wr.xs", "p12x.r2.w1.fw.pf.wr.xs.wc"):
        progs.append(_twin(by_name[f"bwd.twosum_pair.{base}"], "sr", "its partials reduced in two passes (64 partial "
                           "rows per program, then the wide reduce over those sums)", reduce="split"))
    # One-warp column tasks (session 16) for T <= 16 at narrow rows, where the backward is launch- and
    # latency-bound: the one failing T <= 256 row is H 512 FP32 T 1, c32.w4 at 1.63 us against
    # torch.compile's 1.38 (the one-warp `.hs` forward takes 1.31). With 4 warps a [rows, 32] column
    # tile spreads its rows over warps and the row task's sum crosses warps: both go through shared
    # memory with barriers (compile_check, sm_90a, H 512: 1,024 bytes). One warp and a tile at least
    # 128 columns wide keep every column's rows in one thread and the row sum in shuffles: 0 bytes
    # of shared memory at H 512 for c128.w1 and c256.w1 (c64.w1: 1,024). Wider rows get more warps
    # (`warps_for`), as every program does.
    # Shorter column tiles (session 16, `c{block}x{rows}`): at T 1 a column task's path is its one
    # tile's loads, products and FP64 row sum, and a 64-row tile is mostly masked rows. SASS up to each
    # task's EXIT (`scripts/sass_paths.py --H 512`, sm_90a): c32.w4's column task 394 instructions and
    # row task 123; c32x16.w4 176 and 123 (T <= 16 in one tile); c64x2.w4 100 and 123 (one tile per
    # 2 rows). Their `.hs` twins (`rmsnorm_bwd_column_task_static_kernel`, H compiled in) take the row
    # task to 103 (no IEEE division for mean(g*w*x), no column masks at H a power of two).
    for cb, crows, warps, named_rows in ((64, 32, 4, False), (128, 16, 4, False), (32, 64, 4, False), (128, 8, 1, False),
                                         (256, 4, 1, False), (64, 8, 1, False), (32, 16, 4, True), (64, 2, 4, True)):
        progs.append(Program(
            f"bwd.column_task.c{cb}" + (f"x{crows}" if named_rows else "") + f".w{warps}", "bwd", "column_task", True,
            LaunchPolicy("column_tasks", rows=1, warps=warps, column_block=cb, column_rows=crows),
            f"one launch, no workspace: column tasks own {cb} whole dw columns (rows summed in fixed order, FP64 across tiles of {crows}); row tasks write dx",
            bwd_mod))
    by_name = {p.name: p for p in progs}
    for base in ("c32x16.w4", "c64x2.w4"):
        progs.append(_twin(by_name[f"bwd.column_task.{base}"], "hs", "compiled for each H (no column masks at H a power "
                           "of two; mean(g*w*x) as a product by 1/H)", static_h=True))
    # `.gp` (gres_load, above): GRES-prefetching twins, for the residual form only (elsewhere a twin
    # runs as its base), of the programs routed there at T >= 4097 after round 15 and the split-row
    # `.wr` shapes that win plain rows at H 5120-6144.
    by_name = {p.name: p for p in progs}
    for base in ("p2x.w8.fw.pf.sp", "p2x.w8.fw.pf.wr.sp", "p1x.w16.fw.pf.wr.sp", "p2x.w8.fw.pf.wr.sp.wc", "p2x.w8.fw.pf.wr",
                 "p1x.w16.fw.pf.wr"):
        progs.append(_twin(by_name[f"bwd.twosum_pair.{base}"], "gp", "the incoming gradient of h_new loaded with the "
                           "next tile (residual form)", forms=("residual",), gres_load="prefetched"))
    # `.fs` (stats, above): fast-statistics twins of the one-row `.hs` forwards.
    by_name = {p.name: p for p in progs}
    for warps in (1, 2, 4, 8, 16):
        progs.append(_twin(by_name[f"fwd.row.r1.w{warps}.hs"], "fs", "rstd by the approximate rsqrt of the mean "
                           "(a product by 1/H)", stats="fast"))
    # `.fl` (heads_rows, above): flat-row twins, for contiguous heads only (anywhere else a twin runs
    # as its base), of the programs the table routes there after round 15 and of this session's
    # candidates for the head rows. Contiguous heads hold the worst backward rows against copy
    # (66.8-71.5 % at T >= 65536) and two of the forward rows below torch.compile at T 1.
    by_name = {p.name: p for p in progs}
    for base in ("fwd.row.r1.w1.c256.hs", "fwd.row.r4.w2.c512.hs", "fwd.row.r8.w4.c256.hs", "fwd.row.r8.w4.c512.hs",
                 "fwd.row.r1.w1.hs", "fwd.row.r1.w1.hs.fs", "fwd.row.r1.w2.hs.fs", "bwd.column_task.c32.w4", "bwd.column_task.c128.w1", "bwd.column_task.c256.w1",
                 *(f"bwd.twosum_pair.{b}" for b in (
                     "p10x.w2.fw.pf.wr", "p16x.w1.fw.pf.wr", "p16x.w1.fw.pf.wr.xs.sr", "p2x.r2.w8.fw.pf.wr", "p2x.w8.fw.pf.wr",
                     "p8x.w2.fw.pf.wr", "p16x.r2.w1.fw.pf.wr.xs.sr", "p16x.r2.w1.fw.pf.wr.xs.wc.sr",
                     "p12x.r2.w1.fw.pf.wr.xs.sr"))):
        progs.append(_twin(by_name[base], "fl", "contiguous heads addressed as flat rows (no per-row division)",
                           forms=("heads_contiguous",), heads_rows="flat"))
    # `.gs` (reduce 'grid_sync', above): single-launch twins of the compensated `.wr` programs routed
    # at T 4096-1M. At T 4096 the second launch is most of what separates the deterministic backward
    # from torch.compile (H 512 FP32: 15.2 us against 12.2; the single-launch atomic program, out of
    # budget there, 13.0), and at T 65536 it is the 10 us beyond the rows kernel's 59.9 us at H 512
    # (round 7's ncu) where QuACK takes 62. The rows and partials are the base's, bit for bit; the
    # partials are summed after a grid barrier by the whole grid. The barrier needs every program
    # resident, so only shapes whose programs per SM fit under Triton 3.6 (the H200's) are registered
    # (`compile_check`; the cooperative launch fails loudly if they do not).
    # H_max and weights (compile_check, sm_90a, H 256-8192, both weights, Triton 3.6 and 3.9): where
    # the programs per SM still fit. p2x.w4 holds 255 registers from H 4096 (one fits at H 8192);
    # p2x.r2.w8 takes 151-165 with a BF16 weight from H 1536 (one fits; its `.wc` twin 127-128, two)
    # and 211-221 at H 4096; in the residual form 152 at H 1536-2048 with either weight.
    by_name = {p.name: p for p in progs}
    no_res = ("plain", "heads_strided", "heads_contiguous")
    for base, h_max, w_dtypes, forms in (
            ("p4x.r4.w2.fw.pf.wr.xs", 512, None, None), ("p4x.r4.w2.fw.pf.wr.xs.wc", 512, None, None),
            ("p2x.w4.fw.pf.wr.xs", 4096, None, None), ("p2x.w4.fw.pf.wr.xs.wc", 4096, None, None),
            ("p8x.w2.fw.pf.wr", 512, None, None), ("p16x.w1.fw.pf.wr.xs", 256, None, None),
            ("p16x.w1.fw.pf.wr.xs.wc", 256, None, None), ("p2x.r2.w8.fw.pf.wr.xs", 2048, ("fp32",), no_res),
            ("p2x.r2.w8.fw.pf.wr.xs.wc", 2048, None, no_res), ("p1x.r4.w8.fw.pf.wr.xs", narrow, None, None),
            ("p1x.r4.w8.fw.pf.wr.xs.wc", narrow, None, None), ("p1x.w16.fw.pf.wr.xs", H_MAX, None, None)):
        b = by_name[f"bwd.twosum_pair.{base}"]
        progs.append(replace(b, name=f"bwd.twosum.{base.replace('.wr', '.gs')}", family="twosum", single_launch=True,
                             launch=replace(b.launch, reduce="grid_sync"), H_max=min(h_max, b.H_max), fallback=b.name,
                             w_dtypes=w_dtypes or b.w_dtypes, forms=forms or b.forms,
                             description=f"as {b.name}, in one launch: the partials summed after a grid barrier by "
                                         "every program, a few columns each (a cooperative grid)"))
    # and their `.fl` twins at the head rows (contiguous heads: the worst backward rows against copy)
    by_name = {p.name: p for p in progs}
    for base in ("p16x.w1.fw.pf.gs.xs", "p16x.w1.fw.pf.gs.xs.wc", "p8x.w2.fw.pf.gs"):
        progs.append(_twin(by_name[f"bwd.twosum.{base}"], "fl", "contiguous heads addressed as flat rows (no per-row "
                           "division)", forms=("heads_contiguous",), heads_rows="flat"))
    # `.ur` and `.rw` (session 21): the `.gs` barrier and reduce rebuilt. A phase probe on an H100 (132
    # SMs, as the H200; scripts/device/gs_phase_probe.py) of p4x.r4.w2 at H 512 T 4096: of its ~14 us,
    # the barrier takes 1.5-2.6 and the reduce 2.8-3.6 after the rows. `.ur`: the reduce's tiles over
    # the P partial rows unrolled (the grid's P is known when the kernel is built), so that their loads
    # can be in flight together; the same tiles in the same order, so dx and dw are bit for bit the
    # base's (0.1-0.5 us faster on the H100 at H 512 T 4096-65536; p2x.w4 gained nothing and has none).
    # `.rw`: only the programs that sum a column block wait at the barrier (H / RED_C of them: 128 of
    # 528 at H 512, 64 of 2112 for the heads); the others arrive and exit, so far fewer atomic polls of
    # the generation queue ahead of the arrivals that release it. On the H100, side by side in the
    # harness: H 512 T 4096 14.38 -> 13.57 us with `.ur` (torch.compile 13.86), contiguous heads T 4096
    # 37.3 -> 31.3; p2x.w4 at H 4096 (264 programs, 256 waiting) gained nothing and has none. (Polling
    # with volatile loads instead of atomics was 0.6-0.8 us slower there and is not kept.)
    by_name = {p.name: p for p in progs}
    for base, suffix, options in (
            ("p4x.r4.w2.fw.pf.gs.xs", "ur", dict(reduce_tiles="unrolled")),
            ("p4x.r4.w2.fw.pf.gs.xs.wc", "ur", dict(reduce_tiles="unrolled")),
            ("p4x.r4.w2.fw.pf.gs.xs", "ur.rw", dict(reduce_tiles="unrolled", barrier_wait="reducers")),
            ("p4x.r4.w2.fw.pf.gs.xs.wc", "ur.rw", dict(reduce_tiles="unrolled", barrier_wait="reducers")),
            ("p16x.w1.fw.pf.gs.xs.fl", "rw", dict(barrier_wait="reducers")),
            ("p16x.w1.fw.pf.gs.xs.wc.fl", "rw", dict(barrier_wait="reducers")),
            ("p8x.w2.fw.pf.gs.fl", "rw", dict(barrier_wait="reducers")),
            ("p8x.w2.fw.pf.gs", "rw", dict(barrier_wait="reducers"))):
        what = " and ".join(w for w, on in (("the partials' reduce tiles unrolled", "reduce_tiles" in options),
                                            ("only the reducing programs waiting at the barrier", "barrier_wait" in options)) if on)
        progs.append(_twin(by_name[f"bwd.twosum.{base}"], suffix, what, **options))
    # `.uf` (session 22): the partials summed by `reduce_columns_flat` (each thread adds its elements of
    # the unrolled tiles, then one tree) instead of a tree per tile. After `.ur.rw` the reduce still
    # took most of the time after the rows (the phase probe, H100); at H 512 T 4096 the
    # 2xfwd+bwd floor's row is 0.3 us short. dw is summed in another fixed order: deterministic, not
    # bitwise the base's, qualified on its own evidence.
    for base, suffix, options in (
            ("p4x.r4.w2.fw.pf.gs.xs", "uf.rw", dict(reduce_tiles="flat", barrier_wait="reducers")),
            ("p4x.r4.w2.fw.pf.gs.xs.wc", "uf.rw", dict(reduce_tiles="flat", barrier_wait="reducers")),
            ("p1x.w16.fw.pf.gs.xs", "uf", dict(reduce_tiles="flat")),
            # `.uf8` (session 23): the flat reduce in tiles of 8 columns by 64 partial rows instead of
            # grid_sync_meta's 4 by 128 at H 512 (64 programs reduce and wait instead of 128, 9 tiles
            # instead of 5). In scripts/device/gs_reduce_variants.py on an H100 (side by side): H 512
            # BF16 T 4096 12.29 us against `.uf.rw`'s 12.93, T 16384 26.66 against 28.77.
            ("p4x.r4.w2.fw.pf.gs.xs", "uf8.rw", dict(reduce_tiles="flat", reduce_columns=8, barrier_wait="reducers")),
            ("p4x.r4.w2.fw.pf.gs.xs.wc", "uf8.rw", dict(reduce_tiles="flat", reduce_columns=8, barrier_wait="reducers"))):
        what = "the partials summed thread-wise over unrolled tiles" + (
            f" of {options['reduce_columns']} columns" if "reduce_columns" in options else "") + ", then one tree" + (
            " and only the reducing programs waiting at the barrier" if "barrier_wait" in options else "")
        progs.append(_twin(by_name[f"bwd.twosum.{base}"], suffix, what, **options))
    # `.l2p4` / `.l2b4` (session 31, l2_prefetch above): twins of the split-rstd programs at the rows
    # that bind the backward copy and peer targets, where the tiles held in registers cap the bytes
    # in flight: contiguous and strided heads H 256 (69.6 % of copy routed at contiguous T 65536),
    # plain H 1536 (`p1x.r4.w8`, 217 registers, one program per SM; 76.6 % of copy, 0.84x QuACK at
    # T 1M), H 512 and the 16-warp wide rows. The head rows take the two-row p12x builds: the prefetch
    # addresses cost registers (compile_check, sm_90a, Triton 3.6, H 256: p16x.r2.w1.xs.sr 128 -> 162,
    # 12 of 16 programs resident), and 12 programs fit up to 170. Four tiles ahead: at H 1536 about
    # 100 KB per SM asked for, 13 MB over 132 SMs, a quarter of the H200's L2. dx and dw are the
    # base's bit for bit (scripts/device/l2_prefetch_probe.py checks it on the GPU beside the times).
    # Measured on an H100 80GB HBM3 (session 31, the probe, one process, BF16 T 65536 and H 1536 T 1M):
    # slower than the base at every key and distance, 0.62-0.99x, and the more so the further ahead
    # (2 tiles 0.81-0.99x, 4 tiles 0.69-0.89x, 8 tiles 0.62-0.69x; bench/results/h100-2026-12-07b).
    # Never timed on the H200, never qualified, so never routed; kept as measured.
    by_name = {p.name: p for p in progs}
    for base in ("p1x.r4.w8.fw.pf.wr.xs", "p1x.r4.w8.fw.pf.wr.xs.wc", "p12x.r2.w1.fw.pf.wr.xs.sr.fl",
                 "p12x.r2.w1.fw.pf.wr.xs.sr", "p4x.r4.w2.fw.pf.wr.xs", "p4x.r4.w2.fw.pf.wr.xs.wc", "p1x.w16.fw.pf.wr.xs"):
        for kind, letter in L2_PREFETCH_LETTERS.items():
            what = ("g and x of the tile four steps past the next asked into L2 "
                    + ("line by line (prefetch.global.L2)" if kind == "lines" else "row by row (cp.async.bulk.prefetch.L2)"))
            progs.append(_twin(by_name[f"bwd.twosum_pair.{base}"], f"l2{letter}4", what, l2_prefetch=kind, l2_ahead=4))
    # `.mr128` (session 32, max_registers above): the unpadded two-row H 1536 tile at 149 registers
    # (compile_check, Triton 3.6) runs one of its two programs per SM at a time; capped at 128 it
    # spills nothing and both are resident. H <= 2048: wider split rows (5120, 6144) need far more
    # than 128 at two rows of 8 warps, and would spill.
    for base in ("p2x.r2.w8.fw.pf.wr.sp.xs", "p2x.r2.w8.fw.pf.wr.sp.xs.wc"):
        capped = _twin(by_name[f"bwd.twosum_pair.{base}"], "mr128", "its rows kernel capped at 128 registers per "
                       "thread, so that both programs per SM are resident", max_registers=128)
        progs.append(replace(capped, H_max=2048))
    # Multi-row `.tma` (session 32): the rows-1 `.tma` shapes above were 10 % slower than their
    # pointer twins at H 1536 BF16 T 65536 on the H200 (`p2x.w4.s6` 258.9 us against `p2x.w4.fw.pf.wr`
    # 236.2), though each keeps 5 rows of g and x in flight: per row a program waits on its barrier and
    # sums a row across its warps. Two or four rows per step share those costs, and the tiles waiting
    # in shared memory still cost no registers (compile_check, sm_90a, Triton 3.6, H 1536 BF16:
    # `p2x.r2.w8.s4` 126 registers and 49 KB, two programs per SM, 3 steps of 2 rows each in flight;
    # `p1x.r4.w8.s4` 197 registers and 99 KB). `.wc` twins: the FP32-weight build, as for the pointer
    # programs. `.xs.tma`: the split-rstd products (programs/backward.py rmsnorm_bwd_tma_split_rstd_kernel),
    # which took the pointer programs 10-14 % further at H 1536. H <= 2048: at H 4096 two 4096-wide
    # rows of 8 warps need about 240 registers.
    for ppsm, rows, warps, stages, twin in ((2, 2, 8, 4, "p2x.r2.w8"), (2, 2, 8, 6, "p2x.r2.w8"), (1, 4, 8, 4, "p1x.r4.w8")):
        for xs in ((False, True) if stages == 4 else (False,)):
            tma = tma_program(ppsm, rows, warps, stages, 2048, f"bwd.twosum_pair.{twin}.fw.pf.wr{'.xs' if xs else ''}",
                              products="split_rstd" if xs else "eft")
            progs += [tma, _weight_cast_twin(tma)]
    # Narrow multi-row `.tma` (session 32): the same at the rows that bind the copy target, 256-wide
    # heads and H 512, with a tile of one or two warps and many programs per SM, as the pointer
    # programs there (`p12x.r2.w1`, `p4x.r4.w2`). On an H100 the rows-1 `.tma` shapes were 0.59-0.78x
    # of the routed program there and the 8-warp multi-row ones 0.12-0.36x (a 256-wide row over 256
    # threads); the 8-warp four-row `p1x.r4.w8.s4` ran H 1536 at 1.11-1.15x the routed program (T
    # 16384 to 1M, bench/results/h100-2026-12-07c). At P = 12-16 x SMs the partials take the two-pass
    # reduce (`.sr`), as the pointer programs there do.
    for ppsm, rows, warps, stages, h_max, twin in ((16, 2, 1, 4, 256, "p16x.r2.w1"), (12, 2, 1, 6, 256, "p12x.r2.w1"),
                                                   (5, 4, 2, 4, 512, "p4x.r4.w2"), (4, 4, 2, 6, 512, "p4x.r4.w2")):
        progs.append(tma_program(ppsm, rows, warps, stages, h_max, f"bwd.twosum_pair.{twin}.fw.pf.wr.xs",
                                 products="split_rstd", reduce="split", like=f"bwd.twosum_pair.{twin}.fw.pf.wr.xs.sr"))
    # `.tmc` (session 34, loads 'tma_chunks'): the `.tma` shapes with g and x read as one box per
    # step (programs/backward.py `rmsnorm_bwd_tma_chunks_kernel`): the multi-row H <= 2048 shapes
    # that reached an H100's copy at H 1536, and one- and two-row shapes for the wide rows, where the
    # rows-1 `.tma` programs issued 32 boxes of 512 bytes per tensor per step.
    # `.fw.tmc` (session 35, TMC_RED_FOLD_SHAPES): the same with the FP64 total added to the
    # workspace row by atomics (`rmsnorm_bwd_tma_chunks_red_fold_kernel`).
    for (ppsm, rows, warps, stages, h_max, twin, xs), fold_in in ([(s, "registers") for s in TMC_SHAPES]
                                                                  + [(s, "workspace") for s in TMC_RED_FOLD_SHAPES]):
        tmc = tma_program(ppsm, rows, warps, stages, h_max, f"bwd.twosum_pair.{twin}.fw.pf.wr{'.xs' if xs else ''}",
                          products="split_rstd" if xs else "eft", loads="tma_chunks", fold_in=fold_in)
        progs += [tmc, _weight_cast_twin(tmc)]
    # `f64_pair` (session 36, F64_SHAPES above): the dw products summed in FP64 instead of by TwoSum
    # (exact products, FP64 additions: err/tol at the FP32 rounding of dw, as the compensated
    # programs'), in four instructions per element against eleven; `.fl` twins for contiguous heads,
    # `.wc` twins for a BF16 weight; `.tmc` ones with one-box TMA loads, the one-row 16-warp pointer
    # program (every H) as their fallback.
    f64_desc = "dw products exact (g * x * 2^e in FP32, times rstd / 2^e in FP64) summed in FP64"
    for ppsm, rows, warps, reduce, h_max in F64_SHAPES:
        shape = _shape(ppsm, rows, warps)
        red = {"wide": "wr", "split": "wr.sr", "one_pass": "op"}[reduce]
        limit = f"; H <= {h_max}" if h_max != H_MAX else ""
        base = Program(
            f"bwd.f64_pair.{shape}.pf.{red}", "bwd", "f64_pair", True,
            LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm, prefetch=True, reduce=reduce,
                         products="fp64"),
            f"{f64_desc} ({rows} rows per step, next tile prefetched), [P, H] FP64 partials + fixed-order "
            f"{reduce} reduce ({ppsm} programs/SM{limit})", bwd_mod, mode=TWOSUM, H_max=h_max)
        # `.sr` ends the name (`.wr.wc.sr`, as the compensated programs' twins)
        progs += [base, _weight_cast_twin(base, f"bwd.f64_pair.{shape}.pf.wr.wc.sr" if reduce == "split" else None)]
        if h_max <= 256:
            progs.append(_twin(base, "fl", "contiguous heads addressed as flat rows (no per-row division)",
                               forms=("heads_contiguous",), heads_rows="flat"))
    for ppsm, rows, warps, h_max in F64_SPLIT_SHAPES:
        shape = _shape(ppsm, rows, warps)
        limit = f"; H <= {h_max}" if h_max != H_MAX else ""
        progs.append(Program(
            f"bwd.f64_pair.{shape}.pf.wr.sp", "bwd", "f64_pair", True,
            LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm, prefetch=True, reduce="wide",
                         products="fp64", split_h=True),
            f"{f64_desc} ({rows} rows per step, next tile prefetched), the row held as two power-of-two tiles "
            f"(H not a power of two only), [P, H] FP64 partials + fixed-order wide reduce ({ppsm} programs/SM{limit})",
            bwd_mod, mode=TWOSUM, H_max=h_max))
        progs.append(_weight_cast_twin(progs[-1]))
    # `f64` (session 36): the contiguous-heads shapes as one launch (`.gs`: the rows, the grid barrier
    # where only the reducers wait, `.rw`, and the looped reduce), as the routed heads program is.
    by_name = {p.name: p for p in progs}
    for ppsm, rows in ((16, 1), (20, 1), (12, 2)):
        shape = _shape(ppsm, rows, 1)
        for flat in ("", ".fl"):
            twin = by_name[f"bwd.f64_pair.{shape}.pf.wr.sr{flat}"]
            progs.append(replace(
                twin, name=f"bwd.f64.{shape}.pf.gs{flat}.rw", family="f64", single_launch=True, fallback=twin.name,
                launch=replace(twin.launch, reduce="grid_sync", barrier_wait="reducers"),
                description=f"single launch: as {twin.name}, the partials summed after a grid barrier (only the "
                            "programs that sum a column block wait) in fixed order by every program"))
    for ppsm, rows, warps, stages, h_max in F64_TMC_SHAPES:
        shape = _shape(ppsm, rows, warps)
        fallback = "bwd.f64_pair.p1x.w16.pf.wr"
        limit = f"; H <= {h_max}" if h_max != H_MAX else ""
        tmc = Program(
            f"bwd.f64_pair.{shape}.s{stages}.wr.tmc", "bwd", "f64_pair", True,
            LaunchPolicy("persistent", rows=rows, warps=warps, stages=stages, programs_per_sm=ppsm, reduce="wide",
                         loads="tma_chunks", products="fp64"),
            f"{f64_desc} ({rows} rows per step), g and x read as one TMA box per step, {stages} stages deep; "
            f"[P, H] FP64 partials + wide fixed-order reduce ({ppsm} programs/SM{limit})",
            bwd_mod, mode=TWOSUM, H_max=h_max, forms=("plain", "residual", "heads_contiguous"), fallback=fallback)
        progs += [tmc, _weight_cast_twin(tmc)]
    # `.rl` (session 33, reload above): tiles read twice (the second time from L1) instead of held
    # across the row sum, so that a program needs the dw state's registers and little more, and more
    # programs per SM hide DRAM latency in place of a register-held next tile. For the wide rows of
    # the copy and peer targets (plain H 4096-8192 at 79-90 % of copy on the H200, H 5120 and 6144
    # T 65536 at 0.95-0.97x torch.compile) and H 1536-2048.
    for pf, (ppsm, rows, warps, split, cap, h_max) in ([(False, s) for s in RELOAD_SHAPES]
                                                      + [(True, s) for s in RELOAD_PREFETCH_SHAPES]):
        sfx = (_shape(ppsm, rows, warps) + ".fw" + (".pf" if pf else "") + ".wr"
               + (".sp" if split else "") + ".xs.rl" + (f".mr{cap}" if cap else ""))
        tile = (f"{rows}-row tiles summed by a TwoSum tree" if rows > 1 else "one row per step")
        tile += ", next tile prefetched (held as BF16 across the row sum)" if pf else ""
        tile += ", the row held as two power-of-two tiles (H not a power of two only)" if split else ""
        progs.append(Program(
            f"bwd.twosum_pair.{sfx}", "bwd", "twosum_pair", True,
            LaunchPolicy("persistent", rows=rows, warps=warps, programs_per_sm=ppsm, fold=256, fold_in=WS,
                         split_h=split, reduce="wide", products="split_rstd", reload=True, max_registers=cap,
                         prefetch=pf),
            f"split-rstd exact products + TwoSum per thread ({tile}), each tile read twice (the row sum, then "
            f"from L1 for dx and dw) and the weight from L1, this tile not held across the row sum; FP64 fold every 256 "
            f"rows in the program's workspace row, [P, H] FP64 partials + wide fixed-order reduce kernel "
            f"({ppsm} programs/SM" + (f", at most {cap} registers per thread" if cap else "")
            + (f"; H <= {h_max}" if h_max != H_MAX else "") + ")", bwd_mod, mode=TWOSUM, H_max=h_max))
    return progs


@functools.lru_cache(maxsize=1)
def _by_name() -> dict[str, Program]:
    out: dict[str, Program] = {}
    for p in _catalog():
        if p.name in out:
            raise RuntimeError(f"duplicate program name {p.name!r} in the registry")
        out[p.name] = p
    for p in out.values():
        fb = out.get(p.fallback) if p.fallback else None
        # a `.gs` program falls back to its two-launch twin (family `twosum_pair` / `f64_pair`, no barrier)
        family_ok = fb is not None and (fb.family == p.family or (p.launch.reduce == "grid_sync" and fb.family == f"{p.family}_pair"))
        if p.fallback and (fb is None or fb.launch.loads != "pointer" or fb.mode != p.mode or fb.op != p.op
                           or not family_ok or fb.deterministic != p.deterministic or fb.H_max < p.H_max
                           or not set(p.forms) <= set(fb.forms) or not set(p.w_dtypes) <= set(fb.w_dtypes)):
            raise RuntimeError(f"program {p.name!r}: fallback {p.fallback!r} is not a registered pointer-load program "
                               "of the same family (a `.gs` program: its two-launch twin) covering its H, forms and weights")
    return out


def all_programs() -> list[Program]:
    """Every registered program (forward and backward, the reference programs included)."""
    return list(_by_name().values())


class UnknownProgramError(KeyError, ValueError):
    """A program name the registry does not hold (a KeyError for lookups, a ValueError for callers)."""

    def __str__(self) -> str:
        return str(self.args[0])


def get(name: str) -> Program:
    """The program called `name`; an UnknownProgramError (KeyError and ValueError) names the accepted names."""
    try:
        return _by_name()[name]
    except (KeyError, TypeError):
        raise UnknownProgramError(f"program={name!r} is not registered; registered programs: {', '.join(sorted(_by_name()))}") from None


def names(op: str | None = None) -> list[str]:
    return [p.name for p in all_programs() if op is None or p.op == op]
