"""One measuring process (a session): `python -m cake_router.measure.session PLAN.json INDEX`.

Started by `cake_router.measure.campaign.run_campaign`; see that module for the file protocol.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

import torch


def _append(path: Path, progress: Path, key: str, records: list[dict]) -> None:
    data = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
    with open(path, "a") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
        off = f.tell()
    with open(progress, "a") as f:
        f.write(f"{key} {off}\n")
        f.flush()
        os.fsync(f.fileno())


def _time_unit(doc, unit, s, session, base, failures, device):
    """Timing records of one unit, and the accuracy functions of its backward implementations.

    Everything big (inputs, shared outputs, graphs and their pools) is local to this function,
    so it is freed before the accuracy pass allocates its own inputs.
    """
    from cake_kernels import registry
    from cake_kernels.inputs import make_inputs
    from cake_router.measure import campaign, impls, protocol

    names = campaign.unit_programs(doc, unit)
    runnable = [p for p in map(registry.get, names) if p.supports(unit.H, unit.form, unit.w_dtype)
                and not (p.family == "column_task" and unit.T > campaign.COLUMN_TASK_MAX_T)]
    if doc.get("accuracy_only") and not doc["peers"]:
        # `measure --accuracy-only` of this package's programs: their dw functions need no timing
        # input, so none is allocated (at T 1M, strided heads, 0.5 GiB of x and g and the outputs).
        return [], {p.name: impls.program_dw_for_accuracy(p.name) for p in runnable if p.op == "bwd"}
    wl = impls.Workload(unit.H, unit.form, unit.w_dtype, unit.T)
    inp = make_inputs("gaussian", unit.T, unit.H, unit.w_dtype, unit.form, seed=12345, device=device)
    shared = impls.SharedOutputs.for_inputs(inp)
    step_fwd = campaign.step_forward(doc.get("fwd_for_step", "routed"), doc["arch"], unit.H, unit.form, unit.w_dtype, unit.T)
    preps = []
    for prog in runnable:
        try:
            preps.append(impls.prepare_program(prog.name, inp, wl, step_fwd, shared))
        except Exception as exc:
            failures.append((prog.name, exc))
    for name in doc["peers"]:
        try:
            preps.append(impls.prepare_peer(name, inp, wl))
        except Exception as exc:
            failures.append((name, exc))
            torch.cuda.empty_cache()
    acc_fns = {p.name: p.dw_for_accuracy for p in preps if p.dw_for_accuracy is not None}
    if doc.get("accuracy_only"):
        return [], acc_fns  # `measure --accuracy-only` with peers: prepared (peers compile on it), never timed
    pool = torch.cuda.graph_pool_handle()  # one pool: graphs replay one at a time, outputs are scratch
    entries = []
    for prep in preps:
        for op in doc["ops"]:
            fn = prep.ops.get(op)
            if fn is None:
                continue
            try:
                entries.append(protocol.Entry(prep.name, op, 0, protocol.capture(fn, device, pool)))
            except Exception as exc:
                failures.append((f"{prep.name}:{op}", exc))
                torch.cuda.empty_cache()
    # A/A: a second copy of two implementations (the first and the middle entry).
    by_name = {p.name: p for p in preps}
    for idx in (sorted({0, len(entries) // 2}) if len(entries) >= 2 else []):
        e0 = entries[idx]
        try:
            entries.append(protocol.Entry(e0.impl, e0.op, 1, protocol.capture(by_name[e0.impl].ops[e0.op], device, pool)))
        except Exception as exc:
            failures.append((f"{e0.impl}:{e0.op}:A/A", exc))
    replays = doc["replays"]
    cap = doc.get("seconds_per_unit")
    if cap and entries:
        # One pass over all entries, to shrink the replay count to fit the cap (counts are recorded).
        torch.cuda.synchronize()
        t1 = time.time()
        for e in entries:
            e.graph.replay()
        torch.cuda.synchronize()
        per_pass = max(time.time() - t1, 1e-6) + len(entries) * 150e-6  # + the flush kernels
        replays = int(max(doc["rounds"] * 5, min(replays, cap / per_pass)))
    rows = protocol.time_entries(entries, s, doc["rounds"], replays, device,
                                 deadline=(time.time() + 2 * cap) if cap else None)
    records = [dict(base, kind="timing", program=r["impl"], op=r["op"], session=session, round=r["round"],
                    position=r["position"], copy=r["copy"], timer=r["timer"], l2="cold", samples_us=r["samples_us"])
               for r in rows]
    for rec in records:
        if rec["op"] == "2xfwd+bwd" and rec["program"] in names:
            rec["step_fwd"] = step_fwd
    return records, acc_fns


def _accuracy_unit(doc, unit, base, acc_fns, failures, device, deadline):
    from cake_router.measure import accuracy, impls

    n_inputs = doc["inputs_per_family"]
    if doc.get("accuracy_max_T") and unit.T > doc["accuracy_max_T"] and doc.get("large_T_inputs") is not None:
        n_inputs = doc["large_T_inputs"]
    if n_inputs <= 0:
        return []  # timing only here (`--large-T-inputs 0`): accuracy comes from a separate run
    wl = impls.Workload(unit.H, unit.form, unit.w_dtype, unit.T)
    out = []
    for rec in accuracy.evaluate(wl, acc_fns, doc["families"], n_inputs, device, deadline=deadline):
        if "failed" in rec:
            failures.append((rec["program"] + ":accuracy", RuntimeError(rec["failed"])))
            continue
        rec.pop("stopped_on_breach", None)
        out.append(dict(base, kind="accuracy", **rec))
    return out


def write_failures(path: Path, unit_key: str, failures: list[tuple[str, BaseException]]) -> None:
    """Append one `{"unit", "impl", "error"}` line per failure of a unit to the session's failures file."""
    with open(path, "a") as f:
        for name, exc in failures:
            f.write(json.dumps({"unit": unit_key, "impl": name, "error": f"{type(exc).__name__}: {exc}"[:500]}) + "\n")


