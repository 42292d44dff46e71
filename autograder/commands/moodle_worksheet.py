"""``moodle-worksheet --out OUT [--worksheet FILE]``: Moodle's offline grading worksheet, filled."""
from __future__ import annotations

NAME = "moodle-worksheet"
HELP = ("write OUT/moodle-worksheet.csv, Moodle's offline grading worksheet (Identifier, Full name, "
        "..., Grade, ..., Feedback comments) with each participant's total from OUT/gradebook.csv, "
        "matched by the Moodle download's participant id; with --worksheet, fill the worksheet "
        "Moodle gave instead, keeping its rows and columns")


def add_arguments(p) -> None:
    p.add_argument("--out", required=True, metavar="OUT", help="grade-all's output folder (a graded Moodle download)")
    p.add_argument("--worksheet", metavar="FILE", default=None,
                   help="the worksheet from Moodle's 'Download grading worksheet', to fill")
    p.add_argument("--to", metavar="FILE", default=None, help="where to write (default: OUT/moodle-worksheet.csv)")
    p.add_argument("--assignment", default=None, help="an assignment in course.yml (default: its first)")


def run(args) -> int:
    import sys
    from datetime import datetime, timezone
    from pathlib import Path

    from autograder.core.atomic import atomic_write
    from autograder.people import moodle_sheet

    asg = args.course.assignment(args.assignment)
    out = Path(args.out)
    made_at = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    sheet = moodle_sheet.build(out, asg.name, made_at, Path(args.worksheet) if args.worksheet else None)
    target = Path(args.to) if args.to else out / moodle_sheet.NAME
    atomic_write(target, sheet.text)
    for note in sheet.notes:
        print(f"warning: {note}", file=sys.stderr)
    print(f"moodle-worksheet: {sheet.filled} grade(s) in {target} (Moodle: the assignment's "
          f"'Upload grading worksheet')")
    return 0
