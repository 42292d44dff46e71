"""``release [ASSIGNMENT] --out DIR``: write DIR/<assignment>-student.zip, the student bundle."""
from __future__ import annotations

import sys
from pathlib import Path

from autograder.core.errors import UsageError
from autograder.exports import bundle, generate

NAME = "release"
HELP = "write the student bundle OUT/<assignment>-student.zip (release, shared/, course.yml, README)"


def add_arguments(p) -> None:
    p.add_argument("assignment", nargs="?", default=None, help="an assignment in course.yml (default: its first)")
    p.add_argument("--out", default="out", help="folder to write the zip into (default out/)")


def run(args) -> int:
    assignment = args.course.assignment(args.assignment)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {args.out}: exists and is not a folder")
    try:
        path = bundle.build(assignment, out)
        stale = bundle.drift(assignment)
    except (generate.GenerateError, bundle.BundleError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot write the bundle ({exc.strerror})") from None
    if stale:
        print(f"note: assignments/{assignment.folder} differs from a fresh generation "
              f"({', '.join(stale)}); the bundle holds the fresh one. Run `python -m autograder generate` "
              f"and commit.", file=sys.stderr)
    size_kib = path.stat().st_size / 1024
    print(f"wrote {path} ({size_kib:.0f} KiB)")
    return 0
