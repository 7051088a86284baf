"""`serve`: the dashboard, JSON API and evidence ingest (api.app) under uvicorn.

Binds 127.0.0.1 unless told otherwise: the dashboard has no login, and ingest is protected only
by the bearer token, so exposing it beyond the host is a deliberate choice (`--host 0.0.0.0`),
announced on start.
"""

from __future__ import annotations

import argparse
import ipaddress
import os

from cake_router.commands.common import add_db_option, console

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "serve", help="run the dashboard, JSON API and evidence ingest (uvicorn)",
        description="Serve the dashboard (arch overview, key, diff and run pages), the JSON API "
                    "(/api/..., OpenAPI at /docs) and POST /api/evidence. Ingest is enabled only when "
                    "CAKE_API_TOKEN is set; clients send 'Authorization: Bearer <token>'.",
    )
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}: this host only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one)")
    add_db_option(p)
    p.add_argument("--max-body-mb", type=float, default=16.0, help="largest ingest body in MiB (default 16)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.set_defaults(func=run)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_app(args: argparse.Namespace):
    """The app `serve` runs (separate from `run` so tests can build it without a server)."""
    from cake_router.cli import CliError

    try:
        from api.app import create_app
    except ImportError as exc:
        raise CliError(f"the service needs its extra: pip install -e '.[service]' ({exc})") from None
    if args.max_body_mb <= 0:
        raise CliError(f"--max-body-mb {args.max_body_mb}: must be a positive number of MiB")
    # Open the store once now so a bad URL or an unreadable file fails at start, not on a request.
    from measurements_db.engine import StoreError, open_store

    try:
        open_store(args.db).close()
    except StoreError as exc:
        raise CliError(f"cannot serve: {exc}") from None
    return create_app(store_url=args.db, max_body_bytes=int(args.max_body_mb * 1024 * 1024))


def run(args: argparse.Namespace) -> int:
    from cake_router.cli import CliError

    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: must be 0-65535")
    try:
        import uvicorn
    except ImportError:
        raise CliError("the service needs uvicorn: pip install -e '.[service]'") from None
    app = build_app(args)
    con = console(stderr=True)
    if not is_loopback(args.host):
        con.print(f"[bold yellow]warning:[/] binding {args.host}: the dashboard and API are reachable from other "
                  "hosts (no login; ingest is protected by the bearer token only)")
    ingest = "enabled (CAKE_API_TOKEN set)" if os.environ.get("CAKE_API_TOKEN") else "disabled (set CAKE_API_TOKEN to enable)"
    con.print(f"serving on http://{args.host}:{args.port}/  (evidence ingest {ingest})")
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
