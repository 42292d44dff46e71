"""``review SUBMISSIONS_DIR --out OUT --grader NAME``: score the hand-graded answers in the terminal."""
from __future__ import annotations

NAME = "review"
HELP = ("score the notebook's hand-graded answers (Explain It Back) student by student: show each "
        "question and the student's answer, ask for points and a reason, and write a row per "
        "course.yml manual item to OUT/overrides.csv with the grader's name; resumable (what is "
        "scored is skipped); answers from the terminal, stdin or --answers FILE")


def add_arguments(p) -> None:
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                   help="the class, in any layout grade-all reads (the notebooks are read from it)")
    p.add_argument("--out", required=True, metavar="OUT", help="grade-all's output folder (its overrides.csv)")
    p.add_argument("--grader", required=True, metavar="NAME", help="who scores (written with each row)")
    p.add_argument("--student", metavar="NAME", default=None,
                   help="this student only (folder name, SID, email or name)")
    p.add_argument("--item", metavar="ID", default=None,
                   help="the course.yml manual item that scores the answers (default: the only one "
                        "that names no question)")
    p.add_argument("--answers", metavar="FILE", default=None,
                   help="read the answers from FILE, one a line, instead of the terminal")
    p.add_argument("--assignment", default=None, help="an assignment in course.yml (default: its first)")


def run(args) -> int:
    import sys
    from pathlib import Path

    from autograder.classdata import discover
    from autograder.people import review
    from autograder.people.console import Console, open_answers

    asg = args.course.assignment(args.assignment)
    out = Path(args.out)
    # loose LMS files are gathered in a temporary folder, never in OUT, where grade-all may be running
    layout = discover.discover(args.submissions, asg, exclude=out)
    with open_answers(args.answers) as into:
        tally = review.review(out, layout, asg, args.grader, Console(into, sys.stdout),
                              student=args.student, item=args.item)
    print(f"review: {tally.written} row(s) written to {out / 'overrides.csv'}, {tally.left} left"
          f"{' (run the same command to resume)' if tally.left else ''}; grade-all applies them "
          f"on its next run")
    return 0

