"""Opening the evidence store: URL precedence, SQLite/PostgreSQL engines, schema version, the embedded default.

URL precedence (DESIGN.md): ``--db``, then ``$CAKE_DB_URL``, then the embedded default. The embedded
default is a local SQLite cache (``$CAKE_CACHE_DIR``, else ``$XDG_CACHE_HOME/cake``, else
``~/.cache/cake``) built from every ``measurements_db/data/*.jsonl.gz`` bundle; the file name carries
the bundles' combined SHA-256 (also recorded in ``cake_meta``), so a changed bundle set makes a new
cache and a cache in use is never overwritten. The embedded store is read-only for users: importing
goes to a store named by ``--db`` or ``CAKE_DB_URL``.

SQLite connections run with foreign keys on, WAL journaling and a busy timeout; write transactions
start with ``BEGIN IMMEDIATE`` so concurrent importers queue instead of failing on a lock upgrade.
PostgreSQL goes through psycopg 3 (``postgresql+psycopg://``; a bare ``postgresql://`` is read as
that). Schema changes are Alembic migrations (``measurements_db/migrations``) that ``open_store``
applies to a fresh or older store; a store from a newer schema is refused with both version numbers.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

#: The schema version this code reads and writes; equals the head migration's SCHEMA_VERSION.
SCHEMA_VERSION = 1
ENV_URL = "CAKE_DB_URL"
ENV_CACHE_DIR = "CAKE_CACHE_DIR"
#: How long a SQLite writer waits for another writer's transaction to finish.
SQLITE_BUSY_TIMEOUT_S = 600.0
PACKAGE_DIR = Path(__file__).resolve().parent
DATA_DIR = PACKAGE_DIR / "data"
MIGRATIONS_DIR = PACKAGE_DIR / "migrations"
BUNDLE_GLOB = "*.jsonl.gz"
_PG_LOCK_ID = 0x63616B65  # "cake": serializes concurrent migrations on PostgreSQL


class StoreError(Exception):
    """The store cannot be used as asked (bad URL, unreadable file, newer schema, read-only cache)."""


@dataclass
class Store:
    """An open evidence store.

    ``url`` is the URL it was opened with, ``engine`` the SQLAlchemy engine; ``session()`` yields an
    ORM session inside a transaction (committed on success, rolled back on error). ``embedded`` is
    true for the cache of the shipped bundles, which refuses imports. ``upgraded_from`` is the schema
    version found before ``open_store`` migrated it (0: a fresh store; None: nothing to do).
    """

    url: str
    engine: Engine
    embedded: bool = False
    upgraded_from: int | None = None
    bundle_sha256: str | None = None
    _sessionmaker: sessionmaker = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._sessionmaker = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def display_url(self) -> str:
        """The URL without a password, for messages."""
        return make_url(self.url).render_as_string(hide_password=True)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessionmaker.begin() as sess:
            yield sess

    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection inside a read transaction (one consistent snapshot on both dialects)."""
        with self.engine.connect() as conn:
            with conn.begin():
                yield conn

    @contextlib.contextmanager
    def write(self) -> Iterator[Connection]:
        """A connection inside a write transaction: ``BEGIN IMMEDIATE`` on SQLite (takes the write
        lock up front, waiting up to the busy timeout for another writer)."""
        with self.engine.connect() as conn:
            conn.execution_options(cake_write=True)
            with conn.begin():
                yield conn

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# URLs
# ---------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where the embedded default's SQLite cache lives."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "cake"


def bundle_files(data_dir: Path | None = None) -> list[Path]:
    """The shipped bundles, sorted by name (a missing or empty data directory gives [])."""
    d = DATA_DIR if data_dir is None else Path(data_dir)
    return sorted(p for p in d.glob(BUNDLE_GLOB) if p.is_file()) if d.is_dir() else []


def _schema_sources() -> list[Path]:
    here = Path(__file__).resolve().parent
    return [here / "models.py", *sorted((here / "migrations" / "versions").glob("*.py"))]


def bundles_sha256(files: list[Path]) -> str:
    """Combined SHA-256 of a bundle set (file names and contents, in name order) and of the schema
    sources (models and migrations), so a cache built by other code is rebuilt, never misread."""
    h = hashlib.sha256()
    for p in _schema_sources():
        if p.exists():
            h.update(b"schema:" + hashlib.sha256(p.read_bytes()).hexdigest().encode() + b"\n")
    for p in files:
        h.update(p.name.encode() + b"\0" + hashlib.sha256(p.read_bytes()).hexdigest().encode() + b"\n")
    return h.hexdigest()


def embedded_path(data_dir: Path | None = None, cache: Path | None = None) -> Path:
    sha = bundles_sha256(bundle_files(data_dir))
    return (cache_dir() if cache is None else Path(cache)) / f"embedded-v{SCHEMA_VERSION}-{sha[:16]}.sqlite"


