"""Every command's --help carries examples, and every example parses with the real parser."""

from __future__ import annotations

import argparse
import shlex

import pytest

from cake_router.cli import EPILOG, build_parser


def _commands(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, p in action.choices.items():
                has_sub = any(isinstance(a, argparse._SubParsersAction) for a in p._actions)
                if has_sub:
                    yield from _commands(p, prefix + (name,))
                else:
                    yield prefix + (name,), p


def _example_argvs(text):
    for line in text.splitlines():
        line = line.strip()
        if "python -m cake_router" not in line:
            continue
        if line.startswith("#"):
            continue
        words = shlex.split(line.split("python -m cake_router", 1)[1])
        yield [w for w in words if w != "\\"]


PARSER = build_parser()
COMMANDS = list(_commands(PARSER))


def test_the_command_set():
    names = {" ".join(c) for c, _ in COMMANDS}
    assert {"measure", "import", "export", "db upgrade", "db stats", "solve", "diff", "explain", "report",
            "serve", "bench", "import-published"} <= names


@pytest.mark.parametrize("cmd", [" ".join(c) for c, _ in COMMANDS])
def test_help_has_examples_that_parse(cmd):
    p = dict((" ".join(c), p) for c, p in COMMANDS)[cmd]
    assert p.epilog and "examples:" in p.epilog, f"{cmd} --help has no examples"
    argvs = list(_example_argvs(p.epilog))
    assert argvs
    for argv in argvs:
        ns = PARSER.parse_args(argv)  # SystemExit (a failed test) on a flag that does not exist
        assert getattr(ns, "func", None) is not None


def test_top_level_examples_parse():
    for argv in _example_argvs(EPILOG):
        PARSER.parse_args(argv)
