"""``feedback-zip SUBMISSIONS_DIR --out OUT``: the feedback pages packed for an LMS's bulk upload."""
from __future__ import annotations

NAME = "feedback-zip"
HELP = ("pack every graded student's OUT/<student>/feedback.html into one zip the LMS of the "
        "download takes in bulk: Canvas (Upload submission comments: files named by user id and "
        "attachment id) or Moodle (Upload multiple feedback files in a zip: a folder per student "
        "named as in the download); written to OUT/feedback-canvas.zip or OUT/feedback-moodle.zip")


def add_arguments(p) -> None:
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                   help="the Canvas or Moodle download the class was graded from")
    p.add_argument("--out", required=True, metavar="OUT", help="grade-all's output folder (graded)")
    p.add_argument("--zip", metavar="FILE", default=None,
                   help="where to write the zip (default: OUT/feedback-<canvas|moodle>.zip)")
    p.add_argument("--assignment", default=None, help="an assignment in course.yml (default: its first)")


def run(args) -> int:
    import sys
    from pathlib import Path

    from autograder.classdata import discover
    from autograder.people import delivery

    asg = args.course.assignment(args.assignment)
    out = Path(args.out)
    layout = discover.discover(args.submissions, asg, exclude=out)
    packed = delivery.pack(out, layout, Path(args.submissions), asg, Path(args.zip) if args.zip else None)
    for note in packed.notes:
        print(f"warning: {note}", file=sys.stderr)
    print(f"feedback-zip: {len(packed.names)} page(s) for {packed.lms.capitalize()} in {packed.path}")
    return 1 if packed.notes else 0
