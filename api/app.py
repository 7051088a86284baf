"""The FastAPI application: dashboard pages, the JSON API they mirror, and evidence ingest.

`create_app(...)` builds an app around one `DataSource` (the store plus a fixed list of route
tables). Pages and JSON routes share the same view functions (`api.views`), so what a page shows
and what `/api/...` returns cannot drift apart. Request values only ever select among things the
service already has (an arch, a key, a table id of the fixed list, a run id looked up through the
query layer): no endpoint opens a path or runs SQL built from a request.
"""

import os
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Mapping

from fastapi import Depends, FastAPI, Path as PathParam, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPBearer
from fastapi.templating import Jinja2Templates
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from api import models as M
from api import views as V
from api.ingest import DEFAULT_MAX_BODY_BYTES, NAME_RE, IngestRefused, check_token, decode_lines, ingest_lines, read_body_bounded
from api.source import (ARCH_RE, GPU_RE, KIND_LABELS, TABLE_ID_RE, DataSource, GpuAmbiguous, NotFound, TableEntry, as_dict,
                        default_table_entries, entries_from_mapping)

HERE = Path(__file__).resolve().parent
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:+@-]{0,199}$"
ARCH_PATTERN = ARCH_RE.pattern
TABLE_PATTERN = TABLE_ID_RE.pattern


def _static_files() -> dict[str, Path]:
    """The only files the app serves, by name: its own CSS/JS and plotly.js from the installed package."""
    import plotly

    files = {
        "plotly.min.js": Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js",
        "style.css": HERE / "static" / "style.css",
        "dashboard.js": HERE / "static" / "dashboard.js",
    }
    return {k: v for k, v in files.items() if v.is_file()}


def solve_with_default_policy(evidence: Mapping, arch: str) -> dict:
    """`solved:<arch>`: the solver run on the store's aggregates with the default policy (no
    incumbent), checksummed like a written table so it goes through the same verifying loader."""
    from cake_kernels.routes.table import compute_checksum
    from cake_router.policy import Policy
    from cake_router.solver import solve_arch

    doc = solve_arch(arch, list(evidence.values()), Policy()).table_doc()
    doc["generated_by"] = f"{doc.get('generated_by', 'cake_router')} (solved by the service from the store, default policy)"
    doc["checksum"] = compute_checksum(doc)
    return doc


def routes_unlaunchable(doc: dict) -> bool:
    """True when the table's `programs` object says some routed program is not runnable here (a
    table solved from published figures): such a table is labelled like a published one."""
    progs = doc.get("programs")
    if not isinstance(progs, dict) or not progs:
        return False
    routed = {w.get("program") for r in doc.get("routes", []) for w in r.get("windows", [])}
    return any(not bool((progs.get(p) or {}).get("runnable")) for p in routed)


def _default_solver() -> Callable | None:
    """The solver when it is installed, else None (then no `solved:<arch>` tables are offered)."""
    import importlib

    try:
        for name in ("cake_router.policy", "cake_router.solver"):
            importlib.import_module(name)
    except ImportError:
        return None
    return solve_with_default_policy


def get_source(request: Request) -> DataSource:
    """The app's DataSource (a dependency, so tests and embedders can override it)."""
    return request.app.state.source


Src = Annotated[DataSource, Depends(get_source)]

# Common path parameters of a route key.
Arch = Annotated[str, PathParam(pattern=ARCH_PATTERN, description="GPU arch, e.g. sm_90a")]
OpP = Annotated[Literal["fwd", "bwd"], PathParam()]
HP = Annotated[int, PathParam(ge=1, le=1 << 20, description="hidden size")]
WP = Annotated[Literal["bf16", "fp32"], PathParam()]
FormP = Annotated[Literal["plain", "residual", "heads_strided", "heads_contiguous"], PathParam()]
ModeP = Annotated[Literal["det", "nondet", "any"], PathParam()]
TableQ = Annotated[str | None, Query(pattern=TABLE_PATTERN, description="table id '<kind>:<arch>' from /api/tables")]
GpuQ = Annotated[str | None, Query(pattern=GPU_RE.pattern, description="GPU model whose runs the evidence (and a solved "
                                   "table) come from; needed where the arch was measured on several (/api/arches lists them)")]

