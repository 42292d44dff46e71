"""``nbgrader-course --out DIR``: write an nbgrader course whose autograded cells run this grader."""
from __future__ import annotations

from autograder.core.errors import UsageError
from autograder.exports import generate

NAME = "nbgrader-course"
HELP = "write an nbgrader course directory (nbgrader_config.py, source/<assignment>/) graded by this package"


def add_arguments(p) -> None:
    p.add_argument("--out", required=True, help="the course directory to write or refresh")
    p.add_argument("--assignment", default=None, help="an assignment in course.yml (default: its first)")


def run(args) -> int:
    from autograder.exports import nbgrader_course

    assignment = args.course.assignment(args.assignment)
    try:
        out = nbgrader_course.write_course(args.out, assignment)
    except generate.GenerateError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"{args.out}: cannot write the course ({exc.strerror})") from None
    print(f"wrote {out}: run nbgrader there, e.g. `nbgrader generate_assignment {assignment.name}`")
    return 0
