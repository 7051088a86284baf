"""The registered L2-prefetch backwards worth qualifying and timing, from l2_prefetch_probe.py's JSON.

    python scripts/device/l2_winners.py PROBE_JSON [--min-gain 1.02]

Prints one line per probed key where a registered `.l2p4` / `.l2b4` twin (not a look-alike built by
the probe, named with `@`) was at least `--min-gain` times faster than its base and bit for bit its
base's outputs: `form H w_dtype T program[,program]`, what a campaign's `run` takes as
--forms/--H/--w-dtypes/--T/--programs. Prints nothing when none was.
"""
from __future__ import annotations

import argparse
import json
import sys


def winners(probe: dict, min_gain: float) -> list[tuple[str, int, str, int, list[str]]]:
    out: dict[tuple, list[str]] = {}
    for r in probe.get("rows", []):
        if "error" in r or "@" in r["program"] or r["program"] == r["base"] or not r.get("bitwise_base"):
            continue
        if ".l2" in r["program"] and r["vs_base"] >= min_gain:
            out.setdefault((r["form"], r["H"], r["w_dtype"], r["T"]), []).append(r["program"])
    return [(*k, v) for k, v in out.items()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probe_json")
    ap.add_argument("--min-gain", type=float, default=1.02, help="base time / twin time at least this (default 1.02)")
    args = ap.parse_args(argv)
    if args.min_gain <= 0:
        ap.error(f"--min-gain: {args.min_gain} is not a positive ratio")
    try:
        probe = json.load(open(args.probe_json))
    except (OSError, ValueError) as exc:
        ap.error(f"probe_json: cannot read {args.probe_json!r} as the probe's JSON ({exc})")
    for form, H, w, T, progs in winners(probe, args.min_gain):
        print(form, H, w, T, ",".join(progs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
