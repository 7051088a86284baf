"""Loopback load test of the service: N concurrent clients for D seconds against dashboard pages,
the JSON API and authenticated ingest; prints p50/p99 latency and errors per request kind.

Bounded and self-stopping: every client stops at the deadline or when the total request cap is
reached, each request has a timeout, and the server this script starts is stopped at the end. It
only ever talks to a loopback address.

By default it starts its own server (the real app under uvicorn, in a separate process) on a
throwaway SQLite store seeded with the SYNTHETIC fixture of tests/api/fixtures, with that
fixture's two route tables and an ingest token. `--url` targets a server already running on
loopback instead (then give `--token` for ingest and `--arch` for the pages).

Usage: python bench/load_test.py [--clients 50] [--duration 30] [--max-requests 200000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import multiprocessing
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "api" / "fixtures"
ARCH = "sm_00a"
TOKEN = "load-test-token-not-secret"
MAX_CLIENTS, MAX_DURATION = 500, 600

# (kind, weight): what one client request is, drawn at random with these weights.
MIX = [
    ("page: index", 5), ("page: arch", 10), ("page: key", 15), ("page: diff", 5), ("page: run", 5),
    ("api: arch", 10), ("api: key", 15), ("api: window", 10), ("api: runs", 5),
    ("ingest: repeat", 10), ("ingest: new", 5), ("ingest: bad token", 3), ("ingest: malformed", 2),
]
EXPECT = {"ingest: bad token": 401, "ingest: malformed": 422}


def _serve(url: str, port: int, ready) -> None:  # runs in the server process
    sys.path.insert(0, str(REPO))
    import uvicorn

    from api.app import create_app

    app = create_app(store_url=url, token=TOKEN, tables={
        f"runtime:{ARCH}": FIX / "synthetic-table-runtime.json",
        f"published:{ARCH}": FIX / "synthetic-table-published.json"})
    ready.set()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _evidence(run_id: str) -> str:
    # On the fixture's GPU model: runs of a second model would make the key pages ask which model to
    # show (409), which is not what this test loads.
    recs = [
        {"schema": "cake-evidence/1", "kind": "run", "run_id": run_id, "source": "measured", "arch": ARCH,
         "gpu": "SYNTHETIC (no GPU: test fixture)", "sm_count": 132, "started": "2026-12-02T12:00:00Z",
         "note": "SYNTHETIC load-test record"},
        {"schema": "cake-evidence/1", "kind": "timing", "run_id": run_id, "arch": ARCH, "program": "bwd.pair.p2x.w8",
         "op": "bwd", "H": 4096, "T": 3000, "x_dtype": "bf16", "w_dtype": "fp32", "form": "plain", "session": "s1",
         "round": 0, "position": 0, "copy": 0, "timer": "cupti", "l2": "cold", "samples_us": [20.1, 20.3, 20.2]},
    ]
    return "\n".join(json.dumps(r) for r in recs) + "\n"


def _request(kind: str, arch: str, token: str, rng: random.Random, client_id: int, seq: int):
    key = f"{arch}/bwd/{rng.choice([2048, 4096])}/fp32/plain/{rng.choice(['det', 'nondet'])}"
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"}
    return {
        "page: index": ("GET", "/", None, None),
        "page: arch": ("GET", f"/arch/{arch}", None, None),
        "page: key": ("GET", f"/key/{key}", None, None),
        "page: diff": ("GET", f"/diff?old=runtime:{arch}&new=published:{arch}", None, None),
        "page: run": ("GET", "/runs/synthetic-r1", None, None),
        "api: arch": ("GET", f"/api/arch/{arch}", None, None),
        "api: key": ("GET", f"/api/key/{key}", None, None),
        "api: window": ("GET", f"/api/key/{key}/windows/{rng.randrange(3)}", None, None),
        "api: runs": ("GET", "/api/runs", None, None),
        "ingest: repeat": ("POST", "/api/evidence?name=load-repeat", _evidence("synthetic-load-repeat"), auth),
        "ingest: new": ("POST", "/api/evidence?name=load-new", _evidence(f"synthetic-load-{client_id}-{seq}"), auth),
        "ingest: bad token": ("POST", "/api/evidence", _evidence("synthetic-load-x"),
                              {"Authorization": "Bearer wrong", "Content-Type": "application/x-ndjson"}),
        "ingest: malformed": ("POST", "/api/evidence", '{"schema": "cake-evidence/1", "kind": "run"}\n', auth),
    }[kind]


async def _client(cid: int, base: str, arch: str, token: str, deadline: float, budget: list[int],
                  results: dict, timeout: float) -> None:
    import httpx

    rng = random.Random(cid)
    kinds, weights = zip(*MIX)
    seq = 0
    async with httpx.AsyncClient(base_url=base, timeout=timeout) as http:
        while time.monotonic() < deadline and budget[0] > 0:
            budget[0] -= 1
            seq += 1
            kind = rng.choices(kinds, weights)[0]
            method, path, body, headers = _request(kind, arch, token, rng, cid, seq)
            t0 = time.perf_counter()
            try:
                r = await http.request(method, path, content=body, headers=headers)
                ok = r.status_code == EXPECT.get(kind, 200)
                err = None if ok else f"HTTP {r.status_code}"
            except Exception as exc:  # timeouts, refused connections: counted, never fatal
                err = type(exc).__name__
            results[kind].append((time.perf_counter() - t0, err))


def _pct(sorted_vals: list[float], q: float) -> float:
    if not sorted_vals:
        return float("nan")
    i = min(len(sorted_vals) - 1, max(0, int(round(q * (len(sorted_vals) - 1)))))
    return sorted_vals[i]


def summarize(results: dict, wall: float) -> list[dict]:
    rows = []
    every = []
    for kind, _ in MIX:
        rs = results.get(kind, [])
        lat = sorted(x for x, _ in rs)
        every.extend(rs)
        errs = defaultdict(int)
        for _, e in rs:
            if e:
                errs[e] += 1
        rows.append({"kind": kind, "requests": len(rs), "errors": sum(errs.values()), "error_kinds": dict(errs),
                     "p50_ms": 1000 * _pct(lat, 0.5), "p99_ms": 1000 * _pct(lat, 0.99),
                     "max_ms": 1000 * (lat[-1] if lat else float("nan"))})
    lat = sorted(x for x, _ in every)
    rows.append({"kind": "ALL", "requests": len(every), "errors": sum(1 for _, e in every if e), "error_kinds": {},
                 "p50_ms": 1000 * _pct(lat, 0.5), "p99_ms": 1000 * _pct(lat, 0.99),
                 "max_ms": 1000 * (lat[-1] if lat else float("nan")), "req_per_s": len(every) / wall})
    return rows


def _loopback_only(url: str) -> None:
    host = urlsplit(url).hostname or ""
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise SystemExit(f"--url {url}: this load test only targets loopback (127.0.0.1, ::1, localhost)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="loopback load test of the cake service")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--duration", type=float, default=30.0, help="seconds (each client stops at the deadline)")
    ap.add_argument("--max-requests", type=int, default=200_000, help="total request cap")
    ap.add_argument("--timeout", type=float, default=30.0, help="per-request timeout, seconds")
    ap.add_argument("--url", default=None, help="a server already running on loopback (default: start one)")
    ap.add_argument("--token", default=None, help="ingest token of --url's server")
    ap.add_argument("--arch", default=ARCH)
    ap.add_argument("--weight", action="append", default=[], metavar="KIND=W",
                    help="override one request kind's weight, e.g. 'ingest: new=0' (repeatable)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    if not 1 <= args.clients <= MAX_CLIENTS:
        raise SystemExit(f"--clients {args.clients}: 1-{MAX_CLIENTS}")
    if not 0 < args.duration <= MAX_DURATION:
        raise SystemExit(f"--duration {args.duration}: 0-{MAX_DURATION} s")

    kinds = dict(MIX)
    for w in args.weight:
        k, _, v = w.rpartition("=")
        if k not in kinds or not v.isdigit():
            raise SystemExit(f"--weight {w!r}: expected KIND=INTEGER with KIND one of {', '.join(kinds)}")
        kinds[k] = int(v)
    MIX[:] = [(k, v) for k, v in kinds.items()]
    sys.path.insert(0, str(REPO))
    proc = None
    tmp = None
    store_check = None
    token = args.token or TOKEN
    try:
        if args.url:
            _loopback_only(args.url)
            base = args.url.rstrip("/")
        else:
            from api.serving import free_port
            from measurements_db.engine import open_store
            from measurements_db.evidence_io import import_evidence

            tmp = tempfile.TemporaryDirectory()
            url = f"sqlite:///{tmp.name}/load.sqlite"
            store = open_store(url)
            import_evidence(store, FIX / "synthetic-evidence.jsonl", name="synthetic-fixture")
            store.close()
            port = free_port()
            ctx = multiprocessing.get_context("spawn")
            ready = ctx.Event()
            proc = ctx.Process(target=_serve, args=(url, port, ready), daemon=True)
            proc.start()
            base = f"http://127.0.0.1:{port}"
            import httpx

            t_end = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > t_end or not proc.is_alive():
                    raise SystemExit("the server did not start within 60 s")
                time.sleep(0.2)
            # warm the caches once (first aggregation and solve) so the run measures steady state
            for path in (f"/arch/{args.arch}", f"/api/key/{args.arch}/bwd/4096/fp32/plain/det"):
                httpx.get(base + path, timeout=60)

        results: dict[str, list] = defaultdict(list)
        budget = [args.max_requests]
        t0 = time.monotonic()
        deadline = t0 + args.duration

        async def run_all():
            await asyncio.gather(*(_client(i, base, args.arch, token, deadline, budget, results, args.timeout)
                                   for i in range(args.clients)))

        asyncio.run(run_all())
        wall = time.monotonic() - t0
        # Nothing lost: every accepted new upload is one more run in the store (own server only,
        # whose store held the fixture's 2 runs; the repeated upload is one run however often sent).
        store_check = None
        if proc is not None:
            import httpx

            found = httpx.get(base + "/api/stats", timeout=60).json()["stats"]["totals"]["runs"]
            new_ok = sum(1 for _, e in results.get("ingest: new", []) if e is None)
            repeat_ok = any(e is None for _, e in results.get("ingest: repeat", []))
            store_check = {"runs_expected": 2 + new_ok + int(repeat_ok), "runs_found": found}
    finally:
        if proc is not None:
            proc.terminate()
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
        if tmp is not None:
            tmp.cleanup()

    rows = summarize(results, wall)
    if args.json:
        print(json.dumps({"clients": args.clients, "duration_s": args.duration, "wall_s": wall, "rows": rows,
                          "store_check": store_check}, indent=1))
        return 0
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{args.clients} clients, {args.duration:g} s on {base} ({wall:.1f} s wall, "
                    f"{rows[-1]['req_per_s']:.0f} req/s)")
    for col in ("kind", "requests", "errors", "p50 ms", "p99 ms", "max ms"):
        t.add_column(col, justify="left" if col == "kind" else "right")
    for r in rows:
        t.add_row(r["kind"], str(r["requests"]), str(r["errors"]) + (f" {r['error_kinds']}" if r["error_kinds"] else ""),
                  f"{r['p50_ms']:.1f}", f"{r['p99_ms']:.1f}", f"{r['max_ms']:.1f}")
    Console().print(t)
    print("expected statuses: 200, except 'ingest: bad token' 401 and 'ingest: malformed' 422; anything else is an error")
    if store_check is not None:
        ok = store_check["runs_expected"] == store_check["runs_found"]
        print(f"store check: {store_check['runs_found']} runs in the store, {store_check['runs_expected']} expected "
              f"({'OK' if ok else 'MISMATCH'})")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
