"""`python -m cake_router measure`: run a measurement campaign on a GPU node."""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path

from cake_router.cli import CliError
from cake_router.commands.common import add_db_option, add_json_option, console, print_json

EXAMPLES = """examples:
  # the coarse grid for two hidden sizes, plain rows, FP32 weight, every program and peer
  python -m cake_router measure --H 2048,4096 --T coarse --forms plain --w-dtypes fp32 --out h200.jsonl
  # four sessions in parallel, one per GPU, then import into a team store
  python -m cake_router measure --gpus 0,1,2,3 --T standard --db postgresql+psycopg://cake@db/cake
  # refine around the solver's cuts, stop cleanly after 20 minutes, resume later
  python -m cake_router measure --T next --next-file next.json --budget-minutes 20 --resume
"""


def _csv(kind, name):
    def parse(s):
        try:
            return [kind(v) for v in s.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: {s!r} is not a comma list of {kind.__name__}") from None
    return parse


def register(sub) -> None:
    p = sub.add_parser("measure", help="time and check programs and peers on this GPU node (writes cake-evidence/1)",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--H", type=_csv(int, "--H"), default=[512, 1536, 2048, 4096, 5120, 6144, 8192], help="hidden sizes (head forms always use 256)")
    p.add_argument("--T", default="coarse", help="token grid: coarse, standard, next (with --next-file) or a comma list")
    p.add_argument("--next-file", default=None, help="the solver's next-measurement file (solve --next-out)")
    p.add_argument("--forms", type=_csv(str, "--forms"), default=["plain", "residual", "heads_strided", "heads_contiguous"])
    p.add_argument("--w-dtypes", type=_csv(str, "--w-dtypes"), default=["bf16", "fp32"])
    p.add_argument("--programs", type=_csv(str, "--programs"), default=None, help="program names (exact) or name prefixes, or 'routed' (per unit, the forward and backward the shipped table runs there), or 'routed' with names (the routed pair per unit plus the named programs everywhere); default: every registered Triton program")
    p.add_argument("--step-fwd", default="routed",
                   help="forward of this package's 2xfwd+bwd steps: 'routed' (the shipped table's, per key and T) or a forward program name")
    p.add_argument("--peers", type=_csv(str, "--peers"), default=None, help="peer names, or 'none' (default: all)")
    p.add_argument("--ops", type=_csv(str, "--ops"), default=["fwd", "bwd"], help="fwd, bwd, 2xfwd+bwd")
    p.add_argument("--sessions", type=int, default=4, help="sessions (independent processes); with --gpus, one per GPU")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--replays", type=int, default=201, help="replays per implementation and op per session, over all rounds")
    p.add_argument("--seconds-per-unit", type=float, default=None, help="cap timing time per workload and session (fewer replays at large T; counts are recorded)")
    p.add_argument("--families", type=_csv(str, "--families"), default=["gaussian", "same_sign", "outlier_rows"])
    p.add_argument("--inputs-per-family", type=int, default=120, help="accuracy inputs per family (120 qualifies a point)")
    p.add_argument("--accuracy-max-T", type=int, default=None, help="above this T use --large-T-inputs inputs per family")
    p.add_argument("--large-T-inputs", type=int, default=None,
                   help="inputs per family above --accuracy-max-T; 0 = timing only there (qualify those points in a separate run)")
    p.add_argument("--accuracy-only", action="store_true",
                   help="accuracy records only, no timing: qualify points on any card of the arch and SM count "
                        "(a route table's timing comes from one GPU model; its accuracy from every card that computes "
                        "the same dw); needs --sessions 1 or --gpus")
    p.add_argument("--gpus", type=_csv(int, "--gpus"), default=None, help="GPU indices: one session per GPU in parallel")
    p.add_argument("--shard", default=None, help="i/n: this node takes every n-th unit starting at i")
    p.add_argument("--budget-minutes", type=float, default=None, help="stop cleanly after this long (coarse grid first)")
    p.add_argument("--wave-units", type=int, default=4,
                   help="on one GPU, units each session process measures before the next session takes its turn "
                        "(larger waves start fewer processes; smaller ones leave a budget cut more evenly sampled)")
    p.add_argument("--resume", action="store_true", help="skip units already measured in --work-dir")
    p.add_argument("--work-dir", default="measure-work", help="per-session files, progress and the plan")
    p.add_argument("--out", default=None, help="merged evidence file (default: <work-dir>/evidence.jsonl)")
    p.add_argument("--run-prefix", default=None, help="run id prefix (default: <arch>-<UTC time>)")
    p.add_argument("--arch", default=None, help="override the detected arch name")
    add_db_option(p)
    add_json_option(p)
    p.set_defaults(func=cmd_measure)


def cmd_measure(args) -> int:
    import torch

    from cake_kernels import registry
    from cake_router.measure import campaign, impls

    if args.wave_units < 1:
        raise CliError(f"--wave-units: {args.wave_units} not accepted; use an integer >= 1")
    if args.step_fwd != "routed":
        if args.step_fwd not in registry.names() or registry.get(args.step_fwd).op != "fwd":
            fwds = [p.name for p in registry.all_programs() if p.op == "fwd"]
            raise CliError(f"--step-fwd: {args.step_fwd!r} is not 'routed' or a registered forward program ({', '.join(fwds)})")
    if args.accuracy_only:
        if args.inputs_per_family < 1 or args.large_T_inputs == 0:
            raise CliError("--accuracy-only: measures accuracy alone, so --inputs-per-family (and --large-T-inputs, "
                           "if given) must be >= 1")
        if "bwd" not in args.ops and "2xfwd+bwd" not in args.ops:
            raise CliError(f"--accuracy-only: accuracy is a backward's (dw); --ops {','.join(args.ops)} has no bwd")
        if args.sessions != 1 and not (args.gpus and len(args.gpus) > 1):
            raise CliError(f"--accuracy-only: one session measures each unit's accuracy, so --sessions {args.sessions} "
                           "would start processes that record nothing; pass --sessions 1 (or --gpus to spread units)")
    if args.large_T_inputs is not None and args.large_T_inputs < 0:
        raise CliError(f"--large-T-inputs: {args.large_T_inputs} not accepted; use an integer >= 0")
    bad = [f for f in args.forms if f not in campaign.FORMS]
    if bad:
        raise CliError(f"--forms: {bad} not accepted; use any of {', '.join(campaign.FORMS)}")
    bad = [w for w in args.w_dtypes if w not in ("bf16", "fp32")]
    if bad:
        raise CliError(f"--w-dtypes: {bad} not accepted; use bf16, fp32")
    bad = [o for o in args.ops if o not in campaign.OPS]
    if bad:
        raise CliError(f"--ops: {bad} not accepted; use any of {', '.join(campaign.OPS)}")
    try:
        Ts = campaign.parse_T(args.T, args.next_file)
        shard = campaign.parse_shard(args.shard)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    programs = [p.name for p in registry.all_programs() if p.launch.grid != "reference" and (p.op in args.ops or (p.op == "bwd" and "2xfwd+bwd" in args.ops))]
    routed_only = bool(args.programs) and "routed" in args.programs
    named = [w for w in args.programs or [] if w != "routed"]
    also: list[str] = []
    if named:
        try:
            programs_named = campaign.select_programs(programs, named)
        except ValueError as exc:
            # A registered program that --ops leaves out is not a typo: say which op would time it.
            left_out = [w for w in args.programs if any(n.startswith(w) for n in registry.names())
                        and not any(n.startswith(w) for n in programs)]
            if left_out:
                raise CliError(f"--programs: {left_out} are registered, but --ops {','.join(args.ops)} times none of them "
                               "(forward programs need --ops fwd; a 2xfwd+bwd step runs the backward named here "
                               "with the forward --step-fwd names)") from None
            raise CliError(f"--programs: {exc}; see cake_kernels.registry.names()") from None
        if routed_only:
            also = programs_named  # measured at every unit, beside the routed pair
        else:
            programs = programs_named
    if args.peers is None:
        peers = list(impls.PEERS)
    elif args.peers == ["none"]:
        peers = []
    else:
        peers = args.peers
        unknown = [p for p in peers if p not in impls.PEERS]
        if unknown:
            raise CliError(f"--peers: unknown {unknown}; known: {', '.join(impls.PEERS)} (or 'none')")
    if not torch.cuda.is_available():
        raise CliError("measure needs a CUDA GPU on this node; run it on a GPU node and import the evidence file here")
    from cake_kernels.routes.dispatch import arch_of, routes_dir

    arch = args.arch or arch_of(torch.cuda.current_device())
    prefix = args.run_prefix or f"{arch}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    work = Path(args.work_dir)
    if args.resume and (work / "plan.json").exists():
        prefix = json.loads((work / "plan.json").read_text())["run_prefix"]
    units = campaign.plan_units(args.H, args.forms, args.w_dtypes, Ts, shard)
    if routed_only:
        if not (routes_dir() / f"{arch}.json").exists():
            raise CliError(f"--programs routed: no route table ships for {arch}; name programs instead")
        wanted = {n for u in units for n in campaign.routed_programs(arch, u)} | set(also)
        programs = [n for n in programs if n in wanted]
    deadline = time.time() + 60 * args.budget_minutes if args.budget_minutes else None
    plan = campaign.Plan(
        run_prefix=prefix, arch=arch, units=units, programs=programs, peers=peers, ops=args.ops,
        sessions=len(args.gpus) if args.gpus and len(args.gpus) > 1 else args.sessions,
        rounds=args.rounds, replays=args.replays, families=args.families, inputs_per_family=args.inputs_per_family,
        accuracy_max_T=args.accuracy_max_T, large_T_inputs=args.large_T_inputs,
        seconds_per_unit=args.seconds_per_unit, deadline=deadline,
        parallel=bool(args.gpus and len(args.gpus) > 1), fwd_for_step=args.step_fwd, routed_only=routed_only,
        also=also, accuracy_only=args.accuracy_only,
    )
    con = console(stderr=True)
    con.print(f"measure: {len(units)} workloads x {plan.sessions} sessions, {len(programs)} programs, {len(peers)} peers, arch {arch}")
    result: dict = {}

    def work_fn():
        result["files"] = campaign.run_campaign(plan, work, gpus=args.gpus, resume=args.resume, log=lambda m: con.print(m),
                                                       wave_units=args.wave_units)

    th = threading.Thread(target=work_fn, daemon=True)
    th.start()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    total = len(units) * plan.sessions
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(), console=con) as prog:
        task = prog.add_task("workloads x sessions", total=total)
        while th.is_alive():
            done = sum(len([k for k in campaign.read_progress(campaign.session_paths(work, s)[1]) if k != "#header"]) for s in range(plan.sessions))
            prog.update(task, completed=done)
            time.sleep(1.0)
        th.join()
    files = result.get("files", [])
    out = Path(args.out) if args.out else work / "evidence.jsonl"
    n = campaign.merge(files, out)
    summary = {"evidence": str(out), "records": n, "sessions": [str(f) for f in files], "arch": arch, "run_prefix": prefix}
    failures = []
    for f in sorted(work.glob("session-*.failures.jsonl")):
        failures += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    summary["failures"] = failures
    if args.db or __import__("os").environ.get("CAKE_DB_URL"):
        from measurements_db.engine import open_store
        from measurements_db.evidence_io import import_evidence

        res = import_evidence(open_store(args.db), str(out))
        summary["imported"] = getattr(res, "added", None)
    if args.json:
        print_json(summary)
    else:
        con.print(f"wrote {n} records to {out}")
        for fl in failures[:20]:
            con.print(f"[yellow]not measured[/yellow] {fl['impl']} at {fl['unit']}: {fl['error']}")
    return 0
