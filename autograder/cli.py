"""``python -m autograder COMMAND``: one module per command in autograder/commands/.

Each command module defines NAME, HELP, ``add_arguments(parser)`` and ``run(args) -> int``.
Bad usage exits 2 with one line naming the problem (UsageError), never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from autograder import commands
from autograder.core.errors import UsageError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, as argparse does, without the usage block
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _commands():
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        yield importlib.import_module(f"autograder.commands.{info.name}")


def main(argv=None) -> int:
    parser = _Parser(prog="python -m autograder", description="Grade the course's submissions (course.yml).")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in _commands():
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(run=module.run)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
