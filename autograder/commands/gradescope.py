"""``gradescope --out autograder.zip``: build the package to upload to Gradescope."""
from __future__ import annotations

import sys
from pathlib import Path

from autograder.core.errors import UsageError
from autograder.exports import gradescope

NAME = "gradescope"
HELP = "build Gradescope's autograder zip (setup.sh, run_autograder, the grader and course.yml)"


def add_arguments(p) -> None:
    p.add_argument("--out", default="autograder.zip", help="zip to write (default ./autograder.zip)")
    p.add_argument("--check", default=None, metavar="ZIP",
                   help="build nothing: say whether ZIP was built from this course.yml (exit 1 when not)")


def run(args) -> int:
    _the_checkouts_course(args.course.path)
    if args.check:
        problem = gradescope.stale(args.check)
        print(f"error: {problem}" if problem else f"{args.check}: built from this course.yml",
              file=sys.stderr if problem else sys.stdout)
        return 1 if problem else 0
    if Path(args.out).is_file():
        try:
            was = gradescope.stale(args.out)
        except UsageError:
            was = None
        if was:
            print(f"note: replacing {args.out}, which was built from another course.yml; upload the new one")
    path = gradescope.build(args.out)
    print(f"wrote {path} ({len(gradescope.files())} files + setup.sh, run_autograder, "
          f"{gradescope.GRADING_REQUIREMENTS}); "
          "upload it as the assignment's autograder on Gradescope")
    return 0


def _the_checkouts_course(path: Path) -> None:
    """UsageError unless ``path`` (the course the command line loaded) is the checkout's course.yml:
    the package carries the checkout's course.yml, grader and solutions/, so a build or --check
    for another course would say nothing true of it."""
    checkout = (gradescope.ROOT / "course.yml").resolve()
    if Path(path).resolve() != checkout:
        raise UsageError(f"{path}: gradescope packs this checkout's course.yml ({checkout}) with its grader "
                         f"and solutions/, never another course; edit that file and run gradescope without "
                         f"--course, from a folder that holds no other course.yml")
