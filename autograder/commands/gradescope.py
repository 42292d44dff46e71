"""``gradescope --out autograder.zip``: build the package to upload to Gradescope."""
from __future__ import annotations

from autograder.exports import gradescope

NAME = "gradescope"
HELP = "build Gradescope's autograder zip (setup.sh, run_autograder, the grader and course.yml)"


def add_arguments(p) -> None:
    p.add_argument("--out", default="autograder.zip", help="zip to write (default ./autograder.zip)")


def run(args) -> int:
    path = gradescope.build(args.out)
    print(f"wrote {path} ({len(gradescope.files())} files + setup.sh, run_autograder, "
          f"{gradescope.GRADING_REQUIREMENTS}); "
          "upload it as the assignment's autograder on Gradescope")
    return 0
