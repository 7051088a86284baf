"""`cake-routes/1` route tables: canonical serialization, checksum, loading and window lookup.

The writer (the solver) and the reader (the runtime, the dashboard) share this module, so the
checksum rule of DESIGN.md ("SHA-256 of the document without its checksum key, serialized with
sorted keys and separators (',', ':')") exists once.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

SCHEMA = "cake-routes/1"


class RouteTableError(ValueError):
    """A route table that cannot be trusted: names the file and what is wrong."""


def routes_dir() -> Path:
    """Where the runtime's shipped tables live (one `<arch>.json` each)."""
    return Path(__file__).resolve().parent


def canonical_bytes(doc: dict) -> bytes:
    body = {k: v for k, v in doc.items() if k != "checksum"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def compute_checksum(doc: dict) -> str:
    return "sha256:" + hashlib.sha256(canonical_bytes(doc)).hexdigest()


def write_table(doc: dict, path: str | os.PathLike) -> bytes:
    """Write `doc` with its checksum, deterministically (sorted keys, 1-space indent, trailing newline).

    Written to a temporary file then renamed, so a reader never sees half a table.
    """
    doc = dict(doc)
    doc["checksum"] = compute_checksum(doc)
    # allow_nan=False: NaN or Infinity would make a file strict JSON parsers refuse.
    data = (json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return data


@dataclass(frozen=True)
class Window:
    lo: int
    hi: int | None
    program: str
    reason: str
    evidence: dict = field(default_factory=dict, compare=False, hash=False)

    def covers(self, T: int) -> bool:
        """Whether T lies in [lo, hi] (hi None: no upper end)."""
        return self.lo <= T and (self.hi is None or T <= self.hi)


@dataclass
class RouteTable:
    """A verified table: windows per route key, ready for O(log n) lookup by T."""

    arch: str
    path: str
    doc: dict
    # (op, H, w_dtype, form, mode) -> (sorted window starts, windows)
    _keys: dict[tuple, tuple[list[int], list[Window]]] = field(default_factory=dict)

    def lookup(self, op: str, H: int, w_dtype: str, form: str, mode: str, T: int) -> Window | None:
        """The window covering T for the key, or None when the table has no such key."""
        entry = self._keys.get((op, H, w_dtype, form, mode))
        if entry is None:
            return None
        starts, windows = entry
        i = bisect.bisect_right(starts, T) - 1
        return windows[i] if i >= 0 else None

    def keys(self) -> Iterable[tuple]:
        return self._keys.keys()

    def windows(self, op: str, H: int, w_dtype: str, form: str, mode: str) -> list[Window]:
        entry = self._keys.get((op, H, w_dtype, form, mode))
        return list(entry[1]) if entry else []

    def programs(self) -> set[str]:
        return {w.program for _, ws in self._keys.values() for w in ws}


def parse_table(doc: Any, path: str, known_programs: set[str] | None = None) -> RouteTable:
    """Validate a decoded table document; `known_programs` (when given) must name every program."""

    def bad(msg: str) -> RouteTableError:
        return RouteTableError(f"route table {path}: {msg}")

    if not isinstance(doc, dict):
        raise bad("not a JSON object")
    if doc.get("schema") != SCHEMA:
        raise bad(f"schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    checksum = doc.get("checksum")
    expected = compute_checksum(doc)
    if checksum != expected:
        raise bad(f"checksum mismatch: file says {checksum!r}, content hashes to {expected!r} (tampered or truncated; re-solve or restore it)")
    arch = doc.get("arch")
    if not isinstance(arch, str):
        raise bad("missing 'arch'")
    table = RouteTable(arch=arch, path=path, doc=doc)
    routes = doc.get("routes")
    if not isinstance(routes, list):
        raise bad("'routes' must be a list")
    for i, route in enumerate(routes):
        try:
            if type(route["H"]) is not int:
                raise TypeError(f"H is {route['H']!r}, not an integer")
            key = (route["op"], route["H"], route["w_dtype"], route["form"], route["mode"])
            raw = route["windows"]
        except (KeyError, TypeError, ValueError) as exc:
            raise bad(f"routes[{i}] lacks a field of (op, H, w_dtype, form, mode, windows): {exc}") from None
        if not all(isinstance(k, str) for k in (key[0], key[2], key[3], key[4])):
            raise bad(f"routes[{i}]: op, w_dtype, form and mode must be strings")
        if not isinstance(raw, list) or not all(isinstance(w, dict) for w in raw):
            raise bad(f"routes[{i}].windows must be a list of objects")
        if key in table._keys:
            raise bad(f"routes[{i}] repeats key {key}")
        windows = []
        expect_lo = 1
        for j, w in enumerate(raw):
            lo, hi = w.get("lo"), w.get("hi")
            if type(lo) is not int or lo != expect_lo or (hi is not None and (type(hi) is not int or hi < lo)):
                raise bad(f"routes[{i}].windows[{j}] = [{lo}, {hi}] breaks the sorted, disjoint cover of [1, inf) (expected lo={expect_lo})")
            program = w.get("program")
            if not isinstance(program, str):
                raise bad(f"routes[{i}].windows[{j}] has no program")
            if known_programs is not None and program not in known_programs:
                raise bad(f"routes[{i}].windows[{j}] names unknown program {program!r} (not in this package's registry)")
            reason, evidence = w.get("reason", ""), w.get("evidence") or {}
            if not isinstance(reason, str) or not isinstance(evidence, dict):
                raise bad(f"routes[{i}].windows[{j}]: reason must be a string and evidence an object")
            windows.append(Window(lo, hi, program, reason, evidence))
            if hi is None:
                if j != len(raw) - 1:
                    raise bad(f"routes[{i}].windows[{j}] is unbounded but not last")
                break
            expect_lo = hi + 1
        if not windows or windows[-1].hi is not None:
            raise bad(f"routes[{i}] does not cover [1, inf): the last window must have hi = null")
        table._keys[key] = ([w.lo for w in windows], windows)
    return table


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def load_table(path: str | os.PathLike, known_programs: set[str] | None = None) -> RouteTable:
    """Read, verify (checksum, cover, programs) and index one table file."""
    path = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise RouteTableError(f"route table {path}: cannot read: {exc}") from None
    try:
        doc = json.loads(raw, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise RouteTableError(f"route table {path}: not valid JSON ({exc}); the file is corrupted or truncated") from None
    return parse_table(doc, path, known_programs)