def embedded_url() -> str:
    """The URL of the embedded default's cache for the bundles shipped now."""
    return f"sqlite:///{embedded_path()}"


def normalize_url(url: str) -> str:
    """Validate a store URL; ``postgresql://`` and ``postgres://`` mean psycopg 3."""
    url = url.strip()
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix):]
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(
            f"store URL {url!r} is not a URL; accepted: sqlite:///PATH or postgresql+psycopg://USER@HOST:PORT/DB"
        ) from None
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(
            f"store URL {parsed.render_as_string(hide_password=True)!r}: backend {parsed.get_backend_name()!r} "
            "is not supported; accepted: sqlite:///PATH or postgresql+psycopg://USER@HOST:PORT/DB"
        )
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() != "psycopg":
        raise StoreError(f"store URL driver {parsed.get_driver_name()!r}: use postgresql+psycopg:// (psycopg 3)")
    return url


def resolve_url(cli_url: str | None) -> str:
    """The store URL to use: ``--db``, then ``$CAKE_DB_URL``, then the embedded default's cache."""
    if cli_url:
        return normalize_url(cli_url)
    env = os.environ.get(ENV_URL)
    if env:
        return normalize_url(env)
    return embedded_url()


# ---------------------------------------------------------------------------------------------
# engines
# ---------------------------------------------------------------------------------------------


def _sqlite_path(url: str) -> str | None:
    db = make_url(url).database
    return None if not db or db == ":memory:" else db


def enable_wal(cursor, timeout_s: float) -> None:
    """``PRAGMA journal_mode = WAL``, retried for up to ``timeout_s`` while the database is locked.

    The journal-mode switch does not wait for the busy timeout: on a store still in rollback mode
    whose lock another connection holds (another process switching a fresh store to WAL, say) it
    fails at once with "database is locked". Two importers opening a new store together hit this
    (a CI run on 2026-12-03).
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def _make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})

        @event.listens_for(engine, "connect")
        def _sqlite_on_connect(dbapi_conn, _record) -> None:
            # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite's implicit BEGIN is deferred
            # and cannot be made IMMEDIATE).
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
            cur.execute("PRAGMA foreign_keys = ON")
            enable_wal(cur, SQLITE_BUSY_TIMEOUT_S)
            # In WAL mode NORMAL keeps the database consistent after a crash; only the last commits
            # before a power loss may roll back.
            cur.execute("PRAGMA synchronous = NORMAL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_on_begin(conn) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("cake_write") else "BEGIN")

        return engine
    return create_engine(url, pool_pre_ping=True)


# ---------------------------------------------------------------------------------------------
# schema version and migrations
# ---------------------------------------------------------------------------------------------


def _read_version(conn: Connection) -> int | None:
    """The store's schema version, or None for a store without the cake tables."""
    if conn.dialect.name == "sqlite":
        exists = conn.execute(text("SELECT 1 FROM sqlite_master WHERE type='table' AND name='cake_meta'")).first()
    else:
        exists = conn.execute(text("SELECT to_regclass('cake_meta')")).scalar()
    if not exists:
        return None
    value = conn.execute(text("SELECT value FROM cake_meta WHERE key = 'schema_version'")).scalar()
    return int(value) if value is not None else None


def _newer_error(display: str, version: int) -> StoreError:
    return StoreError(
        f"the store {display} has schema version {version}, newer than the version {SCHEMA_VERSION} this "
        "cake reads; upgrade cake (the store was written by a newer release) or use another store"
    )


def _alembic_upgrade(conn: Connection) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, "head")


def _ensure_schema(engine: Engine, display: str) -> int | None:
    """Migrate a fresh or older store to SCHEMA_VERSION; refuse a newer one. Returns the old version."""
    with engine.connect() as conn:
        with conn.begin():
            version = _read_version(conn)
    if version is not None and version > SCHEMA_VERSION:
        raise _newer_error(display, version)
    if version == SCHEMA_VERSION:
        return None
    with engine.connect() as conn:
        conn.execution_options(cake_write=True)
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_ID})
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = _read_version(conn)
            if version is not None and version > SCHEMA_VERSION:
                raise _newer_error(display, version)
            if version == SCHEMA_VERSION:
                return None
            _alembic_upgrade(conn)
            after = _read_version(conn)
            if after != SCHEMA_VERSION:
                raise StoreError(f"migrating {display} ended at schema version {after}, expected {SCHEMA_VERSION}")
    return version or 0


