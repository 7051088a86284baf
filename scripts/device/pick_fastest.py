"""Pick, from harness evidence on the device machine, the fastest program per (form, H, w) at one T.

    python scripts/device/pick_fastest.py EVIDENCE.jsonl --op bwd --T 1048576 [--family twosum_pair,twosum]
        [--top 1] [--exclude peer.]

Prints one `H program` line per key (the median over sessions of each timing record's median), so
a campaign script can qualify, in its next call, the programs the previous call timed fastest,
without a round trip through this machine (the device goes cold 30 s after a call).
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("evidence", nargs="+")
    ap.add_argument("--op", default="bwd")
    ap.add_argument("--T", type=int, required=True)
    ap.add_argument("--family", default="", help="comma list of program-name families (bwd.<family>.); default any")
    ap.add_argument("--top", type=int, default=1)
    ap.add_argument("--form", default="plain")
    args = ap.parse_args(argv)
    fams = [f for f in args.family.split(",") if f]
    times = collections.defaultdict(list)
    for path in args.evidence:
        with open(path) as fh:
            for line in fh:
                r = json.loads(line)
                if (r.get("kind") != "timing" or r.get("op") != args.op or r.get("T") != args.T or r.get("copy")
                        or r.get("form") != args.form or not r.get("samples_us") or r["program"].startswith("peer.")):
                    continue
                if fams and r["program"].split(".")[1] not in fams:
                    continue
                times[(r["H"], r["w_dtype"], r["program"])].append(statistics.median(r["samples_us"]))
    best = collections.defaultdict(list)
    for (H, w, prog), v in times.items():
        best[(H, w)].append((statistics.median(v), prog))
    for (H, w), cands in sorted(best.items()):
        for us, prog in sorted(cands)[: args.top]:
            print(H, w, prog, f"{us:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
