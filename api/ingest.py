"""Authenticated evidence ingest: token check, bounded body reading, the store's own validation.

Order matters and is what the tests pin down: the token is checked before a byte of the body is
read; a declared Content-Length over the limit is refused before reading; a body that grows past
the limit while streaming is refused as soon as it does (never buffered whole); only a complete,
UTF-8 body reaches `import_lines` (the validator and writer `import` uses, on the lines as sent, so
an error names the client's line), which writes everything in one transaction or nothing.
"""

from __future__ import annotations

import hmac
import re

from starlette.requests import Request

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class IngestRefused(Exception):
    """An ingest request refused with an HTTP status and a message (nothing was written)."""

    def __init__(self, status: int, detail, headers: dict | None = None):
        super().__init__(str(detail))
        self.status = status
        self.detail = detail
        self.headers = headers or {}


def check_token(configured: str | None, authorization: str | None) -> None:
    """403 when ingest is disabled (no token configured), 401 when the bearer token is absent or wrong.

    `hmac.compare_digest` compares in time independent of where the strings differ; both sides
    are bytes so a non-ASCII header cannot raise.
    """
    if not configured:
        raise IngestRefused(403, "evidence ingest is disabled: the server has no token "
                                 "(start it with CAKE_API_TOKEN set to enable POST /api/evidence)")
    scheme, _, given = (authorization or "").partition(" ")
    ok = hmac.compare_digest(given.strip().encode("utf-8", "surrogateescape"), configured.encode("utf-8"))
    if scheme.lower() != "bearer" or not ok:
        raise IngestRefused(401, "missing or wrong bearer token (send 'Authorization: Bearer <CAKE_API_TOKEN>')",
                            {"WWW-Authenticate": "Bearer"})


async def read_body_bounded(request: Request, max_bytes: int) -> bytes:
    """The request body, or IngestRefused(413) as soon as it is known to exceed `max_bytes`."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            n = int(declared)
        except ValueError:
            raise IngestRefused(400, f"Content-Length {declared!r} is not an integer") from None
        if n > max_bytes:
            raise IngestRefused(413, f"body of {n} bytes exceeds the limit of {max_bytes} bytes; split the file")
    chunks: list[bytes] = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > max_bytes:
            raise IngestRefused(413, f"body exceeds the limit of {max_bytes} bytes; split the file")
        chunks.append(chunk)
    return b"".join(chunks)


def decode_lines(body: bytes) -> list[str]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestRefused(422, {"message": f"body is not UTF-8 (byte {exc.start})", "line": None,
                                  "field": None}) from None
    text = text.removeprefix("\ufeff")  # a UTF-8 byte order mark, as the file importer accepts
    if not text.strip():
        raise IngestRefused(422, {"message": "empty body: send cake-evidence/1 JSON Lines", "line": None,
                                  "field": None})
    # JSON Lines are separated by \n only: str.splitlines() would also split inside a string value
    # holding U+2028, U+0085 and the like (valid JSON), which the file importer accepts.
    return text.split("\n")


def ingest_lines(store, lines: list[str], name: str):
    """Validate with the store's parser and import; EvidenceError -> 422 naming line and field."""
    from sqlalchemy.exc import OperationalError

    from measurements_db.engine import StoreError
    from measurements_db.evidence_io import EvidenceError, import_lines

    try:
        # Parsed and imported from the lines as sent, so an error names the line the client sent.
        return import_lines(store, lines, name)
    except EvidenceError as exc:
        raise IngestRefused(422, {"message": str(exc), "line": getattr(exc, "line", None),
                                  "field": getattr(exc, "field", None), "file": getattr(exc, "filename", name)}) from None
    except StoreError as exc:  # e.g. the embedded default store, which is a read-only cache
        raise IngestRefused(403, f"the server's store refuses imports: {exc}") from None
    except OperationalError as exc:  # e.g. SQLite busy past its timeout: the transaction rolled back
        raise IngestRefused(503, f"the store is busy, nothing was written; retry ({exc.orig})",
                            {"Retry-After": "1"}) from None
