"""Shipped evidence bundles: gzipped canonical `cake-evidence/1` JSON Lines under `measurements_db/data/`.

``write_bundle(records, path)`` validates the records, writes them in the export's canonical order
and formatting (`evidence_io.format_records`) and gzips them with a fixed header (mtime 0, no file
name, level 9), so the same records give the same bytes and a diff of the decompressed text shows
exactly what changed. Every ``*.jsonl.gz`` in the data directory is loaded into the embedded
default's cache (`engine.open_embedded_store`), which is rebuilt when the bundles change.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
from pathlib import Path
from typing import Iterable, Mapping

from measurements_db.evidence_io import _parse, format_records


def bundle_bytes(records: Iterable[Mapping], name: str = "<bundle>") -> bytes:
    """The gzip bytes of a bundle of ``records`` (validated; EvidenceError names the bad record)."""
    items = list(records)
    parsed = _parse(((i, r) for i, r in enumerate(items, 1)), name, decoded=True)
    text = format_records(parsed.records).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(text)
    return buf.getvalue()


def write_bundle(records: Iterable[Mapping], path: str | os.PathLike) -> str:
    """Write ``records`` as a byte-stable bundle at ``path`` (atomically); return its SHA-256."""
    path = Path(path)
    data = bundle_bytes(records, name=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return hashlib.sha256(data).hexdigest()


def merge_records(sources: Iterable[tuple[str, Iterable[Mapping]]]) -> list[dict]:
    """The records of several evidence files as one bundle's: each run and each program version
    (name, fingerprint) once, exact duplicate records once (a file given twice adds nothing).

    A run id or a program version recorded twice with different contents is an error naming both
    files: merging would silently pick one provenance.
    """
    import json

    from measurements_db.evidence_io import EvidenceError

    out: list[dict] = []
    firsts: dict[tuple, tuple[str, str]] = {}  # identity -> (canonical JSON, file)
    seen: set[str] = set()
    for name, records in sources:
        for rec in records:
            text = json.dumps(rec, sort_keys=True)
            kind = rec.get("kind")
            ident = (("run", rec.get("run_id")) if kind == "run"
                     else ("program", rec.get("name"), rec.get("fingerprint")) if kind == "program" else None)
            if ident is not None:
                prev = firsts.get(ident)
                if prev is not None:
                    if prev[0] != text:
                        what = f"run {ident[1]!r}" if kind == "run" else f"program {ident[1]!r} (fingerprint {ident[2]})"
                        raise EvidenceError(name, None, kind, f"{what} differs from its record in {prev[1]}")
                    continue
                firsts[ident] = (text, name)
            elif text in seen:
                continue
            seen.add(text)
            out.append(dict(rec))
    return out


def read_bundle(path: str | os.PathLike) -> list[dict]:
    """The validated records of one bundle (or plain .jsonl) file."""
    from measurements_db.evidence_io import _parse_lines, _read_lines

    lines, _ = _read_lines(Path(path), str(path))
    return _parse_lines(lines, str(path)).records
