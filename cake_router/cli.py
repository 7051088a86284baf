"""The `python -m cake_router` command line: one argparse parser, one module per command group.

Each command module exposes ``register(subparsers)`` which adds its sub-commands and sets
``func`` on each; ``func(args)`` returns the process exit code. Adding a command is one entry in
``COMMAND_MODULES``; modules are imported lazily so a missing optional dependency (the service
extra, say) only affects its own command.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from cake_router import __version__

# (module, one-line summary) in the order `--help` lists them.
COMMAND_MODULES: list[tuple[str, str]] = [
    ("cake_router.commands.measure_cmd", "measure"),
    ("cake_router.commands.store_cmd", "import / export / db"),
    ("cake_router.commands.published_cmd", "import-published"),
    ("cake_router.commands.solve_cmd", "solve / diff / explain / report"),
    ("cake_router.commands.bench_cmd", "bench"),
    ("cake_router.commands.serve_cmd", "serve"),
]

EPILOG = """examples:
  python -m cake_router solve --arch sm_90a
  python -m cake_router explain --arch sm_90a --op bwd --H 4096 --T 65536 --w-dtype fp32 --form plain --mode det
  python -m cake_router import evidence.jsonl --db sqlite:///team.sqlite
  python -m cake_router db stats --json
  python -m cake_router serve --port 8000
"""


class CliError(Exception):
    """A user-facing error: printed as one line (what is wrong and what to do), exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cake_router",
        description="Route RMSNorm-train programs by measured evidence.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cake_router {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name, _ in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            # Only tolerate the module itself being absent, not a broken import inside it.
            if exc.name == module_name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
