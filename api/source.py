"""Where the service's data comes from: the evidence store and a fixed list of route tables.

`DataSource` is the one object the request handlers depend on (FastAPI dependency `get_source`).
It opens the store the CLI uses (same URL precedence: explicit URL, then $CAKE_DB_URL, then the
embedded default), reads aggregates through `measurements_db.queries` only (no SQL here, and no
request value ever reaches SQL or the filesystem), and knows the route tables by id
`<kind>:<arch>` from a list fixed when the app starts.

Aggregates are cached per arch for `cache_ttl_s` seconds (a dashboard under load must not
re-aggregate the store on every request); an ingest through this service drops the cache at once,
and an import by another process shows up after at most the TTL.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

TABLE_KINDS = ("runtime", "published", "solved")
KIND_LABELS = {
    "runtime": "runtime table (shipped with cake_kernels)",
    "published": "published-figures table (routes between programs this package cannot launch)",
    "solved": "solved now from the store",
}
# What an arch, a table id or a run id may look like in a request. Anything else is refused before
# it reaches a lookup, so no request value can name a file.
ARCH_RE = re.compile(r"^sm_[0-9]{2,3}[a-z]?$")
TABLE_ID_RE = re.compile(r"^(runtime|published|solved):(sm_[0-9]{2,3}[a-z]?)$")


class NotFound(LookupError):
    """A request named something the service does not have (answered 404 with this message)."""


class GpuAmbiguous(LookupError):
    """The evidence of an arch was measured on several GPU models and the request named none
    (answered 409 with this message, which lists them). The route key's arch is shared by cards whose
    timings differ (sm_90a: H100 and H200), so the service never pools them, as the CLI does not
    (`cake_router solve --gpu`)."""

    def __init__(self, arch: str, counts: Mapping[str, int]):
        self.arch, self.counts = arch, dict(counts)
        have = "; ".join(f"{g!r} ({n} runs)" for g, n in sorted(self.counts.items()))
        super().__init__(f"the evidence of {arch} was measured on {len(self.counts)} GPU models: {have}. "
                         f"Its timings are shown for one at a time: add ?gpu=<model> (one of them)")


GPU_RE = re.compile(r"^[A-Za-z0-9 ._:,()/+-]{1,200}$")  # a GPU model as the driver names it


def choose_gpu(arch: str, counts: Mapping[str, int], wanted: str | None) -> str | None:
    """`measurements_db.aggregates.choose_gpu` (the CLI's rule), its refusals worded for a request:
    NotFound (the accepted models named) for a model that did not measure ``arch``, GpuAmbiguous
    where several did and none is named. ``counts``: GPU model -> measured runs of the arch that hold timing."""
    from measurements_db.aggregates import GpuChoiceError, choose_gpu as rule

    try:
        return rule(arch, counts, wanted)
    except GpuChoiceError:
        if wanted is None:
            raise GpuAmbiguous(arch, counts) from None
        have = ", ".join(repr(g) for g in sorted(counts)) or "none"
        raise NotFound(f"gpu {wanted!r}: no measured run of {arch} on it; accepted: {have}") from None


@dataclass(frozen=True)
class TableEntry:
    """One table of the fixed list: where it comes from is decided at startup, never by a request."""

    kind: str  # runtime | published | solved
    arch: str
    path: Path | None  # None for "solved" (computed from the store)

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.arch}"


def default_table_entries() -> list[TableEntry]:
    """The runtime tables (cake_kernels/routes/<arch>.json) and the published-figures tables
    (cake_router/routes_published/<arch>.json) found at startup."""
    entries: list[TableEntry] = []
    dirs: list[tuple[str, Path]] = []
    try:
        from cake_kernels.routes.table import routes_dir

        dirs.append(("runtime", routes_dir()))
    except ImportError:  # pragma: no cover - the table module ships with the package
        pass
    import cake_router

    dirs.append(("published", Path(cake_router.__file__).resolve().parent / "routes_published"))
    for kind, d in dirs:
        if not d.is_dir():
            continue
        for p in sorted(d.glob("*.json")):
            if ARCH_RE.match(p.stem):
                entries.append(TableEntry(kind, p.stem, p))
    return entries


def entries_from_mapping(tables: Mapping[str, Any]) -> list[TableEntry]:
    """`{"runtime:sm_90a": "/path/x.json", ...}` (what `create_app(tables=...)` accepts) -> entries."""
    out = []
    for tid, path in tables.items():
        m = TABLE_ID_RE.match(tid)
        if not m or m.group(1) == "solved":
            raise ValueError(f"table id {tid!r}: expected 'runtime:<arch>' or 'published:<arch>' (arch like sm_90a)")
        out.append(TableEntry(m.group(1), m.group(2), Path(path)))
    return out


class DataSource:
    """The store plus the table list, with a small per-arch cache of aggregates."""

    def __init__(self, store_url: str | None, table_entries: list[TableEntry], cache_ttl_s: float = 5.0,
                 solver: Callable[[Mapping, str], dict] | None = None):
        self.store_url = store_url
        self.cache_ttl_s = cache_ttl_s
        self._entries = {e.id: e for e in table_entries}
        self._lock = threading.RLock()
        self._store = None
        self._generation = 0
        self._cache: dict[tuple, tuple[int, float, Any]] = {}
        self._inflight: dict[tuple, threading.Event] = {}
        self._solver = solver

    # ---- store ---------------------------------------------------------------------------
    @property
    def store(self):
        """The opened store (opened on first use, so the app starts even before the DB exists)."""
        with self._lock:
            if self._store is None:
                from measurements_db.engine import open_store

                self._store = open_store(self.store_url)
            return self._store

    def store_url_display(self) -> str:
        """The store URL without a password."""
        try:
            return self.store.display_url
        except Exception:
            return "(store not readable)"

    def invalidate(self) -> None:
        with self._lock:
            self._generation += 1
            self._cache.clear()

    def cached(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """The cached value of `key`, computed by one thread at a time (single flight): under load,
        requests arriving while it is computed wait for that result instead of all recomputing."""
        while True:
            now = time.monotonic()
            with self._lock:
                gen = self._generation
                hit = self._cache.get(key)
                if hit is not None and hit[0] == gen and now - hit[1] < self.cache_ttl_s:
                    return hit[2]
                flight = self._inflight.get(key)
                if flight is None:
                    flight = self._inflight[key] = threading.Event()
                    owner = True
                else:
                    owner = False
            if not owner:
                flight.wait(timeout=120)
                continue  # take the fresh value, or compute it if that flight failed
            try:
                value = compute()
                with self._lock:
                    if self._generation == gen:
                        self._cache[key] = (gen, time.monotonic(), value)
                return value
            finally:
                with self._lock:
                    self._inflight.pop(key, None)
                flight.set()

    def gpus(self, arch: str) -> dict[str, int]:
        """GPU model -> measured runs of ``arch`` in the store that hold timing."""
        from measurements_db import queries

        return dict(self.cached(("gpus", arch), lambda: queries.measured_gpus(self.store, arch)))

    def evidence(self, arch: str, gpu: str | None = None) -> dict:
        """WorkloadKey -> WorkloadEvidence for one arch (measurements_db.queries.workload_evidence), of
        one GPU model's runs (`choose_gpu`: ``gpu``, or the only one; GpuAmbiguous when several)."""
        from measurements_db import queries

        chosen = choose_gpu(arch, self.gpus(arch), gpu)
        return self.cached(("evidence", arch, chosen), lambda: queries.workload_evidence(self.store, arch, chosen))

    def store_arches(self) -> list[str]:
        from measurements_db import queries

        return list(self.cached(("arches",), lambda: list(queries.arches(self.store))))

    def runs(self, arch: str | None = None) -> list[dict]:
        from measurements_db import queries

        return self.cached(("runs", arch), lambda: [as_dict(r) for r in queries.runs(self.store, arch=arch)])

    def run_detail(self, run_id: str) -> Any:
        from measurements_db import queries

        return self.cached(("run", run_id), lambda: queries.run_detail(self.store, run_id))

    def stats(self) -> dict:
        from measurements_db import queries

        return as_dict(self.cached(("stats",), lambda: queries.stats(self.store)))

    @property
    def can_solve(self) -> bool:
        """Whether `solved:<arch>` tables are offered (the solver is installed)."""
        return self._solver is not None

    # ---- tables --------------------------------------------------------------------------
    def table_entries(self) -> list[TableEntry]:
        return list(self._entries.values())

    def _solvable(self, arch: str) -> bool:
        """A solved table is offered for an arch with evidence in the store (and a solver)."""
        if self._solver is None:
            return False
        try:
            return arch in self.store_arches()
        except Exception:
            return False

    def table_ids_for(self, arch: str) -> list[str]:
        ids = [e.id for e in self._entries.values() if e.arch == arch]
        if self._solvable(arch):
            ids.append(f"solved:{arch}")
        return ids

    def entry(self, table_id: str) -> TableEntry:
        """The entry for an id of the fixed list; NotFound for anything else (never a path)."""
        m = TABLE_ID_RE.match(table_id or "")
        if not m:
            raise NotFound(f"table {table_id!r}: expected '<kind>:<arch>' with kind one of {', '.join(TABLE_KINDS)}")
        if m.group(1) == "solved":
            if self._solver is None:
                raise NotFound("solving from the store is not available (the solver module is missing)")
            if not self._solvable(m.group(2)):
                raise NotFound(f"table {table_id!r}: the store holds no evidence of {m.group(2)} to solve from")
            return TableEntry("solved", m.group(2), None)
        e = self._entries.get(table_id)
        if e is None:
            known = ", ".join(sorted(self._entries)) or "none"
            raise NotFound(f"table {table_id!r} is not in the service's list (known: {known})")
        return e

    def load(self, table_id: str, gpu: str | None = None):
        """(entry, RouteTable) for an id; RouteTableError propagates (shown as a page error). A
        `solved:<arch>` table is solved from one GPU model's evidence (`evidence`'s ``gpu``)."""
        e = self.entry(table_id)
        if e.kind == "solved":
            from cake_kernels.routes.table import parse_table

            chosen = choose_gpu(e.arch, self.gpus(e.arch), gpu)

            def solve():
                doc = self._solver(self.evidence(e.arch, chosen), e.arch)
                return parse_table(doc, f"solved:{e.arch}")

            return e, self.cached(("solved", e.arch, chosen), solve)
        from cake_kernels.routes.table import load_table

        path = e.path
        mtime = path.stat().st_mtime_ns if path.exists() else 0
        return e, self.cached(("table", e.id, mtime), lambda: load_table(path))

    def default_table_id(self, arch: str) -> str | None:
        """runtime, else published, else solved: what the arch page shows when not told."""
        for kind in TABLE_KINDS:
            tid = f"{kind}:{arch}"
            if tid in self._entries or (kind == "solved" and self._solvable(arch)):
                return tid
        return None

    def arches(self) -> list[str]:
        """Every arch with a table or with evidence in the store."""
        arches = {e.arch for e in self._entries.values()}
        try:
            arches |= set(self.store_arches())
        except Exception:
            pass  # a store that cannot be read still lets the tables be browsed; the page says why
        return sorted(arches)


def as_dict(obj: Any) -> Any:
    """Dataclasses, named tuples, mappings and ORM-ish objects -> plain JSON-able data."""
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: as_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): as_dict(v) for k, v in obj.items()}
    if hasattr(obj, "_asdict"):
        return {k: as_dict(v) for k, v in obj._asdict().items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [as_dict(v) for v in obj]
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    return str(obj)
