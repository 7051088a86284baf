"""SASS instruction counts of programs' own kernels for sm_90a, without a GPU: a static view of a
launch-bound kernel's critical path and of a loop's per-step work.

    python scripts/sass_paths.py --programs fwd.row.r1.w1.hs,fwd.row.r1.w1.hs.fs --H 512,4096
    python scripts/sass_paths.py --programs bwd.twosum_pair.p16x.w1.fw.pf.wr --H 256 --heads

Per program and H it prints the kernel's SASS instructions in all, the instructions up to its first
and second EXIT (a kernel whose programs take one of two tasks, as the column tasks do, has one path
per task; the IEEE division and square root keep their slow paths after the last EXIT), the
length of each loop body (a backward branch), and of the longest loop's steady step: that body less
the largest block a forward branch in it skips (a compensated program's FP64 fold, taken once every
FOLD steps), with its instructions by class and per row (times warps, over the tile's rows: the
warp instructions the SM's schedulers issue per row, one a cycle each at best). The build is the
one the runner launches on contiguous rows (`compile_check.runtime_specialization`: NH = 1 compiled
in); `--heads` builds it as a per-head view indexed by head runs it (NH at run time, head strides not multiples of 16), which is what the
`.fl` programs avoid. Counts are Triton 3.9's here; the H200 runs Triton 3.6.
"""

from __future__ import annotations

import argparse
import re

from cake_kernels import compile_check, registry

_LINE = re.compile(r"\s+/\*([0-9a-f]{4})\*/\s+(.*)")
_BRANCH = re.compile(r"(@!?P\d\s+)?BRA (0x[0-9a-f]+)")


def sass_paths(name: str, H: int, heads: bool = False, w: str = "fp32") -> dict:
    """{"total", "exits" (instructions up to each of the first two EXITs), "loops" (loop body lengths)}
    of the first kernel `name` launches at rows of H columns."""
    prog = registry.get(name)
    fn, sig, meta, warps = compile_check.kernels_of(prog, H, False, w)[0]
    divisible, ones = compile_check.runtime_specialization(sig, H)
    if heads:
        ones = {k: v for k, v in ones.items() if k != "NH"}
        divisible = divisible - {"sgh", "sxh", "srh"}
    compiled = compile_check.compile_kernel(fn, sig, {**meta, **ones}, warps, "sm_90a", prog.launch.stages, divisible)
    lines = [m for m in (_LINE.match(s) for s in compile_check.cuobjdump(compiled.asm["cubin"], "-sass").splitlines()) if m]
    exits = [i + 1 for i, m in enumerate(lines) if m.group(2).startswith("EXIT")][:2]
    loops, bodies = [], []
    for i, m in enumerate(lines):
        b = _BRANCH.match(m.group(2))
        if b and int(b.group(2), 16) < int(m.group(1), 16):
            loops.append((int(m.group(1), 16) - int(b.group(2), 16)) // 16)
            start = int(b.group(2), 16)
            bodies.append([(int(ln.group(1), 16), ln.group(2)) for ln in lines[:i + 1] if int(ln.group(1), 16) >= start])
    body = max(bodies, key=len) if bodies else []
    # The steady step: the longest loop less the largest block a forward branch inside it skips (the
    # compensated programs' FP64 fold, taken once every FOLD steps), and that branch.
    skipped = []
    for addr, ins in body:
        b = _BRANCH.match(ins)
        if b and b.group(1) and addr < int(b.group(2), 16) <= body[-1][0]:
            block = [(a, i) for a, i in body if addr <= a < int(b.group(2), 16)]
            skipped = max(skipped, block, key=len)
    skipped_at = {a for a, _ in skipped}
    steady = [i for a, i in body if a not in skipped_at]
    # Elements of the tile a thread holds per step (rows x BLOCK_H over the program's threads).
    per_thread = meta.get("ROWS", 1) * meta.get("BLOCK_H", 0) / (32 * warps) if "BLOCK_H" in meta else 0
    return {"total": len(lines), "exits": exits, "loops": loops, "steady": len(steady), "mix": opcode_mix(steady),
            "per_thread": per_thread, "warps": warps, "rows": meta.get("ROWS", 1)}


# Opcode classes of the mix: the pipes a loop's instructions issue to (sm_90 SASS mnemonics).
_CLASSES = (("F2F", ("F2F",)), ("FP64", ("DADD", "DMUL", "DFMA", "DSETP")), ("FP32", ("FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "FSEL")),
            ("LD/ST", ("LDG", "STG", "LDS", "STS", "LDSM", "LDL", "STL", "UBLKCP", "UTMALDG", "SYNCS")), ("SHFL", ("SHFL",)))


def opcode_mix(body: list[str]) -> dict:
    """Instructions of a loop body by class (`_CLASSES`, the rest as "other"), predicates stripped."""
    out = {name: 0 for name, _ in _CLASSES} | {"other": 0}
    for ins in body:
        op = re.sub(r"^@!?U?P\w+\s+", "", ins).split()[0].split(".")[0]
        for name, ops in _CLASSES:
            if op in ops:
                out[name] += 1
                break
        else:
            out["other"] += 1
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", required=True, help="comma list of registered program names")
    ap.add_argument("--H", default="512", help="comma list of hidden sizes")
    ap.add_argument("--heads", action="store_true", help="build as a per-head view indexed by head (NH at run time)")
    ap.add_argument("--w", default="fp32", choices=("fp32", "bf16"), help="weight dtype of the build")
    a = ap.parse_args(argv)
    names = a.programs.split(",")
    unknown = [n for n in names if n not in registry.names()]
    if unknown:
        ap.error(f"--programs: {unknown} are not registered programs (cake_kernels.registry.names() lists them)")
    mix = " | ".join(n for n, _ in _CLASSES)
    print(f"| program | H | addressing | SASS | to 1st EXIT | to 2nd EXIT | loop bodies | steady step "
          f"| elements / thread / step | warp instructions / row | steady step: {mix} | other |")
    print("|---|---|---|---|---|---|---|---|---|---|" + "---|" * (len(_CLASSES) + 1))
    for name in names:
        for H in (int(h) for h in a.H.split(",")):
            r = sass_paths(name, H, a.heads, a.w)
            ex = r["exits"] + [None, None]
            print(f"| {name} | {H} | {'by head' if a.heads else 'flat'} | {r['total']} | {ex[0]} | {ex[1] or '-'} | "
                  f"{', '.join(map(str, r['loops'])) or '-'} | {r['steady']} | {r['per_thread']:g} | "
                  f"{r['steady'] * r['warps'] / r['rows']:g} | "
                  + " | ".join(str(v) for v in r["mix"].values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
