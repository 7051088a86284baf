"""Alembic environment of the evidence store.

`measurements_db.engine` runs the migrations programmatically and hands its open connection (inside
the transaction that holds the store's write lock) through ``config.attributes["connection"]``, so
no alembic.ini is needed at the repository root. For development (`alembic -c
measurements_db/alembic.ini revision --autogenerate -m ...`) the URL comes from ``--db``-less
precedence: ``CAKE_DB_URL``, then the ini's ``sqlalchemy.url``.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine

from measurements_db.models import Base

config = context.config
target_metadata = Base.metadata


def _configure_and_run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite cannot ALTER most things; batch mode rebuilds tables
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure_and_run(connection)
        return
    url = os.environ.get("CAKE_DB_URL") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("set CAKE_DB_URL (or sqlalchemy.url in the ini) to run alembic by hand")
    engine = create_engine(url)
    with engine.connect() as connection:
        _configure_and_run(connection)
        connection.commit()
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (SQL script) mode is not supported; run against a database")
run_migrations_online()
