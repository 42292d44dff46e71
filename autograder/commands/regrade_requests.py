"""``regrade-requests REQUESTS_CSV --out OUT [--decide --grader NAME]``: students' regrade requests."""
from __future__ import annotations

NAME = "regrade-requests"
HELP = ("list the students' regrade requests (a CSV: student, item or check or task, message), each "
        "with the checks and feedback it concerns from OUT/<student>/results.json; with --decide, "
        "ask for each undecided one (accept with points, reject with a reason) and write the "
        "decision to OUT/overrides.csv")


def add_arguments(p) -> None:
    p.add_argument("requests", metavar="REQUESTS_CSV", help="the requests: student, item (or check, task), message")
    p.add_argument("--out", required=True, metavar="OUT", help="grade-all's output folder (graded)")
    p.add_argument("--decide", action="store_true", help="ask for a decision on each undecided request")
    p.add_argument("--grader", metavar="NAME", default=None, help="who decides (required with --decide)")
    p.add_argument("--answers", metavar="FILE", default=None,
                   help="with --decide: read the answers from FILE, one a line, instead of the terminal")
    p.add_argument("--assignment", default=None, help="an assignment in course.yml (default: its first)")


def run(args) -> int:
    import sys
    from pathlib import Path

    from autograder.core.errors import UsageError
    from autograder.grading.grade import load_checks
    from autograder.people import requests, roster
    from autograder.people.console import Console, open_answers

    if args.decide and not args.grader:
        raise UsageError("--decide needs --grader NAME (written with each decision)")
    asg = args.course.assignment(args.assignment)
    out = Path(args.out)
    lay = roster.layout(out)
    check_ids: dict[str, list[str]] = {}
    for check in load_checks(asg).values():
        check_ids.setdefault(check.task, []).append(check.id)
    found, bad = requests.read(Path(args.requests), lay, asg, check_ids)
    for line in bad:
        print(f"error: {line}", file=sys.stderr)
    with open_answers(args.answers if args.decide else None) as into:
        written = requests.run(out, found, lay, asg, check_ids, args.grader or "", Console(into, sys.stdout),
                               args.decide)
    print(f"regrade requests: {len(found)} shown, {len(bad)} refused"
          + (f", {written} decision(s) written to {out / 'overrides.csv'}; grade-all applies them on "
             f"its next run" if args.decide else ""))
    return 1 if bad else 0
