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


# Examples shown under each command's --help (commands that define their own epilog keep it).
COMMAND_EXAMPLES: dict[str, list[str]] = {
    "import": ["python -m cake_router import h200-pass1.jsonl h200-pass2.jsonl --db sqlite:///evidence.sqlite",
               "CAKE_DB_URL=postgresql+psycopg://cake@db/cake python -m cake_router import node*.jsonl"],
    "export": ["python -m cake_router export --arch sm_90a --out sm_90a.jsonl",
               "python -m cake_router export --db sqlite:///evidence.sqlite --out all.jsonl"],
    "db upgrade": ["python -m cake_router db upgrade --db postgresql+psycopg://cake@db/cake"],
    "db stats": ["python -m cake_router db stats", "python -m cake_router db stats --db sqlite:///evidence.sqlite --json"],
    "db bundle": ["python -m cake_router db bundle call1/r9a-*.jsonl.gz call2/r9b-*.jsonl.gz --out measurements_db/data/h200-sm_90a-r9.jsonl.gz",
                  "python -m cake_router db bundle sm_90a.jsonl --out measurements_db/data/measured-sm_90a.jsonl.gz --force --json"],
    "import-published": ["python -m cake_router import-published measurements_db/data/flashinfer-published-rows.csv --out published.jsonl",
                         "python -m cake_router import-published measurements_db/data/flashinfer-published-rows.csv --db sqlite:///evidence.sqlite"],
    "published-summary": ["python -m cake_router published-summary --pr 8827 --markdown"],
    "solve": ["python -m cake_router solve --arch sm_90a",
              "python -m cake_router solve --arch sm_90a --db sqlite:///evidence.sqlite --out /tmp/sm_90a.json --next-out next.json",
              "python -m cake_router solve --arch sm_107a --policy strict.toml --json"],
    "diff": ["python -m cake_router diff old/sm_90a.json cake_kernels/routes/sm_90a.json --out change-report.md"],
    "explain": ["python -m cake_router explain --arch sm_90a --op bwd --H 4096 --T 65536 --w-dtype fp32 --form plain --mode det"],
    "report": ["python -m cake_router report --arch sm_90a --markdown", "python -m cake_router report --arch sm_107a --json"],
    "serve": ["python -m cake_router serve", "CAKE_API_TOKEN=... python -m cake_router serve --port 8080 --db sqlite:///evidence.sqlite"],
}


def _add_examples(sub, prefix: str = "") -> None:
    for name, p in sub.choices.items():
        full = f"{prefix}{name}"
        if full in COMMAND_EXAMPLES and not p.epilog:
            p.epilog = "examples:\n" + "\n".join(f"  {e}" for e in COMMAND_EXAMPLES[full])
            p.formatter_class = argparse.RawDescriptionHelpFormatter
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                _add_examples(action, f"{full} ")


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
    _add_examples(sub)
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
