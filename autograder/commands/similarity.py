"""``similarity SUBMISSIONS_DIR --out DIR``: compare every pair of submissions, file by file."""
from __future__ import annotations

NAME = "similarity"
HELP = ("compare every pair of submissions in SUBMISSIONS_DIR file by file (copydetect; the "
        "release's stubs, public tests and the code the stubs dictate ignored); write "
        "DIR/pairs.csv (ranked) and DIR/report.html (the class's baseline, clusters, matching "
        "regions side by side): evidence for a person to look at, not a verdict")


def add_arguments(p) -> None:
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                   help="the class, in any layout grade-all reads")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
    p.add_argument("--assignment", default=None, help="an assignment in course.yml (default: its first)")
    p.add_argument("--top", type=int, default=None, metavar="N",
                   help="pairs shown with their code in report.html (default 25; pairs.csv has all)")
    p.add_argument("--cluster-at", type=float, default=None, metavar="PERCENT",
                   help="pairs at this similarity or more link their students into one cluster (default 50)")


def run(args) -> int:
    from pathlib import Path

    from autograder.classdata import discover
    from autograder.core.errors import UsageError
    from autograder.similarity import clusters
    from autograder.similarity import run as similar

    if args.top is not None and args.top < 1:
        raise UsageError(f"--top {args.top}: must be at least 1")
    if args.cluster_at is not None and not 0 < args.cluster_at <= 100:
        raise UsageError(f"--cluster-at {args.cluster_at:g}: must be a percent above 0 and at most 100")
    asg = args.course.assignment(args.assignment)
    layout = discover.discover(args.submissions, asg, exclude=Path(args.out))
    threshold = args.cluster_at / 100 if args.cluster_at is not None else clusters.THRESHOLD
    similar.write_report(layout, asg, Path(args.out), top=args.top or similar.TOP, threshold=threshold)
    return 0
