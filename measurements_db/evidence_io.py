"""Validation, import and export of `cake-evidence/1` (../shared/evidence-format.md).

* ``parse_evidence(lines, filename)`` validates every line and returns normalized records (integers
  as int, every float field as float, optional keys given as null dropped, unknown keys kept).
  The first problem raises ``EvidenceError`` naming file, line and field and what is accepted.
* ``import_evidence(store, path_or_records, name=...)`` imports one file (or a list of records) in
  one transaction: all of it or nothing. Records already in the store (same natural key, see
  ``measurements_db.models``) are skipped, so re-importing adds nothing and two importers racing on
  one file both succeed (``INSERT ... ON CONFLICT DO NOTHING`` on SQLite and PostgreSQL).
* ``export_evidence(store, arch=...)`` writes the store back as JSON Lines in one canonical order
  and formatting (``format_records``), so export -> import into an empty store -> export is
  byte-identical. Floats are written with Python's shortest round-trip repr and samples are stored
  as exact float64, so no value changes on the way.

Where the contract is silent, the rules applied here (docs/store.md lists them):

* A timing or accuracy record must name a run present in the same file or already in the store.
* Accuracy records of a ``measured`` run carry every number of the table (all but ``seed`` and
  ``dw_rel_l2``) and no ``verdict`` / ``qualified_by_source`` (published aggregates only); records
  of a ``published`` run need only the workload, family, ``inputs`` and ``dw_err_over_tol_max``,
  which may be null only next to a ``verdict``. A per-input record (``seed`` given) has ``inputs`` 1.
* A record repeated in a file is imported once; two different records with one natural key (or a
  run, program, timing block or per-input record already stored with different values) reject the
  file. One (run, program, workload, T, family) holds one aggregate or per-input records.
* Unknown keys the store cannot keep are left out and reported (``ImportResult.dropped_keys``),
  never a rejection (the contract's rule).
* ``started`` must be ISO 8601 with a UTC designator (``Z`` or ``+00:00``); samples must be finite
  and positive; NaN and Infinity are rejected everywhere.
"""

from __future__ import annotations

import gzip
import zlib
import hashlib
import json
import math
import numbers
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from sqlalchemy import Connection, func, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from measurements_db.aggregates import FAMILIES, FORMS, TIMING_OPS
from measurements_db.engine import Store, StoreError
from measurements_db.models import AccuracyRecord, AccuracySummary, Program, Run, TimingBlock, Workload
from measurements_db.summary import SUMMARY_INPUT_COLUMNS, family_run_summary, np_median

SCHEMA = "cake-evidence/1"
KINDS: tuple[str, ...] = ("run", "program", "timing", "accuracy")
DTYPES: tuple[str, ...] = ("bf16", "fp32")
_ARCH_RE = re.compile(r"sm_[0-9]+[a-z]?")  # fullmatch: `$` would let a trailing newline through

ProgressFn = Callable[[str, int, int], None]
_PG_IMPORT_LOCK = 0x63616B66  # PostgreSQL advisory lock held by every import transaction


class EvidenceError(ValueError):
    """A record that does not follow `cake-evidence/1`; nothing of its file was written."""

    def __init__(self, filename: str, line: int | None, field: str | None, message: str):
        self.filename = filename
        self.line = line
        self.field = field
        self.message = message
        where = f"{filename}:{line}" if line is not None else filename
        super().__init__(f"{where}: {'field ' + repr(field) + ': ' if field else ''}{message}")


# ---------------------------------------------------------------------------------------------
# the record kinds, field by field (order = the order export writes them)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # "str", "int", "float", "bool", "samples"
    required: bool = True
    choices: tuple[str, ...] | None = None
    minimum: int | None = None
    nullable: bool = False  # a required key whose value may be null (checked further per kind)


def _f(name, type_="str", **kw) -> Field:
    return Field(name, type_, **kw)


_OPT = {"required": False}
_DT = {"choices": DTYPES}
_WORKLOAD = (
    _f("H", "int", minimum=1), _f("T", "int", minimum=1), _f("x_dtype", **_DT), _f("w_dtype", **_DT),
    _f("form", choices=FORMS),
)

SPECS: dict[str, tuple[Field, ...]] = {
    "run": (
        _f("run_id"), _f("source", choices=("measured", "published")), _f("arch"), _f("gpu"),
        _f("sm_count", "int", minimum=1), _f("started"),
        *(_f(k, **_OPT) for k in ("host", "driver", "cuda", "torch", "triton", "package_version", "git_sha")),
        _f("citation", **_OPT), _f("note", **_OPT),
    ),
    "program": (
        _f("name"), _f("op", choices=("fwd", "bwd")), _f("deterministic", "bool"), _f("family"),
        _f("runnable", "bool"), _f("fingerprint"), _f("description", **_OPT),
    ),
    "timing": (
        _f("run_id"), _f("arch"), _f("program"), _f("op", choices=TIMING_OPS), *_WORKLOAD,
        _f("session"), _f("round", "int", minimum=0), _f("position", "int", minimum=0),
        _f("copy", "int", minimum=0), _f("timer", choices=("cupti", "events")), _f("l2", choices=("cold", "warm")),
        _f("samples_us", "samples", **_OPT), _f("median_us", "float", **_OPT), _f("n", "int", minimum=0, **_OPT),
    ),
    "accuracy": (
        _f("run_id"), _f("arch"), _f("program"), *_WORKLOAD, _f("family", choices=FAMILIES),
        _f("seed", "int", **_OPT), _f("inputs", "int", minimum=0),
        # Errors are magnitudes: a negative one is a producer's bug, refused rather than read as "best".
        _f("dw_err_over_tol_max", "float", nullable=True, minimum=0),
        *(_f(k, "float", minimum=0, **_OPT) for k in (
            "dw_err_over_tol_median", "dw_rel_l2", "eager_err_over_tol_max", "eager_err_over_tol_median",
            "dx_err_over_tol_max", "rstd_rel_l2")), _f("rstd_form", choices=("forward", "fp64"), **_OPT),
        _f("verdict", choices=("pass", "fail"), **_OPT), _f("qualified_by_source", "bool", **_OPT),
    ),
}
_KNOWN = {kind: {"schema", "kind", *(f.name for f in spec)} for kind, spec in SPECS.items()}
#: Accuracy fields a measured run must give (the table's numbers; seed and dw_rel_l2 are optional).
MEASURED_ACCURACY_FIELDS: tuple[str, ...] = (
    "dw_err_over_tol_median", "eager_err_over_tol_max", "eager_err_over_tol_median",
    "dx_err_over_tol_max", "rstd_rel_l2", "rstd_form",
)
PUBLISHED_ONLY_FIELDS: tuple[str, ...] = ("verdict", "qualified_by_source")
#: Integer fields stored in 32-bit columns (T, seed and n are 64-bit).
INT32_FIELDS = frozenset({"H", "sm_count", "round", "position", "copy", "inputs"})

