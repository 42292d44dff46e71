"""``generate [--check]``: regenerate assignments/ from solutions/, or report drift (exit 1)."""
from __future__ import annotations

import sys

from autograder.exports import generate

NAME = "generate"
HELP = "regenerate the student release assignments/<folder> from solutions/<folder>"


def add_arguments(p) -> None:
    p.add_argument("--assignment", default=None, help="an assignment in course.yml (default: its first)")
    p.add_argument("--check", action="store_true", help="exit 1 when the committed release drifts")


def run(args) -> int:
    assignment = args.course.assignment(args.assignment)
    try:
        if args.check:
            changed = generate.drift(assignment)
            for rel in changed:
                print(f"drift: assignments/{assignment.folder}/{rel}", file=sys.stderr)
            return 1 if changed else 0
        dst = generate.write(assignment)
    except generate.GenerateError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {dst.relative_to(assignment.root)}")
    return 0
