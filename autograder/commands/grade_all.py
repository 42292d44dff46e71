"""``grade-all SUBMISSIONS_DIR --out OUT [--jobs N] [--force] [--student NAME]``: grade a class."""
from __future__ import annotations

from autograder.batch import run as batch
from autograder.batch.executors.slurm import cli as slurm_cli
from autograder.batch.options import BatchOptions
from autograder.grading import budget

NAME = "grade-all"
HELP = ("grade every submission in SUBMISSIONS_DIR in parallel (resumable); write OUT/<student>/"
        "results.json and feedback.html, gradebook.csv, canvas.csv, checks.csv, summary.json, "
        "summary.html, and regrades.csv when a run changes a stored score; apply OUT/overrides.csv "
        "and OUT/extensions.csv on every run")


def _positive_float(text: str) -> float:
    import argparse
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    import argparse
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _check_ids(text: str) -> set[str]:
    import argparse
    ids = {t.strip() for t in text.split(",") if t.strip()}
    if not ids:
        raise argparse.ArgumentTypeError(f"unknown check id {text!r}")
    return ids


def _known_checks(ids: set[str] | None, asg) -> set[str] | None:
    """``ids`` when the assignment has every one of them; UsageError naming the first it lacks."""
    from autograder.core.errors import UsageError
    from autograder.grading.grade import load_checks
    unknown = sorted((ids or set()) - set(load_checks(asg)))
    if unknown:
        raise UsageError(f"argument --checks: unknown check id {unknown[0]!r}")
    return ids


def add_arguments(p) -> None:
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                   help="a folder of per-student folders or zips, nbgrader's submitted/, "
                        "a Gradescope export, or a Moodle or Canvas download")
    p.add_argument("--out", required=True, metavar="OUT", help="output folder (created; reruns resume)")
    p.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                   help="worker processes (default: the machine's cores)")
    p.add_argument("--force", action="store_true", help="regrade everything, even unchanged submissions")
    p.add_argument("--student", metavar="NAME", help="regrade this one student only")
    p.add_argument("--assignment", default=None, help="an assignment in course.yml (default: its first)")
    p.add_argument("--device", choices=("sim", "cpu", "cuda"), default=None,
                   help="grading device (default: course.yml's)")
    p.add_argument("--budget-s", type=_positive_float, default=None, metavar="S",
                   help=f"seconds the grading of one submission may take: past it each check left fails "
                        f"with one line (default: {budget.CALLS} x course.yml's time_limit_s, at least "
                        f"{budget.MIN_S:g}); a worker still grading at {budget.WATCHDOG_BUDGETS:g}x it is "
                        f"killed and the submission gets a zero")
    p.add_argument("--checks", type=_check_ids, default=None, metavar="ID,ID",
                   help="grade only these check ids: merged into each student's stored full result, "
                        "else partial (partial.csv; never in gradebook.csv or canvas.csv)")
    p.add_argument("--time-limit-s", type=_positive_float, default=None, metavar="S",
                   help="seconds per call of a student function (default: course.yml's time_limit_s)")
    p.add_argument("--extensions", metavar="CSV", default=None,
                   help="per-student extensions: a CSV with 'student' and 'days' (or 'due'), "
                        "applied with course.yml's late policy and kept in OUT/extensions.csv for "
                        "later runs")
    p.add_argument("--similarity", action="store_true",
                   help="also compare every pair of submissions: OUT/similarity/pairs.csv and report.html")
    p.add_argument("--moodle-worksheet", metavar="CSV", default=None,
                   help="Moodle's grading worksheet of the assignment (Download grading worksheet): "
                        "its 'Last modified (submission)' dates each student of a Moodle download, "
                        "whose files carry the time of the download")
    p.add_argument("--moodle-timezone", metavar="ZONE", default=None,
                   help="the time zone of the worksheet's times, an IANA name such as Europe/London "
                        "(the zone of the Moodle profile that downloaded it; default: course.yml's "
                        "late.timezone)")
    slurm_cli.add_arguments(p)


def run(args) -> int:
    only = _known_checks(args.checks, args.course.assignment(args.assignment))
    options = BatchOptions(jobs=args.jobs, force=args.force, student=args.student,
                           assignment=args.assignment, device=args.device, budget_s=args.budget_s,
                           time_limit_s=args.time_limit_s, only=only, extensions=args.extensions,
                           similarity=args.similarity, moodle_worksheet=args.moodle_worksheet,
                           moodle_timezone=args.moodle_timezone, executor=slurm_cli.executor_from(args))
    return batch.grade_all(args.submissions, args.out, options, the_course=args.course)