ERRORS = {404: {"model": M.ErrorDetail, "description": "no such arch, key, table or run"},
          409: {"model": M.ErrorDetail, "description": "the arch was measured on several GPU models and no gpu was named "
                                                      "(the message lists them)"},
          500: {"model": M.ErrorDetail, "description": "a route table could not be trusted (message names it)"},
          503: {"model": M.ErrorDetail, "description": "the store could not be read (message says why)"}}


def create_app(store_url: str | None = None, tables: Mapping[str, Any] | None = None, token: str | None = None,
               max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, cache_ttl_s: float = 5.0,
               solver: Callable | None | Literal["auto"] = "auto") -> FastAPI:
    """Build the service.

    store_url: the store (None: $CAKE_DB_URL, then the embedded default, as the CLI).
    tables: `{"runtime:<arch>": path, "published:<arch>": path}`; None: the shipped tables.
    token: the ingest bearer token; None: $CAKE_API_TOKEN; empty or unset: ingest disabled (403).
    max_body_bytes: larger ingest bodies get 413 before they are read whole.
    solver: `(evidence by workload, arch) -> table document` for the `solved:<arch>` tables; "auto"
        uses the project's solver with the default policy, None offers no solved tables.
    """
    entries = default_table_entries() if tables is None else entries_from_mapping(tables)
    if solver == "auto":
        solver = _default_solver()
    source = DataSource(store_url, entries, cache_ttl_s=cache_ttl_s, solver=solver)
    configured_token = token if token is not None else os.environ.get("CAKE_API_TOKEN") or None
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.globals["kind_labels"] = KIND_LABELS
    templates.env.filters["fmt"] = _fmt
    templates.env.filters["tlabel"] = _tlabel
    static = _static_files()

    app = FastAPI(
        title="cake routing service",
        version="0.1.0",
        description="Route tables, the evidence behind every window, and authenticated cake-evidence/1 ingest. "
                    "Pages are server-rendered HTML; every page has a JSON twin under /api.",
    )
    app.state.source = source

    # ---- error handling -----------------------------------------------------------------------
    def wants_html(request: Request) -> bool:
        return not request.url.path.startswith("/api/") and request.url.path != "/openapi.json"

    def error_response(request: Request, status: int, message: str):
        if wants_html(request):
            return templates.TemplateResponse(request, "error.html", {"status": status, "message": message, "nav": "error"},
                                              status_code=status)
        return JSONResponse({"detail": message}, status_code=status)

    @app.exception_handler(NotFound)
    async def _not_found(request: Request, exc: NotFound):
        return error_response(request, 404, str(exc))

    @app.exception_handler(GpuAmbiguous)
    async def _ambiguous(request: Request, exc: GpuAmbiguous):
        if wants_html(request):  # the same page once per model, to pick from
            links = [(f"{g} ({n} runs)", str(request.url.include_query_params(gpu=g))) for g, n in sorted(exc.counts.items())]
            return templates.TemplateResponse(request, "error.html", {"status": 409, "message": str(exc), "nav": "error",
                                                                      "links": links}, status_code=409)
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(IngestRefused)
    async def _refused(request: Request, exc: IngestRefused):
        return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=exc.headers)

    from sqlalchemy.exc import SQLAlchemyError

    from cake_kernels.routes.table import RouteTableError
    from measurements_db.engine import StoreError

    @app.exception_handler(StoreError)
    async def _store_error(request: Request, exc: StoreError):
        return error_response(request, 503, f"the evidence store cannot be used: {exc}")

    @app.exception_handler(SQLAlchemyError)
    async def _db_error(request: Request, exc: SQLAlchemyError):
        orig = getattr(exc, "orig", None) or exc
        return error_response(request, 503, f"the evidence store {source.store_url_display()} could not be read "
                                            f"({type(orig).__name__}: {orig}); is it a store of this version?")

    @app.exception_handler(RouteTableError)
    async def _bad_table(request: Request, exc: RouteTableError):
        return error_response(request, 500, f"{exc}")

    # ---- helpers shared by pages and API ------------------------------------------------------
    def table_ref(src: DataSource, e: TableEntry, table=None, error: str | None = None) -> dict:
        doc = table.doc if table is not None else {}
        return {"id": e.id, "arch": e.arch, "kind": e.kind, "label": KIND_LABELS[e.kind],
                "published_figures": e.kind == "published" or routes_unlaunchable(doc), "checksum": doc.get("checksum"),
                "generated_by": doc.get("generated_by"), "error": error}

    def pick_table(src: DataSource, arch: str, table_id: str | None, gpu: str | None = None):
        tid = table_id or src.default_table_id(arch)
        if tid is None:
            raise NotFound(f"no route table for {arch} (known arches: {', '.join(src.arches()) or 'none'})")
        if not tid.endswith(":" + arch):
            raise NotFound(f"table {tid!r} is not a table of {arch}")
        e, t = src.load(tid, gpu)
        return e, t, table_ref(src, e, t)

    def arch_summaries(src: DataSource) -> list[dict]:
        return src.cached(("arch_summaries",), lambda: _arch_summaries(src))

    def _arch_summaries(src: DataSource) -> list[dict]:
        out = []
        try:
            runs = src.runs()
        except Exception:
            runs = []
        for arch in src.arches():
            refs = []
            nkeys = 0
            try:
                gpus = src.gpus(arch)
            except Exception:
                gpus = {}
            # where several GPU models measured the arch, a solved table and the workload count are the
            # model measured most's (each page names the model it shows)
            top = max(gpus, key=lambda g: (gpus[g], g)) if len(gpus) > 1 else None
            for tid in src.table_ids_for(arch):
                try:
                    e, t = src.load(tid, top)
                    refs.append(table_ref(src, e, t))
                    nkeys = max(nkeys, len(list(t.keys())))
                except Exception as exc:  # one bad table must not hide the others
                    refs.append(table_ref(src, src.entry(tid), None, error=str(exc)))
            try:
                nwork = len(src.evidence(arch, top))
            except Exception:
                nwork = 0
            aruns = [r for r in runs if r.get("arch") == arch]
            out.append({"arch": arch, "tables": refs, "keys": nkeys, "workloads": nwork, "runs": len(aruns), "gpus": gpus,
                        "published_only": bool(aruns) and all(r.get("source") == "published" for r in aruns)})
        return out

    def arch_view(src: DataSource, arch: str, table_id: str | None, gpu: str | None = None) -> dict:
        e, t, ref = pick_table(src, arch, table_id, gpu)
        return {"arch": arch, "table": ref, "keys": V.arch_strips(arch, t), "gpu": gpu}

    def key_view(src: DataSource, arch, op, H, w_dtype, form, mode, table_id, gpu: str | None = None) -> dict:
        e, t, ref = pick_table(src, arch, table_id, gpu)
        k = {"arch": arch, "op": op, "H": H, "w_dtype": w_dtype, "form": form, "mode": mode}
        if not t.windows(op, H, w_dtype, form, mode):
            raise NotFound(f"table {e.id} has no key {V.key_label(k)}")
        evidence = src.evidence(arch, gpu)  # before the cache: a request naming no model of several is refused
        # cached with the aggregates (same generation and TTL): a view is a pure function of them
        return src.cached(("key_view", e.id, op, H, w_dtype, form, mode, gpu),
                          lambda: {**V.key_view(k, ref, t, evidence.get(V.workload_of_key(k))), "gpu": gpu})

    def diff_view(src: DataSource, old: str, new: str, gpu: str | None = None) -> dict:
        eo, to = src.load(old, gpu)
        en, tn = src.load(new, gpu)
        evidence = {a: src.evidence(a, gpu) for a in {to.arch, tn.arch}}
        return V.diff_tables(table_ref(src, eo, to), to, table_ref(src, en, tn), tn, evidence, V.table_policy(tn))

    def run_view(src: DataSource, run_id: str) -> dict:
        from measurements_db.engine import StoreError

        try:
            detail = src.run_detail(run_id)
        except StoreError:
            if any(r.get("run_id") == run_id for r in src.runs()):
                raise  # the run exists: a real store problem, not a bad request
            raise NotFound(f"no run {run_id!r} in the store") from None
        return V.run_view(as_dict(detail))

    def json_cached(src: DataSource, key: tuple, model, build: Callable[[], dict]) -> Response:
        """The JSON of `build()`, validated against `model` (the documented response schema) once and
        cached as bytes with the data it comes from; errors (404s) are not cached."""
        body = src.cached(("json",) + key, lambda: model.model_validate(build()).model_dump_json().encode())
        return Response(body, media_type="application/json")

    # ---- static files -------------------------------------------------------------------------
    @app.get("/static/{name}", include_in_schema=False)
    def static_file(name: str):
        p = static.get(name)
        if p is None:
            raise NotFound(f"no static file {name!r}")
        media = "text/javascript" if name.endswith(".js") else "text/css"
        return FileResponse(p, media_type=media, headers={"Cache-Control": "public, max-age=3600"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        return Response(status_code=204)

    @app.get("/healthz", tags=["service"], summary="liveness")
    def healthz() -> dict:
        return {"ok": True}

    # ---- JSON API -----------------------------------------------------------------------------
    @app.get("/api/arches", response_model=list[M.ArchSummary], tags=["api"], responses=ERRORS,
             summary="every arch with a table or evidence")
    def api_arches(src: Src):
        return arch_summaries(src)

    @app.get("/api/tables", response_model=list[M.TableRef], tags=["api"], summary="the fixed list of tables")
    def api_tables(src: Src):
        out = []
        for e in src.table_entries():
            try:
                _, t = src.load(e.id)
                out.append(table_ref(src, e, t))
            except Exception as exc:
                out.append(table_ref(src, e, None, error=str(exc)))
        return out

    @app.get("/api/tables/{table_id}", response_model=M.RouteTableModel, response_model_exclude_unset=True,
             tags=["api"], responses=ERRORS, summary="one verified table document (its checksum verifies)")
    def api_table(src: Src, table_id: Annotated[str, PathParam(pattern=TABLE_PATTERN)], gpu: GpuQ = None):
        e, t = src.load(table_id, gpu)
        return {"ref": table_ref(src, e, t), "document": t.doc}

    @app.get("/api/arch/{arch}", response_model=M.ArchView, tags=["api"], responses=ERRORS,
             summary="every key of an arch's table as a strip of windows")
    def api_arch(src: Src, arch: Arch, table: TableQ = None, gpu: GpuQ = None):
        return json_cached(src, ("arch", arch, table, gpu), M.ArchView, lambda: arch_view(src, arch, table, gpu))

    @app.get("/api/key/{arch}/{op}/{H}/{w_dtype}/{form}/{mode}", response_model=M.KeyView, tags=["api"],
             responses=ERRORS, summary="a route key: windows, programs, timing and accuracy")
    def api_key(src: Src, arch: Arch, op: OpP, H: HP, w_dtype: WP, form: FormP, mode: ModeP, table: TableQ = None,
                gpu: GpuQ = None):
        return json_cached(src, ("key", arch, op, H, w_dtype, form, mode, table, gpu), M.KeyView,
                           lambda: key_view(src, arch, op, H, w_dtype, form, mode, table, gpu))

    @app.get("/api/key/{arch}/{op}/{H}/{w_dtype}/{form}/{mode}/windows/{index}", response_model=M.WindowEvidence,
             tags=["api"], responses=ERRORS, summary="the evidence behind one window")
    def api_window(src: Src, arch: Arch, op: OpP, H: HP, w_dtype: WP, form: FormP, mode: ModeP,
                   index: Annotated[int, PathParam(ge=0, le=10000)], table: TableQ = None, gpu: GpuQ = None):
        def build():
            view = key_view(src, arch, op, H, w_dtype, form, mode, table, gpu)
            if index >= len(view["windows"]):
                raise NotFound(f"window {index}: the key has {len(view['windows'])} windows")
            return V.window_evidence(view, index)

        return json_cached(src, ("window", arch, op, H, w_dtype, form, mode, table, gpu, index), M.WindowEvidence, build)

    @app.get("/api/diff", response_model=M.DiffView, tags=["api"], responses=ERRORS,
             summary="changed windows of two tables of the fixed list, by reason")
    def api_diff(src: Src, old: Annotated[str, Query(pattern=TABLE_PATTERN)],
                 new: Annotated[str, Query(pattern=TABLE_PATTERN)], gpu: GpuQ = None):
        return json_cached(src, ("diff", old, new, gpu), M.DiffView, lambda: diff_view(src, old, new, gpu))

    @app.get("/api/runs", response_model=list[M.RunSummary], tags=["api"], summary="runs in the store")
    def api_runs(src: Src, arch: Annotated[str | None, Query(pattern=ARCH_PATTERN)] = None):
        return src.runs(arch)

    @app.get("/api/runs/{run_id}", response_model=M.RunDetail, tags=["api"], responses=ERRORS,
             summary="one run: provenance, A/A floor, session spread")
    def api_run(src: Src, run_id: Annotated[str, PathParam(pattern=RUN_ID_PATTERN)]):
        return json_cached(src, ("run", run_id), M.RunDetail, lambda: run_view(src, run_id))

    @app.get("/api/stats", response_model=M.StoreStats, tags=["api"], summary="store row counts")
    def api_stats(src: Src):
        return {"url": src.store_url_display(), "stats": src.stats()}

    @app.get("/api/evidence/schema", tags=["api"], summary="JSON Schema of one cake-evidence/1 record (a line of the ingest body)")
    def api_evidence_schema() -> dict:
        from pydantic import TypeAdapter

        record = Annotated[M.RunRecord | M.ProgramRecord | M.TimingRecord | M.AccuracyRecord, Field(discriminator="kind")]
        return TypeAdapter(record).json_schema(by_alias=True)

    bearer = HTTPBearer(auto_error=False, description="CAKE_API_TOKEN of the server")

    @app.post(
        "/api/evidence", response_model=M.IngestResult, tags=["api"],
        summary="ingest cake-evidence/1 JSON Lines (bearer token required)",
        dependencies=[Depends(bearer)],
        responses={
            401: {"model": M.ErrorDetail, "description": "missing or wrong bearer token"},
            403: {"model": M.ErrorDetail, "description": "ingest disabled: no CAKE_API_TOKEN, or a read-only store"},
            503: {"model": M.ErrorDetail, "description": "store busy; nothing written, retry"},
            400: {"model": M.ErrorDetail, "description": "malformed Content-Length"},
            413: {"model": M.ErrorDetail, "description": "body larger than the server's limit"},
            422: {"model": M.ErrorDetail, "description": "invalid evidence: the message names line and field"},
        },
        openapi_extra={"requestBody": {"required": True, "description": "cake-evidence/1: one JSON record per line",
                                       "content": {"application/x-ndjson": {"schema": {"type": "string"}},
                                                   "text/plain": {"schema": {"type": "string"}}}}},
    )
    async def api_ingest(request: Request, src: Src,
                         name: Annotated[str, Query(pattern=NAME_RE.pattern, description="label of this upload")] = "api-ingest"):
        check_token(configured_token, request.headers.get("authorization"))
        body = await read_body_bounded(request, max_body_bytes)
        lines = decode_lines(body)
        result = await run_in_threadpool(ingest_lines, src.store, lines, name)
        if getattr(result, "total_added", 1):  # a repeated upload adds nothing: keep the caches warm
            src.invalidate()
        return {"ok": True, "bytes": len(body), "records": result.records - result.duplicates_in_file,
                "result": as_dict(result)}

    # ---- pages --------------------------------------------------------------------------------
    def page(request: Request, src: DataSource, name: str, build: Callable[[], dict], key: tuple = ()):
        """Render `name` with the context `build()` returns, cached like the data it comes from.

        The cache key is the template and the handler's validated parameters (`key`), never the raw
        URL, so arbitrary query strings cannot grow the cache. Errors raised by `build` (404s) are
        not cached.
        """

        def render() -> str:
            ctx = build()
            ctx.setdefault("nav", name)
            return templates.get_template(name).render(ctx)

        return HTMLResponse(src.cached(("page", name) + key, render))

    @app.get("/", response_class=HTMLResponse, tags=["pages"], summary="arches")
    def page_index(request: Request, src: Src):
        def build():
            store_error = None
            try:
                stats = src.stats()
            except Exception as exc:
                stats, store_error = {}, f"{type(exc).__name__}: {exc}"
            return {"arches": arch_summaries(src), "stats": stats,
                    "store_url": src.store_url_display() if not store_error else "",
                    "store_error": store_error, "ingest_enabled": bool(configured_token)}

        return page(request, src, "index.html", build)

    @app.get("/arch/{arch}", response_class=HTMLResponse, tags=["pages"], responses=ERRORS, summary="arch overview")
    def page_arch(request: Request, src: Src, arch: Arch, table: TableQ = None, gpu: GpuQ = None):
        def build():
            from api.charts import colors_for, strip_figure

            view = arch_view(src, arch, table, gpu)
            progs = {w["program"] for s in view["keys"] for w in s["windows"]}
            colors = colors_for(progs)
            max_T = max([w["hi"] or w["lo"] for s in view["keys"] for w in s["windows"]] + [1048576]) * 2
            fig = strip_figure(view["keys"], colors, max_T)
            return {"view": view, "fig": fig, "colors": colors, "tables": src.table_ids_for(arch),
                    "key_label": V.key_label, "gpu": gpu, "gpus": src.gpus(arch)}

        return page(request, src, "arch.html", build, (arch, table, gpu))

    @app.get("/key/{arch}/{op}/{H}/{w_dtype}/{form}/{mode}", response_class=HTMLResponse, tags=["pages"],
             responses=ERRORS, summary="route key")
    def page_key(request: Request, src: Src, arch: Arch, op: OpP, H: HP, w_dtype: WP, form: FormP, mode: ModeP,
                 table: TableQ = None, gpu: GpuQ = None):
        def build():
            from api.charts import colors_for, error_figure, latency_figure, strip_figure

            view = key_view(src, arch, op, H, w_dtype, form, mode, table, gpu)
            colors = colors_for([p["name"] for p in view["programs"]], first=[w["program"] for w in view["windows"]])
            max_T = max([t["T"] for t in view["timing"]] + [w["hi"] or w["lo"] for w in view["windows"]] + [1]) * 2
            figs = {
                "strip": strip_figure([{"key": view["key"], "windows": view["windows"], "loud": []}], colors, max_T, 60),
                "latency": latency_figure(view, colors),
                "error": error_figure(view, colors) if op == "bwd" else None,
            }
            evidence = [V.window_evidence(view, i) for i in range(len(view["windows"]))]
            return {"view": view, "figs": figs, "colors": colors, "evidence": evidence,
                    "tables": src.table_ids_for(arch), "key_label": V.key_label(view["key"]), "gpu": gpu,
                    "gpus": src.gpus(arch), "run_cards": V.run_cards(src.runs(arch))}

        return page(request, src, "key.html", build, (arch, op, H, w_dtype, form, mode, table, gpu))

    @app.get("/diff", response_class=HTMLResponse, tags=["pages"], responses=ERRORS, summary="diff of two tables")
    def page_diff(request: Request, src: Src, old: Annotated[str | None, Query(pattern=TABLE_PATTERN)] = None,
                  new: Annotated[str | None, Query(pattern=TABLE_PATTERN)] = None, gpu: GpuQ = None):
        def build():
            ids = [e.id for e in src.table_entries()]
            ids += [f"solved:{a}" for a in src.arches() if f"solved:{a}" in src.table_ids_for(a)]
            view = diff_view(src, old, new, gpu) if old and new else None
            return {"view": view, "ids": ids, "old": old, "new": new, "key_label": V.key_label, "gpu": gpu}

        return page(request, src, "diff.html", build, (old, new, gpu))

    @app.get("/runs", response_class=HTMLResponse, tags=["pages"], summary="runs")
    def page_runs(request: Request, src: Src, arch: Annotated[str | None, Query(pattern=ARCH_PATTERN)] = None):
        return page(request, src, "runs.html", lambda: {"runs": src.runs(arch), "arch": arch}, (arch,))

    @app.get("/runs/{run_id}", response_class=HTMLResponse, tags=["pages"], responses=ERRORS, summary="run")
    def page_run(request: Request, src: Src, run_id: Annotated[str, PathParam(pattern=RUN_ID_PATTERN)]):
        return page(request, src, "run.html", lambda: {"view": run_view(src, run_id)}, (run_id,))

    return app


def _fmt(x, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def _tlabel(T) -> str:
    if T is None:
        return "inf"
    return f"{T:,}".replace(",", "\u2009")

