"""Options shared by several commands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console

ARCH_HELP = "GPU arch of the route key, e.g. sm_90a (H100/H200), sm_100a (B200), sm_103a (GB300), sm_107a (R200)"


def add_gpu_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gpu", metavar="NAME", default=None,
                   help="use the runs on this GPU model only (the run records' `gpu`, e.g. 'NVIDIA H200'); "
                        "needed where an arch's evidence was measured on more than one")


def add_db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db", metavar="URL", default=None,
        help="store URL (sqlite:///path or postgresql+psycopg://...); default: $CAKE_DB_URL, then the embedded default",
    )


def add_json_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print machine-readable JSON instead of tables")


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=1, sort_keys=True, default=str)
    sys.stdout.write("\n")