def _open(url: str, *, create: bool, embedded: bool = False) -> Store:
    url = normalize_url(url)
    display = make_url(url).render_as_string(hide_password=True)
    path = _sqlite_path(url) if make_url(url).get_backend_name() == "sqlite" else None
    if path is not None:
        p = Path(path)
        if not p.exists():
            if not create:
                raise StoreError(f"no store at {p}: give an existing file, or create one with `db upgrade --db {url}`")
            p.parent.mkdir(parents=True, exist_ok=True)
        elif p.is_dir():
            raise StoreError(f"store path {p} is a directory; accepted: sqlite:///PATH/TO/FILE.sqlite")
    engine = _make_engine(url)
    try:
        old = _ensure_schema(engine, display)
    except StoreError:
        engine.dispose()
        raise
    except DatabaseError as exc:
        engine.dispose()
        raise _open_error(display, path, exc) from None
    return Store(url=url, engine=engine, embedded=embedded, upgraded_from=old)


def _open_error(display: str, path: str | None, exc: DatabaseError) -> StoreError:
    msg = str(getattr(exc, "orig", exc)) or type(exc).__name__
    if path is not None:
        low = msg.lower()
        if "not a database" in low or "malformed" in low or "corrupt" in low:
            return StoreError(
                f"{path} is not a readable SQLite store ({msg}); it was left untouched: move it aside "
                "or give another --db"
            )
        return StoreError(f"cannot open the SQLite store {path}: {msg}")
    if isinstance(exc, OperationalError):
        return StoreError(f"cannot connect to {display}: {msg.strip()}")
    return StoreError(f"cannot use the store {display}: {msg.strip()}")


# ---------------------------------------------------------------------------------------------
# the embedded default
# ---------------------------------------------------------------------------------------------


def open_embedded_store(data_dir: Path | None = None, cache: Path | None = None) -> Store:
    """The embedded default: a SQLite cache of every shipped bundle, (re)built when they change.

    The cache file name carries the bundles' combined SHA-256, so changed bundles give a new file;
    a new cache is built under a temporary name and linked into place only if no other process got
    there first (a cache in use is never replaced). Older caches are removed.
    """
    files = bundle_files(data_dir)
    sha = bundles_sha256(files)
    cdir = cache_dir() if cache is None else Path(cache)
    final = cdir / f"embedded-v{SCHEMA_VERSION}-{sha[:16]}.sqlite"
    if final.exists():
        store = _open(f"sqlite:///{final}", create=False, embedded=True)
        with store.read() as conn:
            recorded = conn.execute(text("SELECT value FROM cake_meta WHERE key = 'bundle_sha256'")).scalar()
        if recorded == sha:
            store.bundle_sha256 = sha
            return store
        store.close()
        raise StoreError(
            f"the embedded cache {final} records bundle checksum {recorded!r}, not {sha}: it is damaged or "
            "was written by hand; delete it and it will be rebuilt"
        )
    cdir.mkdir(parents=True, exist_ok=True)
    tmp = cdir / f".building-{os.getpid()}-{secrets.token_hex(4)}.sqlite"
    try:
        _build_cache(tmp, files, sha)
        try:
            os.link(tmp, final)  # atomic and never overwrites a cache another process published
        except FileExistsError:
            pass
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
    for old in cdir.glob(f"embedded-v{SCHEMA_VERSION}-*.sqlite"):
        if old != final:
            for suffix in ("", "-wal", "-shm"):
                Path(str(old) + suffix).unlink(missing_ok=True)
    store = _open(f"sqlite:///{final}", create=False, embedded=True)
    store.bundle_sha256 = sha
    return store


def _build_cache(path: Path, files: list[Path], sha: str) -> None:
    from measurements_db.evidence_io import EvidenceError, import_evidence

    store = _open(f"sqlite:///{path}", create=True)
    try:
        for f in files:
            try:
                import_evidence(store, f, name=f"measurements_db/data/{f.name}")
            except EvidenceError as exc:
                raise StoreError(f"the shipped bundle {f} is invalid: {exc}") from None
        with store.write() as conn:
            conn.execute(text("INSERT INTO cake_meta (key, value) VALUES ('bundle_sha256', :v)"), {"v": sha})
        # Fold the WAL into the file and leave WAL mode, so the file alone is the whole cache
        # (outside any transaction: the driver runs in autocommit mode, see _make_engine).
        raw = store.engine.raw_connection()
        try:
            raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            raw.driver_connection.execute("PRAGMA journal_mode = DELETE")
        finally:
            raw.close()
    finally:
        store.close()


def open_store(url: str | None = None, *, create: bool = True) -> Store:
    """Open (and if needed create and migrate) the store at ``url``.

    ``url`` is resolved with ``resolve_url`` (so None means ``$CAKE_DB_URL``, then the embedded
    default). ``create=False`` refuses a SQLite file that does not exist yet.
    Raises StoreError naming the store for a bad URL, an unreadable or corrupted file (never reset
    silently) or a store from a newer schema.
    """
    url = resolve_url(url)
    if url == embedded_url():
        return open_embedded_store()
    return _open(url, create=create)
