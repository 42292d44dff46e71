"""``python -m autograder COMMAND``: one module per command in autograder/commands/.

Each command module defines NAME, HELP, ``add_arguments(parser)`` and ``run(args) -> int``.
Bad usage exits 2 with one line naming the problem (UsageError), never a traceback.

``--course PATH`` (before or after the command; a course.yml or the folder holding one) picks the
course; without it, the nearest course.yml from the current folder upward that has an
``assignments`` mapping, else the checkout's (autograder/core/course.py: ``find``). The course is
loaded here, once, and handed to the command as ``args.course`` (a ``course.Course``); nothing
below reads it from the environment.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from autograder import commands
from autograder.core import course, settings
from autograder.core.errors import UsageError

#: Commands whose output names the course file they graded with (one line on stdout, first).
NAMES_COURSE = ("grade", "grade-all")
COURSE_HELP = "the course: a course.yml or the folder holding one (default: the nearest upward, else the checkout's)"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, as argparse does, without the usage block
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _commands(argv=()):
    """The command modules to register: the one ``argv`` names, else (help, a typo) all of them.

    Importing every command costs about 0.2 s (their libraries: batch grading, exports,
    notebooks); ``grade`` alone about 0.1 s, and it is the command a Gradescope container and a
    student run cold, before the fork server it starts can begin importing torch."""
    names = sorted(info.name for info in pkgutil.iter_modules(commands.__path__))
    given = [t for i, t in enumerate(argv) if not (i and argv[i - 1] == "--course")]   # not its PATH
    named = next((token for token in given if not token.startswith("-")), None)
    if named is not None and named.replace("-", "_") in names:
        module = importlib.import_module(f"autograder.commands.{named.replace('-', '_')}")
        if module.NAME == named:
            yield module
            return
    for name in names:
        yield importlib.import_module(f"autograder.commands.{name}")


def _prog() -> str:
    """How the user called us: the installed console command, or ``python -m autograder``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name and not name.endswith((".py", "__main__")) and name != "-c" else "python -m autograder"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        settings.check()
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    parser = _Parser(prog=_prog(), description="Grade the course's submissions (course.yml).")
    parser.add_argument("--course", dest="course_path", metavar="PATH", help=COURSE_HELP)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in _commands(argv):
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        p.add_argument("--course", dest="course_path", metavar="PATH", default=argparse.SUPPRESS,
                       help=COURSE_HELP)
        module.add_arguments(p)
        p.set_defaults(run=module.run)
    args = parser.parse_args(argv)
    try:
        args.course = course.load(course.find(args.course_path))   # the one load of the course
        if args.command in NAMES_COURSE:
            print(f"course: {args.course.path}", flush=True)
        return int(args.run(args) or 0)
    except UsageError as exc:   # several problems (bad rows of one file): a line each
        for line in str(exc).splitlines() or [""]:
            print(f"error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