def main(argv=None) -> int:
    argv = argv if argv is not None else sys.argv[1:]
    spec_path, s = Path(argv[0]), int(argv[1])
    max_units = int(argv[2]) if len(argv) > 2 else None  # a wave: at most this many new units
    doc = json.loads(spec_path.read_text())
    from cake_kernels import registry
    from cake_router.measure import campaign, impls

    units = [campaign.Unit(**u) for u in doc["units"]]
    out_dir = spec_path.parent
    path, progress = campaign.session_paths(out_dir, s)
    done = campaign.read_progress(progress)
    if path.exists():
        # Drop anything after the last finished unit (a torn write of a killed session).
        keep = max(done.values(), default=0)
        with open(path, "r+") as f:
            f.truncate(keep)
    device = torch.device("cuda")
    props = torch.cuda.get_device_properties(device)
    run_id = f"{doc['run_prefix']}-s{s + 1}"
    session = f"s{s + 1}"
    header: list[dict] = []
    if not done:
        run_rec = campaign.provenance(run_id, doc["arch"], props.name, props.multi_processor_count)
        from cake_router.measure.protocol import copy_bandwidth_TBps

        run_rec["copy_TBps"] = round(copy_bandwidth_TBps(device), 4)
        header.append(run_rec)
        for name in doc["programs"]:
            header.append(registry.get(name).evidence_record())
        for name in doc["peers"]:
            header.append(impls.peer_record(name))
        _append(path, progress, "#header", header)
    failures_path = out_dir / f"session-{session}.failures.jsonl"
    deadline = doc.get("deadline")
    n_sessions = doc["sessions"]
    sequential = not doc.get("parallel", False)
    new_units = 0
    for ui, unit in enumerate(units):
        if unit.key in done:
            continue
        if max_units is not None and new_units >= max_units:
            break
        new_units += 1
        if deadline and time.time() > deadline:
            print(f"[{session}] budget reached before {unit.key}: stopping cleanly", file=sys.stderr)
            break
        t0 = time.time()
        base = {"schema": "cake-evidence/1", "run_id": run_id, "arch": doc["arch"], "H": unit.H, "T": unit.T,
                "x_dtype": "bf16", "w_dtype": unit.w_dtype, "form": unit.form}
        failures: list[tuple[str, BaseException]] = []
        skip = campaign.quarantined(failures_path).get(unit.key, set())
        for name in sorted(skip):
            failures.append((name, RuntimeError("skipped: it raised a CUDA error at this unit in an earlier attempt")))
        try:
            records, acc_fns = _time_unit(dict(doc, programs=[n for n in doc["programs"] if n not in skip],
                                               peers=[n for n in doc["peers"] if n not in skip]),
                                          unit, s, session, base, failures, device)
            torch.cuda.empty_cache()
            # Accuracy once per unit: by session 1 when sessions run one after another on one GPU
            # (a budget cut then never leaves a unit without accuracy), else spread over the GPUs.
            if (s == 0) if sequential else (ui % n_sessions == s):
                records += _accuracy_unit(doc, unit, base, acc_fns, failures, device, deadline)
            del acc_fns
        except torch.cuda.OutOfMemoryError as exc:
            if new_units > 1:
                # Memory a failed graph capture left behind can make a later unit run out: leave it
                # to a fresh process (the next wave), which retries it.
                print(f"[{session}] {unit.key}: out of memory; ending this process, a fresh one retries it", file=sys.stderr, flush=True)
                return 0
            # Out of memory in a fresh process: this unit does not fit next to the harness. Record it
            # as measured with no records, so that the campaign goes on and the reason is kept.
            records, failures = [], [("unit", exc)]
        except RuntimeError as exc:
            if "CUDA error" not in str(exc):
                raise
            # A CUDA error (an illegal address, say) is sticky: this process cannot go on, and the
            # next wave's fresh process retries the unit. The failures gathered so far name the
            # implementation whose capture or replay raised it; keep them, or the crash is anonymous.
            write_failures(failures_path, unit.key, failures + [("unit", exc)])
            # The first implementation whose capture or replay raised it is the culprit (the later
            # ones fail because the context is already broken), else the one the accuracy pass
            # names (accuracy.ImplementationFault): the retry skips it.
            first = next((name for name, e in failures if "CUDA error" in str(e)), getattr(exc, "impl", None))
            if first is not None:
                with open(failures_path, "a") as f:
                    f.write(json.dumps({"unit": unit.key, "impl": first.split(":")[0], "quarantine": True,
                                        "error": "raised a CUDA error here; skipped when the unit is retried"}) + "\n")
            culprits = ", ".join(name for name, _ in failures) or first or "no implementation recorded"
            print(f"[{session}] {unit.key}: CUDA error ({culprits}); ending this process", file=sys.stderr, flush=True)
            raise
        torch.cuda.empty_cache()
        _append(path, progress, unit.key, records)
        write_failures(failures_path, unit.key, failures)
        print(f"[{session}] {unit.key}: {len(records)} records, {len(failures)} failures, {time.time() - t0:.1f}s", file=sys.stderr, flush=True)
        if any(isinstance(exc, torch.cuda.OutOfMemoryError) for _, exc in failures):
            return 0  # an implementation ran out of memory: the next unit starts in a fresh process
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(1)