_TYPE_WORDS = {"str": "a non-empty string", "int": "an integer", "float": "a finite number",
               "bool": "true or false", "samples": "a non-empty list of finite positive numbers"}


def _describe(v: Any) -> str:
    if v is None:
        return "null"
    try:
        s = json.dumps(v, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _is_int(v: Any) -> bool:
    # JSON gives int; records built in memory may carry numpy integers. Never a bool.
    return type(v) is int or (isinstance(v, numbers.Integral) and not isinstance(v, bool))


def _is_real(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _check_field(f: Field, v: Any, err: Callable[[str, str], EvidenceError]) -> Any:
    """The normalized value of one present, non-null field, or raise."""
    t = f.type
    if t == "str":
        # An identifier must be non-empty; an optional note may be "" (a host without a name).
        if type(v) is not str or (not v and f.required):
            words = _TYPE_WORDS[t] if f.required else "a string"
            raise err(f.name, f"expected {words}, got {_describe(v)}")
    elif t == "int":
        if type(v) is not int:
            if not _is_int(v):
                raise err(f.name, f"expected {_TYPE_WORDS[t]}, got {_describe(v)}")
            v = int(v)
        limit = 2**31 if f.name in INT32_FIELDS else 2**63  # the store's column widths
        if not (-limit <= v < limit):
            raise err(f.name, f"{_describe(v)} is outside the {32 if limit == 2**31 else 64}-bit integer range of the store")
    elif t == "bool":
        if type(v) is not bool:
            raise err(f.name, f"expected {_TYPE_WORDS[t]}, got {_describe(v)}")
    elif t == "float":
        if type(v) is not float:
            if not _is_real(v):
                raise err(f.name, f"expected {_TYPE_WORDS[t]}, got {_describe(v)}")
            try:
                v = float(v)
            except OverflowError:  # an integer literal beyond the double range
                raise err(f.name, f"expected {_TYPE_WORDS[t]}, got {_describe(v)}") from None
        if not math.isfinite(v):
            raise err(f.name, f"expected {_TYPE_WORDS[t]}, got {_describe(v)}")
    elif t == "samples":
        if type(v) is not list or not v:
            raise err(f.name, f"expected {_TYPE_WORDS[t]}, got {_describe(v)}")
        if not all(type(x) is float for x in v):
            for i, x in enumerate(v):
                if not _is_real(x):
                    raise err(f.name, f"element {i} is {_describe(x)}; expected {_TYPE_WORDS[t]}")
            try:
                v = [float(x) for x in v]
            except OverflowError:
                raise err(f.name, f"an element is beyond the double range; expected {_TYPE_WORDS[t]}") from None
        arr = np.asarray(v, dtype=np.float64)
        bad = ~(np.isfinite(arr) & (arr > 0))
        if bad.any():
            i = int(np.argmax(bad))
            raise err(f.name, f"element {i} is {_describe(v[i])}; expected {_TYPE_WORDS[t]} (microseconds)")
    if f.choices is not None and v not in f.choices:
        raise err(f.name, f"{_describe(v)} is not accepted; accepted: {', '.join(f.choices)}")
    if f.minimum is not None and v < f.minimum:
        raise err(f.name, f"{v} is below the minimum {f.minimum}")
    return v


def _check_text(obj: Any, filename: str, line: int | None, where: str | None = None) -> None:
    """Every string (keys and values, nested extra keys included) must be encodable as UTF-8.

    JSON can spell a lone UTF-16 surrogate (a \\ud800 escape); Python decodes it, but no database
    or file can store it, so it is refused here, at the line that holds it, not mid-import.
    """
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            raise EvidenceError(filename, line, where, "holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape); text must be valid Unicode") from None
        if "\x00" in obj:  # PostgreSQL text cannot hold NUL
            raise EvidenceError(filename, line, where, "holds a NUL character (\\u0000); text may not contain it")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _check_text(k, filename, line, where or k)
            _check_text(v, filename, line, where or k)
    elif isinstance(obj, list) and obj and not isinstance(obj[0], float):
        for v in obj:
            _check_text(v, filename, line, where)


def _unkeepable(key: Any, value: Any) -> str | None:
    """Why the store cannot keep an unknown key as JSON text, or None when it can."""
    if not isinstance(key, str):
        return "its key is not a string"
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"its value is not plain JSON ({exc})"
    try:
        _check_text({key: value}, "", None)
    except EvidenceError as exc:
        return exc.message
    return None


def validate_record(obj: Any, filename: str, line: int | None, dropped: list | None = None) -> dict:
    """Check one decoded JSON value against its kind; return the normalized record.

    Unknown keys are kept, except those the store cannot hold (a value that is not plain JSON,
    text with a NUL or a lone surrogate): the contract says they never reject a record, so they are
    left out, and ``(line, key, reason)`` is appended to ``dropped`` when given.
    Checks that need other records (the run a record names) are in ``check_references``.
    """

    def err(fld: str | None, msg: str) -> EvidenceError:
        return EvidenceError(filename, line, fld, msg)

    if not isinstance(obj, dict):
        raise err(None, f"expected a JSON object, got {_describe(obj)}")
    if obj.get("schema") != SCHEMA:
        if "schema" not in obj:
            raise err("schema", f'missing; every record has "schema": "{SCHEMA}"')
        raise err("schema", f"{_describe(obj.get('schema'))} is not accepted; accepted: {SCHEMA}")
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in SPECS:
        raise err("kind", f"{_describe(kind)} is not accepted; accepted: {', '.join(KINDS)}")
    out: dict[str, Any] = {"schema": SCHEMA, "kind": kind}
    for f in SPECS[kind]:
        v = obj.get(f.name)
        if v is None:
            if f.name not in obj and f.required:
                raise err(f.name, f"missing; a {kind} record requires it ({_TYPE_WORDS[f.type]})")
            if f.required and not f.nullable:
                raise err(f.name, f"expected {_TYPE_WORDS[f.type]}, got null")
            if f.nullable:
                out[f.name] = None
            continue
        out[f.name] = _check_field(f, v, err)
    for k, v in obj.items():
        if k not in _KNOWN[kind]:
            reason = _unkeepable(k, v)
            if reason is None:
                out[k] = v
            elif dropped is not None:
                dropped.append((line, str(k), reason))
    # Per-kind rules the table states in words.
    if kind in ("run", "timing", "accuracy") and not _ARCH_RE.fullmatch(out["arch"]):
        raise err("arch", f"{_describe(out['arch'])} is not accepted; accepted: sm_<digits>[letter], e.g. sm_90a, sm_100a")
    if kind == "run":
        _check_started(out["started"], err)
        if out["source"] == "published" and not out.get("citation"):
            raise err("citation", f"{'empty' if 'citation' in out else 'missing'}; a published run names where its "
                      "figures come from")
    elif kind == "timing":
        if out["copy"] not in (0, 1):
            raise err("copy", f"{out['copy']} is not accepted; accepted: 0, or 1 for the A/A second copy")
        if "samples_us" not in out and "median_us" not in out:
            raise err("median_us", "missing; a timing record without samples_us requires median_us")
        if "median_us" in out and out["median_us"] <= 0:
            raise err("median_us", f"{out['median_us']!r} is not accepted; accepted: a positive latency in microseconds")
    elif kind == "accuracy":
        if "seed" in out and out["inputs"] != 1:
            raise err("inputs", f"{out['inputs']} with a seed; a per-input record (seed given) has inputs 1")
        for k in PUBLISHED_ONLY_FIELDS:
            if "seed" in out and k in out:
                raise err(k, "only published aggregates carry it; this record has a seed (a per-input record)")
        if out["dw_err_over_tol_max"] is None and "verdict" not in out:
            raise err("dw_err_over_tol_max", "null without a verdict; accepted: a number, or null next to a "
                      "published verdict (pass or fail)")
    return out


def _check_started(v: str, err) -> None:
    try:
        ts = datetime.fromisoformat(v.replace("Z", "+00:00") if v.endswith("Z") else v)
    except ValueError:
        ts = None
    if ts is None or ts.utcoffset() is None or ts.utcoffset().total_seconds() != 0:
        raise err("started", f"{_describe(v)} is not accepted; accepted: ISO 8601 UTC, e.g. 2026-12-02T10:00:00Z")


def check_references(records: Sequence[dict], lines: Sequence[int], filename: str,
                     run_sources: Mapping[str, str], *, require_known_runs: bool) -> None:
    """Rules that depend on the run a record names (see the module docstring)."""
    for rec, line in zip(records, lines):
        kind = rec["kind"]
        if kind not in ("timing", "accuracy"):
            continue
        source = run_sources.get(rec["run_id"])
        if source is None:
            if require_known_runs:
                raise EvidenceError(filename, line, "run_id", f"{rec['run_id']!r} names no run record in this "
                                    "file or in the store; add its run record (kind run) or import that file first")
            continue
        if kind == "accuracy":
            if source == "measured":
                for k in MEASURED_ACCURACY_FIELDS:
                    if k not in rec:
                        raise EvidenceError(filename, line, k, f"missing; accuracy records of a measured run "
                                            f"({rec['run_id']}) require it")
                if rec["dw_err_over_tol_max"] is None:
                    raise EvidenceError(filename, line, "dw_err_over_tol_max",
                                        f"null; accuracy records of a measured run ({rec['run_id']}) require a number")
                for k in PUBLISHED_ONLY_FIELDS:
                    if k in rec:
                        raise EvidenceError(filename, line, k, f"only published aggregates carry it; run "
                                            f"{rec['run_id']} is measured")


# ---------------------------------------------------------------------------------------------
# natural keys (the same ones as the unique constraints in models.py)
# ---------------------------------------------------------------------------------------------


def _canonical_json(rec: Mapping) -> str:
    return json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _workload(rec: Mapping) -> tuple:
    return (rec["arch"], rec["H"], rec["x_dtype"], rec["w_dtype"], rec["form"])


def accuracy_rec_key(rec: Mapping) -> str:
    """``seed:<seed>`` for a per-input record, ``agg:<digest>`` for an aggregate."""
    if rec.get("seed") is not None:
        return f"seed:{rec['seed']}"
    return "agg:" + hashlib.sha256(_canonical_json(rec).encode()).hexdigest()[:32]


def natural_key(rec: Mapping) -> tuple:
    kind = rec["kind"]
    if kind == "run":
        return ("run", rec["run_id"])
    if kind == "program":
        return ("program", rec["name"], rec["fingerprint"])
    if kind == "timing":
        return ("timing", rec["run_id"], *_workload(rec), rec["program"], rec["op"], rec["T"], rec["session"],
                rec["round"], rec["position"], rec["copy"], rec["timer"], rec["l2"])
    return ("accuracy", rec["run_id"], *_workload(rec), rec["program"], rec["T"], rec["family"],
            accuracy_rec_key(rec))


# ---------------------------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------------------------


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number JSON accepts")


@dataclass
class _Parsed:
    filename: str
    records: list[dict] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    duplicates: int = 0  # records repeated verbatim in the input (imported once)
    dropped: list[tuple[int, str, str]] = field(default_factory=list)  # unknown keys the store cannot keep


def _parse(items: Iterable[tuple[int, Any]], filename: str, *, decoded: bool,
           progress: ProgressFn | None = None, total: int = 0) -> _Parsed:
    out = _Parsed(filename)
    seen: dict[tuple, tuple[int, dict]] = {}
    groups: dict[tuple, tuple[int, bool]] = {}  # accuracy group -> (first line, is an aggregate)
    for count, (line, item) in enumerate(items, 1):
        if decoded:
            obj = item
        else:
            if not item.strip():
                continue
            try:
                obj = json.loads(item, parse_constant=_reject_constant)
            except (ValueError, RecursionError) as exc:
                raise EvidenceError(filename, line, None, f"not valid JSON ({exc}); each line is one JSON object") from None
        rec = validate_record(obj, filename, line, out.dropped)
        _check_text(rec, filename, line)
        key = natural_key(rec)
        prev = seen.get(key)
        if prev is not None:
            if prev[1] == rec:
                out.duplicates += 1
                continue
            raise EvidenceError(filename, line, None, f"a different {rec['kind']} record with the same key as line "
                                f"{prev[0]} ({', '.join(map(str, key[1:]))}); each key may appear once")
        if rec["kind"] == "accuracy":
            group, aggregate = _workload_key_fields(rec), rec.get("seed") is None
            first = groups.setdefault(group, (line, aggregate))
            if first[0] != line and (aggregate or first[1]):
                raise EvidenceError(filename, line, None, _group_clash(group, aggregate, first[1], f"line {first[0]}"))
        seen[key] = (line, rec)
        out.records.append(rec)
        out.lines.append(line)
        if progress and count % 2000 == 0:
            progress("parse", count, total)
    file_runs = {r["run_id"]: r["source"] for r in out.records if r["kind"] == "run"}
    check_references(out.records, out.lines, filename, file_runs, require_known_runs=False)
    return out


def _group_clash(group: tuple, aggregate: bool, other_aggregate: bool, where: str) -> str:
    run_id, arch, H, x_dtype, w_dtype, form, program, T, family = group
    what = "a second aggregate" if aggregate and other_aggregate else (
        "an aggregate" if aggregate else "a per-input record")
    other = "an aggregate" if other_aggregate else "per-input records"
    return (f"{what} for run {run_id}, {program} at {arch} H={H} {x_dtype}/{w_dtype} {form} T={T}, family "
            f"{family}, where {where} holds {other}; the contract allows one aggregate per run, program, "
            "workload and family, or per-input records (seed given), not both")


def _parse_lines(lines: Iterable[str], filename: str, progress: ProgressFn | None = None, total: int = 0) -> _Parsed:
    return _parse(((i, ln) for i, ln in enumerate(lines, 1)), filename, decoded=False, progress=progress, total=total)


def parse_evidence(lines: Iterable[str], filename: str) -> list[dict]:
    """Validate `cake-evidence/1` lines; return the normalized records (blank lines skipped).

    Raises EvidenceError (with ``.filename``, ``.line``, ``.field``) at the first problem. Runs
    named but not defined in these lines are checked when importing (they may be in the store).
    """
    return _parse_lines(lines, filename).records


def _read_lines(path: Path, name: str) -> tuple[list[str], str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EvidenceError(name, None, None, f"cannot read the file ({exc.strerror or exc})") from None
    sha = hashlib.sha256(data).hexdigest()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:  # a corrupt deflate stream raises zlib.error
            raise EvidenceError(name, None, None, f"not a readable gzip file ({exc})") from None
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark (some Windows editors write one)
        data = data[3:]
    lines = data.split(b"\n")
    out = []
    for i, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise EvidenceError(name, i, None, f"not UTF-8 (byte {exc.start} of the line)") from None
    return out, sha


# ---------------------------------------------------------------------------------------------
# import
# ---------------------------------------------------------------------------------------------


@dataclass
class ImportResult:
    """What one import did: records added and skipped (already in the store) per kind."""

    name: str
    sha256: str
    records: int
    added: dict[str, int]
    skipped: dict[str, int]
    duplicates_in_file: int = 0
    #: unknown keys left out because the store cannot keep them: {"line", "key", "reason"}
    dropped_keys: list[dict] = field(default_factory=list)

    @property
    def total_added(self) -> int:
        return sum(self.added.values())

    def as_dict(self) -> dict:
        return {"name": self.name, "sha256": self.sha256, "records": self.records, "added": dict(self.added),
                "skipped": dict(self.skipped), "duplicates_in_file": self.duplicates_in_file,
                "dropped_keys": list(self.dropped_keys)}


def _insert(conn: Connection, table):
    return (postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert)(table)


def _count(conn: Connection, table) -> int:
    return conn.execute(select(func.count()).select_from(table)).scalar()


def _insert_new(conn: Connection, table, rows: list[dict], conflict: list[str]) -> int:
    """INSERT ... ON CONFLICT DO NOTHING; returns how many rows were new.

    SQLite: RETURNING counts them. PostgreSQL: psycopg's executemany (pipelined) is far faster than
    a multi-row INSERT ... RETURNING, whose huge statements psycopg re-parses every time, and it
    reports no rowcount; the table's count before and after is exact because every import holds
    the import advisory lock (nothing else writes these tables meanwhile).
    """
    if not rows:
        return 0
    stmt = _insert(conn, table).on_conflict_do_nothing(index_elements=conflict)
    if conn.dialect.name == "postgresql":
        before = _count(conn, table)
        conn.execute(stmt, rows)
        return _count(conn, table) - before
    return len(conn.execute(stmt.returning(table.c.id), rows).all())


def _chunks(seq: Sequence, n: int):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


def _extra(rec: Mapping, kind: str) -> dict | None:
    extra = {k: v for k, v in rec.items() if k not in _KNOWN[kind]}
    return extra or None


def _fields(rec: Mapping, kind: str) -> dict:
    return {f.name: rec.get(f.name) for f in SPECS[kind]}


def _stored_dict(row, kind: str) -> dict:
    """A stored run or program row as the record it was imported from (known fields + extra keys)."""
    d = {"schema": SCHEMA, "kind": kind}
    for f in SPECS[kind]:
        v = row._mapping[f.name]
        if v is not None:
            d[f.name] = v
    d.update(row._mapping["extra"] or {})
    return d


def _first_difference(a: Mapping, b: Mapping) -> str:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            return f"{k}: stored {_describe(b.get(k))}, here {_describe(a.get(k))}"
    return "?"


def _write(conn: Connection, parsed: _Parsed, sha: str, progress: ProgressFn | None) -> tuple[Counter, Counter]:
    recs, lines, fname = parsed.records, parsed.lines, parsed.filename
    if conn.dialect.name == "postgresql":
        # Serialize imports (as BEGIN IMMEDIATE does on SQLite): the accuracy summaries are
        # recomputed from what the transaction sees, which must include every committed import.
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_IMPORT_LOCK})
    added: Counter = Counter()
    seen: Counter = Counter()
    by_kind: dict[str, list[int]] = {k: [] for k in KINDS}
    for i, r in enumerate(recs):
        by_kind[r["kind"]].append(i)
        seen[r["kind"]] += 1

    # Runs: those of this file plus those it references; conflicting provenance rejects the file.
    referenced = {recs[i]["run_id"] for k in ("timing", "accuracy") for i in by_kind[k]}
    file_runs = {recs[i]["run_id"]: i for i in by_kind["run"]}
    wanted = sorted(referenced | set(file_runs))
    stored: dict[str, Any] = {}
    for chunk in _chunks(wanted, 500):
        for row in conn.execute(select(Run.__table__).where(Run.run_id.in_(chunk))):
            stored[row.run_id] = row
    for run_id, i in file_runs.items():
        if run_id in stored:
            old = _stored_dict(stored[run_id], "run")
            if old != recs[i]:
                raise EvidenceError(fname, lines[i], None, f"run {run_id!r} is already in the store with other "
                                    f"values ({_first_difference(recs[i], old)}); a run_id names one run")
    sources = {rid: r.source for rid, r in stored.items()}
    sources.update({rid: recs[i]["source"] for rid, i in file_runs.items()})
    check_references(recs, lines, fname, sources, require_known_runs=True)

    now = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    rows = []
    for i in by_kind["run"]:
        r = recs[i]
        rows.append({**_fields(r, "run"), "extra": _extra(r, "run"), "file_name": fname, "file_sha256": sha,
                     "imported_at": now})
    if rows:
        added["run"] += _insert_new(conn, Run.__table__, rows, ["run_id"])
    run_pk = {}
    for chunk in _chunks(wanted, 500):
        run_pk.update(dict(conn.execute(select(Run.run_id, Run.id).where(Run.run_id.in_(chunk))).all()))

    # Programs: (name, fingerprint) is the identity; other values must agree with a stored one.
    if by_kind["program"]:
        names = sorted({recs[i]["name"] for i in by_kind["program"]})
        stored_p = {}
        for chunk in _chunks(names, 500):
            for row in conn.execute(select(Program.__table__).where(Program.name.in_(chunk))):
                stored_p[(row.name, row.fingerprint)] = row
        rows = []
        for i in by_kind["program"]:
            r = recs[i]
            old = stored_p.get((r["name"], r["fingerprint"]))
            if old is not None and _stored_dict(old, "program") != r:
                raise EvidenceError(fname, lines[i], None, f"program {r['name']!r} with fingerprint "
                                    f"{r['fingerprint']!r} is already in the store with other values "
                                    f"({_first_difference(r, _stored_dict(old, 'program'))}); a changed program "
                                    "needs a new fingerprint")
            rows.append({**_fields(r, "program"), "extra": _extra(r, "program")})
        added["program"] += _insert_new(conn, Program.__table__, rows, ["name", "fingerprint"])

    # Workloads.
    wkeys = sorted({_workload(recs[i]) for k in ("timing", "accuracy") for i in by_kind[k]})
    if wkeys:
        wt = Workload.__table__
        _insert_new(conn, wt, [dict(zip(("arch", "h", "x_dtype", "w_dtype", "form"), k)) for k in wkeys],
                    ["arch", "h", "x_dtype", "w_dtype", "form"])
        arches = sorted({k[0] for k in wkeys})
        wid = {(a, h, x, w, f): i for i, a, h, x, w, f in conn.execute(
            select(wt.c.id, wt.c.arch, wt.c.h, wt.c.x_dtype, wt.c.w_dtype, wt.c.form).where(wt.c.arch.in_(arches)))}

    total_rows = len(by_kind["timing"]) + len(by_kind["accuracy"])
    done = 0

    def _bulk(table, rows, conflict, kind):
        nonlocal done
        pg = conn.dialect.name == "postgresql"
        before = _count(conn, table) if pg and rows else 0
        stmt = _insert(conn, table).on_conflict_do_nothing(index_elements=conflict)
        for chunk in _chunks(rows, 2000):
            if pg:  # counted once below (see _insert_new)
                conn.execute(stmt, chunk)
            else:
                added[kind] += len(conn.execute(stmt.returning(table.c.id), chunk).all())
            done += len(chunk)
            if progress:
                progress("write", done, total_rows)
        if pg and rows:
            added[kind] += _count(conn, table) - before

    # Timing blocks (sorted by key so concurrent importers lock rows in one order).
    prior_runs = sorted(run_pk[rid] for rid in stored)  # runs in the store before this import
    rows = []
    for i in by_kind["timing"]:
        r = recs[i]
        s = r.get("samples_us")
        arr = np.asarray(s, dtype="<f8") if s is not None else None
        rows.append({
            "run_pk": run_pk[r["run_id"]], "workload_id": wid[_workload(r)], "program": r["program"], "op": r["op"],
            "t": r["T"], "session": r["session"], "round": r["round"], "position": r["position"], "copy": r["copy"],
            "timer": r["timer"], "l2": r["l2"], "samples": arr.tobytes() if arr is not None else None,
            "n_samples": int(arr.size) if arr is not None else 0,
            "block_median": np_median(arr) if arr is not None else None,
            "median_us": r.get("median_us"), "n": r.get("n"), "extra": _extra(r, "timing"),
        })
    tkey = ["run_pk", "workload_id", "program", "op", "t", "session", "round", "position", "copy", "timer", "l2"]
    tvalues = ["samples", "median_us", "n", "extra"]
    _check_stored_values(_stored_for(conn, TimingBlock.__table__, rows, tkey + tvalues, prior_runs), rows,
                         [lines[i] for i in by_kind["timing"]], tkey, tvalues, fname, "timing")
    rows.sort(key=lambda d: tuple(d[k] for k in tkey))
    _bulk(TimingBlock.__table__, rows, tkey, "timing")

    rows = []
    acc_cols = [f.name for f in SPECS["accuracy"] if f.name not in
                ("run_id", "arch", "program", "H", "T", "x_dtype", "w_dtype", "form", "family")]
    for i in by_kind["accuracy"]:
        r = recs[i]
        row = {"run_pk": run_pk[r["run_id"]], "workload_id": wid[_workload(r)], "program": r["program"],
               "t": r["T"], "family": r["family"], "rec_key": accuracy_rec_key(r), "extra": _extra(r, "accuracy")}
        for c in acc_cols:
            row[c] = r.get(c)
        rows.append(row)
    akey = ["run_pk", "workload_id", "program", "t", "family", "rec_key"]
    acc_lines, avalues = [lines[i] for i in by_kind["accuracy"]], [*acc_cols, "extra"]
    stored_acc = _stored_for(conn, AccuracyRecord.__table__, rows, akey + avalues, prior_runs)
    _check_stored_values(stored_acc, rows, acc_lines, akey, avalues, fname, "accuracy")
    _check_stored_groups(conn, stored_acc, rows, acc_lines, fname, {v: k for k, v in run_pk.items()})
    rows.sort(key=lambda d: tuple(d[k] for k in akey))
    before = added["accuracy"]
    _bulk(AccuracyRecord.__table__, rows, akey, "accuracy")
    if added["accuracy"] > before:
        _refresh_summaries(conn, {(d["run_pk"], d["workload_id"], d["program"], d["t"], d["family"]) for d in rows})

    skipped = Counter({k: seen[k] - added[k] for k in KINDS if seen[k]})
    return added, skipped


def _stored_rows(conn: Connection, table, cols: list[str], run_pks: list[int], workload_ids: list[int]):
    for rchunk in _chunks(run_pks, 200):
        for wchunk in _chunks(workload_ids, 200):
            yield from conn.execute(select(*(table.c[c] for c in cols)).where(
                table.c.run_pk.in_(rchunk), table.c.workload_id.in_(wchunk)))


def _stored_for(conn: Connection, table, rows: list[dict], cols: list[str], prior_runs: list[int]) -> list:
    """The stored rows (`cols`) of the runs already in the store, at the workloads this file's rows of
    those runs name: all a record of this file can collide with (a new run has nothing stored)."""
    pks = set(prior_runs)
    wids = sorted({d["workload_id"] for d in rows if d["run_pk"] in pks})
    return list(_stored_rows(conn, table, cols, sorted(pks), wids)) if wids else []


def _check_stored_values(stored: list, rows: list[dict], row_lines: list[int], key: list[str],
                         values: list[str], fname: str, kind: str) -> None:
    """A record whose key is stored with other values rejects the file: skipping it (as a repeat)
    would drop this file's numbers without a word, and a run's measurement has one set of values.
    `stored` holds rows laid out as `key + values` (`_stored_for`)."""
    if not stored:
        return
    mine = {tuple(d[k] for k in key): (line, d) for d, line in zip(rows, row_lines)}
    for row in stored:
        hit = mine.get(tuple(row[:len(key)]))
        if hit is None:
            continue
        line, d = hit
        for c, old in zip(values, row[len(key):]):
            if old != d[c] and not (c == "extra" and not old and not d[c]):
                # As within one file: one key, one record (its unknown keys included, as for runs).
                shown = {"samples": "samples_us", "extra": None}.get(c, c)
                what = f"another {shown}" if shown else "other unknown keys"
                raise EvidenceError(fname, line, shown, f"a {kind} record with this key is already in the store with "
                                    f"{what}; a run's measurement has one value (import it under a new run_id, or "
                                    "export, fix and import into a new store)")


def _check_stored_groups(conn: Connection, stored: list, rows: list[dict], row_lines: list[int], fname: str,
                         run_ids: Mapping[int, str]) -> None:
    """One aggregate per (run, program, workload, T, family), or per-input records: against the store.
    `stored` holds accuracy rows laid out as (run_pk, workload_id, program, t, family, rec_key, ...)."""
    if not stored:
        return
    mine: dict[tuple, tuple[int, dict]] = {}
    for d, line in zip(rows, row_lines):
        mine.setdefault((d["run_pk"], d["workload_id"], d["program"], d["t"], d["family"]), (line, d))
    for row in stored:
        hit = mine.get(tuple(row[:5]))
        if hit is None:
            continue
        line, d = hit
        stored_agg, agg = row[5].startswith("agg:"), d["rec_key"].startswith("agg:")
        if row[5] != d["rec_key"] and (stored_agg or agg):
            wt = Workload.__table__
            w = conn.execute(select(wt).where(wt.c.id == d["workload_id"])).one()
            group = (run_ids[d["run_pk"]], w.arch, w.h, w.x_dtype, w.w_dtype, w.form, d["program"], d["t"], d["family"])
            raise EvidenceError(fname, line, None, _group_clash(group, agg, stored_agg, "the store"))


def _refresh_summaries(conn: Connection, groups: set[tuple]) -> None:
    """Recompute `accuracy_summaries` for the (run_pk, workload_id, program, t, family) groups."""
    found: dict[tuple, list[tuple]] = {g: [] for g in groups}
    cols = ["run_pk", "workload_id", "program", "t", "family", *SUMMARY_INPUT_COLUMNS]
    for row in _stored_rows(conn, AccuracyRecord.__table__, cols, sorted({g[0] for g in groups}),
                            sorted({g[1] for g in groups})):
        bucket = found.get(tuple(row[:5]))
        if bucket is not None:
            bucket.append(tuple(row[5:]))
    out = []
    for (run_pk, wid, program, t, family), recs in sorted(found.items()):
        out.append({"run_pk": run_pk, "workload_id": wid, "program": program, "t": t, "family": family,
                    **family_run_summary(recs)})
    st = AccuracySummary.__table__
    stmt = _insert(conn, st)
    stmt = stmt.on_conflict_do_update(
        index_elements=["run_pk", "workload_id", "program", "t", "family"],
        set_={c: stmt.excluded[c] for c in ("records", "inputs", "worst", "median", "eager_worst", "eager_median",
                                            "verdict", "qualified_by_source")},
    )
    for chunk in _chunks(out, 2000):
        conn.execute(stmt, chunk)


def import_evidence(store: Store, path_or_records: str | os.PathLike | Iterable[Mapping], *,
                    name: str | None = None, progress: ProgressFn | None = None,
                    _allow_embedded: bool = False) -> ImportResult:
    """Import one evidence file (``.jsonl`` or ``.jsonl.gz``) or a list of records, all or nothing.

    ``name`` labels the import in errors and in the runs' provenance (default: the path, or
    ``<records>``). The runs record the file's SHA-256 (for records: of their canonical form) and
    the import time. ``progress(phase, done, total)`` is called now and then ("parse", "write").
    Raises EvidenceError for bad evidence (nothing written) and StoreError for a read-only store.
    """
    _refuse_embedded(store, _allow_embedded)
    if isinstance(path_or_records, (str, os.PathLike)):
        path = Path(path_or_records)
        fname = name or str(path_or_records)
        text_lines, sha = _read_lines(path, fname)
        parsed = _parse_lines(text_lines, fname, progress, len(text_lines))
    else:
        fname = name or "<records>"
        items = list(path_or_records)
        parsed = _parse(((i, r) for i, r in enumerate(items, 1)), fname, decoded=True,
                        progress=progress, total=len(items))
        sha = hashlib.sha256(format_records(parsed.records).encode()).hexdigest()
    return _import_parsed(store, parsed, sha, progress)


def import_lines(store: Store, lines: Sequence[str], name: str, *, progress: ProgressFn | None = None) -> ImportResult:
    """`import_evidence` for text lines already in memory (the service's ingest): errors name the
    lines as sent, blank lines counted, and the SHA-256 is of the lines joined by newlines."""
    _refuse_embedded(store, False)
    sha = hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()
    parsed = _parse_lines(lines, name, progress, len(lines))
    return _import_parsed(store, parsed, sha, progress)


def _refuse_embedded(store: Store, allow: bool) -> None:
    if store.embedded and not allow:
        raise StoreError("the embedded default store is a read-only cache of the shipped bundles; import into a "
                         "store named by --db URL or $CAKE_DB_URL (e.g. --db sqlite:///evidence.sqlite)")


def _import_parsed(store: Store, parsed: _Parsed, sha: str, progress: ProgressFn | None) -> ImportResult:
    fname = parsed.filename
    for attempt in range(5):
        try:
            with store.write() as conn:
                added, skipped = _write(conn, parsed, sha, progress)
            break
        except DBAPIError as exc:
            # PostgreSQL: two importers touching the same keys in different orders can deadlock;
            # the loser's transaction was rolled back entirely, so it is safe to run it again.
            code = getattr(getattr(exc, "orig", None), "sqlstate", None)
            if code not in ("40P01", "40001") or attempt == 4:
                raise
    return ImportResult(name=fname, sha256=sha, records=len(parsed.records) + parsed.duplicates,
                        added={k: added.get(k, 0) for k in KINDS if k in added or k in skipped},
                        skipped={k: skipped.get(k, 0) for k in KINDS if k in added or k in skipped},
                        duplicates_in_file=parsed.duplicates,
                        dropped_keys=[{"line": ln, "key": k, "reason": why} for ln, k, why in parsed.dropped])


# ---------------------------------------------------------------------------------------------
# export
# ---------------------------------------------------------------------------------------------


def _sorted_json(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _sorted_json(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [_sorted_json(x) for x in v]
    return v


def _ordered(rec: Mapping) -> dict:
    kind = rec["kind"]
    out: dict[str, Any] = {"schema": rec["schema"], "kind": kind}
    for f in SPECS[kind]:
        v = rec.get(f.name)
        if v is not None or (f.required and f.name in rec):
            out[f.name] = v
    for k in sorted(k for k in rec if k not in _KNOWN[kind]):
        out[k] = _sorted_json(rec[k])
    return out


def _sort_key(rec: Mapping) -> tuple:
    kind = rec["kind"]
    if kind == "run":
        return (0, rec["run_id"])
    if kind == "program":
        return (1, rec["name"])  # stable: one name's fingerprints keep their (import) order
    if kind == "timing":
        return (2, *natural_key(rec)[1:])
    seed = rec.get("seed")
    # Per-input records are told apart by seed; only aggregates need the whole record as a tie-break.
    return (3, *_workload_key_fields(rec), seed is None, seed if seed is not None else 0,
            _canonical_json(rec) if seed is None else "")


def _workload_key_fields(rec: Mapping) -> tuple:
    """(run, workload, program, T, family): the group one aggregate (or a set of per-input records) covers."""
    return (rec["run_id"], *_workload(rec), rec["program"], rec["T"], rec["family"])


def format_records(records: Iterable[Mapping]) -> str:
    """Normalized records as canonical `cake-evidence/1` JSON Lines (the export format).

    Order: runs by run_id, programs by name (a name's fingerprints in the given order), timing
    and accuracy records by their natural key. Keys: schema, kind, the contract's fields in table
    order, then unknown keys sorted. Floats use Python's shortest round-trip repr.
    """
    recs = sorted(records, key=_sort_key)
    return "".join(json.dumps(_ordered(r), ensure_ascii=False) + "\n" for r in recs)


def export_records(store: Store, *, arch: str | None = None) -> list[dict]:
    """Every record of the store (of one arch: its runs, timing and accuracy records and the
    programs they name) as normalized `cake-evidence/1` dicts, in canonical order."""
    out: list[dict] = []
    wt, tt, at, rt = Workload.__table__, TimingBlock.__table__, AccuracyRecord.__table__, Run.__table__
    with store.read() as conn:
        run_rows = conn.execute(select(rt).order_by(rt.c.id)).all()
        runs_by_pk = {r.id: r for r in run_rows}
        wls = {row.id: row for row in conn.execute(select(wt))}
        used_runs: set[int] = set()
        used_programs: set[str] = set()
        tq = select(tt).order_by(tt.c.id)
        aq = select(at).order_by(at.c.id)
        if arch is not None:
            ids = [i for i, w in wls.items() if w.arch == arch]
            tq = tq.where(tt.c.workload_id.in_(ids))
            aq = aq.where(at.c.workload_id.in_(ids))
        for row in conn.execute(tq).mappings():
            w, run = wls[row["workload_id"]], runs_by_pk[row["run_pk"]]
            rec = {"schema": SCHEMA, "kind": "timing", "run_id": run.run_id, "arch": w.arch, "program": row.program,
                   "op": row["op"], "H": w.h, "T": row["t"], "x_dtype": w.x_dtype, "w_dtype": w.w_dtype,
                   "form": w.form, "session": row["session"], "round": row["round"], "position": row["position"],
                   "copy": row["copy"], "timer": row["timer"], "l2": row["l2"]}
            if row["samples"] is not None:
                rec["samples_us"] = np.frombuffer(row["samples"], dtype="<f8").tolist()
            for k in ("median_us", "n"):
                if row[k] is not None:
                    rec[k] = row[k]
            rec.update(row["extra"] or {})
            out.append(rec)
            used_runs.add(row["run_pk"])
            used_programs.add(row["program"])
        acc_cols = [f.name for f in SPECS["accuracy"] if f.name not in
                    ("run_id", "arch", "program", "H", "T", "x_dtype", "w_dtype", "form", "family")]
        for row in conn.execute(aq).mappings():
            w, run = wls[row["workload_id"]], runs_by_pk[row["run_pk"]]
            rec = {"schema": SCHEMA, "kind": "accuracy", "run_id": run.run_id, "arch": w.arch,
                   "program": row["program"], "H": w.h, "T": row["t"], "x_dtype": w.x_dtype, "w_dtype": w.w_dtype,
                   "form": w.form, "family": row["family"]}
            for c in acc_cols:
                v = row[c]
                if v is not None or c == "dw_err_over_tol_max":
                    rec[c] = v
            rec.update(row["extra"] or {})
            out.append(rec)
            used_runs.add(row["run_pk"])
            used_programs.add(row["program"])
        for r in run_rows:
            if arch is None or r.arch == arch or r.id in used_runs:
                out.append(_stored_dict(r, "run"))
        pt = Program.__table__
        for p in conn.execute(select(pt).order_by(pt.c.id)):
            if arch is None or p.name in used_programs:
                out.append(_stored_dict(p, "program"))
    out.sort(key=_sort_key)
    return out


def export_evidence(store: Store, *, arch: str | None = None) -> str:
    """The store (or one arch of it) as canonical `cake-evidence/1` JSON Lines (see format_records)."""
    return format_records(export_records(store, arch=arch))
