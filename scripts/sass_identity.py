"""Did a kernel refactor change the code that was measured? Compare the SASS of the routed programs'
kernels at a git revision (the one the shipped evidence was measured on) with the working tree.

    python scripts/sass_identity.py REV [--H 512,2048,6144,8192] [--table cake_kernels/routes/sm_90a.json]

Both sides are compiled here for sm_90a (no GPU needed; see cake_kernels/compile_check.py) with
the working tree's compile-time arguments (a kernel argument the old side lacks is dropped).
Prints, per kernel build, `same` or the number of differing SASS lines and where the first one is
(as a fraction of the kernel: a difference only near the end is the once-per-program epilogue).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODULES = ("common", "forward", "backward")


def old_package(rev: str, where: Path) -> str:
    pkg = where / "kernels_at_rev"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for m in MODULES:
        src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:cake_kernels/programs/{m}.py"],
                             capture_output=True, text=True, check=True).stdout
        (pkg / f"{m}.py").write_text(src.replace("from cake_kernels.programs.common import", "from kernels_at_rev.common import"))
    sys.path.insert(0, str(where))
    return "kernels_at_rev"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev")
    ap.add_argument("--H", default="512,2048,6144,8192")
    ap.add_argument("--table", default=str(ROOT / "cake_kernels" / "routes" / "sm_90a.json"))
    args = ap.parse_args(argv)
    from cake_kernels import compile_check as cc
    from cake_kernels import registry
    from cake_kernels.programs import backward as nb
    from cake_kernels.programs import forward as nf

    tmp = Path(tempfile.mkdtemp())
    pkg = old_package(args.rev, tmp)
    ob, of = importlib.import_module(f"{pkg}.backward"), importlib.import_module(f"{pkg}.forward")
    # Every kernel of the working tree with its namesake at REV (a kernel new since REV has none).
    twin = {}
    for new_mod, old_mod in ((nb, ob), (nf, of)):
        for attr in dir(new_mod):
            if hasattr(old_mod, attr) and type(getattr(new_mod, attr)).__name__ == "JITFunction":
                twin[getattr(new_mod, attr)] = getattr(old_mod, attr)

    def sass(fn, sig, meta, warps):
        out = cc.cuobjdump(cc.compile_kernel(fn, sig, meta, warps).asm["cubin"], "-sass")
        return [re.sub(r"/\*[0-9a-f]+\*/", "", ln).strip() for ln in out.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln)]

    table = json.loads(Path(args.table).read_text())
    routed = sorted({w["program"] for r in table["routes"] for w in r["windows"]})
    same = total = 0
    for name in routed:
        prog = registry.get(name)
        for H in (int(v) for v in args.H.split(",")):
            for resid in (False, True):
                if not prog.supports(H, "plain", "fp32"):
                    continue
                for fn, sig, meta, warps in cc.kernels_of(prog, H, resid):
                    if fn not in twin:
                        print(f"new: {name} H={H} residual={resid} {fn.fn.__name__} has no namesake at {args.rev}")
                        continue
                    a, b = sass(fn, sig, meta, warps), sass(twin[fn], sig, meta, warps)
                    total += 1
                    if a == b:
                        same += 1
                        continue
                    sm = difflib.SequenceMatcher(a=b, b=a, autojunk=False)
                    first = next(op for op in sm.get_opcodes() if op[0] != "equal")[1]
                    ndiff = sum(max(i2 - i1, j2 - j1) for t, i1, i2, j1, j2 in sm.get_opcodes() if t != "equal")
                    print(f"differs: {name} H={H} residual={resid} {fn.fn.__name__}: {ndiff} of {len(b)} lines, "
                          f"first at {first / max(len(b), 1):.0%} of the kernel")
    print(f"{same} of {total} kernel builds of {len(routed)} routed programs compile to the same SASS as at {args.rev}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
